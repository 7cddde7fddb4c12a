//! The one HTTP client of a run: requests sent as described, exchanges recorded with the key
//! redacted, response bodies capped, no redirects, no retries, no proxy.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use super::lanes::{ConnectionTally, CountConnectsHandle, Lane, Lanes, Overload};
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
    /// Requests in flight, and connections open, at most across the whole run
    /// (`--concurrency`): the ceiling of the adaptive level. Against a remote target this, not
    /// the number of rule threads, sets how many round trips overlap.
    pub concurrency: usize,
    /// Headers sent with every request (`-H 'Name: value'`: a tenant or a gateway header).
    pub extra_headers: Vec<(String, String)>,
    /// A client certificate chain and its private key (PEM), for a target that asks for one
    /// (mTLS).
    pub client_identity: Option<(Vec<u8>, Vec<u8>)>,
    /// How requests reach the target: straight, through `--proxy`, or through the
    /// `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` of the environment.
    pub proxy: ProxySetting,
}

/// Where requests go on their way to the target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProxySetting {
    /// Straight to the target.
    #[default]
    Direct,
    /// Through this proxy (`--proxy URL`), except for the hosts `NO_PROXY` names.
    Explicit(String),
    /// As the environment says (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), reqwest's reading.
    Environment,
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

/// Why a request in flight when the budget ended has no answer.
pub const BUDGET_CUT: &str = "cut off: the run's time budget is spent";

/// In-flight requests (and so connections) at most, by default: against a store 50 ms away, the
/// default suite's 1300 requests then take about 32 round trips (1.6 s; at 64, 40), and it stays
/// below the 100 connections common servers accept (waitress's default). The run starts
/// lower and finds the level the target bears (see [`super::lanes`]); a gateway's request rate
/// is `--rate`'s business.
pub const DEFAULT_CONCURRENCY: usize = 96;

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
            extra_headers: Vec::new(),
            client_identity: None,
            proxy: ProxySetting::Direct,
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
    /// The connections: at most the adaptive level of them, never more than `--concurrency`.
    lanes: Lanes,
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
    halt: Halt,
    /// The slowest wait for response headers so far, in ms: a fresh connection that waits much
    /// longer than any answer did is taken for one the server never accepted.
    slowest_ms: AtomicU64,
    /// Answers so far. A stall or a failed connect while other requests are answered is the
    /// run's own overload; while nothing is answered, the target is down, not overloaded.
    answers: AtomicU64,
    /// Response bodies' parses: bounded by bytes (see `bodies`).
    bodies: super::bodies::Bodies,
}

/// What one attempt on a lane came to.
enum Attempt {
    Done(Box<Exchange>),
    /// Caught in the run's own overload before the target could have seen it (a connect that
    /// stalled, failed or was refused): to be sent again once the level has dropped.
    Overloaded,
}

/// Times a request caught in the run's own overload is sent again before its exchange stands.
const MAX_RESENDS: u32 = 3;

/// A fresh connection waits at least this long for its answer before it is taken for one the
/// server left in its backlog.
const MIN_STALL: Duration = Duration::from_secs(1);

/// What throttling cost a run: waits, time waited, requests given up on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ThrottleTally {
    pub waits: u64,
    pub waited_ms: u64,
    pub gave_up: u64,
}

#[derive(Default)]
struct ThrottleCounter {
    waits: AtomicU64,
    waited_ms: AtomicU64,
    gave_up: AtomicU64,
}

impl ThrottleCounter {
    fn record(&self, waits: u64, waited: Duration, gave_up: bool) {
        self.waits.fetch_add(waits, Relaxed);
        self.waited_ms
            .fetch_add(waited.as_millis().try_into().unwrap_or(u64::MAX), Relaxed);
        self.gave_up.fetch_add(u64::from(gave_up), Relaxed);
    }

    fn snapshot(&self) -> ThrottleTally {
        ThrottleTally {
            waits: self.waits.load(Relaxed),
            waited_ms: self.waited_ms.load(Relaxed),
            gave_up: self.gave_up.load(Relaxed),
        }
    }
}

/// The longest a Retry-After is taken at its word: past it the wait is clamped (and then
/// past `--max-throttle-wait` anyway), so that no header value can overflow a clock.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// How long to wait before sending a throttled request again; `None` when it was not throttled
/// (a 503 without Retry-After is a server error, not throttling).
fn throttle_wait(exchange: &Exchange, waits: u32) -> Option<Duration> {
    let status = exchange.status()?;
    if !matches!(status, 429 | 503) {
        return None;
    }
    let retry_after = exchange.header("retry-after").map(str::trim);
    let wait = match retry_after {
        Some(value) => {
            if let Ok(seconds) = value.parse::<u64>() {
                Duration::from_secs(seconds)
            } else if value.bytes().all(|b| b.is_ascii_digit()) && !value.is_empty() {
                MAX_RETRY_AFTER // more seconds than a u64 holds
            } else {
                let date = httpdate::parse_http_date(value).ok()?;
                date.duration_since(std::time::SystemTime::now())
                    .unwrap_or_default()
            }
        }
        None if status == 429 => Duration::from_millis(500) * 2u32.saturating_pow(waits.min(10)),
        None => return None,
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// The TLS settings of every lane, built once: certificates verified against the platform's
/// roots and `--ca-cert`'s, or not at all under `--insecure`.
fn tls_config(settings: &ClientSettings) -> Result<rustls::ClientConfig, ClientError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Build(e.to_string()))?
        .dangerous();
    let builder = if settings.insecure {
        builder.with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
    } else {
        let mut extra = Vec::new();
        for pem in &settings.ca_certificates {
            let certificates = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ClientError::Certificate(e.to_string()))?;
            if certificates.is_empty() {
                return Err(ClientError::Certificate(
                    "no PEM certificate in the file".into(),
                ));
            }
            extra.extend(certificates);
        }
        let verifier = if extra.is_empty() {
            rustls_platform_verifier::Verifier::new(provider)
        } else {
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider)
        }
        .map_err(|e| ClientError::Certificate(e.to_string()))?;
        builder.with_custom_certificate_verifier(Arc::new(verifier))
    };
    let mut config = match &settings.client_identity {
        None => builder.with_no_client_auth(),
        Some((chain, key)) => {
            use rustls::pki_types::PrivateKeyDer;
            let chain = CertificateDer::pem_slice_iter(chain)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ClientError::Certificate(format!("--client-cert: {e}")))?;
            if chain.is_empty() {
                return Err(ClientError::Certificate(
                    "--client-cert: no PEM certificate in the file".into(),
                ));
            }
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| ClientError::Certificate(format!("--client-key: {e}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| ClientError::Certificate(format!("--client-cert/--client-key: {e}")))?
        }
    };
    config.alpn_protocols = if settings.http2_prior_knowledge {
        vec![b"h2".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(config)
}

/// Whether an extra header (`-H`) carries a credential, by its name or its value's scheme:
/// its value is then redacted everywhere, as the key is.
pub fn looks_like_credential(name: &str, value: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let value = value.trim_start().to_ascii_lowercase();
    [
        "auth",
        "token",
        "key",
        "secret",
        "cookie",
        "session",
        "password",
        "passwd",
        "signature",
        "credential",
        "jwt",
    ]
    .iter()
    .any(|word| name.contains(word))
        || ["bearer ", "basic ", "digest ", "token "]
            .iter()
            .any(|scheme| value.starts_with(scheme))
}

/// `--insecure`: any certificate is accepted (said on stderr, recorded in the report).
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &rustls::pki_types::CertificateDer<'_>,
        _dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &rustls::pki_types::CertificateDer<'_>,
        _dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
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
        let tls = tls_config(&settings)?;
        let proxy = match &settings.proxy {
            ProxySetting::Explicit(url) => Some(
                reqwest::Proxy::all(url.as_str())
                    .map_err(|e| ClientError::Build(format!("--proxy {url}: {e}")))?
                    .no_proxy(reqwest::NoProxy::from_env()),
            ),
            _ => None,
        };
        let lane_settings = settings.clone();
        let build = move |count: CountConnectsHandle| {
            let mut builder = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .retry(reqwest::retry::never());
            // reqwest reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY unless told not to.
            builder = match (&proxy, &lane_settings.proxy) {
                (Some(proxy), _) => builder.no_proxy().proxy(proxy.clone()),
                (None, ProxySetting::Environment) => builder,
                (None, _) => builder.no_proxy(),
            };
            let mut builder = builder
                .tls_backend_preconfigured(tls.clone())
                // One request at a time per lane: one connection to keep.
                .pool_max_idle_per_host(1)
                .timeout(lane_settings.timeout)
                .connect_timeout(lane_settings.connect_timeout)
                .user_agent(concat!("petstore-conformance/", env!("CARGO_PKG_VERSION")));
            if lane_settings.http2_prior_knowledge {
                builder = builder.http2_prior_knowledge();
            }
            count.install(builder).build()
        };
        // The first lane is built here, so that a setting reqwest refuses is an error now.
        let probe = build(CountConnectsHandle::detached())
            .map_err(|e| ClientError::Build(e.to_string()))?;
        drop(probe);
        let lanes = Lanes::new(settings.concurrency, move |count| {
            build(count).unwrap_or_else(|_| reqwest::Client::new())
        });
        Ok(Client {
            lanes,
            base,
            key: key.to_string(),
            redactor: settings
                .extra_headers
                .iter()
                .filter(|(name, value)| looks_like_credential(name, value))
                .fold(Redactor::new(key), |redactor, (_, value)| {
                    redactor.also(value)
                }),
            runtime,
            cancelled: None,
            next_slot: std::sync::Mutex::new(tokio::time::Instant::now()),
            throttle: ThrottleCounter::default(),
            halt: Halt::default(),
            bodies: Default::default(),
            settings,
            slowest_ms: AtomicU64::new(0),
            answers: AtomicU64::new(0),
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
        self.runtime.block_on(self.send_one(spec))
    }

    /// Sends every request at once, each as soon as a lane is free (independent requests of
    /// one rule), and returns the exchanges in the order of `specs`.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.runtime.block_on(futures_util::future::join_all(
            specs.iter().map(|spec| self.send_one(spec)),
        ))
    }

    /// One request on a lane of its own, within the budget and the interrupt.
    async fn send_one(&self, spec: &RequestSpec) -> Exchange {
        self.send_bounded(spec, async {
            // No lane is held, so nothing is handed back: always an exchange.
            self.send_async(spec, None, &|| false)
                .await
                .unwrap_or_else(|| self.not_sent(spec, "not sent"))
        })
        .await
    }

    /// Sends every request at the same moment and returns the exchanges in the order of
    /// `specs`: for races a sequential client cannot show. The batch takes its lanes together
    /// (as many as the level allows, so a burst never passes it); requests past that follow on
    /// the same lanes as they come free.
    pub fn send_at_once(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.runtime.block_on(async {
            let checkouts = match self.until_halt(self.lanes.checkout_many(specs.len())).await {
                Ok(checkouts) => checkouts,
                Err(reason) => {
                    return specs
                        .iter()
                        .map(|spec| self.not_sent(spec, &reason))
                        .collect();
                }
            };
            if let Some(reason) = self.halt.reason() {
                return specs
                    .iter()
                    .map(|spec| self.not_sent(spec, &reason))
                    .collect();
            }
            // The lanes take the requests in turn. A lane whose fresh connection the server left
            // in its backlog hands its request to the others and closes (keeping it would hold
            // the burst's other connections open, and the server full, until it timed out);
            // the last lane left sends again itself.
            // What is left to send, and the lanes still taking from it; one lock, so that a
            // request handed back always finds a lane that has not left.
            let queue = std::sync::Mutex::new((
                (0..specs.len()).collect::<std::collections::VecDeque<usize>>(),
                checkouts.len(),
            ));
            let results: Vec<std::sync::Mutex<Option<Exchange>>> =
                specs.iter().map(|_| std::sync::Mutex::new(None)).collect();
            futures_util::future::join_all(checkouts.into_iter().map(|mut checkout| {
                let (queue, results) = (&queue, &results);
                async move {
                    loop {
                        let next = {
                            let mut queue = queue.lock().unwrap_or_else(|e| e.into_inner());
                            let next = queue.0.pop_front();
                            if next.is_none() {
                                queue.1 -= 1; // this lane leaves
                            }
                            next
                        };
                        let Some(index) = next else { break };
                        let spec = &specs[index];
                        let hand_off = || {
                            let mut queue = queue.lock().unwrap_or_else(|e| e.into_inner());
                            if queue.1 < 2 {
                                return false; // the last lane sends again itself
                            }
                            queue.1 -= 1;
                            queue.0.push_back(index);
                            true
                        };
                        let sent = self
                            .send_bounded(
                                spec,
                                self.send_async(spec, Some(checkout.lane()), &hand_off),
                            )
                            .await;
                        let Some(exchange) = sent else {
                            self.lanes.resending();
                            checkout.discard();
                            break;
                        };
                        *results[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(exchange);
                    }
                }
            }))
            .await;
            results
                .into_iter()
                .zip(specs)
                .map(|(slot, spec)| {
                    slot.into_inner()
                        .unwrap_or_else(|e| e.into_inner())
                        .unwrap_or_else(|| self.not_sent(spec, "not sent"))
                })
                .collect()
        })
    }

    /// The exchange, cut off when the run is interrupted or its budget ends while it is in
    /// flight (a request refused or cut so says nothing about the target).
    async fn send_bounded<T: From<Exchange>>(
        &self,
        spec: &RequestSpec,
        send: impl std::future::Future<Output = T>,
    ) -> T {
        let interrupted = async {
            match &self.cancelled {
                Some(cancelled) => {
                    let mut cancelled = cancelled.clone();
                    if cancelled.wait_for(|cancelled| *cancelled).await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending::<()>().await,
            }
        };
        let budget_end = async {
            match self.halt.at {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            exchange = send => exchange,
            _ = interrupted => self.not_sent(spec, "cut off: the run was interrupted").into(),
            _ = budget_end => self.not_sent(spec, BUDGET_CUT).into(),
        }
    }

    /// `future`, unless the client halts first: then why.
    async fn until_halt<T>(
        &self,
        future: impl std::future::Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        let value = match self.halt.at {
            Some(at) => tokio::time::timeout_at(at.into(), future)
                .await
                .map_err(|_| BUDGET_SPENT.to_string())??,
            None => future.await?,
        };
        match self.halt.reason() {
            Some(reason) => Err(reason),
            None => Ok(value),
        }
    }

    /// Sends at the configured rate on a lane (`lane`, or one taken for it); a 429, or a 503
    /// with Retry-After, is waited out (the Retry-After given, or for a 429 without one a
    /// doubling backoff) and sent again while the waits stay within `max_throttle_wait` and
    /// the budget. A request caught in the run's own overload is sent again once the level
    /// has dropped. No other status is ever retried.
    ///
    /// On a lane of a burst (`lane`), a request caught in the overload is handed back (`None`)
    /// when `hand_off` says another lane of the burst will take it.
    async fn send_async(
        &self,
        spec: &RequestSpec,
        lane: Option<&Lane>,
        hand_off: &dyn Fn() -> bool,
    ) -> Option<Exchange> {
        let mut throttling = Throttling::default();
        let mut resends = 0;
        loop {
            if let Err(reason) = self.pace().await {
                return Some(self.not_sent(spec, &reason));
            }
            let attempt = match lane {
                Some(lane) => self.attempt(lane, spec, resends).await,
                None => {
                    let mut checkout = match self.until_halt(self.lanes.checkout()).await {
                        Ok(checkout) => checkout,
                        Err(reason) => return Some(self.not_sent(spec, &reason)),
                    };
                    let attempt = self.attempt(checkout.lane(), spec, resends).await;
                    if matches!(attempt, Attempt::Overloaded) {
                        checkout.discard(); // its connection stalled or failed
                    }
                    attempt
                }
            };
            let mut exchange = match attempt {
                Attempt::Done(exchange) => *exchange,
                Attempt::Overloaded if lane.is_some() && hand_off() => return None,
                Attempt::Overloaded => {
                    resends += 1;
                    self.lanes.resending();
                    continue;
                }
            };
            let Some(wait) = throttle_wait(&exchange, throttling.waits) else {
                if throttling.waits > 0 {
                    exchange.throttled = Some(throttling);
                }
                return Some(exchange);
            };
            let waited = Duration::from_millis(throttling.waited_ms);
            if waited.saturating_add(wait) > self.settings.max_throttle_wait {
                throttling.gave_up = true;
                exchange.throttled = Some(throttling);
                self.throttle.record(0, Duration::ZERO, true);
                return Some(exchange);
            }
            if self
                .halt
                .at
                .is_some_and(|at| Instant::now().checked_add(wait).is_none_or(|end| end >= at))
            {
                // The wait would outlast the budget: the request is not sent again.
                return Some(self.not_sent(spec, BUDGET_SPENT));
            }
            tokio::time::sleep(wait).await;
            throttling.waits += 1;
            throttling.waited_ms = throttling
                .waited_ms
                .saturating_add(wait.as_millis().try_into().unwrap_or(u64::MAX));
            self.throttle.record(1, wait, false);
        }
    }

    /// One request on one lane, watched for the run's own overload: a connect that fails, or a
    /// fresh connection that waits far longer than any answer has (the server left it in its
    /// backlog), cuts the level and, while resends are left, is sent again. A slow answer on a
    /// connection the server did take is waited for (up to `--timeout`).
    async fn attempt(&self, lane: &Lane, spec: &RequestSpec, resends: u32) -> Attempt {
        let may_resend = resends < MAX_RESENDS;
        let answers_before = self.answers.load(Relaxed);
        let stall_after = (may_resend && answers_before > 0).then(|| {
            let slowest = Duration::from_millis(self.slowest_ms.load(Relaxed));
            (slowest * 4).max(MIN_STALL).min(self.settings.timeout / 2)
        });
        let exchange = match self
            .send_once(lane, spec, stall_after, answers_before)
            .await
        {
            Some(exchange) => exchange,
            None => {
                self.lanes.overloaded(Overload::StalledConnect);
                return Attempt::Overloaded;
            }
        };
        match &exchange.response {
            Some(response) => {
                self.answers.fetch_add(1, Relaxed);
                if response.status == 503 && exchange.header("retry-after").is_none() {
                    self.lanes.overloaded(Overload::Unavailable);
                } else {
                    self.lanes.answered(lane);
                }
            }
            None if exchange
                .transport_error
                .as_deref()
                .is_some_and(is_connect_error) =>
            {
                self.lanes.overloaded(Overload::ConnectFailed);
                // While other requests are answered, a refused or stalled connect is overload
                // (a full backlog, a connection cap); the request never left.
                if may_resend && self.answers.load(Relaxed) > answers_before {
                    return Attempt::Overloaded;
                }
            }
            None if exchange.transport_error.as_deref().is_some_and(is_timeout) => {
                self.lanes.overloaded(Overload::TimedOut);
            }
            None => {}
        }
        Attempt::Done(Box::new(exchange))
    }

    /// Waits for this request's slot under `--rate`; `Err` when the slot is past the budget.
    async fn pace(&self) -> Result<(), String> {
        let Some(rate) = self.settings.rate.filter(|r| *r > 0.0) else {
            return Ok(());
        };
        let interval = Duration::try_from_secs_f64(1.0 / rate).unwrap_or(Duration::MAX);
        let slot = {
            let mut next = self.next_slot.lock().unwrap_or_else(|e| e.into_inner());
            let now = tokio::time::Instant::now();
            let slot = (*next).max(now);
            let Some(after) = slot.checked_add(interval) else {
                return Err("not sent: --rate leaves no slot within any clock".into());
            };
            *next = after;
            slot
        };
        if let Some(at) = self.halt.at
            && slot.into_std() >= at
        {
            return Err(BUDGET_SPENT.into());
        }
        tokio::time::sleep_until(slot).await;
        Ok(())
    }

    /// What the target's throttling cost the run so far.
    pub fn throttle_tally(&self) -> ThrottleTally {
        self.throttle.snapshot()
    }

    /// What the run's connections came to so far.
    pub fn connection_tally(&self) -> ConnectionTally {
        self.lanes.tally()
    }

    /// One request on `http` (a lane's client). `None` when, after `stall_after` without
    /// response headers, the request turns out to sit on a connection opened for it (`fresh`):
    /// one the server has not taken (the caller cuts the level and sends it again).
    async fn send_once(
        &self,
        lane: &Lane,
        spec: &RequestSpec,
        stall_after: Option<Duration>,
        answers_before: u64,
    ) -> Option<Exchange> {
        let connects = lane.connects();
        let started = Instant::now();
        let mut url = match reqwest::Url::parse(&format!("{}{}", self.base, spec.path)) {
            Ok(url) => url,
            Err(e) => {
                return Some(self.failed_exchange(
                    spec,
                    String::new(),
                    format!("bad URL: {e}"),
                    started,
                ));
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
        let mut request = lane.http.request(method, url.clone());
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
        headers.extend(self.settings.extra_headers.iter().cloned());
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
            body_length: None,
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
                        return None;
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
                return Some(Exchange {
                    request: recorded,
                    response: None,
                    transport_error: Some(self.redactor.redact(&describe_error(&e))),
                    elapsed_ms: elapsed_ms(started),
                    throttled: None,
                    not_sent: false,
                });
            }
        };
        self.slowest_ms.fetch_max(elapsed_ms(started), Relaxed);
        let closing = response
            .headers()
            .get_all(reqwest::header::CONNECTION)
            .iter()
            .any(|value| {
                String::from_utf8_lossy(value.as_bytes())
                    .split(',')
                    .any(|token| token.trim().eq_ignore_ascii_case("close"))
            });
        lane.served(!closing);
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
        let (bytes, body_truncated, body_error) =
            read_capped(response, self.settings.body_cap).await;
        if body_truncated || body_error.is_some() {
            lane.disconnected(); // a body not read to its end takes its connection with it
        }
        // A cut may leave the start of the key at the end.
        let cut = body_truncated || body_error.is_some();
        let unparsed =
            body_truncated.then(|| format!("body exceeds {} bytes", self.settings.body_cap));
        let body = self
            .bodies
            .record(&bytes, cut, unparsed, &self.redactor)
            .await;
        drop(bytes);
        Some(Exchange {
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
        })
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
                body_length: None,
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

/// The start of a transport error that never reached the target: the connect failed.
const CONNECT_FAILED: &str = "could not connect";
/// The start of a transport error where the exchange outlasted `--timeout`.
const TIMED_OUT: &str = "timed out";

fn is_connect_error(error: &str) -> bool {
    error.starts_with(CONNECT_FAILED)
}

fn is_timeout(error: &str) -> bool {
    error.starts_with(TIMED_OUT)
}

fn describe_error(error: &reqwest::Error) -> String {
    // A connect that timed out is a connect failure first: the request never left.
    let kind = if error.is_connect() {
        CONNECT_FAILED
    } else if error.is_timeout() {
        TIMED_OUT
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
