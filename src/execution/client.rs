//! The one HTTP client of a run: requests described as data, exchanges recorded with the key
//! redacted, response bodies capped, no redirects, no retries, no proxy.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::redact::{REDACTED, Redactor};

/// The credential a request carries, named by what it is in the contract's terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Credential {
    /// `Authorization: Bearer <API_KEY>`, as the contract states it.
    Valid,
    /// No Authorization header at all.
    Missing,
    /// The Bearer scheme with a token that is not the key.
    WrongKey,
    /// The Bearer scheme with nothing after it.
    EmptyToken,
    /// The right key under another scheme (`Basic`).
    OtherScheme,
    /// `bearer <API_KEY>`: the scheme name is case-insensitive (RFC 9110 section 11.1).
    LowercaseScheme,
    /// A near miss of the key: what real implementations get wrong when they do not compare
    /// the token exactly. Each is another token, so each must be refused.
    NearMiss(NearMiss),
    /// An Authorization value as a report recorded it, `[REDACTED]` standing for the key.
    Recorded(String),
}

impl Credential {
    pub fn parse(name: &str) -> Option<Credential> {
        Some(match name {
            "valid" => Credential::Valid,
            "missing" => Credential::Missing,
            "wrong-key" => Credential::WrongKey,
            "empty-token" => Credential::EmptyToken,
            "other-scheme" => Credential::OtherScheme,
            "lowercase-scheme" => Credential::LowercaseScheme,
            other => Credential::NearMiss(NearMiss::parse(other)?),
        })
    }

    /// The Authorization value as the harness records it: `[REDACTED]` where the key stands,
    /// near misses as expressions over it (see [`NearMiss::recorded`]), never the key's text.
    fn recorded_value(&self) -> Option<String> {
        match self {
            Credential::NearMiss(near) => Some(format!("Bearer {}", near.recorded())),
            other => other.header_value(REDACTED),
        }
    }

    /// The Authorization header value; `key` stands for the API key.
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
        }
    }
}

/// A token one edit away from the key, the mistakes of a comparison that is not exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NearMiss {
    /// The key with a character added at the end (a prefix comparison accepts it).
    CharAppended,
    /// The key with a character added at the start (a suffix comparison accepts it).
    CharPrepended,
    /// The key less its last character (a comparison one character short accepts it).
    LastCharDropped,
    /// The key less its first character.
    FirstCharDropped,
    /// The key with every letter's case swapped (a case-insensitive comparison accepts it).
    CaseSwapped,
    /// The key twice.
    Repeated,
}

/// How each near miss is written where the key may not be: an expression over `[REDACTED]`
/// that `replay` expands and a curl line turns into the shell's own (`${KEY:1}`, `${KEY%?}`,
/// `${KEY~~}`).
const RECORDED_FORMS: [(&str, &str); 3] = [
    ("[REDACTED:1]", ":1"),
    ("[REDACTED%?]", "%?"),
    ("[REDACTED~~]", "~~"),
];

impl NearMiss {
    pub const ALL: [NearMiss; 6] = [
        NearMiss::CharAppended,
        NearMiss::CharPrepended,
        NearMiss::LastCharDropped,
        NearMiss::FirstCharDropped,
        NearMiss::CaseSwapped,
        NearMiss::Repeated,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NearMiss::CharAppended => "char-appended",
            NearMiss::CharPrepended => "char-prepended",
            NearMiss::LastCharDropped => "last-char-dropped",
            NearMiss::FirstCharDropped => "first-char-dropped",
            NearMiss::CaseSwapped => "case-swapped",
            NearMiss::Repeated => "repeated",
        }
    }

    pub fn parse(name: &str) -> Option<NearMiss> {
        NearMiss::ALL.into_iter().find(|near| near.name() == name)
    }

    /// The token sent.
    pub fn token(self, key: &str) -> String {
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
            NearMiss::CaseSwapped => swap_case(key),
            NearMiss::Repeated => format!("{key}{key}"),
        }
    }

    /// The token as recorded: an expression over `[REDACTED]`.
    pub fn recorded(self) -> String {
        match self {
            NearMiss::CharAppended => format!("{REDACTED}x"),
            NearMiss::CharPrepended => format!("x{REDACTED}"),
            NearMiss::LastCharDropped => RECORDED_FORMS[1].0.into(),
            NearMiss::FirstCharDropped => RECORDED_FORMS[0].0.into(),
            NearMiss::CaseSwapped => RECORDED_FORMS[2].0.into(),
            NearMiss::Repeated => format!("{REDACTED}{REDACTED}"),
        }
    }

    /// Whether the near miss is another token for this key at all (a key without letters
    /// has no other case; an empty key no character to drop).
    pub fn differs(self, key: &str) -> bool {
        !key.is_empty() && self.token(key) != key
    }
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

/// A recorded Authorization value with the key put back where `[REDACTED]` stands.
fn expand_recorded(value: &str, key: &str) -> String {
    let swapped = swap_case(key);
    let mut first_dropped = key.chars();
    first_dropped.next();
    let mut last_dropped = key.chars();
    last_dropped.next_back();
    value
        .replace(RECORDED_FORMS[0].0, first_dropped.as_str())
        .replace(RECORDED_FORMS[1].0, last_dropped.as_str())
        .replace(RECORDED_FORMS[2].0, &swapped)
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
        bytes: Vec<u8>,
    },
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
    pub body: Body,
}

impl RequestSpec {
    pub fn get(path: impl Into<String>) -> RequestSpec {
        RequestSpec {
            method: "GET",
            path: path.into(),
            query: Vec::new(),
            raw_query: None,
            credential: Credential::Valid,
            body: Body::None,
        }
    }

    pub fn post(path: impl Into<String>, body: Body) -> RequestSpec {
        RequestSpec {
            method: "POST",
            body,
            ..RequestSpec::get(path)
        }
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

/// A request as it was sent, with the key redacted.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// A response as it was received (body capped), with the key redacted.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedResponse {
    /// The protocol the answer came in ("HTTP/1.1", "HTTP/2.0").
    pub version: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub body_truncated: bool,
    /// The parsed body; `None` when it is not JSON (see `json_error`).
    #[serde(skip)]
    pub json: Option<Value>,
    #[serde(skip)]
    pub json_error: Option<String>,
}

/// One request and what came back: a response, or the transport error that stood for one.
#[derive(Debug, Clone, Serialize)]
pub struct Exchange {
    pub request: RecordedRequest,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<RecordedResponse>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_error: Option<String>,
    pub elapsed_ms: u64,
}

impl Exchange {
    pub fn status(&self) -> Option<u16> {
        self.response.as_ref().map(|r| r.status)
    }

    pub fn json(&self) -> Option<&Value> {
        self.response.as_ref()?.json.as_ref()
    }

    /// All values of a response header (case-insensitive name).
    pub fn headers(&self, name: &str) -> Vec<&str> {
        self.response
            .iter()
            .flat_map(|r| r.headers.iter())
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers(name).into_iter().next()
    }

    /// One line saying what came back, for verdict messages.
    pub fn summary(&self) -> String {
        match (&self.response, &self.transport_error) {
            (Some(r), _) => {
                let content_type = self.header("content-type").unwrap_or("no content type");
                let mut body: String = r.body.chars().take(160).collect();
                if r.body.chars().count() > 160 || r.body_truncated {
                    body.push('…');
                }
                format!("{} ({content_type}) {body}", r.status)
            }
            (None, Some(error)) => format!("no response: {error}"),
            (None, None) => "no response".into(),
        }
    }

    /// A shell command that sends the same request; the key is read from `key_env`.
    pub fn curl(&self, key_env: &str) -> String {
        let mut parts = vec![
            "curl -sS -i".to_string(),
            format!("-X {}", self.request.method),
            shell_quote(&self.request.url),
        ];
        for (name, value) in &self.request.headers {
            let header = format!("{name}: {value}");
            if header.contains("[REDACTED") {
                let mut escaped = header.replace(['"', '$', '`', '\\'], "");
                for (form, operator) in RECORDED_FORMS {
                    escaped = escaped.replace(form, &format!("${{{key_env}{operator}}}"));
                }
                parts.push(format!(
                    "-H \"{}\"",
                    escaped.replace(REDACTED, &format!("${{{key_env}}}"))
                ));
            } else {
                parts.push(format!("-H {}", shell_quote(&header)));
            }
        }
        if let Some(body) = &self.request.body {
            parts.push(format!("--data-binary {}", shell_quote(body)));
        }
        parts.join(" ")
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Limits of the client, from the command line.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// For the whole exchange, connect to last body byte.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Bytes of a response body kept; the rest is dropped and the body marked truncated.
    pub body_cap: usize,
    /// Extra root certificates (PEM), for a target behind a private CA.
    pub ca_certificates: Vec<Vec<u8>>,
    /// Accept any certificate. Explicit, and recorded in the report.
    pub insecure: bool,
    /// Speak HTTP/2 without negotiation (h2c). Over TLS, HTTP/2 is negotiated anyway.
    pub http2_prior_knowledge: bool,
}

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            body_cap: 1 << 20,
            ca_certificates: Vec::new(),
            insecure: false,
            http2_prior_knowledge: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("base URL {0:?}: {1}")]
    BaseUrl(String, String),
    #[error("CA certificate: {0}")]
    Certificate(String),
    #[error("HTTP client: {0}")]
    Build(String),
}

/// The HTTP client wrapper. Blocking API over a shared tokio runtime, so that rule checks and
/// proptest closures stay plain functions.
pub struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
    redactor: Redactor,
    runtime: tokio::runtime::Handle,
    settings: ClientSettings,
    /// Turns true when the run is interrupted: requests in flight are dropped.
    cancelled: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Client {
    pub fn new(
        base_url: &str,
        key: &str,
        settings: ClientSettings,
        runtime: tokio::runtime::Handle,
    ) -> Result<Client, ClientError> {
        // rustls is built without a default provider, to keep aws-lc out of the build.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let base = base_url.trim_end_matches('/').to_string();
        reqwest::Url::parse(&base)
            .map_err(|e| ClientError::BaseUrl(base_url.into(), e.to_string()))?;
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .no_proxy()
            .timeout(settings.timeout)
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("petstore-conformance/", env!("CARGO_PKG_VERSION")));
        for pem in &settings.ca_certificates {
            let certificate = reqwest::Certificate::from_pem(pem)
                .map_err(|e| ClientError::Certificate(e.to_string()))?;
            builder = builder.add_root_certificate(certificate);
        }
        if settings.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
        if settings.http2_prior_knowledge {
            builder = builder.http2_prior_knowledge();
        }
        let http = builder
            .build()
            .map_err(|e| ClientError::Build(e.to_string()))?;
        Ok(Client {
            http,
            base,
            key: key.to_string(),
            redactor: Redactor::new(key),
            runtime,
            settings,
            cancelled: None,
        })
    }

    /// The same client, whose requests in flight end when `cancelled` turns true.
    pub fn cancelled_by(mut self, cancelled: tokio::sync::watch::Receiver<bool>) -> Client {
        self.cancelled = Some(cancelled);
        self
    }

    /// Whether a near miss of this client's key is another token (the key is not shown).
    pub fn near_miss_differs(&self, near: NearMiss) -> bool {
        near.differs(&self.key)
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Sends one request and records the exchange. Never panics on what the target sends.
    pub fn send(&self, spec: &RequestSpec) -> Exchange {
        self.runtime.block_on(self.send_cancellable(spec))
    }

    /// Sends every request at the same moment (one connection each as needed) and returns
    /// the exchanges in the order of `specs`: for races a sequential client cannot show.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.runtime.block_on(futures_util::future::join_all(
            specs.iter().map(|spec| self.send_cancellable(spec)),
        ))
    }

    /// The exchange, or "cut off" when the run is interrupted while it is in flight.
    async fn send_cancellable(&self, spec: &RequestSpec) -> Exchange {
        let Some(cancelled) = &self.cancelled else {
            return self.send_async(spec).await;
        };
        let mut cancelled = cancelled.clone();
        tokio::select! {
            exchange = self.send_async(spec) => exchange,
            _ = cancelled.wait_for(|cancelled| *cancelled) => {
                self.not_sent(spec, "cut off: the run was interrupted")
            }
        }
    }

    async fn send_async(&self, spec: &RequestSpec) -> Exchange {
        let started = Instant::now();
        let mut url = match reqwest::Url::parse(&format!("{}{}", self.base, spec.path)) {
            Ok(url) => url,
            Err(e) => {
                return self.failed_exchange(spec, String::new(), format!("bad URL: {e}"), started);
            }
        };
        if let Some(raw) = &spec.raw_query {
            url.set_query(Some(raw));
        } else if !spec.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &spec.query {
                pairs.append_pair(name, value);
            }
        }
        let method =
            reqwest::Method::from_bytes(spec.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut request = self.http.request(method, url.clone());
        let mut headers = Vec::new();
        if let Some(value) = spec.credential.header_value(&self.key) {
            headers.push(("Authorization".to_string(), value));
        }
        let recorded_authorization = spec.credential.recorded_value();
        let body: Option<Vec<u8>> = match &spec.body {
            Body::None => None,
            Body::Json(value) => {
                headers.push(("Content-Type".into(), "application/json".into()));
                Some(serde_json::to_vec(value).unwrap_or_default())
            }
            Body::Raw {
                content_type,
                bytes,
            } => {
                if let Some(content_type) = content_type {
                    headers.push(("Content-Type".into(), content_type.clone()));
                }
                Some(bytes.clone())
            }
        };
        headers.push(("Accept".into(), "application/json".into()));
        for (name, value) in &headers {
            request = request.header(name, value);
        }
        if let Some(body) = &body {
            request = request.body(body.clone());
        }
        let recorded = RecordedRequest {
            method: spec.method.to_string(),
            url: self.redactor.redact(url.as_str()),
            headers: headers
                .iter()
                .map(|(n, v)| match (n.as_str(), &recorded_authorization) {
                    ("Authorization", Some(recorded)) => (n.clone(), recorded.clone()),
                    _ => (n.clone(), self.redactor.redact(v)),
                })
                .collect(),
            body: body.map(|b| self.redactor.redact(&String::from_utf8_lossy(&b))),
        };
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                return Exchange {
                    request: recorded,
                    response: None,
                    transport_error: Some(self.redactor.redact(&describe_error(&e))),
                    elapsed_ms: elapsed_ms(started),
                };
            }
        };
        let status = response.status().as_u16();
        let version = format!("{:?}", response.version());
        let response_headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    self.redactor.redact(n.as_str()),
                    self.redactor.redact(&String::from_utf8_lossy(v.as_bytes())),
                )
            })
            .collect();
        let (bytes, body_truncated, body_error) =
            read_capped(response, self.settings.body_cap).await;
        let (json, json_error) = if body_truncated {
            (
                None,
                Some(format!("body exceeds {} bytes", self.settings.body_cap)),
            )
        } else {
            match serde_json::from_slice::<Value>(&bytes) {
                // Redacted before any check can quote it: the target may echo the key.
                Ok(value) => (Some(self.redactor.redact_json(&value)), None),
                Err(e) => (None, Some(e.to_string())),
            }
        };
        Exchange {
            request: recorded,
            response: Some(RecordedResponse {
                version,
                status,
                headers: response_headers,
                body: if body_truncated || body_error.is_some() {
                    // A cut may leave the start of the key at the end.
                    self.redactor.redact_cut(&String::from_utf8_lossy(&bytes))
                } else {
                    self.redactor.redact(&String::from_utf8_lossy(&bytes))
                },
                body_truncated,
                json,
                json_error,
            }),
            transport_error: body_error.map(|e| self.redactor.redact(&e)),
            elapsed_ms: elapsed_ms(started),
        }
    }

    /// An exchange for a request that was not sent, and why.
    pub fn not_sent(&self, spec: &RequestSpec, reason: &str) -> Exchange {
        let url = format!("{}{}", self.base, spec.path);
        self.failed_exchange(
            spec,
            self.redactor.redact(&url),
            reason.to_string(),
            Instant::now(),
        )
    }

    fn failed_exchange(
        &self,
        spec: &RequestSpec,
        url: String,
        error: String,
        started: Instant,
    ) -> Exchange {
        Exchange {
            request: RecordedRequest {
                method: spec.method.into(),
                url,
                headers: Vec::new(),
                body: None,
            },
            response: None,
            transport_error: Some(error),
            elapsed_ms: elapsed_ms(started),
        }
    }
}

/// Reads at most `cap` bytes of the body; returns the bytes, whether more was sent, and the
/// error that cut the body short, if any.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> (Vec<u8>, bool, Option<String>) {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = cap.saturating_sub(bytes.len());
                if chunk.len() > room {
                    bytes.extend_from_slice(&chunk[..room]);
                    return (bytes, true, None);
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return (bytes, false, None),
            Err(e) => {
                let error = format!("body cut short: {}", describe_error(&e));
                return (bytes, false, Some(error));
            }
        }
    }
}

fn describe_error(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else if error.is_body() || error.is_decode() {
        "broken body"
    } else {
        "request failed"
    };
    let mut reasons = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        reasons.push(cause.to_string());
        source = cause.source();
    }
    if reasons.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {}", reasons.join(": "))
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    started.elapsed().as_millis().try_into().unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_line_reads_the_key_from_the_environment() {
        let exchange = Exchange {
            request: RecordedRequest {
                method: "POST".into(),
                url: "http://127.0.0.1:1/v1/pets".into(),
                headers: vec![
                    ("Authorization".into(), format!("Bearer {REDACTED}")),
                    ("Content-Type".into(), "application/json".into()),
                ],
                body: Some(r#"{"name":"O'Brien"}"#.into()),
            },
            response: None,
            transport_error: None,
            elapsed_ms: 0,
        };
        let curl = exchange.curl("PETSTORE_API_KEY");
        assert!(
            curl.contains(r#"-H "Authorization: Bearer ${PETSTORE_API_KEY}""#),
            "{curl}"
        );
        assert!(curl.contains(r#"'{"name":"O'\''Brien"}'"#), "{curl}");
        assert!(!curl.contains(REDACTED));
    }

    #[test]
    fn near_misses_are_recorded_as_expressions_and_expand_back() {
        let key = "Key-123abc";
        for near in NearMiss::ALL {
            let token = near.token(key);
            assert_ne!(token, key, "{near:?}");
            let recorded = near.recorded();
            assert!(!recorded.contains(key), "{recorded}");
            assert_eq!(expand_recorded(&recorded, key), token, "{near:?}");
            let exchange = Exchange {
                request: RecordedRequest {
                    method: "GET".into(),
                    url: "http://127.0.0.1:1/v1/pets".into(),
                    headers: vec![("Authorization".into(), format!("Bearer {recorded}"))],
                    body: None,
                },
                response: None,
                transport_error: None,
                elapsed_ms: 0,
            };
            let curl = exchange.curl("K");
            assert!(curl.contains("${K") && !curl.contains("REDACTED"), "{curl}");
        }
        assert!(!NearMiss::CaseSwapped.differs("1234-5678"));
    }

    #[test]
    fn wrong_key_is_never_the_key() {
        assert_ne!(wrong_key("not-the-api-key-0000"), "not-the-api-key-0000");
        assert_ne!(wrong_key("k"), "k");
    }
}
