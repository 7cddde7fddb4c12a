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
/// (a 503 without Retry-After is a server error, not throttling).
pub(super) fn throttle_wait(exchange: &Exchange, waits: u32) -> Option<Duration> {
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
