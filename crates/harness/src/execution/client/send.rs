//! One request on one lane: built, recorded with the key redacted, its answer read capped.

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use super::Client;
use super::transport::{describe_error, elapsed_ms, persists, read_capped};
use crate::execution::lanes::Lane;
use crate::generation::request::{Body, CredentialSpelling, Elsewhere, RequestSpec};
use crate::outcome::{
    BODY_KEPT, Exchange, REDACTED, RecordedRequest, RecordedResponse, TransportError, TransportKind,
};

/// What one request on a lane came to.
pub(super) enum Sent {
    /// An exchange: an answer, or a failure that stands for one (a failed connect, a timeout);
    /// and whether it went on a connection opened for it.
    Exchange(Exchange, bool),
    /// After `stall_after` without response headers, on a connection opened for it that the
    /// server has not taken (the caller cuts the level and sends it again).
    Stalled,
    /// The connection closed or was reset before any answer: `unwritten` when the client
    /// knows the request never went out on it, `fresh` when the connection was opened for it.
    Closed {
        exchange: Exchange,
        unwritten: bool,
        fresh: bool,
    },
}

impl Client {
    /// One request on `http` (a lane's client).
    pub(super) async fn send_once(
        &self,
        lane: &Lane,
        spec: &RequestSpec,
        stall_after: Option<Duration>,
        answers_before: u64,
    ) -> Sent {
        let connects = lane.connects();
        let started = Instant::now();
        let (request, recorded) = match self.build(lane, spec) {
            Ok(built) => built,
            Err(reason) => {
                return Sent::Exchange(
                    self.failed_exchange(
                        spec,
                        String::new(),
                        TransportError::harness(reason),
                        started,
                    ),
                    false,
                );
            }
        };
        let pending = request.send();
        tokio::pin!(pending);
        let sent = match stall_after {
            Some(after) => tokio::select! {
                sent = &mut pending => sent,
                _ = tokio::time::sleep(after) => {
                    // Fresh, and others answered meanwhile: the server did not take it.
                    if lane.connects() != connects
                        && self.answers.load(Relaxed) > answers_before
                    {
                        lane.disconnected();
                        return Sent::Stalled;
                    }
                    pending.await
                }
            },
            None => pending.await,
        };
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                lane.disconnected();
                let closed =
                    !(e.is_connect() || e.is_timeout() || e.is_builder() || answer_came(&e));
                let exchange = Exchange {
                    request: recorded,
                    response: None,
                    transport_error: Some(self.redact_error(describe_error(&e))),
                    elapsed_ms: elapsed_ms(started),
                    throttled: None,
                    retries: None,
                };
                if closed {
                    return Sent::Closed {
                        exchange,
                        unwritten: never_written(&e),
                        fresh: lane.connects() != connects,
                    };
                }
                return Sent::Exchange(exchange, lane.connects() != connects);
            }
        };
        let fresh = lane.connects() != connects;
        Sent::Exchange(
            self.read_answer(lane, spec, response, recorded, started)
                .await,
            fresh,
        )
    }

    /// The request on the wire and as recorded: the key in its place on the wire, and written
    /// `[REDACTED]` (or an expression over it, never its encoding) in the record.
    fn build(
        &self,
        lane: &Lane,
        spec: &RequestSpec,
    ) -> Result<(reqwest::RequestBuilder, RecordedRequest), String> {
        let mut url = reqwest::Url::parse(&format!("{}{}", self.base, spec.path))
            .map_err(|e| format!("bad URL: {e}"))?;
        if let Some(raw) = &spec.raw_query {
            url.set_query(Some(raw));
        } else if !spec.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &spec.query {
                pairs.append_pair(name, value);
            }
        }
        // The URL as recorded: redacted before the key may join it, which is then written as
        // `[REDACTED]` (never its encoding).
        let mut recorded_url = self.redactor.redact(url.as_str());
        let elsewhere = spec.credential.elsewhere(&self.key);
        if let Some(Elsewhere::Query(name, key)) = &elsewhere {
            url.query_pairs_mut().append_pair(name, key);
            let separator = if recorded_url.contains('?') { '&' } else { '?' };
            recorded_url = format!("{recorded_url}{separator}{name}={REDACTED}");
        }
        let method =
            reqwest::Method::from_bytes(spec.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut request = lane.http.request(method, url);
        let mut headers = Vec::new();
        // Header name and the value as recorded, for the ones that carry the key.
        let mut recorded_key_headers: Vec<(String, String)> = Vec::new();
        if let Some(value) = spec.credential.header_value(&self.key) {
            headers.push(("Authorization".to_string(), value));
            if let Some(recorded) = spec.credential.recorded_value(&self.key) {
                recorded_key_headers.push(("Authorization".into(), recorded));
            }
        }
        if let (Some(Elsewhere::Header(name, value)), Some(Elsewhere::Header(_, recorded))) =
            (elsewhere, spec.credential.elsewhere(REDACTED))
        {
            headers.push((name.to_string(), value));
            recorded_key_headers.push((name.to_string(), recorded));
        }
        let (body, padded) = body_of(spec, &mut headers);
        headers.push(("Accept".into(), "application/json".into()));
        // A case's own headers (a client's set) take the place of the client's of that name.
        for (name, value) in &spec.headers {
            headers.retain(|(own, _)| !own.eq_ignore_ascii_case(name));
            headers.push((name.clone(), value.clone()));
        }
        let own_headers = headers.len();
        headers.extend(self.settings.extra_headers.iter().cloned());
        for (name, value) in &headers {
            request = request.header(name, value);
        }
        let (recorded_body, mut body_length, body_escaped) = match &body {
            Some(bytes) => {
                let (text, length, escaped) = self.recorded_body(bytes);
                (Some(text), length, escaped)
            }
            None => (None, None, false),
        };
        if let Some(padded) = padded {
            body_length = body_length.map(|_| padded.length());
            request = request.body(reqwest::Body::wrap(padded));
        } else if let Some(body) = body {
            request = request.body(body); // shared with the spec, not copied: a body may be 1 MiB
        }
        let recorded = RecordedRequest {
            method: spec.method.to_string(),
            url: recorded_url,
            headers: headers
                .iter()
                .enumerate()
                .map(|(n, (name, value))| {
                    // The client's own header that carries the key is written as recorded (an
                    // expression over `[REDACTED]`); every other value is redacted.
                    let recorded = recorded_key_headers
                        .iter()
                        .find(|(key_header, _)| n < own_headers && key_header == name);
                    match recorded {
                        Some((_, recorded)) => (name.clone(), recorded.clone()),
                        None => (name.clone(), self.redactor.redact(value)),
                    }
                })
                .collect(),
            body: recorded_body,
            body_length,
            key_channel: spec.credential.channel().map(String::from),
            body_escaped,
        };
        Ok((request, recorded))
    }

    /// The answer, read capped and as its Content-Encoding says, into the exchange.
    async fn read_answer(
        &self,
        lane: &Lane,
        spec: &RequestSpec,
        response: reqwest::Response,
        recorded: RecordedRequest,
        started: Instant,
    ) -> Exchange {
        self.slowest_ms.fetch_max(elapsed_ms(started), Relaxed);
        lane.served(persists(
            response.version(),
            response.status().as_u16(),
            spec.method == "HEAD",
            response.headers(),
        ));
        let status = response.status().as_u16();
        let version = format!("{:?}", response.version());
        let response_headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                // As received: rules judge what came back, whatever the key is; every
                // writer redacts (the reports as a whole, the request log, the terminal).
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        // Every field's codings, in the order applied (RFC 9110 section 5.3).
        let codings: Vec<&str> = response
            .headers()
            .get_all(reqwest::header::CONTENT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect();
        let content_encoding = (!codings.is_empty()).then(|| codings.join(", "));
        // The body's text is read in its charset (the redactor reads characters, not bytes).
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(String::from);
        let (bytes, mut body_truncated, body_error, mut room) =
            read_capped(response, self.settings.body_cap, &self.bodies).await;
        lane.read_done();
        if body_truncated || body_error.is_some() {
            lane.disconnected(); // a body not read to its end takes its connection with it
        }
        // A whole body is read as its Content-Encoding says (the headers stay as received).
        let (bytes, unread) = if body_truncated || body_error.is_some() {
            (bytes, None)
        } else {
            let decoded =
                super::coding::decoded(bytes, content_encoding.as_deref(), self.settings.body_cap);
            body_truncated = decoded.over;
            if decoded.bytes.len() > room.bytes() && room.bytes() < crate::execution::bodies::HELD {
                // Inflated past the room it was read in: room for what it came to.
                drop(room);
                room = self.bodies.room(decoded.bytes.len()).await;
            }
            (decoded.bytes, decoded.unread)
        };
        // A cut may leave the start of the key at the end.
        let cut = body_truncated || body_error.is_some();
        let unparsed = body_truncated
            .then(|| format!("body exceeds {} bytes", self.settings.body_cap))
            .or(unread);
        let body = self
            .bodies
            .record(
                &bytes,
                cut,
                unparsed,
                content_type.as_deref(),
                &self.redactor,
            )
            .await;
        drop(bytes);
        drop(room);
        Exchange {
            request: recorded,
            response: Some(RecordedResponse {
                version,
                status,
                headers: response_headers,
                body: body.text,
                body_truncated,
                body_omitted: body.omitted,
                json: body.json,
                json_error: body.json_error,
                duplicate_names: body.duplicate_names,
            }),
            transport_error: body_error.map(|e| self.redact_error(e)),
            elapsed_ms: elapsed_ms(started),
            throttled: None,
            retries: None,
        }
    }

    /// An exchange for a request that was not sent, and why.
    /// A request body as an exchange records it: redacted, its first [`BODY_KEPT`] bytes and
    /// the whole length when it is longer (what evidence and reports keep anyway; a 1 MiB
    /// rung of a size ladder is not copied and redacted whole while it is in flight).
    /// Bytes that are not UTF-8 are written as they are (escaped: `\xHH`), not as U+FFFD.
    fn recorded_body(&self, bytes: &[u8]) -> (String, Option<usize>, bool) {
        let (kept, length) = if bytes.len() <= BODY_KEPT {
            (bytes, None)
        } else {
            let mut end = BODY_KEPT;
            // Not inside a character (it would show as U+FFFD).
            while end > 0 && bytes[end] & 0xC0 == 0x80 {
                end -= 1;
            }
            (&bytes[..end], Some(bytes.len()))
        };
        // Cut: the start of the key may be left at the end.
        let redact = |text: &str| match length {
            Some(_) => self.redactor.redact_cut(text),
            None => self.redactor.redact(text),
        };
        match std::str::from_utf8(kept) {
            Ok(text) => (redact(text), length, false),
            Err(_) => (crate::outcome::escape_body(kept, redact), length, true),
        }
    }

    /// The whole body of `spec`, redacted, for the writers that keep every byte sent (the
    /// request log, the HAR) where the exchange kept its first [`BODY_KEPT`] bytes.
    /// The second value says whether the text is escaped (the bytes are not UTF-8).
    pub fn whole_request_body(&self, spec: &RequestSpec) -> Option<(String, bool)> {
        let bytes = spec.body.bytes()?;
        Some(match std::str::from_utf8(&bytes) {
            Ok(text) => (self.redactor.redact(text), false),
            Err(_) => (
                crate::outcome::escape_body(&bytes, |text| self.redactor.redact(text)),
                true,
            ),
        })
    }

    /// A transport error as recorded: its causes redacted (the kind's words hold no key).
    fn redact_error(&self, error: TransportError) -> TransportError {
        TransportError {
            detail: self.redactor.redact_sent(&error.detail),
            ..error
        }
    }

    pub fn not_sent(&self, spec: &RequestSpec, reason: &str) -> Exchange {
        let url = format!("{}{}", self.base, spec.path);
        self.failed_exchange(
            spec,
            self.redactor.redact(&url),
            TransportError::new(TransportKind::NotSent, reason),
            Instant::now(),
        )
    }

    pub(super) fn failed_exchange(
        &self,
        spec: &RequestSpec,
        url: String,
        error: TransportError,
        started: Instant,
    ) -> Exchange {
        Exchange {
            request: RecordedRequest {
                method: spec.method.into(),
                url,
                headers: Vec::new(),
                body: None,
                body_length: None,
                key_channel: None,
                body_escaped: false,
            },
            response: None,
            transport_error: Some(error),
            elapsed_ms: elapsed_ms(started),
            throttled: None,
            retries: None,
        }
    }
}

/// Whether bytes of an answer came that hyper could not read as one (a head too large, a
/// status that is none, not HTTP at all: every parse error): an answer of sorts, not a
/// connection closed before any.
fn answer_came(error: &reqwest::Error) -> bool {
    hyper_error(error).is_some_and(hyper::Error::is_parse)
}

/// The hyper error under a reqwest one, if any.
fn hyper_error(error: &reqwest::Error) -> Option<&hyper::Error> {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(hyper) = cause.downcast_ref::<hyper::Error>() {
            return Some(hyper);
        }
        source = cause.source();
    }
    None
}

/// Whether hyper handed the request back unsent: its connection closed before the request was
/// written to it (hyper's "canceled"), so sending it again cannot repeat it.
fn never_written(error: &reqwest::Error) -> bool {
    hyper_error(error).is_some_and(hyper::Error::is_canceled)
}

/// Spaces a padded body is sent from, block after block (one static block, shared).
static SPACES: [u8; 64 << 10] = [b' '; 64 << 10];

/// A padded body on the wire ([`Body::Padded`]): its head, then [`SPACES`] until its length,
/// with that exact length declared (so it goes out with a Content-Length, as any body).
struct Padded {
    head: Option<bytes::Bytes>,
    /// Spaces still to send.
    spaces: usize,
}

impl Padded {
    fn new(head: bytes::Bytes, length: usize) -> Padded {
        Padded {
            spaces: length.saturating_sub(head.len()),
            head: Some(head),
        }
    }

    fn length(&self) -> usize {
        self.head.as_ref().map_or(0, bytes::Bytes::len) + self.spaces
    }
}

impl http_body::Body for Padded {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
        let data = match self.head.take() {
            Some(head) => head,
            None if self.spaces == 0 => return std::task::Poll::Ready(None),
            None => {
                let block = self.spaces.min(SPACES.len());
                self.spaces -= block;
                bytes::Bytes::from_static(&SPACES[..block])
            }
        };
        std::task::Poll::Ready(Some(Ok(http_body::Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.spaces == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.length() as u64)
    }
}

/// The body on the wire (shared with the spec, not copied) and its Content-Type among
/// `headers`; a padded body is streamed (`Padded`), and its start is what is recorded.
fn body_of(
    spec: &RequestSpec,
    headers: &mut Vec<(String, String)>,
) -> (Option<bytes::Bytes>, Option<Padded>) {
    match &spec.body {
        Body::None => (None, None),
        Body::Json(value) => {
            headers.push(("Content-Type".into(), "application/json".into()));
            (
                Some(serde_json::to_vec(value).unwrap_or_default().into()),
                None,
            )
        }
        Body::Raw {
            content_type,
            bytes,
        } => {
            if let Some(content_type) = content_type {
                headers.push(("Content-Type".into(), content_type.clone()));
            }
            (Some(bytes.clone()), None)
        }
        Body::Padded { head, length } => {
            headers.push(("Content-Type".into(), "application/json".into()));
            // What is recorded: the head and the spaces up to what an exchange keeps.
            let mut kept = head.to_vec();
            kept.resize((*length).min(BODY_KEPT + 1).max(head.len()), b' ');
            (Some(kept.into()), Some(Padded::new(head.clone(), *length)))
        }
    }
}
