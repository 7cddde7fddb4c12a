//! The one raw-HTTP test server. Every target a test writes by hand (a stall mid-body, a
//! Content-Length the bytes do not match, an echo of the key, a reset), every proxy in front
//! of the reference (throttling, spoiling one answer, capping connections, forwarding for
//! `--proxy`, a TLS front) and every port that only counts who connects is one of these:
//! bound on 127.0.0.1 at an ephemeral port, each connection served on a thread of its own,
//! alive as long as the test binary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// One HTTP/1.1 message: its head (up to and with the blank line) and its Content-Length body.
pub struct Message {
    pub head: String,
    pub body: Vec<u8>,
}

impl Message {
    /// The first line: `GET /v1/pets?limit=1 HTTP/1.1`, or an answer's status line.
    pub fn first_line(&self) -> &str {
        self.head.lines().next().unwrap_or("")
    }

    pub fn method(&self) -> &str {
        self.first_line().split(' ').next().unwrap_or("")
    }

    /// The request target as sent, query included.
    pub fn target(&self) -> &str {
        self.first_line().split(' ').nth(1).unwrap_or("")
    }

    /// The request target less its query.
    pub fn path(&self) -> &str {
        self.target().split('?').next().unwrap_or("")
    }

    /// The first field named `name` (any letter case), without the whitespace around it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (field, value) = line.split_once(':')?;
            field.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// Reads a head up to and with its blank line; `None` at the end of the connection.
fn read_head(reader: &mut impl BufRead) -> Option<String> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        head.push_str(&line);
        if line == "\r\n" || line == "\n" {
            return Some(head);
        }
    }
}

/// Reads the body the head's Content-Length declares (none declared: none read).
fn read_body(reader: &mut impl BufRead, head: &str) -> Option<Vec<u8>> {
    let length = head
        .lines()
        .find_map(|line| {
            let (field, value) = line.split_once(':')?;
            field
                .eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// Reads one message (a request, or an upstream's answer); `None` at the end of the connection.
pub fn read_message(reader: &mut impl BufRead) -> Option<Message> {
    let head = read_head(reader)?;
    let body = read_body(reader, &head)?;
    Some(Message { head, body })
}

/// A connection as the server holds it: plain TCP, or TLS over it.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Stream {
    /// The socket under it: to shut it down, or to read the server's own address.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(stream) => stream,
            Stream::Tls(tls) => tls.get_ref(),
        }
    }

    /// Makes the end of the connection a reset (RST), not an orderly close: zero linger, so
    /// that when the handler lets it go, unsent and unread bytes are dropped.
    pub fn reset_on_close(&self) {
        let Ok(socket) = self.tcp().try_clone() else {
            return;
        };
        // std sets no linger; tokio's socket does, on the same socket.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let _ = socket.set_nonblocking(true);
            if let Ok(socket) = tokio::net::TcpStream::from_std(socket) {
                let _ = socket.set_zero_linger();
            }
        });
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(stream) => stream.read(buf),
            Stream::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(stream) => stream.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(stream) => stream.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}

/// What a server has seen: connections accepted, and the most open at once.
#[derive(Default)]
struct Counts {
    accepted: AtomicUsize,
    open: AtomicUsize,
    most_open: AtomicUsize,
}

/// A running server: its address and what it has seen.
pub struct Server {
    addr: SocketAddr,
    tls: bool,
    counts: Arc<Counts>,
}

impl Server {
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `host:port`, as a proxy's upstream or a forward proxy's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL, as the contract's `{base_url}`: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}/v1", self.addr)
    }

    pub fn accepted(&self) -> usize {
        self.counts.accepted.load(Ordering::SeqCst)
    }

    pub fn most_open(&self) -> usize {
        self.counts.most_open.load(Ordering::SeqCst)
    }
}

/// A server to be started: where it listens, how many connections it holds, TLS or not.
pub struct Listen {
    host: &'static str,
    at_most: usize,
    tls: Option<Arc<ServerConfig>>,
    backlog: Option<i32>,
    idle: Option<Duration>,
    reset_past: usize,
    workers: Option<Arc<Workers>>,
}

/// A server on 127.0.0.1, with no cap on its connections, in plain TCP.
pub fn listen() -> Listen {
    Listen {
        host: "127.0.0.1",
        at_most: usize::MAX,
        tls: None,
        backlog: None,
        idle: None,
        reset_past: usize::MAX,
        workers: None,
    }
}

/// At most so many requests handled at once, the rest waiting their turn (a worker pool).
struct Workers {
    free: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Workers {
    fn take(&self) {
        let mut free = self.free.lock().unwrap();
        while *free == 0 {
            free = self.freed.wait(free).unwrap();
        }
        *free -= 1;
    }

    fn give_back(&self) {
        *self.free.lock().unwrap() += 1;
        self.freed.notify_one();
    }
}

impl Listen {
    /// Listens on `host` (127.0.0.2: another host on loopback), or on 127.0.0.1 where this
    /// machine does not have it.
    pub fn host(self, host: &'static str) -> Listen {
        Listen { host, ..self }
    }

    /// Accepts a connection only while fewer than `open` are: the rest wait in the listen
    /// backlog, as on a server with a worker pool or a connection cap.
    pub fn at_most(self, open: usize) -> Listen {
        Listen {
            at_most: open,
            ..self
        }
    }

    /// A listen backlog of `connections` (Python's socketserver asks for 5): connections past
    /// it are not completed until the server accepts.
    pub fn backlog(self, connections: i32) -> Listen {
        Listen {
            backlog: Some(connections),
            ..self
        }
    }

    /// Closes a kept-alive connection on which no request came for `idle` (as Python's
    /// `http.server` with a `timeout`, or any server's keep-alive timeout).
    pub fn idle(self, idle: Duration) -> Listen {
        Listen {
            idle: Some(idle),
            ..self
        }
    }

    /// Resets, as soon as it is accepted, every connection past `open` open at once (an
    /// application server past its connection limit).
    pub fn reset_past(self, open: usize) -> Listen {
        Listen {
            reset_past: open,
            ..self
        }
    }

    /// Handles at most `workers` requests at once; the rest wait for a worker.
    pub fn workers(self, workers: usize) -> Listen {
        Listen {
            workers: Some(Arc::new(Workers {
                free: std::sync::Mutex::new(workers),
                freed: std::sync::Condvar::new(),
            })),
            ..self
        }
    }

    /// Speaks TLS with `config` on every connection.
    pub fn tls(self, config: ServerConfig) -> Listen {
        Listen {
            tls: Some(Arc::new(config)),
            ..self
        }
    }

    /// Hands every connection to `handle`, on a thread of its own; it is closed when `handle`
    /// returns.
    pub fn connections(self, handle: impl Fn(Stream) + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind((self.host, 0))
            .or_else(|_| TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        if let Some(backlog) = self.backlog {
            // listen(2) again on a listening socket sets its backlog anew (Linux).
            use std::os::fd::AsRawFd;
            // SAFETY: the descriptor is the listener's own, open for as long as it lives.
            unsafe { libc::listen(listener.as_raw_fd(), backlog) };
        }
        let addr = listener.local_addr().unwrap();
        let counts = Arc::new(Counts::default());
        let server = Server {
            addr,
            tls: self.tls.is_some(),
            counts: Arc::clone(&counts),
        };
        let handle = Arc::new(handle);
        std::thread::spawn(move || {
            loop {
                while counts.open.load(Ordering::SeqCst) >= self.at_most {
                    std::thread::sleep(Duration::from_millis(1));
                }
                let Ok((tcp, _)) = listener.accept() else {
                    continue;
                };
                counts.accepted.fetch_add(1, Ordering::SeqCst);
                if counts.open.load(Ordering::SeqCst) >= self.reset_past {
                    let stream = Stream::Plain(tcp);
                    stream.reset_on_close();
                    continue;
                }
                let _ = tcp.set_read_timeout(self.idle);
                let open = counts.open.fetch_add(1, Ordering::SeqCst) + 1;
                counts.most_open.fetch_max(open, Ordering::SeqCst);
                let (handle, counts, tls) =
                    (Arc::clone(&handle), Arc::clone(&counts), self.tls.clone());
                std::thread::spawn(move || {
                    // Heads and bodies go out in separate writes: without this, Nagle's
                    // algorithm and a delayed ACK cost each answer 40 ms.
                    let _ = tcp.set_nodelay(true);
                    let stream = match tls {
                        None => Some(Stream::Plain(tcp)),
                        Some(config) => ServerConnection::new(config)
                            .ok()
                            .map(|tls| Stream::Tls(Box::new(StreamOwned::new(tls, tcp)))),
                    };
                    if let Some(stream) = stream {
                        handle(stream);
                    }
                    counts.open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        server
    }

    /// Reads every request of every connection and hands it to `answer`, with its number
    /// across the server (from 1), to write its answer (or part of one, slowly, or none);
    /// `answer` says whether the connection goes on. A request that expects `100 Continue`
    /// gets it before its body is read, as from any HTTP/1.1 server.
    pub fn requests(
        self,
        answer: impl Fn(&Message, usize, &mut Stream) -> bool + Send + Sync + 'static,
    ) -> Server {
        let count = AtomicUsize::new(0);
        let workers = self.workers.clone();
        self.connections(move |stream| {
            let mut reader = BufReader::new(stream);
            while let Some(head) = read_head(&mut reader) {
                let expects_continue = head.lines().any(|line| {
                    line.split_once(':').is_some_and(|(field, value)| {
                        field.eq_ignore_ascii_case("expect")
                            && value.trim().eq_ignore_ascii_case("100-continue")
                    })
                });
                if expects_continue
                    && reader
                        .get_mut()
                        .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                        .is_err()
                {
                    return;
                }
                let Some(body) = read_body(&mut reader, &head) else {
                    return;
                };
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                let stream = reader.get_mut();
                if let Some(workers) = &workers {
                    workers.take();
                }
                let go_on = answer(&Message { head, body }, n, stream);
                if let Some(workers) = &workers {
                    workers.give_back();
                }
                if stream.flush().is_err() || !go_on {
                    return;
                }
            }
        })
    }

    /// A proxy to `upstream` (a base URL, such as the reference's), one upstream connection
    /// per request; `replace` may answer the `n`th request itself (bytes to write) before the
    /// upstream sees it, or `None` to pass the upstream's answer through.
    pub fn proxy(
        self,
        upstream: &str,
        replace: impl Fn(&Message, usize) -> Option<Vec<u8>> + Send + Sync + 'static,
    ) -> Server {
        let upstream = authority(upstream);
        self.requests(move |request, n, client| {
            if let Some(answer) = replace(request, n) {
                return client.write_all(&answer).is_ok();
            }
            let Some(answer) = forward(&upstream, request) else {
                return false;
            };
            client.write_all(answer.head.as_bytes()).is_ok()
                && client.write_all(&answer.body).is_ok()
        })
    }
}

/// `host:port` of a base URL (`http://127.0.0.1:PORT/v1`).
pub fn authority(base_url: &str) -> String {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest).to_string()
}

/// Sends `request` to `upstream` (`host:port`) on a connection of its own; its answer. The
/// proxy never has to tell where one kept-alive answer ends but by its Content-Length.
pub fn forward(upstream: &str, request: &Message) -> Option<Message> {
    let mut server = TcpStream::connect(upstream).ok()?;
    server.write_all(request.head.as_bytes()).ok()?;
    server.write_all(&request.body).ok()?;
    read_message(&mut BufReader::new(server))
}

/// A server that answers every request as `answer` writes it; returns its base URL.
pub fn raw(
    answer: impl Fn(&Message, usize, &mut Stream) -> bool + Send + Sync + 'static,
) -> String {
    listen().requests(answer).base_url()
}

/// A proxy to `upstream` that may answer a request itself; returns its base URL.
pub fn proxy(
    upstream: &str,
    replace: impl Fn(&Message, usize) -> Option<Vec<u8>> + Send + Sync + 'static,
) -> String {
    listen().proxy(upstream, replace).base_url()
}

/// A port where anything that connects is counted, and nothing is read or answered.
pub fn counting() -> Server {
    listen().connections(|_| {})
}

/// The base URL of a port on 127.0.0.1 where nothing listens: bound to draw a free port, then
/// let go, so a connection to it is refused.
pub fn closed() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}/v1", listener.local_addr().unwrap())
}

/// A JSON answer's head, with the Content-Length it declares (not necessarily the body's).
pub fn json_head(status: &str, content_length: usize) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {content_length}\r\n\r\n"
    )
}

/// Writes a whole answer: `status` (`200 OK`), `headers`, and `body` with its true
/// Content-Length. Whether it was written.
pub fn respond(stream: &mut Stream, status: &str, headers: &[(&str, &str)], body: &[u8]) -> bool {
    let mut head = format!("HTTP/1.1 {status}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).is_ok() && stream.write_all(body).is_ok()
}

/// `respond` with `Content-Type: application/json`.
pub fn respond_json(
    stream: &mut Stream,
    status: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> bool {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    respond(stream, status, &all, body.as_bytes())
}

/// Shuts both ways down: the client sees the end of the connection at once.
pub fn close(stream: &Stream) {
    let _ = stream.tcp().shutdown(Shutdown::Both);
}
