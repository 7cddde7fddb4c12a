//! Reading an answer off the wire: a body capped by bytes, and transport errors in words.

use std::time::Instant;

use crate::execution::bodies::{Bodies, HELD, LARGE, Room};
use crate::outcome::{TransportError, TransportKind};

/// Reads at most `cap` bytes of the body; returns the bytes, whether more was sent, the error
/// that cut the body short, if any, and the room its bytes take among the large bodies held
/// (taken before a large body is read on, so that what the run holds of them is bounded).
pub(super) async fn read_capped<'b>(
    mut response: reqwest::Response,
    cap: usize,
    bodies: &'b Bodies,
) -> (Vec<u8>, bool, Option<TransportError>, Room<'b>) {
    // Sized from the declared length (up to 1 MiB: a declared length is only a claim), so the
    // buffer of a large body does not double past it.
    let declared = usize::try_from(response.content_length().unwrap_or(0))
        .unwrap_or(cap)
        .min(cap);
    let mut room = bodies.room(declared).await;
    let mut bytes = Vec::with_capacity(declared.min(1 << 20));
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room_left = cap.saturating_sub(bytes.len());
                let taken = chunk.len().min(room_left);
                let wanted = bytes.len() + taken;
                if wanted >= LARGE && wanted > room.bytes() && room.bytes() < HELD {
                    // Past what was declared (or nothing was): room for as much as the cap
                    // lets it grow to, the room held let go first.
                    drop(std::mem::replace(&mut room, Room::none()));
                    room = bodies.room(cap).await;
                }
                bytes.extend_from_slice(&chunk[..taken]);
                if taken < chunk.len() {
                    return (bytes, true, None, room);
                }
            }
            Ok(None) => return (bytes, false, None, room),
            Err(e) => return (bytes, false, Some(describe_error(&e).cutting_body()), room),
        }
    }
}

/// Whether the connection an answer came on stays open after it (RFC 9112 section 9.3): not
/// after `Connection: close`, nor after an HTTP/1.0 answer without `keep-alive`, nor after a
/// body with neither Content-Length nor chunked framing, which only the close ends (section
/// 6.3, item 8): a store may answer so without saying `close`, and a lane that took its
/// connection for kept would hold every next connect back for one it waits for in vain.
pub(super) fn persists(
    version: reqwest::Version,
    status: u16,
    head: bool,
    headers: &reqwest::header::HeaderMap,
) -> bool {
    use reqwest::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
    let says = |token: &str| {
        headers.get_all(CONNECTION).iter().any(|value| {
            String::from_utf8_lossy(value.as_bytes())
                .split(',')
                .any(|said| said.trim().eq_ignore_ascii_case(token))
        })
    };
    if says("close") {
        return false;
    }
    if version >= reqwest::Version::HTTP_2 {
        return true;
    }
    if version <= reqwest::Version::HTTP_10 && !says("keep-alive") {
        return false;
    }
    let bodiless = head || matches!(status, 100..=199 | 204 | 304);
    bodiless || headers.contains_key(CONTENT_LENGTH) || headers.contains_key(TRANSFER_ENCODING)
}

/// Whether the answer stopped coming mid-body until the timeout: the target sent its head,
/// then stalled. As much a target that stopped answering as one that sent nothing at all.
pub fn stalled_mid_body(exchange: &crate::outcome::Exchange) -> bool {
    exchange.response.is_some()
        && exchange
            .transport_error
            .as_ref()
            .is_some_and(|error| error.body_cut && error.kind == TransportKind::TimedOut)
}

/// The fields an answer's head may have: past what common servers send (nginx, Node and Go
/// take some hundreds), hyper's own 100 turned a conforming answer into no answer.
pub(super) const MAX_HEAD_FIELDS: usize = 256;

/// Whether the target answered, with a head too large to read: an answer, not a target that
/// could not be reached, and no evidence about the contract either (HTTP sets no bound).
pub fn head_too_large(exchange: &crate::outcome::Exchange) -> bool {
    exchange
        .transport_error
        .as_ref()
        .is_some_and(|error| error.kind == TransportKind::HeadTooLarge)
}

pub(super) fn describe_error(error: &reqwest::Error) -> TransportError {
    // A connect that timed out is a connect failure first: the request never left.
    let kind = if error.is_connect() {
        TransportKind::ConnectFailed
    } else if error.is_timeout() {
        TransportKind::TimedOut
    } else if error.is_body() || error.is_decode() {
        TransportKind::BrokenBody
    } else {
        TransportKind::RequestFailed
    };
    let mut reasons = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        reasons.push(cause.to_string());
        source = cause.source();
    }
    // hyper's words for a head past its bounds (`Parse::TooLarge`).
    if reasons
        .iter()
        .any(|reason| reason == "message head is too large")
    {
        return TransportError::new(
            TransportKind::HeadTooLarge,
            format!(
                "the target answered with a head of more than {MAX_HEAD_FIELDS} fields or 400 KiB, which the harness does not read"
            ),
        );
    }
    TransportError::new(kind, reasons.join(": "))
}

pub(super) fn elapsed_ms(started: Instant) -> u64 {
    started.elapsed().as_millis().try_into().unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::persists;
    use reqwest::Version;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn headers(fields: &[(&'static str, &'static str)]) -> HeaderMap {
        fields
            .iter()
            .map(|(name, value)| {
                (
                    reqwest::header::HeaderName::from_static(name),
                    HeaderValue::from_static(value),
                )
            })
            .collect()
    }

    #[test]
    fn a_connection_persists_as_rfc_9112_says() {
        let length = headers(&[("content-length", "2")]);
        let chunked = headers(&[("transfer-encoding", "chunked")]);
        let none = headers(&[]);
        assert!(persists(Version::HTTP_11, 200, false, &length));
        assert!(persists(Version::HTTP_11, 200, false, &chunked));
        // A close-delimited body: only the close ends it, `close` said or not.
        assert!(!persists(Version::HTTP_11, 200, false, &none));
        // No body can follow these: nothing is delimited by a close.
        assert!(persists(Version::HTTP_11, 200, true, &none));
        assert!(persists(Version::HTTP_11, 204, false, &none));
        assert!(persists(Version::HTTP_11, 304, false, &none));
        let close = headers(&[("connection", "Keep-Alive, CLOSE"), ("content-length", "2")]);
        assert!(!persists(Version::HTTP_11, 200, false, &close));
        assert!(!persists(Version::HTTP_10, 200, false, &length));
        let kept = headers(&[("connection", "keep-alive"), ("content-length", "2")]);
        assert!(persists(Version::HTTP_10, 200, false, &kept));
        assert!(persists(Version::HTTP_2, 200, false, &none));
    }

    /// One answer of `body` (its length declared or not) on a loopback port; its URL.
    fn serve_once(body: Vec<u8>, declared: bool) -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head);
            let framing = if declared {
                format!("Content-Length: {}", body.len())
            } else {
                "Connection: close".to_string()
            };
            let _ = stream.write_all(format!("HTTP/1.1 200 OK\r\n{framing}\r\n\r\n").as_bytes());
            let _ = stream.write_all(&body);
        });
        url
    }

    #[test]
    fn a_large_body_is_read_on_only_with_room_to_hold_it() {
        use crate::execution::bodies::{Bodies, HELD, LARGE};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for declared in [true, false] {
            let body = vec![b' '; 3 * LARGE];
            let url = serve_once(body.clone(), declared);
            runtime.block_on(async {
                let bodies = Bodies::default();
                let all = bodies.room(HELD).await;
                let _ = rustls::crypto::ring::default_provider().install_default();
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                let response = client.get(url).send().await.unwrap();
                let read = super::read_capped(response, 1 << 20, &bodies);
                tokio::pin!(read);
                // Everything is held: the body waits for room (in the socket, not here).
                let waited =
                    tokio::time::timeout(std::time::Duration::from_millis(300), &mut read).await;
                assert!(
                    waited.is_err(),
                    "read on without room (declared: {declared})"
                );
                drop(all);
                let (bytes, cut, error, room) = read.await;
                assert_eq!((bytes, cut, error), (body, false, None));
                // Room for what was declared, or for the cap when nothing was.
                let expected = if declared { 3 * LARGE } else { 1 << 20 };
                assert_eq!(room.bytes(), expected);
            });
        }
    }
}
