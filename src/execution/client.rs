//! The one HTTP client of a run: requests sent as described, exchanges recorded with the key
//! redacted, response bodies capped, no redirects, no retries, no proxy.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use super::lanes::{ConnectionTally, CountConnectsHandle, Lane, Lanes, Overload, Priority};
use super::redact::Redactor;
use crate::generation::request::{NearMiss, RequestSpec};
use crate::outcome::{Exchange, Throttling};

mod burst;
mod coding;
mod settings;
mod throttle;
mod tls;
mod transport;
mod wire;

pub use settings::{
    ClientSettings, DEFAULT_CONCURRENCY, Halt, ProxySetting, TIME_BUDGET, looks_like_credential,
};
pub use throttle::ThrottleTally;
use throttle::{ThrottleCounter, throttle_wait};
use tls::tls_config;
pub use transport::stalled_mid_body;
use transport::{is_connect_error, is_timeout};

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
    /// The pace a throttling target lets through, learned from its 429s.
    learned_pace: throttle::LearnedPace,
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
                    .map_err(|e| {
                        let shown = super::redact::url_for_display(url);
                        ClientError::Build(format!("--proxy {shown}: {e}"))
                    })?
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
                .map(|(_, value)| value.clone())
                .chain(match &settings.proxy {
                    ProxySetting::Explicit(url) => super::redact::userinfo_secrets(url),
                    _ => Vec::new(),
                })
                .fold(Redactor::new(key), |redactor, secret| {
                    redactor.also(&secret)
                }),
            runtime,
            cancelled: None,
            next_slot: std::sync::Mutex::new(tokio::time::Instant::now()),
            learned_pace: throttle::LearnedPace::default(),
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

    /// Whether the run adds a header of this name to every request (`-H`).
    pub fn sends_extra_header(&self, name: &str) -> bool {
        self.settings
            .extra_headers
            .iter()
            .any(|(extra, _)| extra.eq_ignore_ascii_case(name))
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Sends one request and records the exchange. Never panics on what the target sends.
    pub fn send(&self, spec: &RequestSpec) -> Exchange {
        self.send_as(spec, Priority::Plain)
    }

    /// [`Client::send`], taking its place in flight as `priority` says.
    pub fn send_as(&self, spec: &RequestSpec, priority: Priority) -> Exchange {
        self.runtime.block_on(self.send_one(spec, priority))
    }

    /// Sends every request at once, each as soon as a lane is free (independent requests of
    /// one rule), and returns the exchanges in the order of `specs`.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.send_all_as(specs, Priority::Plain)
    }

    /// [`Client::send_all`], each request taking its place in flight as `priority` says.
    pub fn send_all_as(&self, specs: &[RequestSpec], priority: Priority) -> Vec<Exchange> {
        self.runtime.block_on(futures_util::future::join_all(
            specs.iter().map(|spec| self.send_one(spec, priority)),
        ))
    }

    /// One request on a lane of its own, within the budget and the interrupt.
    async fn send_one(&self, spec: &RequestSpec, priority: Priority) -> Exchange {
        self.send_bounded(spec, async {
            // No lane is held, so nothing is handed back: always an exchange.
            self.send_async(spec, None, priority, &|| false)
                .await
                .unwrap_or_else(|| self.not_sent(spec, "not sent"))
        })
        .await
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
            _ = budget_end => self.not_sent(spec, &self.halt.cut()).into(),
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
                .map_err(|_| self.halt.spent())??,
            None => future.await?,
        };
        match self.halt.reason() {
            Some(reason) => Err(reason),
            None => Ok(value),
        }
    }

    /// Sends at the configured rate on a lane (`lane`, or one taken for it, in line as
    /// `priority` says); a 429, or a 503
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
        priority: Priority,
        hand_off: &dyn Fn() -> bool,
    ) -> Option<Exchange> {
        let mut throttling = Throttling::default();
        let mut resends = 0;
        loop {
            // Paced once a place in flight is taken, so that requests queued for places do not
            // leave together past the pace when places free up.
            let attempt = match lane {
                Some(lane) => {
                    if let Err(reason) = self.pace().await {
                        return Some(self.not_sent(spec, &reason));
                    }
                    self.attempt(lane, spec, resends).await
                }
                None => {
                    let mut checkout = match self.until_halt(self.lanes.checkout(priority)).await {
                        Ok(checkout) => checkout,
                        Err(reason) => return Some(self.not_sent(spec, &reason)),
                    };
                    if let Err(reason) = self.pace().await {
                        return Some(self.not_sent(spec, &reason));
                    }
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
                if exchange.response.is_some() {
                    self.learned_pace.let_through();
                }
                if throttling.waits > 0 {
                    exchange.throttled = Some(throttling);
                }
                return Some(exchange);
            };
            self.learned_pace.throttled();
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
                return Some(self.not_sent(spec, &self.halt.spent()));
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
                    let served = (200..300).contains(&response.status);
                    self.lanes.answered(lane, exchange.elapsed_ms, served);
                    if throttle_wait(&exchange, 0).is_some() {
                        self.lanes.overloaded(Overload::Throttled);
                    }
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

    /// Waits for this request's slot under `--rate`, or under the pace a throttling target
    /// was seen to let through (whichever is slower); `Err` when the slot is past the budget.
    async fn pace(&self) -> Result<(), String> {
        let learned = self.learned_pace.rate();
        let rate = match (self.settings.rate.filter(|r| *r > 0.0), learned) {
            (Some(set), Some(learned)) => Some(set.min(learned)),
            (set, learned) => set.or(learned),
        };
        let Some(rate) = rate else {
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
            return Err(self.halt.spent());
        }
        tokio::time::sleep_until(slot).await;
        Ok(())
    }

    /// What the target's throttling cost the run so far.
    pub fn throttle_tally(&self) -> ThrottleTally {
        self.throttle.snapshot()
    }

    /// What the run's connections came to so far.
    /// The fastest success so far: how far the target is, with nothing queued
    /// (`Duration::MAX` before any).
    pub fn fastest_answer(&self) -> Duration {
        self.lanes.fastest_answer()
    }

    pub fn connection_tally(&self) -> ConnectionTally {
        self.lanes.tally()
    }
}
