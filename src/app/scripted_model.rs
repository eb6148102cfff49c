//! The scripted model: a tiny HTTP server on 127.0.0.1 that answers each chat-completions
//! request with what its judge picks, as a provider would: an event stream, an error status,
//! or a closed connection.
//!
//! The offline demo and the programs in `examples/` judge by the script in `demo.rs`; `--replay`
//! (`app/replay.rs`) by a recorded trace. One request per connection, one at a time, on one
//! thread that `ScriptedModel`'s `Drop` stops and joins. It understands no more HTTP than a
//! request line, headers and a `Content-Length` body; it is not a server for anything else.

use crate::core::config::Config;
use crate::core::event::Error;
use crate::extras::trace::replay::Answer;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// What picks the reply to a request, from its body.
pub(crate) type Judge = Box<dyn FnMut(&[u8]) -> Answer + Send>;

/// The same server for any way of choosing replies: `answer` is handed each request's body,
/// and a stream pauses `pause` after each event.
pub(crate) fn start_model(pause: Duration, mut answer: Judge) -> Result<ScriptedModel, Error> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io_error)?;
    let address = listener.local_addr().map_err(io_error)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let server = std::thread::spawn(move || serve(&listener, &mut answer, pause, &stopped));
    Ok(ScriptedModel {
        url: format!("http://{address}/v1"),
        address,
        stop,
        server: Some(server),
    })
}

/// A scripted model serving on 127.0.0.1 until dropped; dropping it stops and joins its thread.
pub struct ScriptedModel {
    /// The base URL to put in `Config::base_url`.
    pub(crate) url: String,
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    server: Option<JoinHandle<()>>,
}

impl ScriptedModel {
    /// A `Config` pointing at this model (the key is a placeholder; nothing checks it).
    pub fn config(&self) -> Config {
        Config {
            api_key: Some("demo".to_string()),
            base_url: self.url.clone(),
            model: "scripted-demo".to_string(),
            ..Config::default()
        }
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // One more connection wakes the server from `accept`, so it sees the flag and returns.
        let _ = TcpStream::connect(self.address);
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

/// Answer one request per connection with what `answer` says, until `stop` is set. An error
/// says `Retry-After: 0`: a replayed retry need not wait as long as the recorded one did.
fn serve(listener: &TcpListener, answer: &mut Judge, pause: Duration, stop: &AtomicBool) {
    for connection in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut stream) = connection else {
            continue;
        };
        let Ok(body) = read_request(&mut stream) else {
            continue;
        };
        let head = |status: u16, kind: &str, extra: &str| {
            format!(
                "HTTP/1.1 {status} Scripted\r\nContent-Type: {kind}\r\n{extra}Connection: close\r\n\r\n"
            )
        };
        match answer(&body) {
            Answer::Stream(lines) => {
                let _ = stream.write_all(head(200, "text/event-stream", "").as_bytes());
                for line in lines {
                    let _ = stream.write_all(format!("{line}\n").as_bytes());
                    if line.is_empty() {
                        std::thread::sleep(pause);
                    }
                }
            }
            Answer::Whole {
                status,
                content_type,
                body,
            } => {
                let length = format!("Retry-After: 0\r\nContent-Length: {}\r\n", body.len());
                let _ = stream.write_all(head(status, &content_type, &length).as_bytes());
                let _ = stream.write_all(body.as_bytes());
            }
            // Dropping the connection unanswered, as a request that failed outright.
            Answer::HangUp => {}
        }
    }
}

/// The request line and headers, then the `Content-Length` body, which is returned.
fn read_request(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(body)
}

fn io_error(e: std::io::Error) -> Error {
    Error::Io(format!("scripted model: {e}"))
}
