//! Variants: conforming-but-unusual ways to honour the contract. Every required rule must pass
//! on each of them; a rule that fails one raises a false alarm.

/// A conforming deviation from the reference's usual answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    RandomIds,
    HugeIds,
    ZeroBasedIds,
    NegativeIds,
    StatusDefaultAvailable,
    ExtraFields,
    LowercaseChallenge,
    Charset,
    ConnectionClose,
    Chunked,
    PrettyReordered,
    CrowdedStore,
    /// 90 pets of another client: the run's own take the store past a page of 100.
    NearlyFullStore,
    /// Other clients create pets while the run does.
    BusyStore,
    Unprocessable422,
    Throttled,
    /// A staging gateway's limit: 40 requests per second.
    SlowGateway,
    /// Referential integrity: only categories 1 to 10 exist.
    KnownCategories,
    /// The reference always accepts h2c; this variant is run with --http2-prior-knowledge.
    Http2,
    /// Starlette's default: a trailing slash gets a body-less 307 to the path without it.
    TrailingSlashRedirect,
    // How answers travel (wire.rs): each one form of a `WireShape` dimension.
    HeaderCaseTitle,
    HeaderCaseUpper,
    HeaderCaseMixed,
    HeadersReversed,
    HeadersShuffled,
    TightFields,
    WideFields,
    EmptyReason,
    OkReason,
    OneByteChunks,
    ChunkExtensions,
    CloseDelimited,
    ByteWrites,
    UnaskedContinue,
    EarlyHints,
    KeepAliveHeader,
}

pub struct VariantInfo {
    pub variant: Variant,
    pub name: &'static str,
    pub description: &'static str,
}

pub const VARIANTS: &[VariantInfo] = &[
    VariantInfo {
        variant: Variant::RandomIds,
        name: "random-ids",
        description: "ids are random int64 values, negative ones included",
    },
    VariantInfo {
        variant: Variant::HugeIds,
        name: "huge-ids",
        description: "ids count up from 2^62",
    },
    VariantInfo {
        variant: Variant::ZeroBasedIds,
        name: "zero-based-ids",
        description: "ids count up from 0",
    },
    VariantInfo {
        variant: Variant::NegativeIds,
        name: "negative-ids",
        description: "ids count down from -1 (int64 allows them)",
    },
    VariantInfo {
        variant: Variant::Throttled,
        name: "throttled",
        description: "a gateway answers 429 with Retry-After: 1 past 300 requests per second",
    },
    VariantInfo {
        variant: Variant::SlowGateway,
        name: "slow-gateway",
        description: "a gateway answers 429 with Retry-After: 1 past 40 requests per second (run with --rate)",
    },
    VariantInfo {
        variant: Variant::KnownCategories,
        name: "known-categories",
        description: "only categories 1 to 10 exist: createPet answers 400 'unknown category' for any other categoryId (run with --category-ids 1,...,10)",
    },
    VariantInfo {
        variant: Variant::StatusDefaultAvailable,
        name: "status-default-available",
        description: "a pet created without status gets 'available' (the contract states no default)",
    },
    VariantInfo {
        variant: Variant::ExtraFields,
        name: "extra-fields",
        description: "Pet carries fields the contract does not name (createdAt, tags)",
    },
    VariantInfo {
        variant: Variant::LowercaseChallenge,
        name: "lowercase-challenge",
        description: "401 answers challenge with a lowercase 'bearer' scheme",
    },
    VariantInfo {
        variant: Variant::Charset,
        name: "charset",
        description: "Content-Type: application/json; charset=utf-8",
    },
    VariantInfo {
        variant: Variant::ConnectionClose,
        name: "connection-close",
        description: "Connection: close on every response",
    },
    VariantInfo {
        variant: Variant::Chunked,
        name: "chunked",
        description: "bodies sent with chunked transfer encoding, in small chunks",
    },
    VariantInfo {
        variant: Variant::PrettyReordered,
        name: "pretty-reordered",
        description: "pretty-printed JSON with keys in reverse order",
    },
    VariantInfo {
        variant: Variant::CrowdedStore,
        name: "crowded-store",
        description: "the store already holds 5000 pets the harness did not make (ids 1 to 5000, sequential)",
    },
    VariantInfo {
        variant: Variant::NearlyFullStore,
        name: "nearly-full-store",
        description: "the store already holds 90 plain pets the harness did not make (ids 1 to 90, status available): the run's own pets take it past a page of 100 while the rules run",
    },
    VariantInfo {
        variant: Variant::BusyStore,
        name: "busy-store",
        description: "other clients create pets during the run: 50 pets a second",
    },
    VariantInfo {
        variant: Variant::Unprocessable422,
        name: "unprocessable-422",
        description: "well-formed bodies with invalid values get 422 (only a recommended rule asks for 400)",
    },
    VariantInfo {
        variant: Variant::TrailingSlashRedirect,
        name: "trailing-slash-redirect",
        description: "a path with a trailing slash (GET /pets/, the empty petId) gets a body-less 307 to the path without it, before authentication, as Starlette answers by default",
    },
    VariantInfo {
        variant: Variant::Http2,
        name: "http2",
        description: "spoken to over HTTP/2 (h2c; run with --http2-prior-knowledge)",
    },
    VariantInfo {
        variant: Variant::HeaderCaseTitle,
        name: "header-case-title",
        description: "header names in Title-Case (Content-Type)",
    },
    VariantInfo {
        variant: Variant::HeaderCaseUpper,
        name: "header-case-upper",
        description: "header names in UPPER case (CONTENT-TYPE)",
    },
    VariantInfo {
        variant: Variant::HeaderCaseMixed,
        name: "header-case-mixed",
        description: "each header name in a case of its own (lower, Title, UPPER or letter by letter)",
    },
    VariantInfo {
        variant: Variant::HeadersReversed,
        name: "headers-reversed",
        description: "header fields in reverse order",
    },
    VariantInfo {
        variant: Variant::HeadersShuffled,
        name: "headers-shuffled",
        description: "header fields in a seeded shuffle (fields of one name keep their order)",
    },
    VariantInfo {
        variant: Variant::TightFields,
        name: "tight-fields",
        description: "no space after a header's colon (name:value)",
    },
    VariantInfo {
        variant: Variant::WideFields,
        name: "wide-fields",
        description: "spaces and tabs on both sides of every header value",
    },
    VariantInfo {
        variant: Variant::EmptyReason,
        name: "empty-reason",
        description: "status lines with an empty reason phrase (HTTP/1.1 404 )",
    },
    VariantInfo {
        variant: Variant::OkReason,
        name: "ok-reason",
        description: "the reason phrase OK on every status line (HTTP/1.1 404 OK)",
    },
    VariantInfo {
        variant: Variant::OneByteChunks,
        name: "one-byte-chunks",
        description: "bodies sent chunked, one byte a chunk",
    },
    VariantInfo {
        variant: Variant::ChunkExtensions,
        name: "chunk-extensions",
        description: "bodies chunked in 64-byte chunks with sizes like 0040;ext=1 and a Server-Timing trailer field",
    },
    VariantInfo {
        variant: Variant::CloseDelimited,
        name: "close-delimited",
        description: "bodies with no length, ended by closing the connection",
    },
    VariantInfo {
        variant: Variant::ByteWrites,
        name: "byte-writes",
        description: "every answer written one byte a write, each flushed (TCP_NODELAY)",
    },
    VariantInfo {
        variant: Variant::UnaskedContinue,
        name: "unasked-continue",
        description: "an unasked 100 Continue before every answer",
    },
    VariantInfo {
        variant: Variant::EarlyHints,
        name: "early-hints",
        description: "an unasked 102 Processing and 103 Early Hints (with a Link header) before every answer",
    },
    VariantInfo {
        variant: Variant::KeepAliveHeader,
        name: "keep-alive-header",
        description: "Connection: keep-alive on every answer",
    },
];

impl Variant {
    pub fn info(self) -> &'static VariantInfo {
        VARIANTS
            .iter()
            .find(|info| info.variant == self)
            .expect("every variant is in VARIANTS")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn parse(name: &str) -> Option<Variant> {
        VARIANTS
            .iter()
            .find(|info| info.name == name)
            .map(|info| info.variant)
    }
}
