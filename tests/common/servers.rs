//! Raw-TCP test targets, shared by the test files: a server whose every answer is written by
//! hand (a stall mid-body, a Content-Length the bytes do not match), and a proxy in front of
//! the reference whose answers it may replace (throttling after the first few). Each binds
//! 127.0.0.1 on an ephemeral port, a thread per connection, and lives as long as the test
//! binary.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One HTTP/1.1 message: its head (up to and with the blank line) and its Content-Length body.
pub struct Message {
    pub head: String,
    pub body: Vec<u8>,
}

/// Reads one message; `None` at the end of the connection.
pub fn read_message(reader: &mut impl BufRead) -> Option<Message> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let length = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|value| value.trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Message { head, body })
}

/// What a raw server does with one request: write its answer (or part of one, slowly) and say
/// whether the connection goes on. Given the request and its number across the server (from 1).
pub type Answer = dyn Fn(&Message, usize, &mut TcpStream) -> bool + Send + Sync;

/// A server that answers every request as `answer` writes it; returns its base URL (`/v1`).
pub fn raw(
    answer: impl Fn(&Message, usize, &mut TcpStream) -> bool + Send + Sync + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer: Arc<Answer> = Arc::new(answer);
    let count = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (answer, count) = (Arc::clone(&answer), Arc::clone(&count));
            std::thread::spawn(move || {
                let Ok(mut writer) = stream.try_clone() else {
                    return;
                };
                let _ = writer.set_nodelay(true);
                let mut reader = BufReader::new(stream);
                while let Some(request) = read_message(&mut reader) {
                    let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                    if !answer(&request, n, &mut writer) {
                        return;
                    }
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}/v1")
}

/// A JSON answer's head, with the Content-Length it declares (not necessarily the body's).
pub fn json_head(status: &str, content_length: usize) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {content_length}\r\n\r\n"
    )
}

/// What a proxy answers instead of the upstream's answer to the `n`th request (from 1): bytes
/// to write, or `None` to pass the upstream's answer through.
pub type Replace = dyn Fn(&Message, usize) -> Option<Vec<u8>> + Send + Sync;

/// A proxy to `upstream` (a base URL such as the reference's), one upstream connection per
/// request; `replace` may answer a request itself, before the upstream sees it. Returns the
/// proxy's base URL.
pub fn proxy(
    upstream: &str,
    replace: impl Fn(&Message, usize) -> Option<Vec<u8>> + Send + Sync + 'static,
) -> String {
    let upstream = upstream
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_string();
    let replace: Arc<Replace> = Arc::new(replace);
    raw(move |request, n, client| {
        if let Some(answer) = replace(request, n) {
            return client.write_all(&answer).is_ok();
        }
        let Ok(mut server) = TcpStream::connect(&upstream) else {
            return false;
        };
        if server.write_all(request.head.as_bytes()).is_err()
            || server.write_all(&request.body).is_err()
        {
            return false;
        }
        let Some(answer) = read_message(&mut BufReader::new(server)) else {
            return false;
        };
        client.write_all(answer.head.as_bytes()).is_ok() && client.write_all(&answer.body).is_ok()
    })
}
