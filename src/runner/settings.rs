//! What a run is asked to do: its target, gate and options (`RunConfig`), and what it hands
//! back (`RunOutcome`). The first thing a newcomer reads: every stage takes a `RunConfig`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::Arguments;

use crate::engine::run::DEFAULT_MAX_TRANSPORT_FAILURES;
use crate::execution::{BaseUrl, ClientSettings};
use crate::reference::{Fault, Variant};
use crate::report::{Cases, Report};

/// What the run is pointed at.
#[derive(Debug, Clone)]
pub enum Target {
    /// The built-in reference server on an ephemeral loopback port, with optional faults.
    Reference {
        faults: BTreeSet<Fault>,
        variants: BTreeSet<Variant>,
    },
    /// Any implementation; `base_url` includes `/v1`.
    External { base_url: BaseUrl, api_key: String },
}

/// Where the API key came from, as a refusal names it and the Re-run line repeats it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// The environment variable of this name (`--api-key-env`; `PETSTORE_API_KEY` unless
    /// another is named).
    Variable(String),
    /// The file `--api-key-file` names.
    File(PathBuf),
}

impl KeySource {
    /// As a refusal of the key names it.
    pub fn described(&self) -> String {
        match self {
            KeySource::Variable(name) => format!("the environment variable {name}"),
            KeySource::File(path) => format!("--api-key-file {}", path.display()),
        }
    }
}

impl std::fmt::Display for KeySource {
    /// As a check of the key's text names it, before the reason.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Variable(name) => f.write_str(name),
            KeySource::File(path) => write!(f, "--api-key-file {}", path.display()),
        }
    }
}

pub use crate::catalogue::Gate;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    /// Name of the environment variable curl lines read the key from.
    pub api_key_env: String,
    /// Where the key came from.
    pub key_source: KeySource,
    pub seed: u64,
    /// Generated cases per property rule: `--cases`, or until the time budget's deadline.
    pub cases: Cases,
    pub report_dir: Option<PathBuf>,
    pub schemas: Option<PathBuf>,
    pub cases_dir: Option<PathBuf>,
    pub gate: Gate,
    pub client: ClientSettings,
    pub libtest: Arguments,
    /// Where counterexamples are saved and replayed from; `None`: neither.
    pub regressions: Option<PathBuf>,
    /// Generated cases stop when this much time has passed since the start.
    pub time_budget: Option<Duration>,
    /// Every request sent, one JSON line each (key redacted), for comparing runs.
    pub request_log: Option<PathBuf>,
    /// Every exchange as HTTP Archive 1.2 (`--har`), redacted.
    pub har: Option<PathBuf>,
    /// Only rules that create nothing run; fixtures use what the store already holds.
    pub read_only: bool,
    /// The category ids the target accepts; empty: any.
    pub category_ids: Vec<i64>,
    /// Consecutive transport failures after which the run stops sending.
    pub max_transport_failures: u32,
    /// Say the seed on stderr once the configuration is known good (the command line does).
    pub announce: bool,
    /// A progress bar on stderr instead of libtest's lines (a terminal, without --no-progress).
    pub progress: bool,
    /// Colour on stderr (`--color`, `NO_COLOR` and whether stderr is a terminal, decided once).
    pub color: bool,
    /// Latency the built-in reference adds to every answer.
    pub reference_latency: Duration,
    /// A TOML list of known failures (`known_failures = [{ rule, reason, link, expires }]`).
    pub known_failures: Option<PathBuf>,
    /// Known failures listed in a configuration profile, besides the file's.
    pub known_failures_listed: Vec<crate::report::KnownFailure>,
    /// The product under test, as the user names it, recorded in the report.
    pub product: Option<String>,
    pub product_version: Option<String>,
    /// This run is one shard of a split run (`--partition hash:K/N`): it runs its part of the
    /// selected rules, and the response oracles over its own responses.
    pub partition: Option<crate::catalogue::partition::Partition>,
    /// Signs the reports: `attestation.intoto.json` beside them (`--sign-key`).
    pub sign_key: Option<Arc<crate::report::attestation::SigningKey>>,
    /// A key shorter than [`MIN_KEY_LENGTH`] was allowed (`--allow-short-key`): the reports
    /// say their evidence may be over-redacted.
    pub short_key_allowed: bool,
}

impl RunConfig {
    /// A run against the built-in reference server with the defaults of the command line.
    pub fn reference(seed: u64) -> RunConfig {
        RunConfig {
            target: Target::Reference {
                faults: BTreeSet::new(),
                variants: BTreeSet::new(),
            },
            api_key_env: "PETSTORE_API_KEY".into(),
            key_source: KeySource::Variable("PETSTORE_API_KEY".into()),
            seed,
            cases: Cases::Count(DEFAULT_CASES),
            report_dir: None,
            schemas: None,
            cases_dir: None,
            gate: Gate::Required,
            client: ClientSettings::default(),
            libtest: Arguments::default(),
            regressions: None,
            time_budget: None,
            request_log: None,
            har: None,
            read_only: false,
            category_ids: Vec::new(),
            max_transport_failures: DEFAULT_MAX_TRANSPORT_FAILURES,
            announce: false,
            progress: false,
            color: false,
            reference_latency: Duration::ZERO,
            known_failures: None,
            known_failures_listed: Vec::new(),
            product: None,
            product_version: None,
            partition: None,
            sign_key: None,
            short_key_allowed: false,
        }
    }
}

/// The part of a time budget spent generating cases: all of it but what the rest of the run
/// needs after that (shrinking a failure, the rules that run last, writing the reports), a
/// twentieth of the budget within 0.2 to 3 seconds.
pub(super) fn generation_budget(budget: Duration) -> Duration {
    let reserve = (budget / 20).clamp(Duration::from_millis(200), Duration::from_secs(3));
    budget.saturating_sub(reserve)
}

/// Round trips the longest chain of a run takes besides one per generated case: a passing
/// run's longest chain is about 20 round trips and a failing one's shrinking longer
/// (`round_trips` in report.json; 16 at --cases 0 and 43 at 32 against the reference, where
/// the CPU lengthens it).
const BOUND_ROUND_TRIPS: u32 = 64;

/// Requests a run sends besides those of its generated cases, and per generated case
/// (against the reference: 964 at --cases 0, 1429 at 32, 2437 at 100).
const BOUND_REQUESTS: f64 = 1000.0;
const BOUND_REQUESTS_PER_CASE: f64 = 16.0;

/// How long a run given no `--time-budget` may last, from the work asked of it: two whole
/// timeouts and two whole throttle waits (a chain may meet each), its longest chain of
/// dependent requests ([`BOUND_ROUND_TRIPS`] and one per generated case) at a tenth of the
/// timeout each, and its requests at `--rate`. A target that answers a round trip within a
/// tenth of the timeout is judged whole within it (176 s by default; the reference takes a
/// fraction of a second); one slower than that is cut, and the rules it cut are inconclusive.
pub fn default_bound(config: &RunConfig) -> Duration {
    let client = &config.client;
    let waits = client
        .timeout
        .saturating_add(client.max_throttle_wait)
        .saturating_mul(2);
    let chain = (client.timeout / 10)
        .saturating_mul(BOUND_ROUND_TRIPS.saturating_add(config.cases.limit()));
    let requests = BOUND_REQUESTS + BOUND_REQUESTS_PER_CASE * f64::from(config.cases.limit());
    let paced = client
        .rate
        .filter(|rate| *rate > 0.0)
        .map_or(Duration::ZERO, |rate| {
            Duration::try_from_secs_f64(requests / rate).unwrap_or(Duration::MAX)
        });
    waits.saturating_add(chain).saturating_add(paced)
}

/// The bound of a run as its reasons name it: `--time-budget`, or the default bound and where
/// it comes from.
pub(super) fn bound(config: &RunConfig) -> (Duration, String) {
    match config.time_budget {
        Some(budget) => (budget, crate::execution::client::TIME_BUDGET.to_string()),
        None => {
            let bound = default_bound(config);
            (
                bound,
                format!(
                    "the run's default time budget ({} s, from --timeout, --max-throttle-wait, --cases and --rate; --time-budget sets another)",
                    bound.as_secs()
                ),
            )
        }
    }
}

/// Generated cases per property rule by default: enough to find the shallow mistakes, small
/// enough that the whole suite against the reference takes about a second.
pub const DEFAULT_CASES: u32 = 32;

/// Trials run at once by default: rules wait on the network (or on a fixture another rule is
/// building), not on the CPU; the requests in flight are capped by `--concurrency` anyway. As
/// many as a phase has rules, nearly: a short rule queued behind long ones adds round trips
/// of its own at the end (32 cost a default run 50 ms away about two).
pub const DEFAULT_TEST_THREADS: usize = 96;

/// What a run produced.
pub struct RunOutcome {
    /// `None` when nothing ran (`--list`).
    pub report: Option<Report>,
    pub exit_code: u8,
    pub written: Vec<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_bound_follows_the_work_asked() {
        let mut config = RunConfig::reference(1);
        // The README quotes it: 2 x (10 s + 30 s) + (64 + 32) round trips of 1 s.
        assert_eq!(default_bound(&config), Duration::from_secs(176));
        config.client.timeout = Duration::from_secs(1);
        config.client.max_throttle_wait = Duration::ZERO;
        config.cases = Cases::Count(0);
        assert_eq!(default_bound(&config), Duration::from_millis(8400));
        // Its requests at --rate: 1000 at 10 a second.
        config.client.rate = Some(10.0);
        assert_eq!(default_bound(&config), Duration::from_millis(108_400));
        // A budget is the bound, whatever the work.
        config.time_budget = Some(Duration::from_secs(5));
        assert_eq!(bound(&config).0, Duration::from_secs(5));
        assert_eq!(bound(&config).1, crate::execution::client::TIME_BUDGET);
    }
}
