//! What a run is asked to do: its target, gate and options (`RunConfig`), and what it hands
//! back (`RunOutcome`). The first thing a newcomer reads: every stage takes a `RunConfig`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::Arguments;

pub use super::built_in::{BuiltIn, Running, ServeReference};
use super::options::{RunOptions, Seconds};
use crate::execution::{BaseUrl, ClientSettings, ProxySetting};
use crate::report::{Cases, Report};

/// What the run is pointed at.
#[derive(Debug, Clone)]
pub enum Target {
    /// The built-in reference server on an ephemeral loopback port, with optional faults.
    Reference(BuiltIn),
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

/// What a run is asked: its options as given, and what the command line resolved from them
/// before the run (the target and its key, the files the options name, the regressions file,
/// libtest's own settings and the terminal's).
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Every option as the command line, the environment and a profile gave it (the seed
    /// resolved): what the engine reads, and what the Re-run line repeats.
    pub options: RunOptions,
    /// The target the options name: the reference with its faults and variants, or the base
    /// URL, parsed, with the key read from its variable or file.
    pub target: Target,
    /// Where the key came from.
    pub key_source: KeySource,
    /// Where counterexamples are saved and replayed from (`--regressions`, else the default
    /// file when ./cases exists); `None`: neither.
    pub regressions: Option<PathBuf>,
    /// PEM roots of `--ca-cert`, read before anything is sent.
    pub ca_certificates: Vec<Vec<u8>>,
    /// The client certificate chain and key of `--client-cert` and `--client-key`.
    pub client_identity: Option<(Vec<u8>, Vec<u8>)>,
    /// Signs the reports: `attestation.intoto.json` beside them (`--sign-key`).
    pub sign_key: Option<Arc<crate::report::attestation::SigningKey>>,
    /// libtest's own settings: `--list`, where its lines go, their colour. Which rules run is
    /// the options' filter, `--skip`, `--exact` and `--test-threads`; a selection a caller set
    /// here too (a test picking one rule) narrows it further.
    pub libtest: Arguments,
    /// Say the seed on stderr once the configuration is known good (the command line does).
    pub announce: bool,
    /// A progress bar on stderr instead of libtest's lines (a terminal, without --no-progress).
    pub progress: bool,
    /// Colour on stderr (`--color`, `NO_COLOR` and whether stderr is a terminal, decided once).
    pub color: bool,
    /// Failing generated cases are shrunk (see `engine::run::Run::shrink`); `replay` turns it off.
    pub shrink: bool,
}

impl RunConfig {
    /// A run against `built_in` with the defaults of the command line, writing no reports.
    pub fn reference(seed: u64, built_in: BuiltIn) -> RunConfig {
        let options = RunOptions {
            seed: Some(seed),
            report_dir: None,
            ..RunOptions::default()
        };
        RunConfig {
            key_source: KeySource::Variable(options.api_key_env.clone()),
            options,
            target: Target::Reference(built_in),
            regressions: None,
            ca_certificates: Vec::new(),
            client_identity: None,
            sign_key: None,
            libtest: Arguments::default(),
            announce: false,
            progress: false,
            color: false,
            shrink: true,
        }
    }

    /// The run's seed (the command line draws one when none is given).
    pub fn seed(&self) -> u64 {
        self.options.seed.unwrap_or_default()
    }

    /// Generated cases per property rule: `--cases`, else until the deadline under a time
    /// budget, else [`DEFAULT_CASES`].
    pub fn cases(&self) -> Cases {
        match (self.options.cases, self.options.time_budget) {
            (Some(cases), _) => Cases::Count(cases),
            (None, Some(_)) => Cases::UntilDeadline,
            (None, None) => Cases::Count(DEFAULT_CASES),
        }
    }

    /// Generated cases of a property rule that stores a pet per case: fewer where neither
    /// `--cases` nor `--time-budget` says (a shared store keeps every one).
    pub fn storing_cases(&self) -> u32 {
        let cases = self.cases().at_least_one().limit();
        match (self.options.cases, self.options.time_budget) {
            (None, None) => crate::engine::scheduler::STORING_CASES.min(cases),
            _ => cases,
        }
    }

    /// Generated cases stop when this much time has passed since the start.
    pub fn time_budget(&self) -> Option<Duration> {
        self.options.time_budget.map(Seconds::duration)
    }

    /// What the client is asked: the options' limits, headers and proxy, with the files they
    /// name. A remote target is reached through the environment's proxy unless `--proxy`
    /// names one; a loopback one never is (a CI runner's registry proxy is not in the way).
    pub fn client_settings(&self) -> ClientSettings {
        let options = &self.options;
        let proxy = match (&options.proxy, &self.target) {
            (Some(url), _) => ProxySetting::Explicit(url.0.clone()),
            (None, Target::External { base_url, .. }) if !base_url.is_loopback() => {
                ProxySetting::Environment
            }
            _ => ProxySetting::Direct,
        };
        ClientSettings {
            timeout: options.timeout.duration(),
            connect_timeout: options.connect_timeout.duration(),
            body_cap: options.body_cap,
            ca_certificates: self.ca_certificates.clone(),
            insecure: options.insecure,
            http2_prior_knowledge: options.http2_prior_knowledge,
            rate: options.rate,
            max_throttle_wait: options.max_throttle_wait.duration(),
            concurrency: options.concurrency,
            extra_headers: options
                .headers
                .iter()
                .map(|header| (header.name.clone(), header.value.clone()))
                .collect(),
            client_identity: self.client_identity.clone(),
            proxy,
        }
    }

    /// libtest's arguments: its own settings, and the options' selection of rules (with any
    /// a caller set on [`RunConfig::libtest`]).
    pub fn libtest_args(&self) -> Arguments {
        let (options, own) = (&self.options, &self.libtest);
        Arguments {
            filter: options
                .filter
                .clone()
                .filter(|f| !f.is_empty())
                .or_else(|| own.filter.clone()),
            skip: options
                .skip
                .iter()
                .filter(|s| !s.is_empty())
                .chain(&own.skip)
                .cloned()
                .collect(),
            exact: options.exact || own.exact,
            test_threads: options.test_threads.or(own.test_threads),
            ..own.clone()
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
    let options = &config.options;
    let timeout = options.timeout.duration();
    let cases = config.cases().limit();
    let waits = timeout
        .saturating_add(options.max_throttle_wait.duration())
        .saturating_mul(2);
    let chain = (timeout / 10).saturating_mul(BOUND_ROUND_TRIPS.saturating_add(cases));
    let requests = BOUND_REQUESTS + BOUND_REQUESTS_PER_CASE * f64::from(cases);
    let paced = options
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
    match config.time_budget() {
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
        let mut config = RunConfig::reference(1, super::super::built_in::not_embedded());
        // The README quotes it: 2 x (10 s + 30 s) + (64 + 32) round trips of 1 s.
        assert_eq!(default_bound(&config), Duration::from_secs(176));
        config.options.timeout = Seconds(1);
        config.options.max_throttle_wait = Seconds(0);
        config.options.cases = Some(0);
        assert_eq!(default_bound(&config), Duration::from_millis(8400));
        // Its requests at --rate: 1000 at 10 a second.
        config.options.rate = Some(10.0);
        assert_eq!(default_bound(&config), Duration::from_millis(108_400));
        // A budget is the bound, whatever the work.
        config.options.time_budget = Some(Seconds(5));
        assert_eq!(bound(&config).0, Duration::from_secs(5));
        assert_eq!(bound(&config).1, crate::execution::client::TIME_BUDGET);
    }
}
