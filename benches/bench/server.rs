//! An instant scripted OpenAI-compatible server on 127.0.0.1, for the benches only.
//!
//! The n-th request gets the n-th scripted reply (a streamed body written piece by piece, each
//! piece after its pause); once the script is used up every request gets a plain answer, so a
//! run always ends. It never parses the request beyond its length, and it adds up its own busy
//! time (from the request read to the connection closed, pauses excluded) so a bench can subtract
//! it, and counts the requests it answered (so a bench can tell the rounds really ran). It
//! shares nothing with the tests' server and does not record requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One reply: pieces of the SSE body, each written after sleeping its pause.
pub type Reply = Vec<(Duration, String)>;

pub struct Server {
    pub base_url: String,
    shared: Arc<Shared>,
    accepter: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    script: Mutex<std::collections::VecDeque<Reply>>,
    busy_nanos: AtomicU64,
    served: AtomicUsize,
    stopping: AtomicBool,
}

impl Server {
    pub fn start(script: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared::default());
        *shared.script.lock().expect("script lock") = script.into();
        let accept_shared = shared.clone();
        // Connections are served one at a time: an agent sends one request at a time.
        let accepter = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accept_shared.stopping.load(Ordering::Relaxed) {
                    break;
                }
                if let Ok(stream) = stream {
                    serve(stream, &accept_shared);
                }
            }
        });
        Server {
            base_url: format!("http://{addr}/v1"),
            shared,
            accepter: Some(accepter),
        }
    }

    /// The server's own time spent on all requests so far, pauses excluded.
    pub fn busy(&self) -> Duration {
        Duration::from_nanos(self.shared.busy_nanos.load(Ordering::Relaxed))
    }

    /// How many requests were answered so far (scripted replies and plain answers alike).
    pub fn served(&self) -> usize {
        self.shared.served.load(Ordering::Relaxed)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag, then wait for it.
        let addr = self
            .base_url
            .trim_start_matches("http://")
            .trim_end_matches("/v1");
        let _ = TcpStream::connect(addr);
        if let Some(accepter) = self.accepter.take() {
            let _ = accepter.join();
        }
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let mut reader = BufReader::new(&stream);
    if read_request(&mut reader).is_none() {
        return;
    }
    let started = Instant::now();
    let mut paused = Duration::ZERO;
    shared.served.fetch_add(1, Ordering::Relaxed);
    let reply = shared.script.lock().expect("script lock").pop_front();
    let reply = reply.unwrap_or_else(|| vec![(Duration::ZERO, crate::sse_body::text("done"))]);
    let mut writer = &stream;
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    let _ = writer.write_all(head.as_bytes());
    for (pause, piece) in reply {
        if !pause.is_zero() {
            std::thread::sleep(pause);
            paused += pause;
        }
        let _ = writer.write_all(piece.as_bytes());
        let _ = writer.flush();
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
    let own = started.elapsed().saturating_sub(paused);
    let nanos = u64::try_from(own.as_nanos()).unwrap_or(u64::MAX);
    shared.busy_nanos.fetch_add(nanos, Ordering::Relaxed);
}

/// Read the head and a `content-length` body; None if the client went away.
fn read_request(reader: &mut BufReader<&TcpStream>) -> Option<()> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()
}
