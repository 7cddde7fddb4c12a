//! A target's throttling (429, 503 with Retry-After): how long to wait, and what it cost.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::outcome::Exchange;

/// What throttling cost a run: waits, time waited, requests given up on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ThrottleTally {
    pub waits: u64,
    pub waited_ms: u64,
    pub gave_up: u64,
}

#[derive(Default)]
pub(super) struct ThrottleCounter {
    waits: AtomicU64,
    waited_ms: AtomicU64,
    gave_up: AtomicU64,
}

impl ThrottleCounter {
    pub(super) fn record(&self, waits: u64, waited: Duration, gave_up: bool) {
        self.waits.fetch_add(waits, Relaxed);
        self.waited_ms
            .fetch_add(waited.as_millis().try_into().unwrap_or(u64::MAX), Relaxed);
        self.gave_up.fetch_add(u64::from(gave_up), Relaxed);
    }

    pub(super) fn snapshot(&self) -> ThrottleTally {
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
/// (a 503 without Retry-After is an overload signal the client reads apart, see
/// `Client::attempt`).
///
/// A Retry-After in any form says the same thing: wait, then ask again. RFC 9110 section 10.2.3
/// allows whole seconds or an HTTP date; servers also write `2.0`, `0.5`, a date in another
/// format or nothing that parses. A decimal is waited out rounded up; anything else is waited
/// out as a 429 without one is (a doubling backoff): the answer was throttling, never the
/// store's answer to the request.
pub(super) fn throttle_wait(exchange: &Exchange, waits: u32) -> Option<Duration> {
    let status = exchange.status()?;
    if !matches!(status, 429 | 503) {
        return None;
    }
    let backoff = Duration::from_millis(500) * 2u32.saturating_pow(waits.min(10));
    let wait = match exchange.header("retry-after").map(str::trim) {
        Some(value) => retry_after(value).unwrap_or(backoff),
        None if status == 429 => backoff,
        None => return None,
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// A Retry-After value as a wait: delay-seconds, a decimal number of seconds (rounded up to the
/// millisecond), or an HTTP date; `None` when it is none of these.
fn retry_after(value: &str) -> Option<Duration> {
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(MAX_RETRY_AFTER); // more seconds than a u64 holds
    }
    if value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && value.bytes().any(|b| b.is_ascii_digit())
    {
        let seconds: f64 = value.parse().ok()?;
        return Some(
            Duration::try_from_secs_f64((seconds * 1000.0).ceil() / 1000.0)
                .unwrap_or(MAX_RETRY_AFTER),
        );
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// The pace a throttling target lets through, learned from its answers: a gateway that
/// answers 429 past some rate is sent at just under the rate it let through, so that requests
/// are not sent only to wait out a Retry-After each. Nothing is paced until the target
/// throttles while it lets requests through; a target that throttles everything is never
/// paced (the run's stop for a silent target decides then). `--rate` stays a ceiling.
#[derive(Default)]
pub(super) struct LearnedPace(std::sync::Mutex<Pace>);

#[derive(Default)]
struct Pace {
    /// Answers let through in each tenth of a second, by its number since `start`: the last
    /// second's are the ones counted.
    tenths: [(u64, u32); 10],
    start: Option<std::time::Instant>,
    /// Requests a second, once learned.
    rate: Option<f64>,
    /// When the rate was last cut: once a second at most, as throttling shows late.
    cut_at: Option<std::time::Instant>,
}

/// Answers let through in the last second below which a throttled target is not paced: it
/// lets nothing through (a gateway that counts the requests it refuses may let through only
/// a few a second while refused ones fill its windows: those few set the pace).
const MIN_LET_THROUGH: u32 = 1;

impl LearnedPace {
    /// An answer the target let through; a learned rate grows a tenth of a request a second
    /// per answer (about 10% a second at any rate), to find the gateway's rate again.
    pub(super) fn let_through(&self) {
        let mut pace = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let tenth = pace.tenth();
        let slot = &mut pace.tenths[(tenth % 10) as usize];
        if slot.0 == tenth {
            slot.1 += 1;
        } else {
            *slot = (tenth, 1);
        }
        if let Some(rate) = &mut pace.rate {
            *rate += 0.1;
        }
    }

    /// A throttled answer: the rate becomes nine tenths of the rate the last second let
    /// through.
    pub(super) fn throttled(&self) {
        let mut pace = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        if pace
            .cut_at
            .is_some_and(|at| now.duration_since(at) < Duration::from_secs(1))
        {
            return;
        }
        let tenth = pace.tenth();
        let let_through: u32 = pace
            .tenths
            .iter()
            .filter(|(n, _)| tenth.saturating_sub(*n) < 10)
            .map(|(_, count)| count)
            .sum();
        if let_through < MIN_LET_THROUGH {
            return;
        }
        // Over the last second, or the time since the first answer when that is shorter (the
        // first 429s come a tenth of a second into a run).
        let span = pace
            .start
            .map_or(1.0, |start| now.duration_since(start).as_secs_f64())
            .clamp(0.1, 1.0);
        pace.rate = Some(f64::from(let_through) / span * 0.9);
        pace.cut_at = Some(now);
    }

    /// The learned rate, requests a second.
    pub(super) fn rate(&self) -> Option<f64> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).rate
    }
}

impl Pace {
    /// The number of the tenth of a second now is in.
    fn tenth(&mut self) -> u64 {
        let start = *self.start.get_or_insert_with(std::time::Instant::now);
        (start.elapsed().as_millis() / 100)
            .try_into()
            .unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_that_lets_some_through_is_paced_under_it_and_one_that_lets_none_is_not() {
        let pace = LearnedPace::default();
        pace.throttled();
        assert_eq!(pace.rate(), None, "nothing let through: not paced");
        for _ in 0..100 {
            pace.let_through();
        }
        assert_eq!(pace.rate(), None, "never throttled: not paced");
        pace.throttled();
        // Nine tenths of 100 over the time they took: a second at most, a tenth at least.
        let rate = pace.rate().expect("paced after a throttled answer");
        assert!((90.0..=900.0).contains(&rate), "{rate}");
        // Within the second, a second 429 does not cut again.
        pace.throttled();
        assert_eq!(pace.rate(), Some(rate));
        pace.let_through();
        assert!(
            pace.rate().unwrap() > rate,
            "grows with what is let through"
        );
    }

    #[test]
    fn a_retry_after_in_any_form_is_a_wait() {
        assert_eq!(retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(retry_after("2.0"), Some(Duration::from_secs(2)));
        assert_eq!(retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            retry_after("99999999999999999999999"),
            Some(MAX_RETRY_AFTER)
        );
        assert_eq!(retry_after("soon"), None);
        assert_eq!(retry_after("."), None);
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
    }
}
