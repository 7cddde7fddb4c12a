//! What a run asks of its client: limits, TLS, headers, proxy, and when to stop sending.

use std::time::Duration;

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
    /// What ends at `at`, in the words of every reason it gives; empty: [`TIME_BUDGET`].
    pub bound: std::sync::Arc<str>,
    pub reason: std::sync::Arc<std::sync::OnceLock<String>>,
    /// How long a target that answered may then answer nothing while requests go unanswered
    /// (see [`Halt::unanswered`]); `None`: no bound.
    pub silence: Option<std::time::Duration>,
    /// When the target last answered anything; `None` before its first answer.
    pub heard: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
    /// How long a target may throttle every answer (see [`Halt::throttled`]); `None`: no bound.
    pub throttling: Option<ThrottleBound>,
}

/// The stop for a target that throttles everything: `in_a_row` throttled answers, one after
/// another, with nothing let through for `quiet` (`--max-throttle-wait`, a second at least).
#[derive(Debug, Clone)]
pub struct ThrottleBound {
    in_a_row: u32,
    max_throttle_wait: Duration,
    /// When the target last let an answer through (at first, when the bound was set), and
    /// the throttled answers since.
    since: std::sync::Arc<std::sync::Mutex<(std::time::Instant, u32)>>,
}

impl ThrottleBound {
    pub fn new(in_a_row: u32, max_throttle_wait: Duration) -> ThrottleBound {
        ThrottleBound {
            in_a_row: in_a_row.max(1),
            max_throttle_wait,
            since: std::sync::Arc::new(std::sync::Mutex::new((std::time::Instant::now(), 0))),
        }
    }
}

/// What `--time-budget` is called in the reasons it gives (a run's default bound names itself).
pub const TIME_BUDGET: &str = "the run's time budget";

impl Halt {
    /// No request after `at`, which ends `bound` (see [`Halt::bound`]).
    pub fn until(at: Option<std::time::Instant>, bound: &str) -> Halt {
        Halt {
            at,
            bound: bound.into(),
            ..Halt::default()
        }
    }

    /// The target answered (anything, at any status).
    pub fn heard(&self) {
        *self.heard.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
    }

    /// A try got no answer: once a target that answered before has answered nothing for
    /// longer than [`Halt::silence`], nothing more is sent. Checked as each try fails, not as
    /// the run counts exchanges: a burst's tries, counted when the burst ends, or a request
    /// sent again, could keep a dead target busy well past the pauses the count allows.
    pub fn unanswered(&self, last: &str) {
        let (Some(bound), Some(heard)) = (
            self.silence,
            *self.heard.lock().unwrap_or_else(|e| e.into_inner()),
        ) else {
            return;
        };
        let silent = heard.elapsed();
        if silent > bound {
            let _ = self.reason.set(format!(
                "not sent: the target stopped answering: nothing answered for {} s while requests went unanswered (last: {last})",
                silent.as_secs()
            ));
        }
    }

    /// The target let an answer through (one that was not throttling).
    pub fn let_through(&self) {
        if let Some(bound) = &self.throttling {
            *bound.since.lock().unwrap_or_else(|e| e.into_inner()) = (std::time::Instant::now(), 0);
        }
    }

    /// A try was answered with throttling: once [`ThrottleBound`]'s count of them in a row
    /// comes with nothing let through for as long, nothing more is sent. Counted as each
    /// throttled answer comes, not as requests give up: under a pace learned from the target,
    /// each request's waits queue behind the others', and a run could wait out its whole bound
    /// before a few requests gave up.
    pub fn throttled(&self, last: &str) {
        let Some(bound) = &self.throttling else {
            return;
        };
        let (quiet, in_a_row) = {
            let mut since = bound.since.lock().unwrap_or_else(|e| e.into_inner());
            since.1 = since.1.saturating_add(1);
            (since.0.elapsed(), since.1)
        };
        if in_a_row >= bound.in_a_row
            && quiet >= bound.max_throttle_wait.max(Duration::from_secs(1))
        {
            let _ = self.reason.set(format!(
                "not sent: the target stopped answering: {in_a_row} throttled answers in a row, nothing let through for {} s, past --max-throttle-wait ({} s) (last: {last})",
                quiet.as_secs(),
                bound.max_throttle_wait.as_secs()
            ));
        }
    }

    /// Why nothing may be sent now, if so.
    pub fn reason(&self) -> Option<String> {
        if self.at.is_some_and(|at| std::time::Instant::now() >= at) {
            return Some(self.spent());
        }
        self.reason.get().cloned()
    }

    /// What ends at [`Halt::at`]: the time budget, or the run's default bound.
    pub fn bound(&self) -> &str {
        if self.bound.is_empty() {
            TIME_BUDGET
        } else {
            &self.bound
        }
    }

    /// Why a request was not sent once the bound was spent.
    pub fn spent(&self) -> String {
        format!("not sent: {} is spent", self.bound())
    }

    /// Why a request in flight when the bound ended has no answer.
    pub fn cut(&self) -> String {
        format!("cut off: {} is spent", self.bound())
    }
}

/// In-flight requests (and so connections) at most, by default: against a store 50 ms away,
/// the default suite's ~1400 requests then take about 10 round trips more than on loopback (at
/// 96, 20). The run starts at 64 and finds the level the target bears (see [`super::lanes`]):
/// it grows only while answers come back as fast as ever, is halved on overload, and after a
/// connection the server left in its backlog (a server that accepts 100, as waitress does)
/// stays below the connections the server answered on; a gateway's request rate is `--rate`'s
/// business.
pub const DEFAULT_CONCURRENCY: usize = 256;

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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Halt, ThrottleBound};

    fn quiet_for(halt: &Halt, seconds: u64) {
        let bound = halt.throttling.as_ref().unwrap();
        bound.since.lock().unwrap().0 = Instant::now()
            .checked_sub(Duration::from_secs(seconds))
            .unwrap();
    }

    #[test]
    fn a_target_throttling_everything_stops_the_run_at_the_count_past_the_wait() {
        let halt = Halt {
            throttling: Some(ThrottleBound::new(3, Duration::from_secs(2))),
            ..Halt::default()
        };
        for _ in 0..5 {
            halt.throttled("429");
        }
        assert_eq!(halt.reason(), None, "throttled within the wait");
        quiet_for(&halt, 3);
        halt.let_through();
        quiet_for(&halt, 3);
        halt.throttled("429");
        halt.throttled("429");
        assert_eq!(
            halt.reason(),
            None,
            "two in a row since an answer let through"
        );
        halt.throttled("429 slow down");
        let reason = halt.reason().expect("stopped");
        assert!(
            reason.contains("3 throttled answers in a row")
                && reason.contains("nothing let through for 3 s")
                && reason.contains("429 slow down"),
            "{reason}"
        );
    }
}
