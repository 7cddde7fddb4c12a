//! When a run stops sending because of the target, the budget or an interrupt: the count of
//! consecutive exchanges with no answer, the pauses a target that was answering gets, and the
//! bound on its silence.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::execution::Halt;
use crate::outcome::Exchange;
/// Consecutive transport failures (no response at all) after which a run stops sending.
pub const DEFAULT_MAX_TRANSPORT_FAILURES: u32 = 5;

/// The pauses a run takes, one after another, when a target that was answering answers
/// nothing for as many requests as would stop the run: a worker pool that reset every
/// connection at once, a server restarting. After each, one request at a time goes; one more
/// failure takes the next pause, and after the last the run stops sending.
const PAUSES: [Duration; 3] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
];

/// Why requests stop going out before the rules are done: the time budget (or the run's
/// default bound), an interrupt, or a target that stopped answering. Every send after that is
/// "not sent", with the reason, so the rules left end inconclusive rather than waiting on
/// timeouts.
#[derive(Default)]
pub struct Stops {
    /// When requests stop being sent at all (the whole budget), and why the run stopped
    /// sending, set once; the client holds the same (see [`Stops::halt`]).
    halt: Halt,
    /// Consecutive exchanges with no answer to judge: no response, or one that stalled
    /// mid-body until the timeout.
    consecutive_failures: AtomicU32,
    max_transport_failures: u32,
    /// SIGINT or SIGTERM came.
    pub(crate) interrupted: AtomicBool,
    /// Some request of a rule got a response (the preflight does not count).
    pub(crate) answered: AtomicBool,
    /// Pauses taken since the target last answered.
    pauses: AtomicU32,
    /// When the last pause ended: failures of requests sent before it are the same silence.
    pause_ended: Mutex<Option<Instant>>,
}

/// How long a target that had answered may stay silent while requests go unanswered before
/// the run stops sending ([`Halt::silence`]), however the failures reach the count: every
/// pause, and a timeout for each failure that opens or follows one, one at a time. Requests
/// delayed by the machine's load or by the run's own waits (a create waiting for a lane, a
/// try sent again, a burst counted when it ends) may count failures later than the pauses
/// expect; the client checks this as each try fails, and the end stays within it.
pub fn silence_bound(max_transport_failures: u32, timeout: Duration) -> Duration {
    let failures = max_transport_failures.max(1) + PAUSES.len() as u32;
    PAUSES.iter().sum::<Duration>() + timeout.saturating_mul(failures)
}

impl Stops {
    /// No request once `halt` says so (its end, the time budget or the default bound, a
    /// target that throttles everything: see [`Halt::throttled`]), nor after
    /// `max_transport_failures` consecutive exchanges with no answer to judge.
    pub fn new(halt: Halt, max_transport_failures: u32) -> Stops {
        Stops {
            halt,
            max_transport_failures: max_transport_failures.max(1),
            ..Stops::default()
        }
    }

    pub(crate) fn reason(&self) -> Option<String> {
        if self.interrupted.load(Ordering::Relaxed) {
            return Some("not sent: the run was interrupted".into());
        }
        self.halt.reason()
    }

    /// What the client checks before each request leaves: the same end and the same reason.
    pub fn halt(&self) -> Halt {
        self.halt.clone()
    }

    /// What ends at [`Stops::hard_deadline`]: the time budget, or the run's default bound.
    pub fn bound(&self) -> &str {
        self.halt.bound()
    }

    /// Takes in one exchange; `Some(pause)` when the run should send nothing for that long
    /// (see [`PAUSES`]).
    pub(crate) fn observe(&self, exchange: &Exchange) -> Option<Duration> {
        if !exchange.was_sent() {
            return None; // refused by the budget or the interrupt: says nothing of the target
        }
        if exchange.gave_up_throttled() {
            return None; // the client's to count (see `Halt::throttled`)
        }
        // A request the store never answers while it answers others, or a head too large to
        // read: the target answers.
        let answered = (exchange.response.is_some()
            && !crate::execution::client::stalled_mid_body(exchange))
            || exchange.never_answered().is_some()
            || crate::execution::client::head_too_large(exchange);
        if answered {
            self.answered.store(true, Ordering::Relaxed);
            self.consecutive_failures.store(0, Ordering::Relaxed);
            self.pauses.store(0, Ordering::Relaxed);
            return None;
        }
        let sent_at = Instant::now()
            .checked_sub(Duration::from_millis(exchange.elapsed_ms))
            .unwrap_or_else(Instant::now);
        let pause_ended = *self.pause_ended.lock().unwrap_or_else(|e| e.into_inner());
        if pause_ended.is_some_and(|ended| sent_at < ended) {
            return None; // sent before the last pause: that silence is already counted
        }
        let failures = self.consecutive_failures.fetch_add(1, Ordering::Relaxed) + 1;
        if failures < self.max_transport_failures {
            return None;
        }
        if self.answered.load(Ordering::Relaxed) {
            let taken = self.pauses.fetch_add(1, Ordering::Relaxed);
            if let Some(&pause) = PAUSES.get(taken as usize) {
                // After the pause, one more failure decides.
                self.consecutive_failures
                    .store(self.max_transport_failures - 1, Ordering::Relaxed);
                *self.pause_ended.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(Instant::now() + pause);
                return Some(pause);
            }
        }
        let last = match &exchange.response {
            Some(_) => format!(
                "{}, then {}",
                exchange.summary(),
                (exchange.transport_error.as_ref()).map_or("a stall".into(), ToString::to_string)
            ),
            None => exchange.summary(),
        };
        let taken = (self.pauses.load(Ordering::Relaxed) as usize).min(PAUSES.len());
        let paused = match taken {
            0 => String::new(),
            n => format!(" and {n} pauses"),
        };
        let _ = self.halt.reason.set(format!(
            "not sent: the target stopped answering after {failures} consecutive transport failures{paused} (last: {last})"
        ));
        None
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    /// Why the run stopped sending because of the target, if it did.
    pub fn target_stopped(&self) -> Option<&str> {
        self.halt.reason.get().map(String::as_str)
    }

    /// When the run stops sending for good (the end of `--time-budget`, or of the run's
    /// default bound).
    pub fn hard_deadline(&self) -> Option<Instant> {
        self.halt.at
    }
}

#[cfg(test)]
mod tests {
    //! The stop for a silent target: pauses while it was heard from lately, and an end once its
    //! silence passes the bound, checked as a try fails.

    use std::time::{Duration, Instant};

    use super::{PAUSES, Stops, silence_bound};
    use crate::execution::Halt;
    use crate::outcome::{Exchange, RecordedRequest};

    fn timed_out() -> Exchange {
        Exchange {
            request: RecordedRequest {
                method: "GET".into(),
                url: "http://x/v1/pets".into(),
                headers: Vec::new(),
                body: None,
                body_length: None,
                key_channel: None,
                body_escaped: false,
            },
            response: None,
            transport_error: Some(crate::outcome::TransportError::new(
                crate::outcome::TransportKind::TimedOut,
                "",
            )),
            elapsed_ms: 1000,
            throttled: None,
            retries: None,
        }
    }

    #[test]
    fn the_bound_is_every_pause_and_a_timeout_for_each_failure_around_them() {
        let pauses: Duration = PAUSES.iter().sum();
        assert_eq!(
            silence_bound(5, Duration::from_secs(1)),
            pauses + Duration::from_secs(8)
        );
        assert_eq!(
            silence_bound(0, Duration::from_secs(10)),
            pauses + Duration::from_secs(40)
        );
    }

    #[test]
    fn a_target_heard_from_gets_a_pause_at_the_count() {
        let stops = Stops::new(Halt::default(), 2);
        stops
            .answered
            .store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(stops.observe(&timed_out()), None);
        assert_eq!(stops.observe(&timed_out()), Some(PAUSES[0]));
        assert_eq!(stops.target_stopped(), None);
    }

    #[test]
    fn a_target_silent_past_the_bound_stops_the_run_at_the_next_unanswered_try() {
        let halt = Halt {
            silence: Some(Duration::from_secs(7)),
            ..Halt::default()
        };
        halt.unanswered("before any answer");
        assert_eq!(
            halt.reason(),
            None,
            "a target never heard is the count's to stop"
        );
        *halt.heard.lock().unwrap() = Instant::now().checked_sub(Duration::from_secs(6));
        halt.unanswered("within the bound");
        assert_eq!(halt.reason(), None);
        *halt.heard.lock().unwrap() = Instant::now().checked_sub(Duration::from_secs(8));
        halt.unanswered("GET /pets: timed out");
        let reason = halt.reason().expect("stopped");
        assert!(
            reason.contains("nothing answered for 8 s") && reason.contains("GET /pets: timed out"),
            "{reason}"
        );
        // A stop is for the whole run: the stops see it too.
        let stops = Stops::new(halt, 5);
        assert!(stops.target_stopped().is_some());
    }
}
