//! How the reference's HTTP/1.1 answers travel on the socket: every way RFC 9112 lets a server
//! write the same answer (header name case and order, field spacing, reason phrase, framing,
//! the writes, unasked interim answers, keep-alive or close). A [`WireShape`] other than the
//! default puts a front before the store (see `front`): what the answers say never changes.

mod compose;
mod front;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

pub(super) use front::serve;

use super::Variant;
use petstore_vocabulary::seed::splitmix64;

/// How every HTTP/1.1 answer is written. The default is the reference's own server, with no
/// front: lowercase names in hyper's order, `Content-Length`, one write, keep-alive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireShape {
    pub header_case: HeaderCase,
    pub header_order: HeaderOrder,
    pub spacing: FieldSpacing,
    pub reason: Reason,
    pub framing: Framing,
    pub writes: Writes,
    /// Written, in this order, before every final answer no client asked them for.
    pub interim: Vec<Interim>,
    pub persistence: Persistence,
}

/// The letter case of header field names (RFC 9110 section 5.1: case-insensitive).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HeaderCase {
    /// As hyper writes them: `content-type`.
    #[default]
    Lower,
    /// `Content-Type`.
    Title,
    /// `CONTENT-TYPE`.
    Upper,
    /// Each name in a case of its own (lower, Title, UPPER, or letter by letter), from the seed.
    Mixed { seed: u64 },
}

/// The order of the header fields. Fields of one name keep their relative order, which RFC 9110
/// section 5.3 makes significant; only fields of different names move.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HeaderOrder {
    #[default]
    AsProduced,
    Reversed,
    Shuffled {
        seed: u64,
    },
}

/// The optional whitespace around a field value (RFC 9112 section 5: `name ":" OWS value OWS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldSpacing {
    /// `name: value`.
    #[default]
    Space,
    /// `name:value`.
    None,
    /// `name: \t value \t`: spaces and tabs on both sides.
    Wide,
}

/// The reason phrase, which a client ignores (RFC 9112 section 4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reason {
    /// The status code's usual phrase: `404 Not Found`.
    #[default]
    Canonical,
    /// None at all: `404 ` (the space stays).
    Empty,
    /// `OK` whatever the status: `404 OK`.
    AlwaysOk,
}

/// How the end of a body is told (RFC 9112 section 6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Framing {
    #[default]
    ContentLength,
    /// `Transfer-Encoding: chunked` (RFC 9112 section 7.1), never to an HTTP/1.0 request.
    Chunked {
        /// Bytes of body per chunk, at least 1.
        size: usize,
        /// Each chunk's size line carries `;ext=1`, which a recipient ignores.
        extensions: bool,
        /// Chunk sizes in upper-case hex with leading zeros (`000A`) instead of `a`.
        padded_hex: bool,
        /// A trailer field after the last chunk (announced by `Trailer`); without it the
        /// trailer section is empty.
        trailer: bool,
    },
    /// No length at all: the body ends when the connection closes (RFC 9112 section 6.3,
    /// item 8), so every answer closes its connection.
    CloseDelimited,
}

/// How the bytes of one answer are handed to the socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Writes {
    #[default]
    Whole,
    /// `size` bytes a write, each flushed, with TCP_NODELAY: the client sees them trickle in.
    Pieces { size: usize },
}

/// An interim (1xx) answer no client asked for (RFC 9110 section 15.2: a client must accept them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interim {
    /// `100 Continue`.
    Continue,
    /// `102 Processing` (RFC 2518).
    Processing,
    /// `103 Early Hints` with a `Link` header (RFC 8297).
    EarlyHints,
}

/// What becomes of the connection after an answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Persistence {
    /// Kept open, saying nothing (HTTP/1.1's default).
    #[default]
    KeepAlive,
    /// Kept open, saying `Connection: keep-alive` (a token HTTP/1.1 allows and ignores).
    KeepAliveHeader,
    /// `Connection: close`, and closed after the answer.
    Close,
}

impl WireShape {
    /// Whether this is the default shape: the store answers with no front.
    pub fn is_plain(&self) -> bool {
        *self == WireShape::default()
    }

    /// Whether every answer closes its connection.
    pub fn closes(&self) -> bool {
        self.persistence == Persistence::Close || self.framing == Framing::CloseDelimited
    }

    /// One seed, one shape: each dimension drawn from its forms (see [`WireShape::forms`]).
    /// Chunk extensions come only with chunks of 64 bytes or more: hyper's client, the
    /// harness's, stops reading a body after 16 KiB of extension bytes (a transport cut, an
    /// inconclusive verdict), which 1-byte chunks reach past a 3 KiB body.
    pub fn draw(seed: u64) -> WireShape {
        let mut state = seed;
        let mut next = move |below: usize| -> usize {
            state = splitmix64(state);
            (state % below as u64) as usize
        };
        let mut pick = |forms: &[WireShape]| forms[next(forms.len())].clone();
        let mut shape = pick(&Self::forms(Dimension::HeaderCase, seed));
        shape.header_order = pick(&Self::forms(Dimension::HeaderOrder, seed)).header_order;
        shape.spacing = pick(&Self::forms(Dimension::Spacing, seed)).spacing;
        shape.reason = pick(&Self::forms(Dimension::Reason, seed)).reason;
        shape.framing = pick(&Self::forms(Dimension::Framing, seed)).framing;
        shape.writes = pick(&Self::forms(Dimension::Writes, seed)).writes;
        shape.interim = pick(&Self::forms(Dimension::Interim, seed)).interim;
        shape.persistence = pick(&Self::forms(Dimension::Persistence, seed)).persistence;
        shape
    }

    /// Every form of one dimension, each a shape that is otherwise the default (the default's
    /// own form first); `seed` seeds the forms that take one.
    pub fn forms(dimension: Dimension, seed: u64) -> Vec<WireShape> {
        let with = |change: &dyn Fn(&mut WireShape)| {
            let mut shape = WireShape::default();
            change(&mut shape);
            shape
        };
        match dimension {
            Dimension::HeaderCase => [
                HeaderCase::Lower,
                HeaderCase::Title,
                HeaderCase::Upper,
                HeaderCase::Mixed { seed },
            ]
            .map(|case| with(&|s| s.header_case = case))
            .to_vec(),
            Dimension::HeaderOrder => [
                HeaderOrder::AsProduced,
                HeaderOrder::Reversed,
                HeaderOrder::Shuffled { seed },
            ]
            .map(|order| with(&|s| s.header_order = order))
            .to_vec(),
            Dimension::Spacing => [FieldSpacing::Space, FieldSpacing::None, FieldSpacing::Wide]
                .map(|spacing| with(&|s| s.spacing = spacing))
                .to_vec(),
            Dimension::Reason => [Reason::Canonical, Reason::Empty, Reason::AlwaysOk]
                .map(|reason| with(&|s| s.reason = reason))
                .to_vec(),
            Dimension::Framing => {
                let mut framings = vec![Framing::ContentLength, Framing::CloseDelimited];
                for size in [1, 7, 64, 4096] {
                    for (extensions, padded_hex, trailer) in [
                        (false, false, false),
                        (true, true, true),
                        (false, true, true),
                    ] {
                        if extensions && size < 64 {
                            continue; // see `draw`
                        }
                        framings.push(Framing::Chunked {
                            size,
                            extensions,
                            padded_hex,
                            trailer,
                        });
                    }
                }
                framings
                    .into_iter()
                    .map(|framing| with(&|s| s.framing = framing))
                    .collect()
            }
            Dimension::Writes => [Writes::Whole]
                .into_iter()
                .chain([1, 3, 100].map(|size| Writes::Pieces { size }))
                .map(|writes| with(&|s| s.writes = writes))
                .collect(),
            Dimension::Interim => [
                vec![],
                vec![Interim::Continue],
                vec![Interim::Processing, Interim::EarlyHints],
            ]
            .into_iter()
            .map(|interim| with(&|s| s.interim = interim.clone()))
            .collect(),
            Dimension::Persistence => [
                Persistence::KeepAlive,
                Persistence::KeepAliveHeader,
                Persistence::Close,
            ]
            .map(|persistence| with(&|s| s.persistence = persistence))
            .to_vec(),
        }
    }

    /// Every form of every dimension (the default's forms included once each per dimension).
    pub fn all_forms(seed: u64) -> Vec<WireShape> {
        Dimension::ALL
            .iter()
            .flat_map(|dimension| Self::forms(*dimension, seed))
            .collect()
    }

    /// This shape with the wire variants among `variants` laid over it.
    pub fn with_variants(mut self, variants: &BTreeSet<Variant>) -> WireShape {
        for variant in variants {
            variant_shape(*variant, &mut self);
        }
        self
    }

    /// One line naming each choice, for printing a drawn store's choices.
    pub fn describe(&self) -> String {
        let case = match self.header_case {
            HeaderCase::Lower => "names lowercase".to_string(),
            HeaderCase::Title => "names Title-Case".to_string(),
            HeaderCase::Upper => "names UPPER".to_string(),
            HeaderCase::Mixed { seed } => format!("names in mixed case (seed {seed})"),
        };
        let order = match self.header_order {
            HeaderOrder::AsProduced => "fields as produced".to_string(),
            HeaderOrder::Reversed => "fields reversed".to_string(),
            HeaderOrder::Shuffled { seed } => format!("fields shuffled (seed {seed})"),
        };
        let spacing = match self.spacing {
            FieldSpacing::Space => "'name: value'",
            FieldSpacing::None => "'name:value'",
            FieldSpacing::Wide => "'name: \\t value \\t'",
        };
        let reason = match self.reason {
            Reason::Canonical => "usual reason phrases",
            Reason::Empty => "empty reason phrases",
            Reason::AlwaysOk => "reason phrase OK on every status",
        };
        let framing = match self.framing {
            Framing::ContentLength => "Content-Length".to_string(),
            Framing::Chunked {
                size,
                extensions,
                padded_hex,
                trailer,
            } => format!(
                "chunked in {size}-byte chunks{}{}{}",
                if padded_hex { ", sizes like 000A" } else { "" },
                if extensions { ", ;ext=1 on each" } else { "" },
                if trailer {
                    ", a trailer field"
                } else {
                    ", an empty trailer"
                },
            ),
            Framing::CloseDelimited => "close-delimited bodies".to_string(),
        };
        let writes = match self.writes {
            Writes::Whole => "one write an answer".to_string(),
            Writes::Pieces { size } => format!("{size}-byte writes"),
        };
        let interim = if self.interim.is_empty() {
            "no interim answers".to_string()
        } else {
            let codes: Vec<&str> = self
                .interim
                .iter()
                .map(|interim| match interim {
                    Interim::Continue => "100",
                    Interim::Processing => "102",
                    Interim::EarlyHints => "103",
                })
                .collect();
            format!("unasked {} first", codes.join(", "))
        };
        let persistence = match (self.persistence, self.framing) {
            (Persistence::Close, _) => "Connection: close",
            (_, Framing::CloseDelimited) => "closed after each answer without saying so",
            (Persistence::KeepAlive, _) => "keep-alive",
            (Persistence::KeepAliveHeader, _) => "Connection: keep-alive",
        };
        format!(
            "wire: {case}; {order}; {spacing}; {reason}; {framing}; {writes}; {interim}; {persistence}"
        )
    }
}

/// The dimensions of a [`WireShape`], each listed by [`WireShape::forms`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    HeaderCase,
    HeaderOrder,
    Spacing,
    Reason,
    Framing,
    Writes,
    Interim,
    Persistence,
}

impl Dimension {
    pub const ALL: [Dimension; 8] = [
        Dimension::HeaderCase,
        Dimension::HeaderOrder,
        Dimension::Spacing,
        Dimension::Reason,
        Dimension::Framing,
        Dimension::Writes,
        Dimension::Interim,
        Dimension::Persistence,
    ];
}

/// What a variant changes in the shape, if it is one of the wire's.
fn variant_shape(variant: Variant, shape: &mut WireShape) {
    const MIXED_SEED: u64 = 27;
    match variant {
        Variant::ConnectionClose => shape.persistence = Persistence::Close,
        Variant::KeepAliveHeader => shape.persistence = Persistence::KeepAliveHeader,
        Variant::Chunked => {
            shape.framing = Framing::Chunked {
                size: 7,
                extensions: false,
                padded_hex: false,
                trailer: false,
            }
        }
        Variant::OneByteChunks => {
            shape.framing = Framing::Chunked {
                size: 1,
                extensions: false,
                padded_hex: false,
                trailer: false,
            }
        }
        Variant::ChunkExtensions => {
            shape.framing = Framing::Chunked {
                size: 64,
                extensions: true,
                padded_hex: true,
                trailer: true,
            }
        }
        Variant::CloseDelimited => shape.framing = Framing::CloseDelimited,
        Variant::HeaderCaseTitle => shape.header_case = HeaderCase::Title,
        Variant::HeaderCaseUpper => shape.header_case = HeaderCase::Upper,
        Variant::HeaderCaseMixed => shape.header_case = HeaderCase::Mixed { seed: MIXED_SEED },
        Variant::HeadersReversed => shape.header_order = HeaderOrder::Reversed,
        Variant::HeadersShuffled => shape.header_order = HeaderOrder::Shuffled { seed: MIXED_SEED },
        Variant::TightFields => shape.spacing = FieldSpacing::None,
        Variant::WideFields => shape.spacing = FieldSpacing::Wide,
        Variant::EmptyReason => shape.reason = Reason::Empty,
        Variant::OkReason => shape.reason = Reason::AlwaysOk,
        Variant::ByteWrites => shape.writes = Writes::Pieces { size: 1 },
        Variant::UnaskedContinue => shape.interim = vec![Interim::Continue],
        Variant::EarlyHints => shape.interim = vec![Interim::Processing, Interim::EarlyHints],
        _ => {}
    }
}
