//! The one HTTP client of a run: requests sent as described, exchanges recorded with the key
//! redacted, response bodies capped, no redirects, no retries, no proxy.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::lanes::{ConnectionTally, CountConnectsHandle, Lanes, Priority};
use super::redact::Redactor;
use crate::generation::request::{NearMiss, NearMissSpelling, RequestSpec};
use crate::outcome::Exchange;

mod attempts;
mod burst;
mod client_settings;
mod coding;
mod send;
mod throttle;
mod tls;
mod transport;

pub use client_settings::{
    ClientSettings, DEFAULT_CONCURRENCY, Halt, ProxySetting, TIME_BUDGET, ThrottleBound,
    looks_like_credential,
};
use throttle::ThrottleCounter;
pub use throttle::ThrottleTally;
use tls::tls_config;
mod client_error;
pub use client_error::ClientError;
pub use transport::{head_too_large, stalled_mid_body};

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
    /// Tries that got no answer since the last answer (see `attempts::QUIET_TRIES`).
    unanswered_in_a_row: AtomicU64,
    /// Of them, the tries sent alone after a pause (see `attempts::QUIET_ALONE`).
    alone_unanswered: AtomicU64,
    /// Response bodies' parses: bounded by bytes (see `bodies`).
    bodies: super::bodies::Bodies,
    /// Connections closed or reset before any answer.
    resets: AtomicU64,
    /// Pauses the run took (see [`Client::pause`]).
    pauses: AtomicU64,
    /// No request leaves before this (see [`Client::pause`]).
    paused_until: std::sync::Mutex<Option<tokio::time::Instant>>,
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
                .user_agent(concat!("petstore-conformance/", env!("CARGO_PKG_VERSION")))
                .http1_max_headers(transport::MAX_HEAD_FIELDS);
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
            unanswered_in_a_row: AtomicU64::new(0),
            alone_unanswered: AtomicU64::new(0),
            resets: AtomicU64::new(0),
            pauses: AtomicU64::new(0),
            paused_until: std::sync::Mutex::new(None),
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
        self.send_all_each(specs, Priority::Plain, &|_, exchange| exchange)
    }

    /// [`Client::send_all`], each request taking its place in flight as `priority` says, and
    /// each exchange handed to `each` (with its place in `specs`) as soon as it is back, not
    /// once the last one is: a batch's pets are counted as they are created.
    pub fn send_all_each(
        &self,
        specs: &[RequestSpec],
        priority: Priority,
        each: &dyn Fn(usize, Exchange) -> Exchange,
    ) -> Vec<Exchange> {
        let sent = self.send_all_then(specs, priority, each, &|_, _| Vec::new(), &|_, e| e);
        sent.into_iter().map(|(exchange, _)| exchange).collect()
    }

    /// [`Client::send_all_each`], and after each request, as soon as its exchange is back,
    /// the requests `then` says its answer decides (a read back of what it created), all at
    /// once, each handed to `each_then`: a case whose answer came back in the batch's first
    /// round trip is read back in its second, not after the batch's slowest answer.
    pub fn send_all_then(
        &self,
        specs: &[RequestSpec],
        priority: Priority,
        each: &dyn Fn(usize, Exchange) -> Exchange,
        then: &dyn Fn(usize, &Exchange) -> Vec<RequestSpec>,
        each_then: &dyn Fn(&RequestSpec, Exchange) -> Exchange,
    ) -> Vec<(Exchange, Vec<(RequestSpec, Exchange)>)> {
        if self.lanes.one_at_a_time() {
            // In the order of `specs`, as `--concurrency 1` promises: at once, which of them
            // takes the one place freed is a race between their waits.
            return specs
                .iter()
                .enumerate()
                .map(|(n, spec)| {
                    let exchange = each(n, self.send_as(spec, priority));
                    let after = then(n, &exchange)
                        .into_iter()
                        .map(|next| {
                            let answer = each_then(&next, self.send_as(&next, priority));
                            (next, answer)
                        })
                        .collect();
                    (exchange, after)
                })
                .collect();
        }
        self.runtime.block_on(futures_util::future::join_all(
            specs.iter().enumerate().map(|(n, spec)| async move {
                let exchange = each(n, self.send_one(spec, priority).await);
                let next = then(n, &exchange);
                let answers = futures_util::future::join_all(
                    next.iter().map(|next| self.send_one(next, priority)),
                )
                .await;
                let after = next
                    .into_iter()
                    .zip(answers)
                    .map(|(next, answer)| {
                        let answer = each_then(&next, answer);
                        (next, answer)
                    })
                    .collect();
                (exchange, after)
            }),
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

    /// Waits for this request's slot under `--rate`, or under the pace a throttling target
    /// was seen to let through (whichever is slower); `Err` when the slot is past the budget.
    async fn pace(&self) -> Result<(), String> {
        self.until_halt(async {
            self.paused().await;
            Ok(())
        })
        .await?;
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
        ConnectionTally {
            resets: self.resets.load(Relaxed),
            pauses: self.pauses.load(Relaxed),
            ..self.lanes.tally()
        }
    }

    /// Nothing leaves for `pause`, and then at the level's lowest: the target answered nothing
    /// for a while after answering before (a server restarting, a worker pool that reset
    /// everything at once). The run goes on after it instead of giving up on the store.
    pub fn pause(&self, pause: Duration) {
        self.pauses.fetch_add(1, Relaxed);
        self.lanes.lowest();
        let until = tokio::time::Instant::now() + pause;
        let mut paused = self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
        *paused = Some(paused.map_or(until, |at| at.max(until)));
    }

    /// Waits out a pause the run took, if one is on.
    async fn paused(&self) {
        let until = *self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(until) = until {
            tokio::time::sleep_until(until).await;
        }
    }
}
