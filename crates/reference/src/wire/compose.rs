//! One answer's bytes in a [`WireShape`]: pure, so each form is checked without a socket.

use super::{
    FieldSpacing, Framing, HeaderCase, HeaderOrder, Interim, Persistence, Reason, WireShape,
};
use petstore_vocabulary::seed::{fnv1a, splitmix64};

/// A final answer as the store's server wrote it, its framing fields taken out.
#[derive(Debug, Clone, Default)]
pub(super) struct Answer {
    pub(super) status: u16,
    /// The reason phrase the store's server wrote.
    pub(super) reason: String,
    /// Every field but Content-Length, Transfer-Encoding and Connection, in the order written.
    pub(super) fields: Vec<(String, Vec<u8>)>,
    pub(super) body: Payload,
    /// The store's server said `Connection: close`, or the request was HTTP/1.0 without
    /// keep-alive: the connection ends after this answer whatever the shape.
    pub(super) closing: bool,
    /// The store's server said `Connection: keep-alive` (to an HTTP/1.0 request that asked).
    pub(super) keep_alive_said: bool,
    /// The request was HTTP/1.0: no chunked framing, no interim answers (RFC 9110 section 15.2).
    pub(super) http10: bool,
}

/// What follows an answer's head.
#[derive(Debug, Clone)]
pub(super) enum Payload {
    /// A body.
    Bytes(Vec<u8>),
    /// No body can follow (a HEAD request, 1xx, 204, 304); `length` is the Content-Length the
    /// store's server declared for it, if any.
    None { length: Option<u64>, head: bool },
}

impl Default for Payload {
    fn default() -> Payload {
        Payload::Bytes(Vec::new())
    }
}

/// The trailer field sent when a shape asks for one (RFC 9110 section 6.5; Server-Timing is
/// made to travel in trailers).
const TRAILER: (&str, &[u8]) = ("server-timing", b"total;dur=0");

/// The Link field of a 103 Early Hints.
const EARLY_HINT: (&str, &[u8]) = ("link", b"</v1/pets>; rel=preload");

impl WireShape {
    /// Whether the connection ends after `answer`.
    pub(super) fn closes_after(&self, answer: &Answer) -> bool {
        answer.closing || self.closes()
    }

    /// The bytes of the interim answers to write before `answer` (none to HTTP/1.0).
    pub(super) fn interim_bytes(&self, answer: &Answer) -> Vec<u8> {
        let mut bytes = Vec::new();
        if answer.http10 {
            return bytes;
        }
        for interim in &self.interim {
            let (status, reason, fields) = match interim {
                Interim::Continue => (100, "Continue", vec![]),
                Interim::Processing => (102, "Processing", vec![]),
                Interim::EarlyHints => (
                    103,
                    "Early Hints",
                    vec![(EARLY_HINT.0.to_string(), EARLY_HINT.1.to_vec())],
                ),
            };
            self.head(&mut bytes, status, reason, fields);
        }
        bytes
    }

    /// The head as the store's server wrote it, for a 1xx it sent (a `100 Continue` to a
    /// request that expected one): shaped like the rest.
    pub(super) fn interim_as_sent(
        &self,
        status: u16,
        reason: &str,
        fields: Vec<(String, Vec<u8>)>,
    ) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.head(&mut bytes, status, reason, fields);
        bytes
    }

    /// The whole final answer: head, then the body framed as the shape says.
    pub(super) fn answer_bytes(&self, answer: &Answer) -> Vec<u8> {
        let mut fields = answer.fields.clone();
        let closes = self.closes_after(answer);
        let framing = match self.framing {
            Framing::Chunked { .. } if answer.http10 => Framing::ContentLength,
            framing => framing,
        };
        match (&answer.body, framing) {
            (Payload::None { length, .. }, Framing::ContentLength) => {
                if let Some(length) = length {
                    fields.push(("content-length".into(), length.to_string().into_bytes()));
                }
            }
            (Payload::None { head: true, .. }, Framing::Chunked { .. }) => {
                // What a GET would have had (RFC 9110 section 9.3.2).
                fields.push(("transfer-encoding".into(), b"chunked".to_vec()));
            }
            (Payload::None { .. }, _) => {}
            (Payload::Bytes(body), Framing::ContentLength) => {
                fields.push(("content-length".into(), body.len().to_string().into_bytes()));
            }
            (Payload::Bytes(_), Framing::Chunked { trailer, .. }) => {
                fields.push(("transfer-encoding".into(), b"chunked".to_vec()));
                if trailer {
                    fields.push(("trailer".into(), TRAILER.0.as_bytes().to_vec()));
                }
            }
            (Payload::Bytes(_), Framing::CloseDelimited) => {}
        }
        let silent_close = self.framing == Framing::CloseDelimited
            && self.persistence != Persistence::Close
            && !answer.closing;
        if closes && !silent_close {
            fields.push(("connection".into(), b"close".to_vec()));
        } else if !closes
            && (answer.keep_alive_said || self.persistence == Persistence::KeepAliveHeader)
        {
            fields.push(("connection".into(), b"keep-alive".to_vec()));
        }
        let reason = canonical_reason(answer.status, &answer.reason);
        let mut bytes = Vec::new();
        self.head(&mut bytes, answer.status, &reason, fields);
        let Payload::Bytes(body) = &answer.body else {
            return bytes;
        };
        match framing {
            Framing::Chunked {
                size,
                extensions,
                padded_hex,
                trailer,
            } => {
                let extension: &[u8] = if extensions { b";ext=1" } else { b"" };
                let size_line = |bytes: &mut Vec<u8>, length: usize| {
                    let digits = if padded_hex {
                        format!("{length:04X}")
                    } else {
                        format!("{length:x}")
                    };
                    bytes.extend_from_slice(digits.as_bytes());
                    bytes.extend_from_slice(extension);
                    bytes.extend_from_slice(b"\r\n");
                };
                for chunk in body.chunks(size.max(1)) {
                    size_line(&mut bytes, chunk.len());
                    bytes.extend_from_slice(chunk);
                    bytes.extend_from_slice(b"\r\n");
                }
                size_line(&mut bytes, 0);
                if trailer {
                    let field = (TRAILER.0.to_string(), TRAILER.1.to_vec());
                    self.field_lines(&mut bytes, vec![field]);
                }
                bytes.extend_from_slice(b"\r\n");
            }
            Framing::ContentLength | Framing::CloseDelimited => bytes.extend_from_slice(body),
        }
        bytes
    }

    /// A status line and its fields, cased, ordered and spaced as the shape says, and the
    /// empty line that ends them.
    fn head(&self, bytes: &mut Vec<u8>, status: u16, reason: &str, fields: Vec<(String, Vec<u8>)>) {
        let reason = match self.reason {
            Reason::Canonical => reason,
            Reason::Empty => "",
            Reason::AlwaysOk => "OK",
        };
        bytes.extend_from_slice(format!("HTTP/1.1 {status} {reason}\r\n").as_bytes());
        self.field_lines(bytes, fields);
        bytes.extend_from_slice(b"\r\n");
    }

    fn field_lines(&self, bytes: &mut Vec<u8>, fields: Vec<(String, Vec<u8>)>) {
        let (before, after): (&[u8], &[u8]) = match self.spacing {
            FieldSpacing::Space => (b" ", b""),
            FieldSpacing::None => (b"", b""),
            FieldSpacing::Wide => (b" \t ", b" \t"),
        };
        for (name, value) in self.ordered(fields) {
            bytes.extend_from_slice(self.cased(&name).as_bytes());
            bytes.push(b':');
            bytes.extend_from_slice(before);
            bytes.extend_from_slice(&value);
            bytes.extend_from_slice(after);
            bytes.extend_from_slice(b"\r\n");
        }
    }

    /// The fields in the shape's order; fields of one name keep their relative order.
    fn ordered(&self, fields: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
        let mut slots: Vec<usize> = (0..fields.len()).collect();
        match self.header_order {
            HeaderOrder::AsProduced => return fields,
            HeaderOrder::Reversed => slots.reverse(),
            HeaderOrder::Shuffled { seed } => {
                // From the seed and the names, so the same answer always comes the same way.
                let mut state = fields
                    .iter()
                    .fold(seed, |state, (name, _)| splitmix64(state ^ fnv1a(name)));
                for i in (1..slots.len()).rev() {
                    state = splitmix64(state);
                    slots.swap(i, (state % (i as u64 + 1)) as usize);
                }
            }
        }
        // Each slot takes the next field, in the order produced, of the name it was dealt.
        let mut queues: Vec<(String, std::collections::VecDeque<Vec<u8>>)> = Vec::new();
        for (name, value) in &fields {
            match queues
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                Some((_, queue)) => queue.push_back(value.clone()),
                None => queues.push((name.clone(), [value.clone()].into())),
            }
        }
        slots
            .into_iter()
            .map(|slot| {
                let name = &fields[slot].0;
                let value = queues
                    .iter_mut()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .and_then(|(_, queue)| queue.pop_front())
                    .unwrap_or_default();
                (name.clone(), value)
            })
            .collect()
    }

    fn cased(&self, name: &str) -> String {
        match self.header_case {
            HeaderCase::Lower => name.to_ascii_lowercase(),
            HeaderCase::Title => title_case(name),
            HeaderCase::Upper => name.to_ascii_uppercase(),
            HeaderCase::Mixed { seed } => {
                let draw = splitmix64(seed ^ fnv1a(&name.to_ascii_lowercase()));
                match draw % 4 {
                    0 => name.to_ascii_lowercase(),
                    1 => title_case(name),
                    2 => name.to_ascii_uppercase(),
                    _ => name
                        .chars()
                        .enumerate()
                        .map(|(i, c)| {
                            if (draw >> (2 + i % 60)) & 1 == 1 {
                                c.to_ascii_uppercase()
                            } else {
                                c.to_ascii_lowercase()
                            }
                        })
                        .collect(),
                }
            }
        }
    }
}

/// `content-type` -> `Content-Type`.
fn title_case(name: &str) -> String {
    let mut start = true;
    name.chars()
        .map(|c| {
            let c = if start {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            start = c == '-';
            c
        })
        .collect()
}

/// The reason phrase the store's server wrote, or the status's usual one when it wrote none.
fn canonical_reason(status: u16, written: &str) -> String {
    if !written.is_empty() {
        return written.to_string();
    }
    axum::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|status| status.canonical_reason())
        .unwrap_or("")
        .to_string()
}
