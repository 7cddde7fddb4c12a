//! The front: it takes each client connection and serves it through the store's own server
//! (hyper and the axum router, as `axum::serve` runs them) over an in-process pipe. Request
//! bytes pass to the store unchanged; each answer the store writes is read back (its framing
//! undone) and written to the client in the shape. An HTTP/2 connection (the client preface
//! `PRI * HTTP/2.0`) passes through both ways, unshaped.
//!
//! Which request each answer belongs to is known without parsing requests: the store's service
//! notes the method and version of each request it is handed, and HTTP/1.1 answers come in the
//! order of their requests. At most one answer is held per connection, whatever its size.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::http::{Method, Request, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
    ReadHalf, WriteHalf,
};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};

use super::compose::{Answer, Payload};
use super::{WireShape, Writes};

/// The pipe between the front and the store: bytes in flight on it, each way.
const PIPE: usize = 64 << 10;
/// The most a head of the store's may take (hyper writes far less).
const MAX_HEAD: usize = 64 << 10;
/// The largest answer the front holds: the store's are far smaller.
const MAX_ANSWER: usize = 64 << 20;
/// How long a closed connection still reads what the client sends, so that a request already
/// on its way does not turn the close into a reset that loses the answer (RFC 9112 section 9.6).
const LINGER: Duration = Duration::from_secs(2);
/// The HTTP/2 client connection preface (RFC 9113 section 3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What the store was asked, request by request, for the answers still to come.
#[derive(Debug, Clone, Copy, Default)]
struct Asked {
    head: bool,
    http10: bool,
}

type AskedQueue = Arc<Mutex<VecDeque<Asked>>>;

fn lock(asked: &AskedQueue) -> std::sync::MutexGuard<'_, VecDeque<Asked>> {
    asked.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serves `app` on `listener` with every HTTP/1.1 answer in `shape`, until `stopped`; then
/// connections close as soon as no answer is owed on them.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    shape: WireShape,
    stopped: oneshot::Receiver<()>,
) {
    let shape = Arc::new(shape);
    let (closing, closed) = watch::channel(false);
    tokio::pin!(stopped);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((client, _)) => {
                    tokio::spawn(connection(client, app.clone(), shape.clone(), closed.clone()));
                }
                // As axum::serve: out of descriptors, say; the listener stays.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            _ = &mut stopped => break,
        }
    }
    let _ = closing.send(true);
}

async fn connection(
    mut client: TcpStream,
    app: Router,
    shape: Arc<WireShape>,
    closed: watch::Receiver<bool>,
) {
    let (front_end, store_end) = tokio::io::duplex(PIPE);
    let asked = AskedQueue::default();
    let store = tokio::spawn(serve_store(store_end, app, asked.clone()));
    let mut first = Vec::with_capacity(PREFACE.len());
    let http2 = sniff(&mut client, &mut first).await;
    if http2 {
        let mut front_end = front_end;
        if front_end.write_all(&first).await.is_ok() {
            let _ = tokio::io::copy_bidirectional(&mut client, &mut front_end).await;
        }
    } else if !first.is_empty() {
        http1(client, front_end, first, &asked, &shape, closed, &store).await;
    }
    store.abort();
}

/// Reads the first bytes until they are the HTTP/2 preface (true) or cannot be (false).
async fn sniff(client: &mut TcpStream, first: &mut Vec<u8>) -> bool {
    let mut buf = [0u8; PREFACE.len()];
    while first.len() < PREFACE.len() && PREFACE.starts_with(first) {
        match client.read(&mut buf[..PREFACE.len() - first.len()]).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => first.extend_from_slice(&buf[..n]),
        }
    }
    first.as_slice() == PREFACE
}

/// The store's own server on its end of the pipe, noting what each request asked.
async fn serve_store(pipe: DuplexStream, app: Router, asked: AskedQueue) {
    let service = TowerToHyperService::new(Noting { app, asked });
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http2().enable_connect_protocol(); // as axum::serve
    let _ = builder
        .serve_connection_with_upgrades(TokioIo::new(pipe), service)
        .await;
}

/// The router, noting each HTTP/1 request's method and version as it is handed one.
#[derive(Clone)]
struct Noting {
    app: Router,
    asked: AskedQueue,
}

impl<B> tower_service::Service<Request<B>> for Noting
where
    Router: tower_service::Service<Request<B>>,
{
    type Response = <Router as tower_service::Service<Request<B>>>::Response;
    type Error = <Router as tower_service::Service<Request<B>>>::Error;
    type Future = <Router as tower_service::Service<Request<B>>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower_service::Service::<Request<B>>::poll_ready(&mut self.app, cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if request.version() <= Version::HTTP_11 {
            lock(&self.asked).push_back(Asked {
                head: request.method() == Method::HEAD,
                http10: request.version() <= Version::HTTP_10,
            });
        }
        tower_service::Service::<Request<B>>::call(&mut self.app, request)
    }
}

async fn http1(
    client: TcpStream,
    front_end: DuplexStream,
    first: Vec<u8>,
    asked: &AskedQueue,
    shape: &WireShape,
    closed: watch::Receiver<bool>,
    store: &tokio::task::JoinHandle<()>,
) {
    // Every write goes out at once: the pieces of `Writes::Pieces` as their own segments, and
    // an answer written after its interim ones not held for their ACK (Nagle's algorithm
    // against the client's delayed ACK cost 40 ms an answer).
    let _ = client.set_nodelay(true);
    let (client_in, mut client_out) = client.into_split();
    let (store_out, store_in) = tokio::io::split(front_end);
    let (stop, stopped) = oneshot::channel();
    let pump = tokio::spawn(pump(client_in, store_in, first, stopped));
    let mut store_out = BufReader::new(store_out);
    let _ = answer_all(&mut store_out, &mut client_out, asked, shape, closed).await;
    let _ = client_out.shutdown().await;
    // A write to the store blocked on an answer nobody reads now fails.
    store.abort();
    let _ = stop.send(());
    let _ = pump.await;
}

/// Request bytes from the client to the store, unchanged; once told to stop, what the client
/// still sends is read and dropped for [`LINGER`] at most.
async fn pump(
    mut client: OwnedReadHalf,
    mut store: WriteHalf<DuplexStream>,
    first: Vec<u8>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut forwarding = store.write_all(&first).await.is_ok();
    let mut buf = vec![0u8; 16 << 10];
    let linger = tokio::time::sleep(Duration::MAX);
    tokio::pin!(linger);
    let mut stopping = false;
    loop {
        let read = tokio::select! {
            read = client.read(&mut buf) => read,
            _ = &mut stop, if !stopping => {
                stopping = true;
                forwarding = false;
                linger.as_mut().reset(tokio::time::Instant::now() + LINGER);
                continue;
            }
            _ = &mut linger => return,
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) if forwarding => forwarding = store.write_all(&buf[..n]).await.is_ok(),
            Ok(_) => {}
        }
    }
    if forwarding {
        let _ = store.shutdown().await; // the client is done sending
    }
}

/// Reads each answer of the store and writes it to the client in the shape, until the store
/// or the shape ends the connection, or the server closes while no answer is owed.
async fn answer_all(
    store: &mut BufReader<ReadHalf<DuplexStream>>,
    client: &mut OwnedWriteHalf,
    asked: &AskedQueue,
    shape: &WireShape,
    mut closed: watch::Receiver<bool>,
) -> std::io::Result<()> {
    loop {
        let head = {
            let next = read_head(store);
            tokio::pin!(next);
            tokio::select! {
                head = &mut next => head?,
                () = server_closed(&mut closed) => {
                    if lock(asked).is_empty() {
                        return Ok(());
                    }
                    // An answer is owed: it is waited for, and the connection closes after.
                    next.await?
                }
            }
        };
        let Some(head) = head else {
            return Ok(()); // the store closed the connection
        };
        if (100..200).contains(&head.status) {
            let bytes = shape.interim_as_sent(head.status, &head.reason, head.fields);
            write(client, &bytes, shape.writes).await?;
            continue;
        }
        let asked = lock(asked).pop_front().unwrap_or_default();
        let bodyless = asked.head || matches!(head.status, 204 | 304);
        let (body, to_eof) = if bodyless {
            let payload = Payload::None {
                length: head.content_length,
                head: asked.head,
            };
            (payload, false)
        } else {
            let to_eof = !head.chunked && head.content_length.is_none();
            (Payload::Bytes(read_body(store, &head).await?), to_eof)
        };
        let answer = Answer {
            status: head.status,
            reason: head.reason,
            fields: head.fields,
            body,
            closing: head.close || (asked.http10 && !head.keep_alive) || to_eof,
            keep_alive_said: head.keep_alive,
            http10: asked.http10,
        };
        let interim = shape.interim_bytes(&answer);
        if !interim.is_empty() {
            write(client, &interim, shape.writes).await?;
        }
        write(client, &shape.answer_bytes(&answer), shape.writes).await?;
        if shape.closes_after(&answer) {
            return Ok(());
        }
    }
}

/// Ends when the server closes (its sender gone counts as closed).
async fn server_closed(closed: &mut watch::Receiver<bool>) {
    let _ = closed.wait_for(|closed| *closed).await;
}

/// Writes `bytes` to the client as the shape says: whole, or a piece a write, each flushed.
pub(super) async fn write<W: AsyncWrite + Unpin>(
    client: &mut W,
    bytes: &[u8],
    writes: Writes,
) -> std::io::Result<()> {
    match writes {
        Writes::Whole => client.write_all(bytes).await?,
        Writes::Pieces { size } => {
            for piece in bytes.chunks(size.max(1)) {
                client.write_all(piece).await?;
                client.flush().await?;
            }
        }
    }
    client.flush().await
}

/// A head the store wrote, its framing fields read and taken out.
#[derive(Debug, Default)]
pub(super) struct Head {
    pub(super) status: u16,
    pub(super) reason: String,
    pub(super) fields: Vec<(String, Vec<u8>)>,
    pub(super) content_length: Option<u64>,
    pub(super) chunked: bool,
    pub(super) close: bool,
    pub(super) keep_alive: bool,
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

/// The next head, or `None` when the store closed before one began.
pub(super) async fn read_head<R: AsyncRead + Unpin>(
    store: &mut BufReader<R>,
) -> std::io::Result<Option<Head>> {
    let mut bytes = Vec::new();
    loop {
        let before = bytes.len();
        let read = store.read_until(b'\n', &mut bytes).await?;
        if read == 0 {
            return match before {
                0 => Ok(None),
                _ => Err(invalid("the store closed inside a head")),
            };
        }
        if bytes.len() > MAX_HEAD {
            return Err(invalid("a head past its bound"));
        }
        if bytes[before..] == *b"\r\n" || bytes[before..] == *b"\n" {
            break;
        }
    }
    // As many fields as the harness reads (a store's filler fields among them).
    let mut headers = [httparse::EMPTY_HEADER; 256];
    let mut parsed = httparse::Response::new(&mut headers);
    if !matches!(parsed.parse(&bytes), Ok(httparse::Status::Complete(_))) {
        return Err(invalid("a head that does not parse"));
    }
    let mut head = Head {
        status: parsed.code.unwrap_or_default(),
        reason: parsed.reason.unwrap_or_default().to_string(),
        ..Head::default()
    };
    let tokens = |value: &[u8]| {
        String::from_utf8_lossy(value)
            .split(',')
            .map(|token| token.trim().to_ascii_lowercase())
            .collect::<Vec<_>>()
    };
    for header in parsed.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        match name.as_str() {
            "content-length" => {
                let length = std::str::from_utf8(header.value)
                    .ok()
                    .and_then(|value| value.trim().parse().ok())
                    .ok_or_else(|| invalid("a Content-Length that is not a number"))?;
                head.content_length = Some(length);
            }
            "transfer-encoding" => {
                head.chunked = tokens(header.value).last().is_some_and(|t| t == "chunked");
            }
            "connection" => {
                let tokens = tokens(header.value);
                head.close |= tokens.iter().any(|t| t == "close");
                head.keep_alive |= tokens.iter().any(|t| t == "keep-alive");
            }
            _ => head.fields.push((name, header.value.to_vec())),
        }
    }
    Ok(Some(head))
}

/// The body that follows `head`, its framing undone.
pub(super) async fn read_body<R: AsyncRead + Unpin>(
    store: &mut BufReader<R>,
    head: &Head,
) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    if head.chunked {
        let mut line = Vec::new();
        loop {
            line.clear();
            (&mut *store)
                .take(1024)
                .read_until(b'\n', &mut line)
                .await?;
            let text = String::from_utf8_lossy(&line);
            let digits = text.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(digits, 16).map_err(|_| invalid("a chunk size"))?;
            if size == 0 {
                break;
            }
            if body.len() + size > MAX_ANSWER {
                return Err(invalid("an answer past its bound"));
            }
            let start = body.len();
            body.resize(start + size, 0);
            store.read_exact(&mut body[start..]).await?;
            let mut crlf = [0u8; 2];
            store.read_exact(&mut crlf).await?;
        }
        // The trailer section, up to its empty line (the store's carry no fields worth keeping).
        loop {
            line.clear();
            let read = (&mut *store)
                .take(MAX_HEAD as u64)
                .read_until(b'\n', &mut line)
                .await?;
            if read == 0 || line == b"\r\n" || line == b"\n" {
                break;
            }
        }
    } else if let Some(length) = head.content_length {
        let length = usize::try_from(length)
            .ok()
            .filter(|length| *length <= MAX_ANSWER)
            .ok_or_else(|| invalid("an answer past its bound"))?;
        body.resize(length, 0);
        store.read_exact(&mut body).await?;
    } else {
        (&mut *store)
            .take(MAX_ANSWER as u64 + 1)
            .read_to_end(&mut body)
            .await?;
        if body.len() > MAX_ANSWER {
            return Err(invalid("an answer past its bound"));
        }
    }
    Ok(body)
}
