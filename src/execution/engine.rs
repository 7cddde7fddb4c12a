//! The engine: turns catalogue rules into libtest-mimic trials, runs them concurrently over one
//! client, collects a verdict per rule and builds the report.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::Value;

use super::client::{Client, ClientSettings, Exchange, RequestSpec};
use super::fixtures::Fixtures;
use super::regressions::{self, Regression};
use crate::catalogue::{Catalogue, Level, Rule};
use crate::contract::{CONTRACT_TITLE, CONTRACT_VERSION, Contract, SchemaName};
use crate::generation::Schemas;
use crate::reference::{Fault, ReferenceConfig, ReferenceServer, Variant};
use crate::report::{
    self, Conformance, ContractInfo, Named, Report, RuleReport, TargetInfo, Totals,
};
use crate::rules::responses::Observations;
use crate::rules::{self, Phase, RuleCtx, Verdict};

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
}

impl Gate {
    fn gates(self, level: Level) -> bool {
        self == Gate::All || level == Level::Required
    }

    fn as_str(self) -> &'static str {
        match self {
            Gate::Required => "required",
            Gate::All => "all",
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    /// Name of the environment variable the key came from, for curl lines.
    pub api_key_env: String,
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
        }
    }
}

/// Generated cases per property rule by default: enough to find the shallow mistakes, small
/// enough that the whole suite against the reference takes about a second.
pub const DEFAULT_CASES: u32 = 32;

/// Trials run at once by default: rules wait on the network, not the CPU.
pub const DEFAULT_CONCURRENCY: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A usage or configuration error: exit code 2.
    #[error("{0}")]
    Config(String),
    /// The target could not be reached at all: exit code 3.
    #[error("{0}")]
    Unreachable(String),
}

impl RunError {
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Config(_) => 2,
            RunError::Unreachable(_) => 3,
        }
    }
}

/// What a run produced.
pub struct RunOutcome {
    /// `None` when nothing ran (`--list`).
    pub report: Option<Report>,
    pub exit_code: u8,
    pub written: Vec<PathBuf>,
}

/// The state every rule of a run shares.
pub struct Run {
    pub client: Client,
    pub contract: Contract,
    /// NewPet.json with `$ref` and `allOf` resolved, for generation.
    pub new_pet_schema: Value,
    pub seed: u64,
    pub cases: u32,
    /// When generated cases stop, under `--time-budget` (80% of it).
    pub deadline: Option<Instant>,
    /// When requests stop being sent at all (the whole budget).
    hard_deadline: Option<Instant>,
    regressions: BTreeMap<String, Vec<Value>>,
    request_log: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
    prefix: String,
    pub fixtures: Fixtures,
    pub observations: Observations,
    /// Nothing may be created on the target.
    pub read_only: bool,
}

impl Run {
    /// Sends through the client; inspects the response for the cross-cutting statements and
    /// records any pet the target says it created.
    pub fn send(&self, rule_id: &str, spec: &RequestSpec) -> Exchange {
        if self
            .hard_deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            return self
                .client
                .not_sent(spec, "not sent: the run's time budget is spent");
        }
        let exchange = self.client.send(spec);
        self.observations
            .inspect(rule_id, &exchange, &self.contract);
        if let Some(log) = &self.request_log {
            let url = &exchange.request.url;
            let line = serde_json::json!({
                "rule": rule_id,
                "method": exchange.request.method,
                "path": url.strip_prefix(self.client.base_url()).unwrap_or(url),
                "headers": exchange.request.headers,
                "body": exchange.request.body,
            });
            let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(log, "{line}");
        }
        if spec.method == "POST" && spec.path == "/pets" {
            if let (Some(200..=299), Some(pet)) = (exchange.status(), exchange.json()) {
                self.fixtures.record_created(rule_id, pet);
            }
        }
        exchange
    }

    /// The seed of one rule: from the run seed and the rule id only.
    pub fn rule_seed(&self, rule_id: &str) -> u64 {
        rules_seed(self.seed, rule_id)
    }

    /// Saved counterexamples of a rule, replayed before its generated cases.
    pub fn regressions_for(&self, rule_id: &str) -> Vec<Value> {
        self.regressions.get(rule_id).cloned().unwrap_or_default()
    }

    /// A pet name with the run's prefix.
    pub fn pet_name(&self, tag: &str) -> String {
        format!("{}{tag}", self.prefix)
    }
}

pub fn rules_seed(run_seed: u64, rule_id: &str) -> u64 {
    // FNV-1a: stable across Rust versions, unlike the std hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in rule_id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    crate::rules::property_seed(run_seed ^ hash)
}

/// The prefix of every pet name of a run: from the seed, so a run can be found again.
pub fn run_prefix(seed: u64) -> String {
    format!("pc-{:08x}-", (seed >> 32) as u32 ^ seed as u32)
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
    cases_run: u32,
    duration_ms: u64,
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.finish()
}

/// A seed for a run that was given none.
pub fn random_seed() -> u64 {
    random_u64()
}

fn check_base_url(base_url: &str) -> Result<(), RunError> {
    let url = reqwest::Url::parse(base_url).map_err(|e| {
        RunError::Config(format!(
            "--base-url {base_url:?}: not a URL ({e}); give the whole base address, e.g. https://staging.example/v1"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(RunError::Config(format!(
            "--base-url {base_url:?}: the scheme must be http or https"
        )));
    }
    if !url.path().trim_end_matches('/').ends_with("/v1") {
        return Err(RunError::Config(format!(
            "--base-url {base_url:?}: the base address must end in the version segment /v1 (the contract's {{base_url}})"
        )));
    }
    Ok(())
}

/// Runs the suite: loads the contract and catalogue, starts the reference if asked, runs the
/// selected rules as libtest-mimic trials, writes the reports.
pub fn execute(config: RunConfig) -> Result<RunOutcome, RunError> {
    let started_at = SystemTime::now();
    let started = Instant::now();
    let contract =
        Contract::load(config.schemas.as_deref()).map_err(|e| RunError::Config(e.to_string()))?;
    let catalogue = Catalogue::load(config.cases_dir.as_deref())
        .map_err(|e| RunError::Config(e.to_string()))?;
    for rule in &catalogue.rules {
        if rules::lookup(&rule.check).is_none() {
            return Err(RunError::Config(format!(
                "case file in {}: rule {:?}: check {:?} does not exist",
                catalogue.source, rule.id, rule.check
            )));
        }
    }
    if let Some(dir) = &config.report_dir {
        if !config.libtest.list {
            report::prepare_dir(dir)
                .map_err(|e| RunError::Config(format!("{e}; choose another with --report-dir")))?;
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RunError::Config(format!("cannot start the async runtime: {e}")))?;

    let (base_url, api_key, faults, variants, _server) = match &config.target {
        Target::Reference { faults, variants } => {
            let api_key = format!("ref-{:016x}{:016x}", random_u64(), random_u64());
            let server = runtime
                .block_on(ReferenceServer::start(
                    ReferenceConfig {
                        api_key: api_key.clone(),
                        faults: faults.clone(),
                        variants: variants.clone(),
                    },
                    0,
                ))
                .map_err(|e| RunError::Config(format!("cannot start the reference server: {e}")))?;
            let names = faults.iter().map(|f| f.name().to_string()).collect();
            let variant_names = variants.iter().map(|v| v.name().to_string()).collect();
            (
                server.base_url.clone(),
                api_key,
                names,
                variant_names,
                Some(server),
            )
        }
        Target::External { base_url, api_key } => {
            check_base_url(base_url)?;
            if api_key.is_empty() {
                return Err(RunError::Config(format!(
                    "no API key: set the environment variable {} (or choose another with --api-key-env)",
                    config.api_key_env
                )));
            }
            (
                base_url.clone(),
                api_key.clone(),
                Vec::new(),
                Vec::new(),
                None,
            )
        }
    };
    let client = Client::new(
        &base_url,
        &api_key,
        config.client.clone(),
        runtime.handle().clone(),
    )
    .map_err(|e| RunError::Config(e.to_string()))?;
    let redactor = client.redactor().clone();

    let preflight = client.send(&RequestSpec::get("/pets"));
    if preflight.response.is_none() && !config.libtest.list {
        return Err(RunError::Unreachable(format!(
            "the target {base_url} could not be reached: {}",
            preflight.summary()
        )));
    }

    let regressions = match &config.regressions {
        Some(path) => regressions::load(path).map_err(RunError::Config)?,
        None => BTreeMap::new(),
    };
    let request_log = match &config.request_log {
        Some(path) => Some(Mutex::new(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|e| RunError::Config(format!("--request-log {}: {e}", path.display())))?,
        ))),
        None => None,
    };
    let new_pet_schema = Schemas::new(&contract)
        .flatten(&contract, SchemaName::NewPet)
        .map_err(|e| RunError::Config(e.to_string()))?;
    let run = Arc::new(Run {
        client,
        contract,
        new_pet_schema,
        seed: config.seed,
        cases: config.cases.max(1),
        deadline: config
            .time_budget
            .map(|budget| started + budget.mul_f64(0.8)),
        hard_deadline: config.time_budget.map(|budget| started + budget),
        regressions,
        request_log,
        prefix: run_prefix(config.seed),
        fixtures: Fixtures::default(),
        observations: Observations::default(),
        read_only: config.read_only,
    });

    let mut args = config.libtest.clone();
    if args.test_threads.is_none() {
        args.test_threads = Some(DEFAULT_CONCURRENCY);
    }
    let mut ordered: Vec<(usize, &Rule, Phase)> = catalogue
        .rules
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            let phase = rules::lookup(&rule.check).map_or(Phase::Main, |check| check.phase);
            (index, rule, phase)
        })
        .collect();
    ordered.sort_by_key(|(index, _, phase)| (*phase, *index));

    let gate = Arc::new(PhaseGate {
        remaining: Mutex::new([0; 3]),
        changed: Condvar::new(),
    });
    let results: Arc<Mutex<Vec<Option<RuleResult>>>> = Arc::new(Mutex::new(
        (0..catalogue.rules.len()).map(|_| None).collect(),
    ));
    let mut trials = Vec::new();
    let mut remaining = [0usize; 3];
    for (index, rule, phase) in ordered {
        let run = Arc::clone(&run);
        let gate_for_trial = Arc::clone(&gate);
        let results = Arc::clone(&results);
        let rule_owned = rule.clone();
        let gates = config.gate.gates(rule.level);
        let trial = Trial::ignorable_test(rule.id.clone(), move || {
            gate_for_trial.wait_for_earlier(phase);
            let started = Instant::now();
            let ctx = RuleCtx::new(&run, &rule_owned);
            let verdict = if run.read_only && rule_owned.writes {
                Verdict::skipped("read-only profile: this rule creates pets")
            } else {
                rules::evaluate(&ctx)
            };
            let outcome = libtest_outcome(&verdict, gates);
            let result = RuleResult {
                cases_run: ctx.cases_run(),
                duration_ms: started.elapsed().as_millis() as u64,
                verdict,
            };
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
    if remaining.iter().sum::<usize>() == 0 && !args.list {
        return Err(RunError::Config(format!(
            "no rule matches the filter {:?} (skip {:?}); `petstore-conformance run --list` lists the rule ids",
            args.filter.as_deref().unwrap_or(""),
            args.skip
        )));
    }

    let _conclusion = libtest_mimic::run(&args, trials);
    if args.list {
        return Ok(RunOutcome {
            report: None,
            exit_code: 0,
            written: Vec::new(),
        });
    }

    let results = std::mem::take(&mut *results.lock().unwrap_or_else(|e| e.into_inner()));
    let mut totals = Totals::default();
    let mut reports = Vec::new();
    let mut required_undecided = false;
    for (rule, result) in catalogue.rules.iter().zip(results) {
        let Some(result) = result else {
            totals.not_selected += 1;
            required_undecided |= rule.level == Level::Required;
            continue;
        };
        let gated_failure =
            matches!(result.verdict, Verdict::Failed(_)) && config.gate.gates(rule.level);
        totals.rules += 1;
        match (&result.verdict, rule.level) {
            (Verdict::Passed, _) => totals.passed += 1,
            (Verdict::Failed(_), Level::Required) => totals.failed_required += 1,
            (Verdict::Failed(_), Level::Recommended) => totals.failed_recommended += 1,
            (Verdict::Inconclusive { .. }, level) => {
                totals.inconclusive += 1;
                required_undecided |= level == Level::Required;
            }
            (Verdict::Skipped { .. }, level) => {
                totals.skipped += 1;
                required_undecided |= level == Level::Required;
            }
        }
        reports.push(RuleReport::new(
            rule,
            &result.verdict,
            gated_failure,
            result.cases_run,
            result.duration_ms,
            &config.api_key_env,
        ));
    }
    let any_gated_failure = reports.iter().any(|r| r.gated);
    let conformance = if any_gated_failure {
        Conformance::DoesNotConform
    } else if required_undecided {
        Conformance::Undetermined
    } else {
        Conformance::Conforms
    };
    let rerun = match &config.target {
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
    };
    let report = Report {
        suite: Named {
            name: crate::SUITE_NAME.into(),
            version: crate::SUITE_VERSION.into(),
        },
        contract: ContractInfo {
            title: CONTRACT_TITLE.into(),
            version: CONTRACT_VERSION.into(),
            schemas: run.contract.source().to_string(),
            cases: catalogue.source.clone(),
        },
        target: TargetInfo {
            base_url: redactor.redact(&base_url),
            kind: match config.target {
                Target::Reference { .. } => "built-in reference server".into(),
                Target::External { .. } => "external".into(),
            },
            faults,
            variants,
            tls_verification: !config.client.insecure,
            http_version: preflight
                .response
                .as_ref()
                .map(|r| r.version.clone())
                .unwrap_or_default(),
        },
        seed: config.seed,
        cases_per_property: run.cases,
        gate: config.gate.as_str().into(),
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        duration_ms: started.elapsed().as_millis() as u64,
        conformance,
        totals,
        rerun,
        rules: reports,
        run_prefix: run.prefix.clone(),
        created_pets: run.fixtures.created(),
    };
    if let Some(log) = &run.request_log {
        let _ = log.lock().unwrap_or_else(|e| e.into_inner()).flush();
    }
    // Counterexamples found on a real target are kept for the next run; a reference with
    // injected faults is a demonstration, not a target to remember.
    let remember = matches!(config.target, Target::External { .. });
    if let (Some(path), true) = (&config.regressions, remember) {
        let found: Vec<Regression> = report
            .rules
            .iter()
            .filter_map(|rule| {
                let example = rule.failure.as_ref()?.counterexample.as_ref()?;
                Some(Regression {
                    rule: rule.id.clone(),
                    value: example.minimal_value.clone(),
                    description: example.minimal.clone(),
                    found_at: report.finished_at.clone(),
                    seed: report.seed,
                    target: report.target.base_url.clone(),
                })
            })
            .collect();
        let found: Vec<Regression> = found
            .into_iter()
            .map(|mut r| {
                r.description = redactor.redact(&r.description);
                r.value = serde_json::from_str(&redactor.redact(&r.value.to_string()))
                    .unwrap_or(Value::Null);
                r
            })
            .collect();
        regressions::save(path, found).map_err(RunError::Config)?;
    }
    let written = match &config.report_dir {
        Some(dir) => report::write_all(&report, dir, &redactor)
            .map_err(|e| RunError::Config(e.to_string()))?,
        None => Vec::new(),
    };
    Ok(RunOutcome {
        exit_code: if any_gated_failure { 1 } else { 0 },
        report: Some(report),
        written,
    })
}

/// The verdict as libtest shows it: a failure that the gate does not count is shown as
/// ignored with its reason, so libtest's summary agrees with the exit code.
fn libtest_outcome(verdict: &Verdict, gated: bool) -> Result<Completion, Failed> {
    match verdict {
        Verdict::Passed => Ok(Completion::Completed),
        Verdict::Failed(_) if gated => Err(verdict.message().into()),
        Verdict::Failed(_) => Ok(Completion::ignored_with(format!(
            "recommended, not gated: {}",
            verdict.message()
        ))),
        Verdict::Inconclusive { reason } => {
            Ok(Completion::ignored_with(format!("inconclusive: {reason}")))
        }
        Verdict::Skipped { reason } => Ok(Completion::ignored_with(format!("skipped: {reason}"))),
    }
}
