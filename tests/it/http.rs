//! The HTTP/1.1 the scripted server speaks: reading one request, writing one `Reply`.
//!
//! Just enough of the protocol for one request per connection: a request line, headers, and a
//! `Content-Length` or chunked body in; a status, headers and a chunked (SSE) or sized body out,
//! then the connection closes. Which reply goes to which request is `server.rs`'s business.

use crate::server::{Recorded, Reply};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

pub fn read_request(stream: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let header = |name: &str| headers.iter().find(|(key, _)| key == name).map(|(_, v)| v);
    let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(&mut reader)?
    } else {
        let length = header("content-length").map_or(Ok(0), |v| v.parse::<usize>());
        let mut body = vec![0; length.ok()?];
        reader.read_exact(&mut body).ok()?;
        body
    };
    let raw = body;
    let body = serde_json::from_slice(&raw)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&raw).into_owned()));
    Some(Recorded {
        method,
        path,
        headers,
        body,
        raw,
        at: Instant::now(),
    })
}

pub fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let size_text = line.trim().split(';').next()?;
        let size = usize::from_str_radix(size_text, 16).ok()?;
        let mut piece = vec![0; size + 2];
        reader.read_exact(&mut piece).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&piece[..size]);
    }
}

pub fn write_reply(
    mut stream: TcpStream,
    reply: Reply,
    stopping: &AtomicBool,
) -> std::io::Result<()> {
    match reply {
        Reply::Status {
            code,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {code} {}\r\n", reason(code));
            head += "content-type: application/json\r\nconnection: close\r\n";
            head += &format!("content-length: {}\r\n", body.len());
            for (name, value) in headers {
                head += &format!("{name}: {value}\r\n");
            }
            stream.write_all(format!("{head}\r\n{body}").as_bytes())?;
        }
        Reply::Sse(body) => {
            write_sse_head(&mut stream)?;
            write_chunk(&mut stream, body.as_bytes())?;
            stream.write_all(b"0\r\n\r\n")?;
        }
        Reply::SseThenDrop(body) => {
            write_sse_head(&mut stream)?;
            write_chunk(&mut stream, body.as_bytes())?;
        }
        Reply::SseSlowly {
            body,
            chunk,
            pause_ms,
        } => {
            write_sse_head(&mut stream)?;
            for piece in body.as_bytes().chunks(chunk.max(1)) {
                write_chunk(&mut stream, piece)?;
                sleep_unless_stopping(pause_ms, stopping);
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
        Reply::SseSlowTail {
            head,
            tail,
            pause_ms,
        } => {
            write_sse_head(&mut stream)?;
            write_chunk(&mut stream, head.as_bytes())?;
            for piece in tail {
                sleep_unless_stopping(pause_ms, stopping);
                write_chunk(&mut stream, piece.as_bytes())?;
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
        Reply::SseSplitAt { body, at, pause_ms } => {
            write_sse_head(&mut stream)?;
            let (head, tail) = body.as_bytes().split_at(at.min(body.len()));
            write_chunk(&mut stream, head)?;
            sleep_unless_stopping(pause_ms, stopping);
            write_chunk(&mut stream, tail)?;
            stream.write_all(b"0\r\n\r\n")?;
        }
        Reply::SseThenStall { body, ms } => {
            write_sse_head(&mut stream)?;
            write_chunk(&mut stream, body.as_bytes())?;
            sleep_unless_stopping(ms, stopping);
        }
        Reply::Stall { ms } => sleep_unless_stopping(ms, stopping),
        Reply::Raw(bytes) => stream.write_all(&bytes)?,
        Reply::Flood { head, piece, bytes } => {
            write_sse_head(&mut stream)?;
            write_chunk(&mut stream, head.as_bytes())?;
            let mut written = 0;
            while written < bytes && !stopping.load(Ordering::SeqCst) {
                write_chunk(&mut stream, piece.as_bytes())?;
                written += piece.len();
            }
        }
        // `serve` turns it into a stream before writing; reaching here is a bug in the server.
        Reply::EchoLastUser => {
            let body = "EchoLastUser reached write_reply";
            let head = format!(
                "HTTP/1.1 500 Internal Server Error\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(format!("{head}{body}").as_bytes())?;
        }
    }
    stream.flush()?;
    stream.shutdown(Shutdown::Both)
}

/// Chunked like real providers' streams, so a drop mid-body is a visible transport error.
fn write_sse_head(stream: &mut TcpStream) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    stream.write_all(head.as_bytes())?;
    stream.flush()
}

fn write_chunk(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    stream.write_all(format!("{:x}\r\n", bytes.len()).as_bytes())?;
    stream.write_all(bytes)?;
    stream.write_all(b"\r\n")?;
    stream.flush()
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

/// Sleep in short slices so dropping the server never waits out a long stall.
fn sleep_unless_stopping(ms: u64, stopping: &AtomicBool) {
    let deadline = Instant::now() + Duration::from_millis(ms);
    while !stopping.load(Ordering::SeqCst) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        thread::sleep(left.min(Duration::from_millis(20)));
    }
}
