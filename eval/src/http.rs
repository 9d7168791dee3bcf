//! `eval serve --http ADDR`: one small local page to play the served player and look at its
//! analysis (values, visits, ownership, the swap map), for games that have no GUI speaking a
//! protocol (Go has Sabaki and Lizzie; these games have nothing).
//!
//! The page (`page.html`, shipped in the binary) sends each action as one line of the text
//! protocol of [`crate::protocol`] in `POST /command` and gets `{"ok": bool, "text": …}` back,
//! so the page and `eval serve` on stdin answer through the same [`Session`]. A plain HTTP/1.1
//! server on the standard library is enough for one local user: one thread per connection
//! (browsers open connections they never use, which must not hold up the others), the session
//! behind a mutex, every response `Connection: close`.

use crate::protocol::{Reply, Session};
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PAGE: &str = include_str!("page.html");

/// Longest request head, and longest body (one protocol line) accepted.
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = 64 * 1024;

/// Serve the page and its commands on `listener` until the process is stopped.
pub fn serve_http(session: Session, listener: TcpListener) -> io::Result<()> {
    let session = Arc::new(Mutex::new(session));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let session = Arc::clone(&session);
        std::thread::spawn(move || {
            // A client that goes away mid-request is its own problem, not the server's.
            let _ = handle(&session, stream);
        });
    }
    Ok(())
}

/// A request as far as this server reads it.
struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
}

fn handle(session: &Mutex<Session>, mut stream: TcpStream) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let request = match read_request(&mut stream) {
        Ok(Some(r)) => r,
        Ok(None) => return Ok(()),
        Err(why) => return respond(&mut stream, "400 Bad Request", "text/plain", &why),
    };
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/" | "/index.html") => {
            respond(&mut stream, "200 OK", "text/html; charset=utf-8", PAGE)
        }
        ("POST", "/command") => {
            let line = String::from_utf8_lossy(&request.body);
            // A panic elsewhere leaves the session as consistent as any command leaves it.
            let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
            let reply = command_json(&mut session, &line);
            drop(session);
            respond(&mut stream, "200 OK", "application/json", &reply)
        }
        (_, "/" | "/index.html" | "/command") => respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            "GET / for the page, POST /command for a protocol line",
        ),
        _ => respond(&mut stream, "404 Not Found", "text/plain", "not found"),
    }
}

/// The answer to one protocol line as `{"ok": …, "text": …}`. The page cannot end the
/// server (`quit`), and a body of several lines is refused rather than half obeyed.
pub fn command_json(session: &mut Session, body: &str) -> String {
    let line = body.trim();
    let (ok, text) = if line.contains('\n') {
        (false, "one protocol line per request".to_string())
    } else {
        match session.handle(line) {
            Reply::Ok(t) => (true, t),
            Reply::Err(t) => (false, t),
            Reply::Quit => (
                false,
                "quit ends `eval serve` on stdin; stop the page's server where it runs".into(),
            ),
        }
    };
    serde_json::json!({ "ok": ok, "text": text }).to_string()
}

/// Read one request; `Ok(None)` for a connection closed before it sent anything, `Err` with
/// the reason for a malformed or oversized one.
fn read_request(stream: &mut TcpStream) -> Result<Option<Request>, String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(format!("request head over {MAX_HEAD} bytes"));
        }
        let n = stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err("connection closed inside the request head".into())
            };
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| "request head is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let (Some(method), Some(path), Some(_version)) = (first.next(), first.next(), first.next())
    else {
        return Err("expected a request line such as `POST /command HTTP/1.1`".into());
    };
    let mut length = 0usize;
    for header in lines {
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad Content-Length `{}`", value.trim()))?;
            }
        }
    }
    if length > MAX_BODY {
        return Err(format!("body of {length} bytes: at most {MAX_BODY}"));
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed inside the body".into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Ok(Some(Request {
        method: method.to_string(),
        path: path.split('?').next().unwrap_or("").to_string(),
        body,
    }))
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &str) -> io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}
