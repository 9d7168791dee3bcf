//! `eval serve --http ADDR`: one small local page to play the served player and look at its
//! analysis (values, visits, ownership, the swap map), for games that have no GUI speaking a
//! protocol (Go has Sabaki and Lizzie; these games have nothing).
//!
//! The page (`page.html`, shipped in the binary) sends each action as one line of the text
//! protocol of [`crate::serve::protocol`] in `POST /command` and gets `{"ok": bool, "text": …}` back,
//! so the page and `eval serve` on stdin answer through the same [`Session`]. A plain HTTP/1.1
//! server on the standard library is enough for one local user: one thread per connection
//! (browsers open connections they never use, which must not hold up the others), the session
//! behind a mutex, every response `Connection: close`.
//!
//! It is built for one user on this machine, and refuses what a hostile caller would try:
//! - **Other web pages and DNS rebinding.** A request must name this server by an IP address or
//!   `localhost` in `Host` (a rebinding attack names its own domain), and a browser's `Origin`,
//!   when sent, must be this server's own.
//! - **Holding the server.** A new command stops the search in progress (it answers at once
//!   with its best so far), as does its client going away; searches are bounded by the
//!   session's tree memory. At most [`MAX_CONNECTIONS`] connections at once, and a request
//!   must arrive whole within `request_time` (a client feeding a byte at a time cannot keep
//!   a thread). Bodies come with a `Content-Length` (chunked ones get 411).

use crate::serve::protocol::{Interrupts, Reply, Session};
use std::io::{self, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PAGE: &str = include_str!("page.html");

/// Longest request head, and longest body (one protocol line) accepted.
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = crate::serve::protocol::MAX_LINE;

/// Connections served at once; more are answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 32;

/// The time a client has to send its whole request: 10 s, or `LIFELINE_HTTP_REQUEST_SECONDS`.
fn request_time() -> Duration {
    run::env_seconds("LIFELINE_HTTP_REQUEST_SECONDS", 10.0)
}

/// How often a search's connection is checked for a client gone.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Serve the page and its commands on `listener` until the process is stopped.
pub fn serve_http(session: Session, listener: TcpListener) -> io::Result<()> {
    let interrupts = session.interrupts();
    let session = Arc::new(Mutex::new(session));
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            // What the client has sent is read first: a socket closed on unread bytes is
            // reset, and the client would lose the answer.
            drain(&mut stream);
            let _ = respond(
                &mut stream,
                "503 Service Unavailable",
                "text/plain",
                &format!("{MAX_CONNECTIONS} connections are open: try again"),
            );
            continue;
        }
        let (session, interrupts, open) =
            (Arc::clone(&session), interrupts.clone(), Arc::clone(&open));
        std::thread::spawn(move || {
            // A client that goes away mid-request is its own problem, not the server's.
            let _ = handle(&session, &interrupts, stream);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

/// Read what a client has already sent, up to a request head's worth, waiting little.
fn drain(stream: &mut TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    let mut buf = [0u8; 4096];
    let mut read = 0;
    while read < MAX_HEAD {
        match stream.read(&mut buf) {
            Ok(n) if n > 0 => read += n,
            _ => return,
        }
    }
}

/// A request as far as this server reads it.
struct Request {
    method: String,
    path: String,
    host: Option<String>,
    origin: Option<String>,
    body: Vec<u8>,
}

/// A request refused: the status and why.
struct Refusal(&'static str, String);

impl From<String> for Refusal {
    fn from(why: String) -> Refusal {
        Refusal("400 Bad Request", why)
    }
}

impl From<&str> for Refusal {
    fn from(why: &str) -> Refusal {
        Refusal("400 Bad Request", why.to_string())
    }
}

fn handle(
    session: &Mutex<Session>,
    interrupts: &Interrupts,
    mut stream: TcpStream,
) -> io::Result<()> {
    stream.set_write_timeout(Some(request_time()))?;
    let request = match read_request(&mut stream).and_then(|r| r.map(checked).transpose()) {
        Ok(Some(r)) => r,
        Ok(None) => return Ok(()),
        Err(Refusal(status, why)) => {
            drain(&mut stream);
            return respond(&mut stream, status, "text/plain", &why);
        }
    };
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/" | "/index.html") => {
            respond(&mut stream, "200 OK", "text/html; charset=utf-8", PAGE)
        }
        ("POST", "/command") => {
            let line = String::from_utf8_lossy(&request.body);
            // A newer command stops the search of an older one, which then answers at once.
            let ticket = interrupts.raise();
            let reply = watching_client(&stream, interrupts, || {
                // A panic elsewhere leaves the session as consistent as any command leaves it.
                let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
                session.set_ticket(ticket);
                command_json(&mut session, &line)
            });
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

/// Run `work` (a command) while watching `stream`: a client that closes its connection
/// before the answer raises an interrupt, which stops the search it was waiting for.
fn watching_client<T>(stream: &TcpStream, interrupts: &Interrupts, work: impl FnOnce() -> T) -> T {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        if let Ok(watched) = stream.try_clone() {
            scope.spawn(|| watch(watched, interrupts, &done));
        }
        let answer = work();
        done.store(true, Ordering::SeqCst);
        answer
    })
}

/// Until `done`, peek at `stream` for its end (a client gone) and raise an interrupt then.
fn watch(stream: TcpStream, interrupts: &Interrupts, done: &AtomicBool) {
    if stream.set_read_timeout(Some(WATCH_EVERY)).is_err() {
        return;
    }
    let mut byte = [0u8; 1];
    while !done.load(Ordering::SeqCst) {
        match stream.peek(&mut byte) {
            Ok(0) => {
                interrupts.raise();
                return;
            }
            // Bytes past the request (a client pipelining) are not this watch's business.
            Ok(_) => std::thread::sleep(WATCH_EVERY),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                interrupts.raise();
                return;
            }
        }
    }
}

/// The request if it may be obeyed: named by an address or `localhost` (not a domain a DNS
/// rebinding could point here), and from this server's own page when a browser says where
/// it comes from.
fn checked(request: Request) -> Result<Request, Refusal> {
    let Some(host) = request.host.as_deref() else {
        return Err("a request needs a Host header".into());
    };
    if !is_local_name(host) {
        return Err(Refusal(
            "403 Forbidden",
            format!(
                "Host `{}`: this server answers to its address or localhost only",
                crate::serve::protocol::excerpt(host, 60)
            ),
        ));
    }
    if let Some(origin) = request.origin.as_deref() {
        if origin != format!("http://{host}") {
            return Err(Refusal(
                "403 Forbidden",
                format!(
                    "Origin `{}`: only this server's own page may send commands",
                    crate::serve::protocol::excerpt(origin, 60)
                ),
            ));
        }
    }
    Ok(request)
}

/// Whether a `Host` value names a machine by an IP address or `localhost` (with any port).
fn is_local_name(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        // [v6]:port
        Some(rest) => rest.split_once(']').map_or("", |(name, _port)| name),
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok()
}

/// Read one request; `Ok(None)` for a connection closed before it sent anything, a refusal
/// with its status for a malformed, oversized, chunked or too slow one.
fn read_request(stream: &mut TcpStream) -> Result<Option<Request>, Refusal> {
    let deadline = Instant::now() + request_time();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(format!("request head over {MAX_HEAD} bytes").into());
        }
        let n = read_before(stream, &mut chunk, deadline)?;
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
    let (mut length, mut host, mut origin) = (None, None, None);
    for header in lines {
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        match name.as_str() {
            "content-length" => {
                length = Some(value.parse::<usize>().map_err(|_| {
                    format!(
                        "bad Content-Length `{}`",
                        crate::serve::protocol::excerpt(value, 40)
                    )
                })?)
            }
            "transfer-encoding" => {
                return Err(Refusal(
                    "411 Length Required",
                    "send the body with a Content-Length, not a Transfer-Encoding".into(),
                ))
            }
            "host" => host = Some(value.to_string()),
            "origin" => origin = Some(value.to_string()),
            _ => {}
        }
    }
    let length = match (length, method) {
        (Some(n), _) => n,
        (None, "POST") => {
            return Err(Refusal(
                "411 Length Required",
                "a POST needs a Content-Length".into(),
            ))
        }
        (None, _) => 0,
    };
    if length > MAX_BODY {
        return Err(format!("body of {length} bytes: at most {MAX_BODY}").into());
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = read_before(stream, &mut chunk, deadline)?;
        if n == 0 {
            return Err("connection closed inside the body".into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Ok(Some(Request {
        method: method.to_string(),
        path: path.split('?').next().unwrap_or("").to_string(),
        host,
        origin,
        body,
    }))
}

/// One read of `stream` that must come before `deadline`.
fn read_before(
    stream: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
) -> Result<usize, Refusal> {
    let late = || {
        Refusal(
            "408 Request Timeout",
            format!(
                "the request must arrive whole within {} s",
                request_time().as_secs_f64()
            ),
        )
    };
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(late)?;
    stream
        .set_read_timeout(Some(left))
        .map_err(|e| e.to_string())?;
    match stream.read(buf) {
        Ok(n) => Ok(n),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Err(late())
        }
        Err(e) => Err(e.to_string().into()),
    }
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &str) -> io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_by_address_or_localhost_are_local_and_domains_are_not() {
        for host in [
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:80",
            "10.0.0.2",
        ] {
            assert!(is_local_name(host), "{host}");
        }
        for host in ["evil.example:8080", "x", "127.0.0.1.nip.io", "[::1", ""] {
            assert!(!is_local_name(host), "{host}");
        }
    }

    #[test]
    fn a_client_gone_raises_an_interrupt_while_its_command_runs() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (served, _) = listener.accept().unwrap();
        let interrupts = Interrupts::default();
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(client);
        });
        // The command waits for an interrupt, as a search checks for one between its steps;
        // a fallback ends it if none ever comes.
        let start = Instant::now();
        let seen = watching_client(&served, &interrupts, || {
            while interrupts.count() == 0 && start.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(10));
            }
            interrupts.count()
        });
        closer.join().unwrap();
        assert_eq!(seen, 1, "the closed connection raised one interrupt");
    }
}
