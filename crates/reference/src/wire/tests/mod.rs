//! Each shape read off the socket: its bytes are shaped as claimed, still parse as HTTP/1.1
//! (read here with httparse and a strict reading of RFC 9112's framing, not with the front's
//! own code), and say what the store's own server says for the same requests.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;

mod forms;
mod shapes;
use crate::{ReferenceConfig, ReferenceServer};

const KEY: &str = "wire-test-key-0123";

/// A store behind the front in `shape` (the default shape included, which the reference
/// itself serves with no front).
struct Fronted {
    addr: std::net::SocketAddr,
    base_url: String,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn server(shape: WireShape) -> Fronted {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("binds");
    let addr = listener.local_addr().expect("an address");
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let app = crate::router(ReferenceConfig::new(KEY));
    tokio::spawn(serve(listener, app, shape, stopped));
    Fronted {
        addr,
        base_url: format!("http://{addr}/v1"),
        _stop: stop,
    }
}

/// The reference with no front.
async fn plain_server() -> ReferenceServer {
    ReferenceServer::start(ReferenceConfig::new(KEY), 0)
        .await
        .expect("binds")
}

/// A request; the connection closes after its answer when `close`.
fn request(method: &str, target: &str, body: Option<&str>, close: bool) -> Vec<u8> {
    let mut text =
        format!("{method} /v1{target} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {KEY}\r\n");
    if let Some(body) = body {
        text += &format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
    }
    if close {
        text += "Connection: close\r\n";
    }
    text += "\r\n";
    text += body.unwrap_or("");
    text.into_bytes()
}

/// Writes `requests` at once and reads until the server closes.
async fn raw(addr: std::net::SocketAddr, requests: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(requests).await.expect("writes");
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut bytes))
        .await
        .expect("the server closes the connection")
        .expect("reads");
    bytes
}

/// One message as it came: its lines as written and what they say.
#[derive(Debug, Clone, Default)]
struct Message {
    status: u16,
    status_line: String,
    /// Field lines as written, CRLF taken off.
    lines: Vec<String>,
    /// (name as written, value without the whitespace around it).
    fields: Vec<(String, String)>,
    body: Vec<u8>,
    /// Chunk size lines as written, the last chunk's included.
    size_lines: Vec<String>,
    trailers: Vec<(String, String)>,
}

impl Message {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn line_at(bytes: &[u8], at: usize) -> (String, usize) {
    let end = bytes[at..]
        .windows(2)
        .position(|pair| pair == b"\r\n")
        .map(|i| at + i)
        .expect("a line ends with CRLF");
    (
        String::from_utf8_lossy(&bytes[at..end]).into_owned(),
        end + 2,
    )
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Every message in `bytes`, framed as RFC 9112 says; `heads[i]` tells whether the i-th
/// request was a HEAD (its answer has no body). Panics on anything HTTP/1.1 does not allow.
fn parse(bytes: &[u8], heads: &[bool]) -> Vec<Message> {
    let mut messages = Vec::new();
    let mut at = 0;
    let mut finals = 0;
    while at < bytes.len() {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        let httparse::Status::Complete(length) = response.parse(&bytes[at..]).expect("a head")
        else {
            panic!(
                "a head cut short: {:?}",
                String::from_utf8_lossy(&bytes[at..])
            );
        };
        let head = &bytes[at..at + length];
        for (i, byte) in head.iter().enumerate() {
            assert!(
                *byte != b'\n' || (i > 0 && head[i - 1] == b'\r'),
                "a bare LF"
            );
        }
        let text = String::from_utf8_lossy(head).into_owned();
        let mut lines = text.split("\r\n");
        let status_line = lines.next().unwrap_or_default().to_string();
        assert!(status_line.starts_with("HTTP/1.1 "), "{status_line}");
        let mut message = Message {
            status: response.code.expect("a status"),
            status_line,
            lines: lines.filter(|l| !l.is_empty()).map(String::from).collect(),
            fields: response
                .headers
                .iter()
                .map(|h| {
                    assert!(h.name.chars().all(is_tchar), "a field name {:?}", h.name);
                    let value = String::from_utf8_lossy(h.value);
                    (
                        h.name.to_string(),
                        value.trim_matches([' ', '\t']).to_string(),
                    )
                })
                .collect(),
            ..Message::default()
        };
        at += length;
        if (100..200).contains(&message.status) {
            messages.push(message);
            continue;
        }
        let head_request = heads.get(finals).copied().unwrap_or(false);
        finals += 1;
        let chunked = message.field("transfer-encoding");
        let length = message.field("content-length");
        assert!(chunked.is_none() || length.is_none(), "both framings");
        if head_request || matches!(message.status, 204 | 304) {
        } else if let Some(coding) = chunked {
            assert_eq!(coding.to_ascii_lowercase(), "chunked");
            loop {
                let (size_line, next) = line_at(bytes, at);
                at = next;
                let mut parts = size_line.split(';');
                let digits = parts.next().unwrap_or_default();
                for extension in parts {
                    let (name, value) = extension.split_once('=').unwrap_or((extension, "x"));
                    assert!(
                        !name.is_empty() && name.chars().all(is_tchar),
                        "{size_line}"
                    );
                    assert!(
                        !value.is_empty() && value.chars().all(is_tchar),
                        "{size_line}"
                    );
                }
                let size = usize::from_str_radix(digits, 16).expect("a hex chunk size");
                message.size_lines.push(size_line);
                if size == 0 {
                    break;
                }
                message.body.extend_from_slice(&bytes[at..at + size]);
                assert_eq!(&bytes[at + size..at + size + 2], b"\r\n", "a chunk's CRLF");
                at += size + 2;
            }
            loop {
                let (line, next) = line_at(bytes, at);
                at = next;
                if line.is_empty() {
                    break;
                }
                let (name, value) = line.split_once(':').expect("a trailer field");
                message
                    .trailers
                    .push((name.into(), value.trim_matches([' ', '\t']).into()));
            }
        } else if let Some(length) = length {
            let length: usize = length.parse().expect("a length");
            message.body = bytes[at..at + length].to_vec();
            at += length;
        } else {
            message.body = bytes[at..].to_vec(); // close-delimited
            at = bytes.len();
        }
        messages.push(message);
    }
    messages
}

fn finals(messages: &[Message]) -> Vec<&Message> {
    messages.iter().filter(|m| m.status >= 200).collect()
}

/// The requests every shape is read with: a create, a deprecated read, a HEAD, a 404, a 400
/// and a listing; whether each is a HEAD.
fn scenario() -> Vec<(Vec<u8>, bool)> {
    let pet = r#"{"name":"rex","categoryId":7}"#;
    vec![
        (request("POST", "/pets", Some(pet), false), false),
        (request("GET", "/pets/1", None, false), false),
        (request("HEAD", "/pets/1", None, false), true),
        (request("GET", "/pets/999", None, false), false),
        (request("GET", "/pets?limit=abc", None, false), false),
        (request("GET", "/pets", None, true), false),
    ]
}

/// The scenario's answers from a server in `shape`: pipelined on one connection, or each on
/// its own when the shape closes after every answer.
async fn scenario_answers(shape: &WireShape) -> Vec<Message> {
    let server = server(shape.clone()).await;
    scenario_at(server.addr, shape.closes()).await
}

async fn scenario_at(addr: std::net::SocketAddr, closes: bool) -> Vec<Message> {
    let steps = scenario();
    if closes {
        let mut messages = Vec::new();
        for (bytes, head) in steps {
            messages.extend(parse(&raw(addr, &bytes).await, &[head]));
        }
        return messages;
    }
    let bytes: Vec<u8> = steps.iter().flat_map(|(bytes, _)| bytes.clone()).collect();
    let heads: Vec<bool> = steps.iter().map(|(_, head)| *head).collect();
    parse(&raw(addr, &bytes).await, &heads)
}

/// What an answer says, the framing and the date aside: status, body, and the other fields in
/// the order of each name.
fn said(message: &Message) -> (u16, Vec<u8>, Vec<(String, String)>) {
    let mut fields: Vec<(String, String)> = message
        .fields
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
        .filter(|(n, _)| {
            ![
                "content-length",
                "transfer-encoding",
                "connection",
                "date",
                "trailer",
            ]
            .contains(&n.as_str())
        })
        .collect();
    fields.sort_by(|a, b| a.0.cmp(&b.0)); // stable: one name's fields keep their order
    (message.status, message.body.clone(), fields)
}
