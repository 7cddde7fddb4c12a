//! Requests as data: what the generators produce and the client sends, relative to the base
//! address. The credential is named by what it is in the contract's terms, never by its text.

use serde_json::Value;

pub use crate::contract::credential::{Credential, NearMiss};
use crate::outcome::{RECORDED_FORMS, REDACTED, SHIFTED_FORM};

/// Where a credential carries the key other than in the Authorization header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elsewhere {
    /// A request header: its name and value.
    Header(&'static str, String),
    /// A query parameter, appended last: its name and (not yet encoded) value.
    Query(&'static str, String),
}

/// How a credential is spelt on the wire and in the record: the vocabulary names the
/// credential, the request floor writes it (a trait, the type being the vocabulary crate's).
pub trait CredentialSpelling {
    /// Where the key goes other than the Authorization header; `key` stands for it
    /// ([`REDACTED`] for the record).
    fn elsewhere(&self, key: &str) -> Option<Elsewhere>;
    /// The Authorization value as the harness records it: `[REDACTED]` where the key stands,
    /// near misses as expressions over it (see [`NearMissSpelling::recorded`]), never the
    /// key's text.
    fn recorded_value(&self, key: &str) -> Option<String>;
    /// The Authorization header value; `key` stands for the API key.
    fn header_value(&self, key: &str) -> Option<String>;
}

/// How a near miss of the key is spelt, sent and recorded.
pub trait NearMissSpelling {
    /// The token sent.
    fn token(self, key: &str) -> String;
    /// The token as recorded: an expression over `[REDACTED]`. The key only chooses the form
    /// of the case-swapped one (whether it has letters); its text is never written.
    fn recorded(self, key: &str) -> String;
    /// Whether the near miss is another token for this key at all (an empty key has no
    /// character to drop; a key of no letter, digit or token68 symbol nothing to shift).
    fn differs(self, key: &str) -> bool;
}

impl CredentialSpelling for Credential {
    fn elsewhere(&self, key: &str) -> Option<Elsewhere> {
        Some(match self {
            Credential::ApiKeyHeader => Elsewhere::Header("api_key", key.into()),
            Credential::XApiKeyHeader => Elsewhere::Header("X-API-Key", key.into()),
            Credential::Cookie => Elsewhere::Header("Cookie", format!("api_key={key}")),
            Credential::QueryParameter => Elsewhere::Query("api_key", key.into()),
            _ => return None,
        })
    }

    fn recorded_value(&self, key: &str) -> Option<String> {
        match self {
            Credential::NearMiss(near) => Some(format!("Bearer {}", near.recorded(key))),
            // Already as recorded (replay): expanding it over `[REDACTED]` would misspell it.
            Credential::Recorded(value) => Some(value.clone()),
            // The encoding of the key is never written: an expression a reader, a curl line
            // and replay expand.
            Credential::BasicUser => Some(format!("Basic base64({REDACTED}:)")),
            Credential::BasicPassword => Some(format!("Basic base64(:{REDACTED})")),
            other => other.header_value(REDACTED),
        }
    }

    fn header_value(&self, key: &str) -> Option<String> {
        match self {
            Credential::Recorded(value) => Some(expand_recorded(value, key)),
            Credential::NearMiss(near) => Some(format!("Bearer {}", near.token(key))),
            Credential::Valid => Some(format!("Bearer {key}")),
            Credential::Missing => None,
            Credential::WrongKey => Some(format!("Bearer {}", wrong_key(key))),
            Credential::EmptyToken => Some("Bearer ".into()),
            Credential::OtherScheme => Some(format!("Basic {key}")),
            Credential::LowercaseScheme => Some(format!("bearer {key}")),
            Credential::NoSeparator => Some(format!("Bearer{key}")),
            Credential::SchemeAlone => Some("Bearer".into()),
            Credential::KeyAlone => Some(key.into()),
            Credential::TabSeparator => Some(format!("Bearer\t{key}")),
            Credential::SeveralSpaces => Some(format!("Bearer   {key}")),
            Credential::TrailingWord => Some(format!("Bearer {key} junk")),
            Credential::BasicUser => Some(format!("Basic {}", base64_of(&format!("{key}:")))),
            Credential::BasicPassword => Some(format!("Basic {}", base64_of(&format!(":{key}")))),
            Credential::ApiKeyHeader
            | Credential::XApiKeyHeader
            | Credential::QueryParameter
            | Credential::Cookie => None,
        }
    }
}

impl NearMissSpelling for NearMiss {
    fn token(self, key: &str) -> String {
        let mut chars = key.chars();
        match self {
            NearMiss::CharAppended => format!("{key}x"),
            NearMiss::CharPrepended => format!("x{key}"),
            NearMiss::LastCharDropped => {
                chars.next_back();
                chars.collect()
            }
            NearMiss::FirstCharDropped => {
                chars.next();
                chars.collect()
            }
            NearMiss::CaseSwapped => case_swapped(key),
            NearMiss::Repeated => format!("{key}{key}"),
        }
    }

    fn recorded(self, key: &str) -> String {
        match self {
            NearMiss::CharAppended => format!("{REDACTED}x"),
            NearMiss::CharPrepended => format!("x{REDACTED}"),
            NearMiss::LastCharDropped => RECORDED_FORMS[1].0.into(),
            NearMiss::FirstCharDropped => RECORDED_FORMS[0].0.into(),
            NearMiss::CaseSwapped if !has_letters(key) => SHIFTED_FORM.0.into(),
            NearMiss::CaseSwapped => RECORDED_FORMS[2].0.into(),
            NearMiss::Repeated => format!("{REDACTED}{REDACTED}"),
        }
    }

    fn differs(self, key: &str) -> bool {
        !key.is_empty() && self.token(key) != key
    }
}

fn has_letters(key: &str) -> bool {
    key.chars().any(|c| c.is_ascii_alphabetic())
}

/// The case-swapped near miss: the letters' case swapped, or, for a key without letters,
/// the key shifted.
fn case_swapped(key: &str) -> String {
    if has_letters(key) {
        swap_case(key)
    } else {
        shift(key)
    }
}

/// Each digit and each of token68's symbols shifted to the next in its round (`0` to `1`, `9`
/// to `0`; `-` `.` `_` `~` `+` `/` and back to `-`): a fixed substitution with no fixed point,
/// so a key of digits (or symbols) becomes another token of the same length and alphabet, and
/// the recorded form says how without saying anything of the key. The curl line's `tr` of
/// [`SHIFTED_FORM`] does the same.
fn shift(text: &str) -> String {
    const SYMBOLS: &str = "-._~+/";
    text.chars()
        .map(|c| {
            if c.is_ascii_digit() {
                char::from(b'0' + (c as u8 - b'0' + 1) % 10)
            } else if let Some(at) = SYMBOLS.find(c) {
                SYMBOLS[(at + 1) % SYMBOLS.len()..]
                    .chars()
                    .next()
                    .unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

fn swap_case(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A recorded Authorization value with the key put back where `[REDACTED]` stands, and
/// `base64(...)` encoded (`Basic base64([REDACTED]:)`).
fn expand_recorded(value: &str, key: &str) -> String {
    if let Some(inner) = value
        .strip_prefix("Basic base64(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        return format!("Basic {}", base64_of(&expand_forms(inner, key)));
    }
    expand_forms(value, key)
}

/// `value` with the key put back where `[REDACTED]` and its near misses' forms stand.
fn expand_forms(value: &str, key: &str) -> String {
    let swapped = swap_case(key);
    let shifted = shift(key);
    let mut first_dropped = key.chars();
    first_dropped.next();
    let mut last_dropped = key.chars();
    last_dropped.next_back();
    value
        .replace(RECORDED_FORMS[0].0, first_dropped.as_str())
        .replace(RECORDED_FORMS[1].0, last_dropped.as_str())
        .replace(RECORDED_FORMS[2].0, &swapped)
        .replace(SHIFTED_FORM.0, &shifted)
        .replace(REDACTED, key)
}

/// A token that is certainly not the key.
fn wrong_key(key: &str) -> String {
    let candidate = "not-the-api-key-0000";
    if candidate == key {
        "not-the-api-key-1111".into()
    } else {
        candidate.into()
    }
}

/// A request body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    None,
    /// Serialized as JSON, sent with `Content-Type: application/json`.
    Json(Value),
    /// Sent as is (malformed JSON, an empty body, another content type).
    Raw {
        content_type: Option<String>,
        /// Shared with the request on the wire, not copied (a body may be 1 MiB).
        bytes: bytes::Bytes,
    },
    /// `head` (a JSON text) and then spaces, insignificant in JSON, to `length` bytes in all,
    /// sent with `Content-Type: application/json`. Sent as a stream of one shared block of
    /// spaces: a 16 MiB rung of the body ladder holds its head in memory, not its length.
    Padded {
        head: bytes::Bytes,
        length: usize,
    },
}

impl Body {
    /// The body's bytes, every one (a padded body's spaces too): for what keeps them all.
    pub fn bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        match self {
            Body::None => None,
            Body::Json(value) => Some(Cow::Owned(serde_json::to_vec(value).unwrap_or_default())),
            Body::Raw { bytes, .. } => Some(Cow::Borrowed(&bytes[..])),
            Body::Padded { head, length } => {
                let mut bytes = head.to_vec();
                bytes.resize((*length).max(head.len()), b' ');
                Some(Cow::Owned(bytes))
            }
        }
    }
}

/// A request described as data, relative to the base address (which includes `/v1`).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSpec {
    pub method: &'static str,
    pub path: String,
    pub query: Vec<(String, String)>,
    /// A query string sent as is (already percent-encoded), instead of `query`.
    pub raw_query: Option<String>,
    pub credential: Credential,
    /// Headers sent instead of the client's own of the same name (`Accept`), or besides them.
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// A request the contract requires refused (see [`RequestSpec::refused_by_contract`]).
    pub refused_by_contract: bool,
}

impl RequestSpec {
    pub fn get(path: impl Into<String>) -> RequestSpec {
        RequestSpec {
            method: "GET",
            path: path.into(),
            query: Vec::new(),
            raw_query: None,
            credential: Credential::Valid,
            headers: Vec::new(),
            body: Body::None,
            refused_by_contract: false,
        }
    }

    /// The plainest read the contract offers (one pet of the listing, with the key): what
    /// shows a store up and answering.
    pub fn liveness() -> RequestSpec {
        RequestSpec::get("/pets").query("limit", "1")
    }

    pub fn post(path: impl Into<String>, body: Body) -> RequestSpec {
        RequestSpec {
            method: "POST",
            body,
            ..RequestSpec::get(path)
        }
    }

    /// Marks (`refused`) a request whose refusal the contract requires, such as a create of a
    /// body that breaks NewPet: a store that conforms stores it neither the first time nor
    /// the second, so a try the transport lost may be sent again, as a read is. Where a store
    /// keeps it all the same, each pet it stores contradicts the contract, whichever try
    /// stored it.
    pub fn refused_by_contract(mut self, refused: bool) -> RequestSpec {
        self.refused_by_contract = refused;
        self
    }

    /// Whether sending it twice has the effect of sending it once on a store that conforms:
    /// the contract's reads are GETs (RFC 9110 section 9.2.2); createPet is a POST, which may
    /// go twice only where the contract requires it refused.
    pub fn repeatable(&self) -> bool {
        matches!(self.method, "GET" | "HEAD") || self.refused_by_contract
    }

    pub fn query(mut self, name: &str, value: impl Into<String>) -> RequestSpec {
        self.query.push((name.to_string(), value.into()));
        self
    }

    /// The query string as is: generated values carry their own percent-encoding.
    pub fn raw_query(mut self, raw: impl Into<String>) -> RequestSpec {
        self.raw_query = Some(raw.into());
        self
    }

    pub fn credential(mut self, credential: Credential) -> RequestSpec {
        self.credential = credential;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Exchange, RecordedRequest};

    #[test]
    fn near_misses_are_recorded_as_expressions_and_expand_back() {
        for key in ["Key-123abc", "123456789012", "0987-6543_21.9~+/"] {
            near_misses_expand_back(key);
        }
    }

    fn near_misses_expand_back(key: &str) {
        for near in NearMiss::ALL {
            let token = near.token(key);
            assert_ne!(token, key, "{near:?}");
            assert!(near.differs(key), "{near:?} of {key}");
            let recorded = near.recorded(key);
            assert!(!recorded.contains(key), "{recorded}");
            assert_eq!(expand_recorded(&recorded, key), token, "{near:?}");
            let exchange = Exchange {
                request: RecordedRequest {
                    method: "GET".into(),
                    url: "http://127.0.0.1:1/v1/pets".into(),
                    headers: vec![("Authorization".into(), format!("Bearer {recorded}"))],
                    body: None,
                    body_length: None,
                    key_channel: None,
                    body_escaped: false,
                },
                response: None,
                transport_error: None,
                elapsed_ms: 0,
                throttled: None,
                retries: None,
            };
            let curl = exchange.curl("K");
            assert!(curl.contains("${K") && !curl.contains("REDACTED"), "{curl}");
        }
    }

    #[test]
    fn a_key_without_letters_is_case_swapped_by_shifting_its_digits_and_symbols() {
        assert_eq!(NearMiss::CaseSwapped.token("1234-5678/90"), "2345.6789-01");
        assert_eq!(
            NearMiss::CaseSwapped.recorded("1234-5678/90"),
            "[REDACTED+1]"
        );
        assert_eq!(NearMiss::CaseSwapped.token("Key-123"), "kEY-123");
        assert_eq!(NearMiss::CaseSwapped.recorded("Key-123"), "[REDACTED~~]");
        // Only a key with nothing a shift moves is left with no such near miss.
        assert!(!NearMiss::CaseSwapped.differs("===="));
    }

    /// The curl line's `tr` shifts as [`shift`] does (where a shell and `tr` are at hand).
    #[test]
    fn the_curl_lines_tr_shifts_as_the_run_does() {
        let key = "0123456789-._~+/=";
        let line = format!("printf %s '{key}' | {}", SHIFTED_FORM.1);
        let Ok(output) = std::process::Command::new("sh")
            .args(["-c", &line])
            .output()
        else {
            return;
        };
        assert_eq!(String::from_utf8_lossy(&output.stdout), shift(key));
    }

    #[test]
    fn other_channels_record_the_key_as_redacted_and_expand_back() {
        use base64::Engine;
        let key = "Key-123abc";
        let decode = |value: &str| {
            let encoded = value.strip_prefix("Basic ").unwrap();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .unwrap();
            String::from_utf8(bytes).unwrap()
        };
        for (name, sent) in [
            ("basic-user", "Key-123abc:"),
            ("basic-password", ":Key-123abc"),
        ] {
            let credential = Credential::parse(name).unwrap();
            let value = credential.header_value(key).unwrap();
            assert_eq!(decode(&value), sent);
            let recorded = credential.recorded_value(key).unwrap();
            assert!(recorded.starts_with("Basic base64(") && recorded.contains(REDACTED));
            assert_eq!(expand_recorded(&recorded, key), value, "{name}");
            // Replayed, it is written as it was recorded.
            let replayed = Credential::Recorded(recorded.clone());
            assert_eq!(replayed.recorded_value(key), Some(recorded));
            assert_eq!(replayed.header_value(key), Some(value));
        }
        let trailing = Credential::parse("trailing-word").unwrap();
        assert_eq!(
            trailing.recorded_value(key).unwrap(),
            format!("Bearer {REDACTED} junk")
        );
        for (name, channel) in [
            ("api-key-header", "header api_key"),
            ("x-api-key-header", "header X-API-Key"),
            ("query-parameter", "query api_key"),
            ("cookie", "header Cookie"),
        ] {
            let credential = Credential::parse(name).unwrap();
            assert_eq!(
                credential.header_value(key),
                None,
                "{name}: no Authorization"
            );
            assert_eq!(credential.channel(), Some(channel));
            assert_eq!(Credential::of_channel(channel), Some(credential.clone()));
            let recorded = format!("{:?}", credential.elsewhere(REDACTED).unwrap());
            assert!(
                recorded.contains(REDACTED) && !recorded.contains(key),
                "{recorded}"
            );
        }
        assert_eq!(Credential::Valid.channel(), None);
    }

    #[test]
    fn wrong_key_is_never_the_key() {
        assert_ne!(wrong_key("not-the-api-key-0000"), "not-the-api-key-0000");
        assert_ne!(wrong_key("k"), "k");
    }
}
