//! The engine: turns catalogue rules into libtest-mimic trials, runs them concurrently over one
//! client, collects a verdict per rule and builds the report.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::Value;

use super::known::KnownFailures;
use super::progress::Progress;
use super::regressions::{self, Regression};
use crate::catalogue::{Catalogue, Level, Rule};
use crate::contract::{
    CONTRACT_DOCUMENT, CONTRACT_TEXT, CONTRACT_TITLE, CONTRACT_VERSION, Contract, SchemaName,
    sha256_hex,
};
use crate::execution::{Client, ClientSettings, Redactor};
use crate::generation::Schemas;
use crate::generation::request::RequestSpec;
use crate::outcome::VerdictKind;
use crate::reference::{Fault, ReferenceConfig, ReferenceServer, Variant};
use crate::report::{
    CREATED_PETS_FILE, Conformance, ContractInfo, CreatedPetsInfo, Named, READ_ONLY_SKIP, Report,
    ReportDir, RuleReport, TargetInfo, Totals,
};
use crate::rules::fixtures::{CreatedPets, Fixtures};
use crate::rules::responses::Observations;
use crate::rules::run::{DEFAULT_MAX_TRANSPORT_FAILURES, Stops};
use crate::rules::{self, Phase, RuleCtx, Run, Verdict};
use crate::seed::{random_seed, run_prefix};

/// What the run is pointed at.
#[derive(Debug, Clone)]
pub enum Target {
    /// The built-in reference server on an ephemeral loopback port, with optional faults.
    Reference {
        faults: BTreeSet<Fault>,
        variants: BTreeSet<Variant>,
    },
    /// Any implementation; `base_url` includes `/v1`.
    External { base_url: String, api_key: String },
}

/// Which failures fail the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Gate {
    /// Only rules the contract states (the default).
    Required,
    /// Recommended rules too.
    All,
    /// Required rules, every one decided: a required rule not decidable on this store leaves
    /// the run undetermined (for certification on a store the vendor controls).
    Certify,
}

impl Gate {
    fn gates(self, level: Level) -> bool {
        self == Gate::All || level == Level::Required
    }

    /// Whether a rule the store made undecidable leaves the run undetermined.
    fn needs_decided(self, level: Level) -> bool {
        self == Gate::Certify && level == Level::Required
    }

    fn as_str(self) -> &'static str {
        match self {
            Gate::Required => "required",
            Gate::All => "all",
            Gate::Certify => "certify",
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    /// Name of the environment variable the key came from, for curl lines.
    pub api_key_env: String,
    /// Where the key came from, as a refusal names it (`--api-key-file PATH`); `None`: the
    /// environment variable `api_key_env`.
    pub api_key_source: Option<String>,
    pub seed: u64,
    pub cases: u32,
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
    /// Latency the built-in reference adds to every answer.
    pub reference_latency: Duration,
    /// A TOML list of known failures (`known_failures = [{ rule, reason, link, expires }]`).
    pub known_failures: Option<PathBuf>,
    /// Known failures listed in a configuration profile, besides the file's.
    pub known_failures_listed: Vec<crate::report::KnownFailure>,
    /// The product under test, as the user names it, recorded in the report.
    pub product: Option<String>,
    pub product_version: Option<String>,
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
            api_key_source: None,
            seed,
            cases: DEFAULT_CASES,
            report_dir: None,
            schemas: None,
            cases_dir: None,
            gate: Gate::Required,
            client: ClientSettings::default(),
            libtest: Arguments::default(),
            regressions: None,
            time_budget: None,
            request_log: None,
            read_only: false,
            category_ids: Vec::new(),
            max_transport_failures: DEFAULT_MAX_TRANSPORT_FAILURES,
            announce: false,
            progress: false,
            reference_latency: Duration::ZERO,
            known_failures: None,
            known_failures_listed: Vec::new(),
            product: None,
            product_version: None,
        }
    }
}

/// The part of a time budget spent generating cases: all of it but what the rest of the run
/// needs after that (shrinking a failure, the rules that run last, writing the reports), a
/// twentieth of the budget within 0.2 to 3 seconds.
fn generation_budget(budget: Duration) -> Duration {
    let reserve = (budget / 20).clamp(Duration::from_millis(200), Duration::from_secs(3));
    budget.saturating_sub(reserve)
}

/// Generated cases per property rule by default: enough to find the shallow mistakes, small
/// enough that the whole suite against the reference takes about a second.
pub const DEFAULT_CASES: u32 = 32;

/// Trials run at once by default: rules wait on the network (or on a fixture another rule is
/// building), not on the CPU; the requests in flight are capped by `--concurrency` anyway.
pub const DEFAULT_TEST_THREADS: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A usage or configuration error: exit code 2.
    #[error("{0}")]
    Config(String),
    /// A schema or `openapi.yaml` that cannot be read or compiled: exit code 2.
    #[error(transparent)]
    Schema(#[from] crate::contract::SchemaError),
    /// A case file that cannot be read or is invalid: exit code 2.
    #[error(transparent)]
    Catalogue(#[from] crate::catalogue::CatalogueError),
    /// A schema generation cannot build from: exit code 2.
    #[error(transparent)]
    Generation(#[from] crate::generation::GenerationError),
    /// A client that cannot be built (base URL, CA certificate): exit code 2.
    #[error(transparent)]
    Client(#[from] crate::execution::client::ClientError),
    /// A report directory that cannot hold the reports: exit code 2.
    #[error(transparent)]
    Report(#[from] crate::report::ReportWriteError),
    /// The target could not be reached at all: exit code 2 (the run could not run).
    #[error("{0}")]
    Unreachable(String),
    /// The target refused the key on every authenticated request of the preflight: exit code
    /// 2, before any rule runs (a wrong or expired key is a setup error, not 13 failures).
    #[error("{0}")]
    KeyRefused(String),
}

impl RunError {
    /// Every error before a verdict is "could not run"; see [`EXIT_CODES`].
    pub fn exit_code(&self) -> u8 {
        2
    }
}

/// The exit codes of `run`, as `run --help` and the README state them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    CONFORMS: every selected required rule passed (or is a known failure, not expired)
  1    DOES NOT CONFORM: a gated rule failed (required; recommended too under --gate all)
  2    could not run: usage or configuration error, target unreachable, or the target
       refused the key (one line says which; no report is written)
  3    UNDETERMINED: no gated rule failed, but a selected required rule reached no verdict
       (inconclusive or skipped: time budget, throttling, a target that stopped answering)
  130  interrupted by SIGINT, 143 by SIGTERM (the report is written, marked interrupted)
A filtered run (`run list-pets/limit`, --skip, --exact) or a --read-only one answers for the
rules it ran: the report and the summary say how many rules were left out.";

/// What a run produced.
pub struct RunOutcome {
    /// `None` when nothing ran (`--list`).
    pub report: Option<Report>,
    pub exit_code: u8,
    pub written: Vec<PathBuf>,
}

/// Makes trials of a phase wait until every selected trial of an earlier phase is done. Trials
/// are queued in phase order, so a waiting trial only ever waits on trials already started.
struct PhaseGate {
    remaining: Mutex<[usize; 3]>,
    changed: Condvar,
}

fn phase_index(phase: Phase) -> usize {
    match phase {
        Phase::QuietStore => 0,
        Phase::Main => 1,
        Phase::Last => 2,
    }
}

impl PhaseGate {
    fn wait_for_earlier(&self, phase: Phase) {
        let index = phase_index(phase);
        let mut remaining = self.remaining.lock().unwrap_or_else(|e| e.into_inner());
        while remaining[..index].iter().any(|n| *n > 0) {
            remaining = self
                .changed
                .wait(remaining)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    fn finished(&self, phase: Phase) {
        let mut remaining = self.remaining.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut remaining[phase_index(phase)];
        *slot = slot.saturating_sub(1);
        self.changed.notify_all();
    }
}

struct RuleResult {
    verdict: Verdict,
    /// Left out by the user's choice (--read-only), not for want of evidence.
    deselected: bool,
    cases_run: u32,
    round_trips: u32,
    /// Answers to this rule's requests the transport cut mid-body (not judged).
    transport_cuts: u32,
    duration_ms: u64,
}

pub fn check_base_url(base_url: &str) -> Result<(), RunError> {
    let url = reqwest::Url::parse(base_url).map_err(|e| {
        RunError::Config(format!(
            "--base-url {base_url:?}: not a URL ({e}); give the whole base address, e.g. https://staging.example/v1"
        ))
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        // They would go out as a second Authorization header and be written everywhere.
        return Err(RunError::Config(
            "--base-url: credentials in the URL are refused; give the key in PETSTORE_API_KEY (or --api-key-env, --api-key-file)".into(),
        ));
    }
    if !matches!(url.scheme(), "http" | "https") {
        return Err(RunError::Config(format!(
            "--base-url {base_url:?}: the scheme must be http or https"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(RunError::Config(format!(
            "--base-url {base_url:?}: a base address has no query string or fragment (paths are appended to it)"
        )));
    }
    if !url.path().trim_end_matches('/').ends_with("/v1") {
        return Err(RunError::Config(format!(
            "--base-url {base_url:?}: the base address must end in the version segment /v1 (the contract's {{base_url}})"
        )));
    }
    Ok(())
}

/// A key that would not survive as a header value, or would break every line it is redacted
/// from, is a configuration error naming where it came from.
pub fn check_api_key(key: &str, source: &str) -> Result<(), RunError> {
    if key.chars().any(char::is_control) {
        return Err(RunError::Config(format!(
            "{source}: the API key holds a control character (a newline, a tab?); it cannot be sent in an Authorization header"
        )));
    }
    Ok(())
}

/// What a run loads before it sends anything.
struct Loaded {
    contract: Contract,
    catalogue: Catalogue,
    new_pet_schema: Value,
    regressions: BTreeMap<String, Vec<Value>>,
}

/// Stage 1: the contract, the catalogue and the saved counterexamples; every error names its
/// file.
fn load(config: &RunConfig) -> Result<Loaded, RunError> {
    let contract = Contract::load(config.schemas.as_deref())?;
    let catalogue = Catalogue::load(config.cases_dir.as_deref())?;
    let new_pet_schema = Schemas::new(&contract).flatten(&contract, SchemaName::NewPet)?;
    for note in crate::generation::check_caps(&new_pet_schema, "NewPet")? {
        eprintln!("petstore-conformance: {note}");
    }
    let regressions = match &config.regressions {
        Some(path) => regressions::load(path).map_err(RunError::Config)?,
        None => BTreeMap::new(),
    };
    Ok(Loaded {
        contract,
        catalogue,
        new_pet_schema,
        regressions,
    })
}

/// The target a run talks to: its address and key, and the reference server when it is one
/// (kept alive for the run).
struct Started {
    base_url: String,
    api_key: String,
    faults: Vec<String>,
    variants: Vec<String>,
    _server: Option<ReferenceServer>,
}

/// Stage 2: starts the built-in reference, or checks the external target's address and key.
fn start_target(
    config: &RunConfig,
    runtime: &tokio::runtime::Runtime,
) -> Result<Started, RunError> {
    match &config.target {
        Target::Reference { faults, variants } => {
            let (server, api_key) = start_reference(
                runtime,
                faults.clone(),
                variants.clone(),
                config.reference_latency,
            )?;
            Ok(Started {
                base_url: server.base_url.clone(),
                api_key,
                faults: faults.iter().map(|f| f.name().to_string()).collect(),
                variants: variants.iter().map(|v| v.name().to_string()).collect(),
                _server: Some(server),
            })
        }
        Target::External { base_url, api_key } => {
            check_base_url(base_url)?;
            if api_key.is_empty() {
                return Err(RunError::Config(format!(
                    "no API key: set the environment variable {} (or choose another with --api-key-env)",
                    config.api_key_env
                )));
            }
            check_api_key(api_key, &config.api_key_env)?;
            Ok(Started {
                base_url: base_url.clone(),
                api_key: api_key.clone(),
                faults: Vec::new(),
                variants: Vec::new(),
                _server: None,
            })
        }
    }
}

/// The built-in reference on an ephemeral loopback port, with a fresh random key: the one
/// place a run or a replay starts it.
pub fn start_reference(
    runtime: &tokio::runtime::Runtime,
    faults: BTreeSet<Fault>,
    variants: BTreeSet<Variant>,
    latency: Duration,
) -> Result<(ReferenceServer, String), RunError> {
    let api_key = format!("ref-{:016x}{:016x}", random_seed(), random_seed());
    let server = runtime
        .block_on(ReferenceServer::start(
            ReferenceConfig {
                api_key: api_key.clone(),
                faults,
                variants,
                latency,
            },
            0,
        ))
        .map_err(|e| RunError::Config(format!("cannot start the reference server: {e}")))?;
    Ok((server, api_key))
}

/// `start + budget`, or no deadline when that is past what a clock can hold.
fn deadline(start: Instant, budget: Option<Duration>) -> Option<Instant> {
    budget.and_then(|budget| start.checked_add(budget))
}

/// Stage 3: SIGINT and SIGTERM stop the run, from before anything is sent: the first stops new
/// requests (the trials see it, the recorder refuses to send) and cuts the ones in flight,
/// the preflight included; the reports are then written, marked interrupted. The second quits
/// at once, and withdraws the previous run's reports from the directory (this run has none
/// yet), so that no report there looks like this run's.
/// Where a run is in writing its reports, for a second signal: withdraw the previous run's,
/// or let this run's finish.
const NOT_COMMITTED: u8 = 0;
const COMMITTING: u8 = 1;
const COMMITTED: u8 = 2;

fn listen_for_interrupts(
    cancel: tokio::sync::watch::Sender<bool>,
    run: Arc<OnceLock<Arc<Run>>>,
    report_dir: Option<PathBuf>,
    commit: Arc<AtomicU8>,
) -> super::interrupts::Registration {
    super::interrupts::install();
    super::interrupts::register(
        Box::new(move || {
            let _ = cancel.send(true);
            if let Some(run) = run.get() {
                run.stops.interrupted.store(true, Ordering::SeqCst);
            }
        }),
        Box::new(move || {
            let Some(dir) = &report_dir else {
                return;
            };
            match commit.load(Ordering::SeqCst) {
                NOT_COMMITTED => crate::report::withdraw(dir),
                // Renaming this run's reports into place takes milliseconds: let it finish,
                // so that the set is this run's whole.
                _ => {
                    let waiting = Instant::now();
                    while commit.load(Ordering::SeqCst) == COMMITTING
                        && waiting.elapsed() < Duration::from_secs(5)
                    {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }
        }),
    )
}

/// What the trials hand back: one slot per catalogue rule, `None` when not selected.
type Results = Vec<Option<RuleResult>>;

/// Stage 4: the selected rules as libtest-mimic trials, phase by phase; `None` under `--list`.
fn run_trials(
    config: &RunConfig,
    catalogue: &Catalogue,
    run: &Arc<Run>,
    known: &KnownFailures,
) -> Result<Option<Results>, RunError> {
    let today = super::known::today();
    let mut args = config.libtest.clone();
    if args.test_threads.is_none() {
        args.test_threads = Some(DEFAULT_TEST_THREADS);
    }
    let mut ordered: Vec<(usize, &Rule, Phase)> = catalogue
        .rules
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            let phase = rules::phase_for(&rule.check, run.deadline.is_some());
            (index, rule, phase)
        })
        .collect();
    ordered.sort_by_key(|(index, _, phase)| (*phase, *index));

    let gate = Arc::new(PhaseGate {
        remaining: Mutex::new([0; 3]),
        changed: Condvar::new(),
    });
    let results: Arc<Mutex<Results>> = Arc::new(Mutex::new(
        (0..catalogue.rules.len()).map(|_| None).collect(),
    ));
    let progress: Arc<std::sync::OnceLock<Progress>> = Arc::default();
    let mut trials = Vec::new();
    let mut remaining = [0usize; 3];
    for (index, rule, phase) in ordered {
        let run = Arc::clone(run);
        let gate_for_trial = Arc::clone(&gate);
        let results = Arc::clone(&results);
        let progress = Arc::clone(&progress);
        let rule_owned = rule.clone();
        let gates = config.gate.gates(rule.level);
        // A failure on the known list shows as such, not as a failure, while it lasts.
        let excuse = known
            .get(&rule.id)
            .filter(|entry| !entry.expired(&today))
            .map(|entry| format!("known failure ({})", entry.reason));
        let trial = Trial::ignorable_test(rule.id.clone(), move || {
            gate_for_trial.wait_for_earlier(phase);
            let started = Instant::now();
            let ctx = RuleCtx::new(&run, &rule_owned);
            let deselected = run.read_only && rule_owned.writes;
            let verdict = if run.stops.interrupted() {
                Verdict::skipped("interrupted: not run")
            } else if deselected {
                Verdict::skipped(READ_ONLY_SKIP)
            } else {
                match rules::evaluate(&ctx) {
                    // Evidence gathered before the interrupt still stands; anything else the
                    // interrupt may have cut short.
                    verdict @ Verdict::Failed(_) => verdict,
                    _ if run.stops.interrupted() => {
                        Verdict::skipped("interrupted: stopped while running")
                    }
                    // A rule the budget cut short says so, whatever its last request showed.
                    Verdict::Inconclusive { reason }
                        if !reason.contains("time budget")
                            && run
                                .stops
                                .hard_deadline()
                                .is_some_and(|end| Instant::now() >= end) =>
                    {
                        Verdict::inconclusive(format!("cut short by the time budget ({reason})"))
                    }
                    verdict => verdict,
                }
            };
            ctx.end_first_pass();
            let outcome = libtest_outcome(&verdict, gates, excuse.as_deref());
            let result = RuleResult {
                deselected,
                cases_run: ctx.cases_run(),
                round_trips: ctx.round_trips(),
                transport_cuts: run.observations.cuts_of(&rule_owned.id),
                duration_ms: started.elapsed().as_millis() as u64,
                verdict,
            };
            if let Some(progress) = progress.get() {
                progress.rule_done(matches!(result.verdict, Verdict::Failed(_)));
            }
            results.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(result);
            gate_for_trial.finished(phase);
            outcome
        })
        .with_kind(rule.level.as_str());
        if !args.is_filtered_out(&trial) && !args.is_ignored(&trial) {
            remaining[phase_index(phase)] += 1;
        }
        trials.push(trial);
    }
    *gate.remaining.lock().unwrap_or_else(|e| e.into_inner()) = remaining;
    run.first_pass_left.store(
        remaining[phase_index(Phase::QuietStore)] + remaining[phase_index(Phase::Main)],
        Ordering::Relaxed,
    );
    if remaining.iter().sum::<usize>() == 0 && !args.list {
        return Err(RunError::Config(format!(
            "no rule matches the filter {:?} (skip {:?}); `petstore-conformance run --list` lists the rule ids",
            args.filter.as_deref().unwrap_or(""),
            args.skip
        )));
    }
    // On a terminal, a bar instead of libtest's lines (which go to a file, then away).
    let mut libtest_log = None;
    if config.progress && !args.list && args.logfile.is_none() {
        let log = std::env::temp_dir().join(format!(
            "petstore-conformance-{}-{}.log",
            std::process::id(),
            run.seed
        ));
        args.logfile = Some(log.display().to_string());
        libtest_log = Some(log);
        let rules = remaining.iter().sum::<usize>() as u64;
        let _ = progress.set(Progress::start(rules, run));
    }
    let _conclusion = libtest_mimic::run(&args, trials);
    if let Some(progress) = progress.get() {
        progress.finish();
    }
    if let Some(log) = libtest_log {
        let _ = std::fs::remove_file(log);
    }
    if args.list {
        return Ok(None);
    }
    Ok(Some(std::mem::take(
        &mut *results.lock().unwrap_or_else(|e| e.into_inner()),
    )))
}

/// Stage 5: verdicts tallied into rule reports and the run's answer. A failure on the list of
/// known failures (not expired) is a `known-failure`, not gated; a listed rule that passes
/// says it can come off the list; an expired entry gates again and says so. The answer is the
/// selected rules': a rule the user left out (a filter, --read-only) did not "reach no
/// verdict", the report says it was left out; a selected required rule that reached none
/// (inconclusive, skipped), or a target that stopped answering, leaves the answer undetermined.
fn tally(
    config: &RunConfig,
    catalogue: &Catalogue,
    results: Results,
    known: &KnownFailures,
    target_stopped: bool,
) -> (Vec<RuleReport>, Totals, Conformance) {
    let today = super::known::today();
    let mut totals = Totals::default();
    let mut reports = Vec::new();
    let mut required_undecided = target_stopped;
    let mut required_known = false;
    for (rule, result) in catalogue.rules.iter().zip(results) {
        let Some(result) = result else {
            totals.not_selected += 1;
            continue;
        };
        let entry = known.get(&rule.id);
        let failed = matches!(result.verdict, Verdict::Failed(_));
        let excused = failed && entry.is_some_and(|entry| !entry.expired(&today));
        let gated_failure = failed && !excused && config.gate.gates(rule.level);
        totals.rules += 1;
        match (&result.verdict, rule.level) {
            _ if excused => {
                totals.known_failures += 1;
                required_known |= rule.level == Level::Required;
            }
            (Verdict::Passed, _) => totals.passed += 1,
            (Verdict::Failed(_), Level::Required) => totals.failed_required += 1,
            (Verdict::Failed(_), Level::Recommended) => totals.failed_recommended += 1,
            (Verdict::Inconclusive { .. }, level) => {
                totals.inconclusive += 1;
                required_undecided |= level == Level::Required;
            }
            (Verdict::Skipped { .. }, level) => {
                totals.skipped += 1;
                required_undecided |= level == Level::Required && !result.deselected;
            }
            // Reported under the verdict; only certification needs every rule decided.
            (Verdict::NotDecidable { .. }, level) => {
                totals.not_decidable += 1;
                required_undecided |= config.gate.needs_decided(level);
            }
        }
        let mut report = RuleReport::new(
            rule,
            &result.verdict,
            gated_failure,
            result.cases_run,
            result.duration_ms,
            &config.api_key_env,
        );
        report.round_trips = result.round_trips;
        report.transport_cuts = result.transport_cuts;
        if let Some(entry) = entry {
            report.known_failure = Some(entry.clone());
            if excused {
                report.verdict = VerdictKind::KnownFailure;
                report.reason = Some(format!("known failure: {}", entry.reason));
            } else if failed {
                report.reason = Some(format!(
                    "known failure expired on {}: gated again",
                    entry.expires.as_deref().unwrap_or("?")
                ));
            } else if report.verdict == VerdictKind::Passed {
                report.reason = Some("fixed: remove it from the known failures".into());
            }
        }
        reports.push(report);
    }
    let conformance = if reports.iter().any(|r| r.gated) {
        Conformance::DoesNotConform
    } else if required_undecided {
        Conformance::Undetermined
    } else if required_known {
        Conformance::KnownFailuresOnly
    } else {
        Conformance::Conforms
    };
    (reports, totals, conformance)
}

/// The exit code of a finished run: the signal's when one stopped it, else the answer's.
pub fn exit_code(conformance: Conformance, signal: Option<u8>) -> u8 {
    if let Some(code) = signal {
        return code;
    }
    conformance.exit_code()
}

/// The command that re-runs the same cases against the same target.
fn rerun_command(config: &RunConfig) -> String {
    match &config.target {
        Target::Reference { faults, variants } => {
            let mut command = format!("petstore-conformance run --seed {}", config.seed);
            for fault in faults {
                command.push_str(&format!(" --reference-fault {}", fault.name()));
            }
            for variant in variants {
                command.push_str(&format!(" --reference-variant {}", variant.name()));
            }
            command
        }
        Target::External { base_url, .. } => format!(
            "{}=... petstore-conformance run --base-url {base_url} --seed {}",
            config.api_key_env, config.seed
        ),
    }
}

/// Stage 6: counterexamples found on a real target are kept for the next run; a reference
/// with injected faults is a demonstration, not a target to remember.
fn save_regressions(
    config: &RunConfig,
    report: &Report,
    redactor: &Redactor,
) -> Result<(), RunError> {
    let (Some(path), Target::External { .. }) = (&config.regressions, &config.target) else {
        return Ok(());
    };
    let found: Vec<Regression> = report
        .rules
        .iter()
        .filter_map(|rule| {
            let example = rule.failure.as_ref()?.counterexample.as_ref()?;
            Some(Regression {
                rule: rule.id.clone(),
                value: redactor.redact_json(&example.minimal_value),
                description: redactor.redact(&example.minimal),
                found_at: report.finished_at.clone(),
                seed: report.seed,
                target: report.target.base_url.clone(),
            })
        })
        .collect();
    regressions::save(path, found).map_err(RunError::Config)?;
    Ok(())
}

/// Stage 2b: one authenticated request before any rule, GET /pets. No answer at all is
/// "could not be reached" (exit 2), unless the budget or an interrupt stopped it: then the
/// rules run and say so (undetermined or interrupted, with reports). 401 or 403 is confirmed
/// with a second operation (GET /pets/1): refused on both, the key is refused (exit 2); a
/// target that refuses a valid key on one operation only is judged by the rules.
fn preflight(
    config: &RunConfig,
    client: &Client,
    halt: &crate::execution::Halt,
    base_url: &str,
) -> Result<crate::outcome::Exchange, RunError> {
    let preflight = client.send(&RequestSpec::get("/pets"));
    let stopped = || halt.reason().is_some() || super::interrupts::signalled().is_some();
    if preflight.response.is_none() {
        if !preflight.was_sent() || stopped() {
            return Ok(preflight);
        }
        return Err(RunError::Unreachable(format!(
            "the target {base_url} could not be reached: {}",
            preflight.summary()
        )));
    }
    let refused = |exchange: &crate::outcome::Exchange| {
        exchange
            .response
            .as_ref()
            .is_some_and(|r| r.status == 401 || r.status == 403)
    };
    if !refused(&preflight) {
        return Ok(preflight);
    }
    let confirmation = client.send(&RequestSpec::get("/pets/1"));
    if !refused(&confirmation) {
        return Ok(preflight);
    }
    let status =
        |exchange: &crate::outcome::Exchange| exchange.response.as_ref().map_or(0, |r| r.status);
    let source = match &config.api_key_source {
        Some(source) => source.clone(),
        None => format!("the environment variable {}", config.api_key_env),
    };
    Err(RunError::KeyRefused(format!(
        "the target {base_url} refused the key from {source} (GET /pets answered {}, GET /pets/1 answered {}): check the key; no rule was run",
        status(&preflight),
        status(&confirmation)
    )))
}

/// Runs the suite, stage by stage: load, target, client and preflight, trials, tally, reports.
pub fn execute(config: RunConfig) -> Result<RunOutcome, RunError> {
    let started_at = SystemTime::now();
    let started = Instant::now();
    let listing = config.libtest.list;
    // Heard from the start: a signal while loading or during the preflight still ends in this
    // run's report, marked interrupted.
    let (cancel, cancelled) = tokio::sync::watch::channel(false);
    let run_slot: Arc<OnceLock<Arc<Run>>> = Arc::default();
    let commit = Arc::new(AtomicU8::new(NOT_COMMITTED));
    let _interrupts = listen_for_interrupts(
        cancel,
        Arc::clone(&run_slot),
        config.report_dir.clone().filter(|_| !listing),
        Arc::clone(&commit),
    );
    if config.libtest.test_threads == Some(0) {
        return Err(RunError::Config(
            "--test-threads 0: at least one rule must run at a time".into(),
        ));
    }
    let loaded = load(&config)?;
    let mut known = match &config.known_failures {
        Some(path) => super::known::load(path, &loaded.catalogue)?,
        None => KnownFailures::new(),
    };
    if !config.known_failures_listed.is_empty() {
        let listed = super::known::checked(config.known_failures_listed.clone(), &loaded.catalogue)
            .map_err(|e| RunError::Config(format!("known_failures of the profile: {e}")))?;
        known.extend(listed);
    }
    let report_dir = match &config.report_dir {
        Some(dir) if !listing => Some(
            ReportDir::prepare(dir)
                .map_err(|e| RunError::Config(format!("{e}; choose another with --report-dir")))?,
        ),
        _ => None,
    };
    let runtime = super::runtime()?;
    let target = start_target(&config, &runtime)?;
    // The budget counts from the start and bounds the preflight too.
    let stops = Stops::new(
        deadline(started, config.time_budget),
        config.max_transport_failures,
    );
    let client = Client::new(
        &target.base_url,
        &target.api_key,
        config.client.clone(),
        runtime.handle().clone(),
    )?
    .cancelled_by(cancelled)
    .halted_by(stops.halt());
    let redactor = client.redactor().clone();
    let base_url = redactor.redact(&target.base_url);

    let preflight = if listing {
        None
    } else {
        Some(preflight(&config, &client, &stops.halt(), &base_url)?)
    };

    // Side files never cost the run: one that cannot be written is a warning.
    let request_log = config.request_log.as_ref().and_then(|path| {
        std::fs::File::create(path)
            .map_err(|e| {
                eprintln!(
                    "petstore-conformance: warning: --request-log {}: cannot create it ({e}); the run goes on without a request log",
                    path.display()
                );
            })
            .ok()
            .map(|file| Mutex::new(std::io::BufWriter::new(file)))
    });
    let created = match &report_dir {
        Some(dir) => CreatedPets::streamed_to(dir.stage(CREATED_PETS_FILE)?),
        None => CreatedPets::default(),
    };
    let Loaded {
        contract,
        catalogue,
        new_pet_schema,
        regressions,
    } = loaded;
    let run = Arc::new(Run {
        client,
        contract,
        new_pet_schema,
        seed: config.seed,
        cases: config.cases.max(1),
        concurrency: config.client.concurrency.max(1),
        categories: crate::generation::Categories(config.category_ids.clone()),
        deadline: deadline(started, config.time_budget.map(generation_budget)),
        stops,
        regressions,
        request_log,
        prefix: run_prefix(config.seed),
        fixtures: Fixtures::new(created),
        observations: Observations::default(),
        read_only: config.read_only,
        sent: Default::default(),
        first_pass_left: Default::default(),
    });
    // The listener sets the flag once the run is in the slot; a signal that came before is
    // seen here (both sides write, then read the other's, with a full fence between).
    let _ = run_slot.set(Arc::clone(&run));
    std::sync::atomic::fence(Ordering::SeqCst);
    if super::interrupts::signalled().is_some() {
        run.stops.interrupted.store(true, Ordering::SeqCst);
    }
    if config.announce {
        eprintln!(
            "petstore-conformance {}: seed {seed} (replay with --seed {seed})",
            crate::SUITE_VERSION,
            seed = config.seed
        );
    }

    let Some(results) = run_trials(&config, &catalogue, &run, &known)? else {
        return Ok(RunOutcome {
            report: None,
            exit_code: 0,
            written: Vec::new(),
        });
    };
    let stopped_answering = run.stops.target_stopped().map(|r| redactor.redact(r));
    let (rules, totals, conformance) = tally(
        &config,
        &catalogue,
        results,
        &known,
        stopped_answering.is_some(),
    );
    let interrupted = run.stops.interrupted();
    let report = Report {
        suite: Named {
            name: crate::SUITE_NAME.into(),
            version: crate::SUITE_VERSION.into(),
        },
        contract: ContractInfo {
            title: CONTRACT_TITLE.into(),
            version: CONTRACT_VERSION.into(),
            document: CONTRACT_DOCUMENT.into(),
            sha256: sha256_hex(CONTRACT_TEXT.as_bytes()),
            catalogue_sha256: catalogue.sha256(),
            schemas: run.contract.source().to_string(),
            cases: catalogue.source.clone(),
        },
        target: TargetInfo {
            base_url,
            kind: match config.target {
                Target::Reference { .. } => "built-in reference server".into(),
                Target::External { .. } => "external".into(),
            },
            faults: target.faults.clone(),
            variants: target.variants.clone(),
            tls_verification: !config.client.insecure,
            http_version: preflight
                .as_ref()
                .and_then(|p| p.response.as_ref())
                .map(|r| r.version.clone())
                .unwrap_or_default(),
            stopped_answering,
            product: config.product.clone(),
            product_version: config.product_version.clone(),
            server: preflight
                .as_ref()
                .and_then(|p| p.header("server"))
                .map(String::from),
        },
        seed: config.seed,
        cases_per_property: run.cases,
        gate: config.gate.as_str().into(),
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        duration_ms: started.elapsed().as_millis() as u64,
        interrupted,
        throttling: run.client.throttle_tally(),
        connections: run.client.connection_tally(),
        conformance,
        totals,
        rerun: rerun_command(&config),
        rules,
        run_prefix: run.prefix.clone(),
        integrity: Default::default(),
        created_pets: CreatedPetsInfo {
            count: run.fixtures.created.count(),
            file: report_dir.as_ref().map(|_| CREATED_PETS_FILE.to_string()),
            run_prefix: run.prefix.clone(),
        },
    };
    if let Some(log) = &run.request_log {
        let _ = log.lock().unwrap_or_else(|e| e.into_inner()).flush();
    }
    run.fixtures.created.flush();
    if let Err(e) = save_regressions(&config, &report, &redactor) {
        eprintln!(
            "petstore-conformance: warning: counterexamples not saved: {e}; the reports are written all the same"
        );
    }
    commit.store(COMMITTING, Ordering::SeqCst);
    let written = match &report_dir {
        Some(dir) => dir.commit(&report, &redactor, &[CREATED_PETS_FILE]),
        None => Ok(Vec::new()),
    };
    commit.store(COMMITTED, Ordering::SeqCst);
    let written = written?;
    let signal = interrupted
        .then(|| super::interrupts::signalled().unwrap_or(super::interrupts::SIGINT_EXIT_CODE));
    Ok(RunOutcome {
        exit_code: exit_code(report.conformance, signal),
        report: Some(report),
        written,
    })
}

/// The verdict as libtest shows it: a failure that the gate does not count is shown as
/// ignored with its reason, so libtest's summary agrees with the exit code.
fn libtest_outcome(
    verdict: &Verdict,
    gated: bool,
    excuse: Option<&str>,
) -> Result<Completion, Failed> {
    match verdict {
        Verdict::Passed => Ok(Completion::Completed),
        Verdict::Failed(_) if excuse.is_some() => Ok(Completion::ignored_with(format!(
            "{}, not gated: {}",
            excuse.unwrap_or_default(),
            verdict.message()
        ))),
        Verdict::Failed(_) if gated => Err(verdict.message().into()),
        Verdict::Failed(_) => Ok(Completion::ignored_with(format!(
            "recommended, not gated: {}",
            verdict.message()
        ))),
        Verdict::Inconclusive { reason } => {
            Ok(Completion::ignored_with(format!("inconclusive: {reason}")))
        }
        Verdict::Skipped { reason } => Ok(Completion::ignored_with(format!("skipped: {reason}"))),
        Verdict::NotDecidable { reason } => Ok(Completion::ignored_with(format!(
            "not decidable on this store: {reason}"
        ))),
    }
}
