//! One request's tries: on which lane each goes, what each came to, and when the request is
//! sent again (the run's own overload, a 503 without Retry-After, a connection closed before
//! any answer, throttling) instead of its answer standing.

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use super::Client;
use super::send::Sent;
use super::throttle::throttle_wait;
use crate::execution::lanes::{Checkout, Lane, Overload, Priority, Reuse};
use crate::generation::request::RequestSpec;
use crate::outcome::{Exchange, Retries, Throttling};

/// What one attempt on a lane came to.
enum Attempt {
    Done(Box<Exchange>),
    /// Caught in the run's own overload before the target could have seen it (a connect that
    /// stalled, failed or was refused): to be sent again once the level has dropped.
    Overloaded,
    /// No answer: the connection closed or was reset before one. `unwritten`: the request
    /// never went out on it.
    Closed(Box<Exchange>, bool),
    /// 503 without Retry-After: the server says it is overloaded, without saying for how long.
    Unavailable(Box<Exchange>),
}

/// Times a request caught in the run's own overload is sent again before its exchange stands.
const MAX_RESENDS: u32 = 3;

/// Tries after the first of a request whose connection closed before any answer: the first
/// on a fresh connection beside the others, the last alone (see [`Lanes::checkout_alone`]).
const MAX_CLOSED_RESENDS: usize = 2;

/// Tries of a 503 without Retry-After sent again beside other requests, each after a pause
/// that grows; the next goes alone, and what it gets then is the store's own answer.
const UNAVAILABLE_BESIDE: u32 = 2;

/// The first pause before a request that got no answer, or a 503 without Retry-After, is sent
/// again; it doubles at each try.
const RESEND_PAUSE: Duration = Duration::from_millis(200);

/// Tries with no answer in a row, across every request, after which each try goes alone,
/// after a pause that doubles ([`RESEND_PAUSE`] up to 8 times it), and is not sent again,
/// until one is answered: a target gone down or restarting gets a few tries, not every request
/// the rules had queued (which otherwise went out as fast as its connections were refused or
/// reset, hundreds in a few seconds), and the run's stop for a silent target counts its
/// failures as soon. Twice the connections a run starts with: a target that answers, however
/// loaded, answers one of so many.
const QUIET_TRIES: u64 = 2 * crate::execution::lanes::START as u64;

/// Tries sent alone past [`QUIET_TRIES`], each after its pause (7.8 s of pauses in all, more
/// than the run's own pauses for a silent target), with no answer either, after which the run
/// stops sending: the target stopped answering.
const QUIET_ALONE: u64 = 7;

impl Client {
    /// A try got no answer: counted towards [`QUIET_TRIES`], and towards the run's bound on
    /// a target's silence.
    fn try_unanswered(&self, last: &str) {
        self.unanswered_in_a_row.fetch_add(1, Relaxed);
        self.halt.unanswered(last);
    }

    /// A try sent alone after its pause got no answer either: at [`QUIET_ALONE`] of them the
    /// run stops sending.
    fn alone_unanswered(&self, spec: &RequestSpec) {
        let alone = self.alone_unanswered.fetch_add(1, Relaxed) + 1;
        if alone >= QUIET_ALONE {
            let paused: u32 = (0..QUIET_ALONE).map(|n| 1 << n.min(3)).sum();
            let _ = self.halt.reason.set(format!(
                "not sent: the target stopped answering after {} consecutive transport failures, the last {alone} sent alone after pauses of {:.1} s in all (last: {} {})",
                self.unanswered_in_a_row.load(Relaxed),
                (RESEND_PAUSE * paused).as_secs_f64(),
                spec.method,
                spec.path
            ));
        }
    }

    /// The target answered none of the last [`QUIET_TRIES`] tries.
    fn quiet(&self) -> bool {
        self.unanswered_in_a_row.load(Relaxed) >= QUIET_TRIES
    }
}

/// Why a try got no answer, in words.
fn why_unanswered(exchange: &Exchange) -> String {
    exchange
        .transport_error
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// How a try takes its lane.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// Any lane, an idle one first.
    Any,
    /// A lane of its own, on a fresh connection.
    Fresh,
    /// Alone: nothing else in flight, every idle connection closed, a fresh one.
    Alone,
}

/// A fresh connection waits at least this long for its answer before it is taken for one the
/// server left in its backlog.
const MIN_STALL: Duration = Duration::from_secs(1);

impl Client {
    /// Sends at the configured rate on a lane (`lane`, or one taken for it, in line as
    /// `priority` says); a 429, or a 503
    /// with a Retry-After in any form, is waited out (the Retry-After given, or a doubling
    /// backoff) and sent again while the waits stay within `max_throttle_wait` and the budget.
    /// A request caught in the run's own overload is sent again once the level has dropped; a
    /// 503 without Retry-After is sent again beside the others after a pause, then alone,
    /// and only the answer it gets alone is judged; a request whose connection closed before
    /// any answer is sent again on a fresh connection, then alone, when that cannot repeat it
    /// (a GET, or a request never written). No other answer is ever sent again.
    ///
    /// On a lane of a burst (`lane`), a request caught in the overload is handed back (`None`)
    /// when `hand_off` says another lane of the burst will take it.
    pub(super) async fn send_async(
        &self,
        spec: &RequestSpec,
        lane: Option<&Lane>,
        priority: Priority,
        hand_off: &dyn Fn() -> bool,
    ) -> Option<Exchange> {
        let mut throttling = Throttling::default();
        let mut resends = 0;
        // Why each try so far got no answer.
        let mut unanswered: Vec<String> = Vec::new();
        let mut unavailable = 0;
        // What the store answered to a read sent alone after the tries: the request then goes
        // alone once more, and only if that try gets no answer either does the exchange stand
        // as evidence (the store seen answering just before it).
        let mut store_answered: Option<String> = None;
        let answers_before = self.answers.load(Relaxed);
        loop {
            let turn = if unavailable > UNAVAILABLE_BESIDE || unanswered.len() >= MAX_CLOSED_RESENDS
            {
                Turn::Alone
            } else if unanswered.is_empty() {
                Turn::Any
            } else {
                Turn::Fresh
            };
            let attempt = match self.try_on(spec, lane, priority, turn, resends).await {
                Ok(attempt) => attempt,
                Err(reason) => return Some(self.not_sent(spec, &reason)),
            };
            let mut exchange = match attempt {
                Attempt::Done(exchange) => *exchange,
                Attempt::Overloaded if lane.is_some() && hand_off() => return None,
                Attempt::Overloaded => {
                    resends += 1;
                    self.lanes.resending();
                    // Time for the level's cut to close connections: sent again at once, a
                    // request finds the server as full as it was.
                    self.pause_before_resend(resends as usize).await;
                    continue;
                }
                Attempt::Closed(exchange, unwritten) => {
                    let repeatable = unwritten || spec.repeatable();
                    // While nothing was ever answered the target is down, not dropping one
                    // request: the run's stop for a silent target decides.
                    if repeatable
                        && unanswered.len() < MAX_CLOSED_RESENDS
                        && self.answers.load(Relaxed) > 0
                        && !self.quiet()
                    {
                        unanswered.push(why_unanswered(&exchange));
                        self.lanes.resending();
                        if lane.is_some() && hand_off() {
                            return None;
                        }
                        self.pause_before_resend(unanswered.len()).await;
                        continue;
                    }
                    let mut exchange = *exchange;
                    if !unanswered.is_empty() {
                        // Once the store answered between, the try after it stands.
                        let confirmed = store_answered.take();
                        if confirmed.is_none() && repeatable {
                            store_answered = self.store_answers(answers_before).await;
                            if store_answered.is_some() {
                                unanswered.push(why_unanswered(&exchange));
                                continue;
                            }
                        }
                        exchange.retries = Some(Box::new(Retries {
                            unanswered,
                            store_answered: confirmed,
                        }));
                    }
                    return Some(exchange);
                }
                Attempt::Unavailable(_) if unavailable <= UNAVAILABLE_BESIDE => {
                    // A burst's lane hands it to the others, fewer at once; the last lane left
                    // sends it again itself after the pause, as any request does.
                    if lane.is_some() && hand_off() {
                        return None;
                    }
                    unavailable += 1;
                    self.lanes.resending();
                    self.pause_before_resend(unavailable as usize).await;
                    continue;
                }
                // Sent alone and still refused for overload: the store's answer.
                Attempt::Unavailable(exchange) => *exchange,
            };
            if !unanswered.is_empty() {
                exchange.retries = Some(Box::new(Retries {
                    unanswered: std::mem::take(&mut unanswered),
                    store_answered: None,
                }));
            }
            let Some(wait) = throttle_wait(&exchange, throttling.waits) else {
                if exchange.response.is_some() {
                    self.learned_pace.let_through();
                    self.halt.let_through();
                }
                if throttling.waits > 0 {
                    exchange.throttled = Some(throttling);
                }
                return Some(exchange);
            };
            self.learned_pace.throttled();
            self.halt.throttled(&exchange.summary());
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

    /// One try of `spec`: on `lane` (a burst's), or on one taken as `turn` says; paced once
    /// its place in flight is taken, so that requests queued for places do not leave together
    /// past the pace when places free up. `Err` when the run stopped sending meanwhile.
    async fn try_on(
        &self,
        spec: &RequestSpec,
        lane: Option<&Lane>,
        priority: Priority,
        turn: Turn,
        resends: u32,
    ) -> Result<Attempt, String> {
        if let Some(lane) = lane {
            self.pace().await?;
            return Ok(self.attempt(lane, spec, resends).await);
        }
        let mut turn = if self.quiet() { Turn::Alone } else { turn };
        let mut checkout = loop {
            let reuse = match turn {
                Turn::Any => self.lanes.reuse_for(spec.repeatable()),
                Turn::Fresh | Turn::Alone => Reuse::Never,
            };
            let checkout = match turn {
                Turn::Alone => self.until_halt(self.lanes.checkout_alone()).await,
                _ => {
                    self.until_halt(self.lanes.checkout_reusing(priority, reuse))
                        .await
                }
            }?;
            // The target went quiet while this try waited for its place: it goes alone.
            if turn != Turn::Alone && self.quiet() {
                drop(checkout);
                turn = Turn::Alone;
                continue;
            }
            break checkout;
        };
        // Alone (nothing else in flight) while the target answers nothing: the pause first,
        // and the try counted among the last ones (see [`QUIET_ALONE`]).
        let paused = turn == Turn::Alone && self.quiet();
        if paused {
            let alone = self.alone_unanswered.load(Relaxed);
            let pause = RESEND_PAUSE * 2u32.pow(alone.min(3) as u32);
            self.until_halt(async {
                tokio::time::sleep(pause).await;
                Ok(())
            })
            .await?;
        }
        self.pace().await?;
        let attempt = self.attempt(checkout.lane(), spec, resends).await;
        let answered =
            matches!(&attempt, Attempt::Done(e) | Attempt::Unavailable(e) if e.response.is_some());
        if paused && !answered {
            self.alone_unanswered(spec);
        }
        if matches!(attempt, Attempt::Overloaded | Attempt::Closed(..)) {
            checkout.discard(); // its connection stalled, failed or closed
        }
        if let Attempt::Done(exchange) | Attempt::Unavailable(exchange) = &attempt
            && exchange.response.as_ref().is_some_and(|response| {
                response.body_omitted > 0
                    || response.body_truncated
                    || response.body.len() >= crate::execution::bodies::LARGE
            })
        {
            // A connection that read a large answer keeps a read buffer as large (hyper's
            // grows to hundreds of KiB and stays while it is kept): closed, memory stays
            // bounded by the large bodies held, not by the connections kept.
            checkout.discard();
        }
        Ok(attempt)
    }

    /// The pause before try `n + 1` of a request that got no answer, or a 503 without
    /// Retry-After: long enough for the level's cut to take effect, within the budget.
    async fn pause_before_resend(&self, n: usize) {
        let pause = RESEND_PAUSE
            * 2u32.saturating_pow(u32::try_from(n.saturating_sub(1)).unwrap_or(8).min(8));
        let _ = self
            .until_halt(async {
                tokio::time::sleep(pause).await;
                Ok(())
            })
            .await;
    }

    /// After a request got no answer on any try: whether the store answers others. Where
    /// nothing was answered since its first try (`answers_before`), the store may be down: no
    /// sign, and nothing more sent to it. Else the plainest read the contract offers is sent
    /// alone, on a fresh connection, after the last try, and what it got says so. An answer to
    /// another request sent while the tries went is no sign by itself: the store may have
    /// stopped since (a server that went down mid-run gave every request it had not answered
    /// yet no answer, which no operation is to blame for). `None`: no sign.
    async fn store_answers(&self, answers_before: u64) -> Option<String> {
        if self.answers.load(Relaxed) == answers_before {
            return None;
        }
        let probe = RequestSpec::liveness();
        match self
            .try_on(&probe, None, Priority::Plain, Turn::Alone, MAX_RESENDS)
            .await
        {
            Ok(Attempt::Done(exchange) | Attempt::Unavailable(exchange))
                if exchange.response.is_some() =>
            {
                Some(format!(
                    "{} {}, sent alone before the last try, answered {}",
                    exchange.request.method,
                    exchange.request.url,
                    exchange.status().unwrap_or_default()
                ))
            }
            _ => None,
        }
    }

    /// Shows the target `n` connections at once: the plainest read the contract offers on `n`
    /// lanes together (the idle ones, then fresh), unrecorded, as the probe of
    /// `store_answers` is. Each answer proves its lane; an overload one meets cuts the level
    /// as any does, and its lane closes. Fresh lanes only in the place of idle ones closed
    /// for them opened more than `--concurrency` at once at the target, which had not yet
    /// seen the closed ones go. The lanes answered, still taken: a burst may go on them.
    pub(super) async fn show_connections(&self, n: usize) -> Vec<Checkout<'_>> {
        let Ok(checkouts) = self
            .until_halt(self.lanes.checkout_many(n, Reuse::Any))
            .await
        else {
            return Vec::new();
        };
        let probe = RequestSpec::liveness();
        // Paced as every request is (`--rate`).
        let attempts = futures_util::future::join_all(checkouts.iter().map(|checkout| async {
            self.pace().await.ok()?;
            Some(self.attempt(checkout.lane(), &probe, MAX_RESENDS).await)
        }))
        .await;
        let mut answered = Vec::with_capacity(checkouts.len());
        for (mut checkout, attempt) in checkouts.into_iter().zip(attempts) {
            match attempt {
                Some(Attempt::Done(exchange)) if exchange.response.is_some() => {
                    answered.push(checkout);
                }
                Some(Attempt::Overloaded | Attempt::Closed(..)) => checkout.discard(),
                _ => {}
            }
        }
        answered
    }

    /// One request on one lane, watched for the run's own overload: a connect that fails, or a
    /// fresh connection that waits far longer than any answer has (the server left it in its
    /// backlog), cuts the level and, while resends are left, is sent again. A slow answer on a
    /// connection the server did take is waited for (up to `--timeout`). A fresh connection
    /// closed before any answer while others are answered, and a 503 without Retry-After, cut
    /// it too.
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
            Sent::Exchange(exchange, fresh) => {
                if !fresh && exchange.response.is_some() {
                    self.lanes.kept_answered();
                }
                exchange
            }
            Sent::Stalled => {
                self.lanes.not_served(lane);
                self.lanes.overloaded(Overload::StalledConnect);
                self.try_unanswered(&format!(
                    "{} {}: no answer on a fresh connection",
                    spec.method, spec.path
                ));
                return Attempt::Overloaded;
            }
            Sent::Closed {
                exchange,
                unwritten,
                fresh,
            } => {
                self.resets.fetch_add(1, Relaxed);
                self.try_unanswered(&exchange.summary());
                if fresh && self.answers.load(Relaxed) > 0 {
                    self.lanes.not_served(lane);
                    self.lanes.overloaded(Overload::Refused);
                } else if !fresh {
                    // A kept connection the target closed as this request went out on it.
                    self.lanes.closed_after_idle(lane.idle_before());
                }
                return Attempt::Closed(Box::new(exchange), unwritten);
            }
        };
        if exchange.response.is_none() {
            self.try_unanswered(&exchange.summary());
        }
        match &exchange.response {
            Some(response) => {
                self.answers.fetch_add(1, Relaxed);
                self.unanswered_in_a_row.store(0, Relaxed);
                self.alone_unanswered.store(0, Relaxed);
                self.halt.heard();
                if response.status == 503 && exchange.header("retry-after").is_none() {
                    self.lanes.overloaded(Overload::Unavailable);
                    return Attempt::Unavailable(Box::new(exchange));
                }
                let served = (200..300).contains(&response.status);
                if throttle_wait(&exchange, 0).is_some() {
                    self.lanes.throttled(lane);
                } else {
                    self.lanes.answered(lane, exchange.elapsed_ms, served);
                }
            }
            None if exchange
                .transport_error
                .as_ref()
                .is_some_and(|error| error.connect_failed()) =>
            {
                self.lanes.not_served(lane);
                self.lanes.overloaded(Overload::ConnectFailed);
                // Once the target has answered, a refused, reset or stalled connect is overload
                // (a full backlog, a connection cap resetting what is past it); the request
                // never left, whatever its method.
                if may_resend && self.answers.load(Relaxed) > 0 && !self.quiet() {
                    return Attempt::Overloaded;
                }
            }
            None if exchange
                .transport_error
                .as_ref()
                .is_some_and(|error| error.timed_out()) =>
            {
                self.lanes.overloaded(Overload::TimedOut);
            }
            None => {}
        }
        Attempt::Done(Box::new(exchange))
    }
}
