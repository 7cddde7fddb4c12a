//! The one HTTP client of a run: requests sent as described, exchanges recorded with the key
//! redacted, response bodies capped, no redirects, no retries, no proxy.

use std::time::{Duration, Instant};

use super::redact::Redactor;
use crate::generation::request::{Body, NearMiss, RequestSpec};
use crate::outcome::{Exchange, RecordedRequest, RecordedResponse, Throttling};

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
    /// Requests per second across the whole run; `None`: as fast as the rules go.
    pub rate: Option<f64>,
    /// The most one request waits out throttling (429, 503 with Retry-After) in all.
    pub max_throttle_wait: Duration,
    /// Requests in flight at once across the whole run (`--concurrency`). Against a remote
    /// target this, not the number of rule threads, sets how many round trips overlap.
    pub concurrency: usize,
}

/// When the client stops sending: at the end of the budget, or once the run has set a reason
/// (the target stopped answering). Checked when a request gets its place among those in
/// flight, so that one queued behind a slow or dead target does not go out after the stop.
#[derive(Debug, Clone, Default)]
pub struct Halt {
    pub at: Option<std::time::Instant>,
    pub reason: std::sync::Arc<std::sync::OnceLock<String>>,
}

impl Halt {
    /// Why nothing may be sent now, if so.
    pub fn reason(&self) -> Option<String> {
        if self.at.is_some_and(|at| std::time::Instant::now() >= at) {
            return Some(BUDGET_SPENT.into());
        }
        self.reason.get().cloned()
    }
}

/// Why a request was not sent once the budget was spent (the runner says the same).
pub const BUDGET_SPENT: &str = "not sent: the run's time budget is spent";

/// In-flight requests by default: against a store 50 ms away, the default suite's thousand
/// requests then take about 30 round trips (1.5 s); a gateway's limit is `--rate`'s business.
pub const DEFAULT_CONCURRENCY: usize = 64;

impl Default for ClientSettings {
    fn default() -> Self {
        ClientSettings {
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            body_cap: 1 << 20,
            ca_certificates: Vec::new(),
            insecure: false,
            http2_prior_knowledge: false,
            rate: None,
            max_throttle_wait: Duration::from_secs(30),
            concurrency: DEFAULT_CONCURRENCY,
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
    /// The next free slot under `--rate`.
    next_slot: std::sync::Mutex<tokio::time::Instant>,
    throttle: ThrottleCounter,
    /// One permit per request in flight: a window that opens as answers come back, up to
    /// `settings.concurrency` (see [`SLOW_START`]).
    in_flight: tokio::sync::Semaphore,
    /// Permits the window holds so far.
    window: std::sync::atomic::AtomicUsize,
    halt: Halt,
    /// Response bodies' parses: bounded by bytes (see `bodies`).
    bodies: super::bodies::Bodies,
}

/// In-flight places a run starts with; each answer opens one more, up to `--concurrency`, so
/// the window doubles every round trip while the target answers (TCP's slow start). A target
/// that goes dead after the first answer gets a handful of requests, not the whole cap.
pub const SLOW_START: usize = 16;

/// Whether a request still has to take its in-flight permit.
#[derive(Clone, Copy)]
enum Permit {
    PerRequest,
    /// Its batch took the permits for it.
    Held,
}

/// What throttling cost a run: waits, time waited, requests given up on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ThrottleTally {
    pub waits: u64,
    pub waited_ms: u64,
    pub gave_up: u64,
}

#[derive(Default)]
struct ThrottleCounter {
    waits: std::sync::atomic::AtomicU64,
    waited_ms: std::sync::atomic::AtomicU64,
    gave_up: std::sync::atomic::AtomicU64,
}

impl ThrottleCounter {
    fn record(&self, waits: u64, waited: Duration, gave_up: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        self.waits.fetch_add(waits, Relaxed);
        self.waited_ms
            .fetch_add(waited.as_millis().try_into().unwrap_or(u64::MAX), Relaxed);
        self.gave_up.fetch_add(u64::from(gave_up), Relaxed);
    }

    fn snapshot(&self) -> ThrottleTally {
        use std::sync::atomic::Ordering::Relaxed;
        ThrottleTally {
            waits: self.waits.load(Relaxed),
            waited_ms: self.waited_ms.load(Relaxed),
            gave_up: self.gave_up.load(Relaxed),
        }
    }
}

/// How long to wait before sending a throttled request again; `None` when it was not throttled
/// (a 503 without Retry-After is a server error, not throttling).
fn throttle_wait(exchange: &Exchange, waits: u32) -> Option<Duration> {
    let status = exchange.status()?;
    if !matches!(status, 429 | 503) {
        return None;
    }
    let retry_after = exchange.header("retry-after").map(str::trim);
    match retry_after {
        Some(value) => {
            if let Ok(seconds) = value.parse::<u64>() {
                return Some(Duration::from_secs(seconds));
            }
            let date = httpdate::parse_http_date(value).ok()?;
            Some(
                date.duration_since(std::time::SystemTime::now())
                    .unwrap_or_default(),
            )
        }
        None if status == 429 => {
            Some(Duration::from_millis(500) * 2u32.saturating_pow(waits.min(10)))
        }
        None => None,
    }
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
            cancelled: None,
            next_slot: std::sync::Mutex::new(tokio::time::Instant::now()),
            throttle: ThrottleCounter::default(),
            in_flight: tokio::sync::Semaphore::new(SLOW_START.min(settings.concurrency.max(1))),
            window: std::sync::atomic::AtomicUsize::new(
                SLOW_START.min(settings.concurrency.max(1)),
            ),
            halt: Halt::default(),
            bodies: Default::default(),
            settings,
        })
    }

    /// The same client, whose requests in flight end when `cancelled` turns true.
    pub fn cancelled_by(mut self, cancelled: tokio::sync::watch::Receiver<bool>) -> Client {
        self.cancelled = Some(cancelled);
        self
    }

    /// The same client, which stops sending when `halt` says so.
    pub fn halted_by(mut self, halt: Halt) -> Client {
        self.halt = halt;
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
        self.runtime
            .block_on(self.send_cancellable(spec, Permit::PerRequest))
    }

    /// Sends every request at the same moment (one connection each as needed) and returns
    /// the exchanges in the order of `specs`: for races a sequential client cannot show. The
    /// batch takes its in-flight permits together, so that it does go out at once, but at most
    /// a quarter of them: waiting for the whole cap to drain would stall every other rule
    /// behind a burst (50 ms latency: 1.9 s instead of 1.45 s for the default suite). A burst
    /// may therefore pass `--concurrency` by its own size.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.runtime.block_on(async {
            let wanted = specs
                .len()
                .min((self.settings.concurrency / 4).clamp(1, SLOW_START));
            let _permits = self
                .in_flight
                .acquire_many(u32::try_from(wanted).unwrap_or(u32::MAX))
                .await;
            if let Some(reason) = self.halt.reason() {
                return specs
                    .iter()
                    .map(|spec| self.not_sent(spec, &reason))
                    .collect();
            }
            futures_util::future::join_all(
                specs
                    .iter()
                    .map(|spec| self.send_cancellable(spec, Permit::Held)),
            )
            .await
        })
    }

    /// The exchange, or "cut off" when the run is interrupted while it is in flight.
    async fn send_cancellable(&self, spec: &RequestSpec, permit: Permit) -> Exchange {
        let Some(cancelled) = &self.cancelled else {
            return self.send_async(spec, permit).await;
        };
        let mut cancelled = cancelled.clone();
        tokio::select! {
            exchange = self.send_async(spec, permit) => exchange,
            _ = cancelled.wait_for(|cancelled| *cancelled) => {
                self.not_sent(spec, "cut off: the run was interrupted")
            }
        }
    }

    /// Sends at the configured rate; a 429, or a 503 with Retry-After, is waited out (the
    /// Retry-After given, or for a 429 without one a doubling backoff) and sent again while the
    /// waits stay within `max_throttle_wait`. No other status is ever retried.
    async fn send_async(&self, spec: &RequestSpec, permit: Permit) -> Exchange {
        let mut throttling = Throttling::default();
        loop {
            self.pace().await;
            let mut exchange = match permit {
                Permit::Held => self.send_once(spec).await,
                Permit::PerRequest => {
                    let _permit = match self.in_flight_permit().await {
                        Ok(permit) => permit,
                        Err(reason) => return self.not_sent(spec, &reason),
                    };
                    self.send_once(spec).await
                }
            };
            if exchange.response.is_some() {
                self.open_window();
            }
            let Some(wait) = throttle_wait(&exchange, throttling.waits) else {
                if throttling.waits > 0 {
                    exchange.throttled = Some(throttling);
                }
                return exchange;
            };
            let waited = Duration::from_millis(throttling.waited_ms);
            if waited + wait > self.settings.max_throttle_wait {
                throttling.gave_up = true;
                exchange.throttled = Some(throttling);
                self.throttle.record(0, Duration::ZERO, true);
                return exchange;
            }
            tokio::time::sleep(wait).await;
            throttling.waits += 1;
            throttling.waited_ms += wait.as_millis().try_into().unwrap_or(u64::MAX);
            self.throttle.record(1, wait, false);
        }
    }

    /// One more place in flight, after an answer, while the window is below the cap.
    fn open_window(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let cap = self.settings.concurrency.max(1);
        let opened = self.window.fetch_update(Relaxed, Relaxed, |window| {
            (window < cap).then_some(window + 1)
        });
        if opened.is_ok() {
            self.in_flight.add_permits(1);
        }
    }

    /// A place among the requests in flight, unless the client halts before one is free (or
    /// by the time it is): then why.
    async fn in_flight_permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>, String> {
        let acquire = self.in_flight.acquire();
        let permit = match self.halt.at {
            Some(at) => tokio::time::timeout_at(at.into(), acquire)
                .await
                .map_err(|_| BUDGET_SPENT.to_string())?,
            None => acquire.await,
        }
        .map_err(|e| e.to_string())?;
        match self.halt.reason() {
            Some(reason) => Err(reason),
            None => Ok(permit),
        }
    }

    /// Waits for this request's slot under `--rate`.
    async fn pace(&self) {
        let Some(rate) = self.settings.rate.filter(|r| *r > 0.0) else {
            return;
        };
        let interval = Duration::from_secs_f64(1.0 / rate);
        let slot = {
            let mut next = self.next_slot.lock().unwrap_or_else(|e| e.into_inner());
            let now = tokio::time::Instant::now();
            let slot = (*next).max(now);
            *next = slot + interval;
            slot
        };
        tokio::time::sleep_until(slot).await;
    }

    /// What the target's throttling cost the run so far.
    pub fn throttle_tally(&self) -> ThrottleTally {
        self.throttle.snapshot()
    }

    async fn send_once(&self, spec: &RequestSpec) -> Exchange {
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
                    throttled: None,
                    not_sent: false,
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
        // A cut may leave the start of the key at the end.
        let cut = body_truncated || body_error.is_some();
        let unparsed =
            body_truncated.then(|| format!("body exceeds {} bytes", self.settings.body_cap));
        let body = self
            .bodies
            .record(&bytes, cut, unparsed, &self.redactor)
            .await;
        drop(bytes);
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
            }),
            transport_error: body_error.map(|e| self.redactor.redact(&e)),
            elapsed_ms: elapsed_ms(started),
            throttled: None,
            not_sent: false,
        }
    }

    /// An exchange for a request that was not sent, and why.
    pub fn not_sent(&self, spec: &RequestSpec, reason: &str) -> Exchange {
        let url = format!("{}{}", self.base, spec.path);
        Exchange {
            not_sent: true,
            ..self.failed_exchange(
                spec,
                self.redactor.redact(&url),
                reason.to_string(),
                Instant::now(),
            )
        }
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
            throttled: None,
            not_sent: false,
        }
    }
}

/// Reads at most `cap` bytes of the body; returns the bytes, whether more was sent, and the
/// error that cut the body short, if any.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> (Vec<u8>, bool, Option<String>) {
    // Sized from the declared length (up to 1 MiB: a declared length is only a claim), so the
    // buffer of a large body does not double past it.
    let declared = response.content_length().unwrap_or(0);
    let mut bytes = Vec::with_capacity(
        usize::try_from(declared)
            .unwrap_or(cap)
            .min(cap)
            .min(1 << 20),
    );
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
