//! The stages of a run, in order: configure (what the run loads and where it writes),
//! connect (the target and the one client), preflight (the store as it is, the key checked),
//! populate (the run's shared state, the store's snapshot in it), judge (the rules as trials),
//! tally (verdicts to the answer), report (the report model, written). Interrupts are heard
//! from before the first stage.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::error::{RunError, exit_code};
use super::interrupts::RunInterrupts;
use super::known::KnownFailures;
use super::report::Finished;
use super::settings::{RunConfig, RunOutcome, bound, generation_budget};
use super::tally::{Tallied, save_regressions, tally};
use super::target::{Loaded, Started, load, start_target};
use super::trials::{Results, run_trials};
use crate::catalogue::Catalogue;
use crate::catalogue::partition::ShardRecord;
use crate::engine::run::Run;
use crate::engine::slots::WorkerSlots;
use crate::engine::stops::Stops;
use crate::engine::store_setup::{CreatedPets, Fixtures};
use crate::execution::{Client, Halt, Redactor, ThrottleBound};
use crate::generation::request::RequestSpec;
use crate::outcome::Exchange;
use crate::report::{CREATED_PETS_FILE, Report, ReportDir};
use crate::seed::run_prefix;

/// Runs the suite, stage by stage.
pub fn execute(config: RunConfig) -> Result<RunOutcome, RunError> {
    let clock = Clock::start();
    let listing = config.libtest.list;
    // Heard from the start: a signal while loading or during the preflight still ends in this
    // run's report, marked interrupted.
    let interrupts = RunInterrupts::listen(config.options.report_dir.clone().filter(|_| !listing));
    let configured = configure(&config)?;
    let (connected, client, stops) = connect(&config, &clock, &interrupts)?;
    let preflight = if listing {
        None
    } else {
        let answers = preflight(&config, &client, &stops, &connected)?;
        // Before anything is created: a certification this store cannot give stops here.
        super::certify::check_decidable(&config, &configured.loaded.catalogue, &answers)?;
        Some(answers)
    };
    let Configured {
        loaded,
        known,
        report_dir,
        invocation,
    } = configured;
    let deadline = clock.deadline(config.time_budget().map(generation_budget));
    let (run, catalogue) = populate(
        &config,
        loaded,
        (client, stops, deadline),
        &report_dir,
        &preflight,
    )?;
    interrupts.reach(&run);
    if config.announce {
        stderrln!(
            "petstore-conformance {}: seed {seed} (replay with --seed {seed})",
            crate::SUITE_VERSION,
            seed = config.seed()
        );
    }
    let shard = config
        .options
        .partition
        .zip(invocation)
        .map(|(partition, invocation)| {
            super::shards::record(&config, &catalogue, partition, invocation)
        });
    let Some(results) = judge(&config, &catalogue, &run, &known, shard.as_ref())? else {
        return Ok(RunOutcome {
            report: None,
            exit_code: 0,
            written: Vec::new(),
        });
    };
    let tallied = tally_stage(&config, &catalogue, results, &known, &run, &connected);
    let report = Report::from_run(Finished {
        config: &config,
        catalogue: &catalogue,
        run: &run,
        target: &connected.target,
        base_url: &connected.base_url,
        preflight: preflight
            .as_ref()
            .and_then(|answers| answers.first())
            .map(|(_, exchange)| exchange),
        tallied,
        shard,
        started_at: clock.started_at,
        started: clock.started,
        report_dir: report_dir.is_some(),
    });
    report_stage(&config, &run, report, report_dir.as_ref(), &interrupts)
}

/// When the run started, on the wall clock (for the report) and the monotonic one (for its
/// bound and duration).
struct Clock {
    started_at: SystemTime,
    started: Instant,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            started_at: SystemTime::now(),
            started: Instant::now(),
        }
    }

    /// `start + budget`, or no deadline when that is past what a clock can hold.
    fn deadline(&self, budget: Option<Duration>) -> Option<Instant> {
        budget.and_then(|budget| self.started.checked_add(budget))
    }
}

/// What the run loads before it reaches the target, and where its reports go.
struct Configured {
    loaded: Loaded,
    known: KnownFailures,
    report_dir: Option<ReportDir>,
    /// The invocation a shard records (`None`: not a shard).
    invocation: Option<String>,
}

/// Configure: the contract, the catalogue, the request space and the saved counterexamples,
/// the known failures (a file's and a profile's), and a report directory that can hold the
/// reports; every error names its file.
fn configure(config: &RunConfig) -> Result<Configured, RunError> {
    if config.libtest.test_threads == Some(0) {
        return Err(RunError::Config(
            "--test-threads 0: at least one rule must run at a time".into(),
        ));
    }
    // A fill the pet cap would stop short of: said now, not as an undecided rule at the end.
    if let (Some(fill), Some(_)) = (config.options.fill_store, config.time_budget())
        && fill > config.options.max_pets
    {
        return Err(RunError::Config(format!(
            "--fill-store {fill} under --time-budget: the run creates at most --max-pets {} pets; raise --max-pets to {fill} or more",
            config.options.max_pets
        )));
    }
    let loaded = load(config)?;
    let mut known = match &config.options.known_failures_file {
        Some(path) => super::known::load(path, &loaded.catalogue)?,
        None => KnownFailures::new(),
    };
    if !config.options.known_failures.is_empty() {
        let listed =
            super::known::checked(config.options.known_failures.clone(), &loaded.catalogue)
                .map_err(|e| RunError::Config(format!("known_failures of the profile: {e}")))?;
        known.extend(listed);
    }
    let report_dir = match &config.options.report_dir {
        Some(dir) if !config.libtest.list => Some(
            ReportDir::prepare(dir)
                .map_err(|e| RunError::Config(format!("{e}; choose another with --report-dir")))?,
        ),
        _ => None,
    };
    // A shard's invocation, refused now if it is not one, before anything is sent.
    let invocation = match config.options.partition {
        Some(_) => Some(super::shards::invocation(
            config.options.invocation.as_deref(),
        )?),
        None => None,
    };
    Ok(Configured {
        loaded,
        known,
        report_dir,
        invocation,
    })
}

/// The target reached: the runtime its client (and the reference, when it is the target) runs
/// on, kept for the whole run, and the base URL as the run shows it.
struct Connected {
    target: Started,
    base_url: String,
    redactor: Redactor,
    _runtime: tokio::runtime::Runtime,
}

/// Connect: starts the reference or checks the external target, and builds the one client,
/// which stops sending at the run's bound (the time budget, or the default bound from the work
/// asked), on an interrupt, or once the target stops answering.
fn connect(
    config: &RunConfig,
    clock: &Clock,
    interrupts: &RunInterrupts,
) -> Result<(Connected, Client, Stops), RunError> {
    let runtime = super::runtime::runtime()?;
    let target = start_target(config, &runtime)?;
    // The bound counts from the start, and bounds the preflight too.
    let (bound, bound_name) = bound(config);
    let halt = Halt {
        silence: Some(crate::engine::stops::silence_bound(
            config.options.max_transport_failures,
            config.options.timeout.duration(),
        )),
        throttling: Some(ThrottleBound::new(
            config.options.max_transport_failures,
            config.options.max_throttle_wait.duration(),
        )),
        ..Halt::until(clock.deadline(Some(bound)), &bound_name)
    };
    let stops = Stops::new(halt, config.options.max_transport_failures);
    let client = Client::new(
        &target.base_url,
        &target.api_key,
        config.client_settings(),
        runtime.handle().clone(),
    )?
    .cancelled_by(interrupts.cancelled())
    .halted_by(stops.halt());
    let redactor = client.redactor().clone();
    let base_url = redactor.redact(&target.base_url);
    let connected = Connected {
        target,
        base_url,
        redactor,
        _runtime: runtime,
    };
    Ok((connected, client, stops))
}

/// The store before the run changes it: its first pages, in one round trip.
type Preflight = Vec<(RequestSpec, Exchange)>;

/// Preflight: the store as it is, and the key checked on it (see `target::preflight`).
fn preflight(
    config: &RunConfig,
    client: &Client,
    stops: &Stops,
    connected: &Connected,
) -> Result<Preflight, RunError> {
    super::target::preflight(config, client, &stops.halt(), &connected.base_url)
}

/// Populate: the state every rule of the run shares, its side files open (one that cannot be
/// written is a warning: side files never cost the run), and the store as the preflight saw
/// it, recorded as every exchange is and kept for the rules.
fn populate(
    config: &RunConfig,
    loaded: Loaded,
    (client, stops, deadline): (Client, Stops, Option<Instant>),
    report_dir: &Option<ReportDir>,
    preflight: &Option<Preflight>,
) -> Result<(Arc<Run>, Catalogue), RunError> {
    let created = match report_dir {
        Some(dir) => {
            CreatedPets::streamed_to(dir.stage(CREATED_PETS_FILE)?, client.redactor().clone())
        }
        None => CreatedPets::default(),
    };
    let Loaded {
        contract,
        catalogue,
        new_pet_schema,
        regressions,
        space,
    } = loaded;
    let run = Arc::new(Run {
        client,
        contract,
        new_pet_schema,
        seed: config.seed(),
        cases: config.cases().at_least_one().limit(),
        storing_cases: config.storing_cases(),
        shrink: config.shrink,
        concurrency: config.options.concurrency.max(1),
        categories: crate::generation::Categories(config.options.category_ids.clone()),
        deadline,
        stops,
        regressions,
        prefix: run_prefix(config.seed()),
        fixtures: Arc::new(Fixtures::new(created)),
        observations: Arc::default(),
        events: Default::default(),
        read_only: config.options.read_only,
        fill_store: config.options.fill_store,
        pet_cap: crate::engine::run::PetCap::new(
            config.time_budget().map(|_| config.options.max_pets),
        ),
        scheduler: Default::default(),
        marker_taken: Default::default(),
        space,
        input_tally: Default::default(),
        worker_slots: WorkerSlots::for_concurrency(config.options.concurrency),
    });
    // The oracles and the store setup hear every exchange, the preflight's too; then the side
    // files, each where asked for.
    run.events.subscribe(run.observations.clone());
    run.events.subscribe(run.fixtures.clone());
    // After the store setup: a rule woken by a pet created finds it counted.
    run.events.subscribe(run.scheduler.clone());
    let side_files = [
        config
            .options
            .request_log
            .as_deref()
            .and_then(super::side_files::RequestLog::create)
            .map(|log| log as Arc<dyn crate::engine::events::Subscriber>),
        config
            .options
            .har
            .as_deref()
            .and_then(super::side_files::HarFile::create)
            .map(|har| har as Arc<dyn crate::engine::events::Subscriber>),
    ];
    for side_file in side_files.into_iter().flatten() {
        run.events.subscribe(side_file);
    }
    if let Some(answers) = preflight {
        run.record_all("preflight", answers);
        run.fixtures.snapshot_from(answers);
    }
    Ok((run, catalogue))
}

/// Judge: the selected rules as trials, phase by phase; `None` under `--list`.
fn judge(
    config: &RunConfig,
    catalogue: &Catalogue,
    run: &Arc<Run>,
    known: &KnownFailures,
    shard: Option<&ShardRecord>,
) -> Result<Option<Results>, RunError> {
    run_trials(config, catalogue, run, known, shard)
}

/// Tally: the verdicts to rule reports and the run's answer (see `tally::tally`); a target
/// that stopped answering leaves the answer undetermined.
fn tally_stage(
    config: &RunConfig,
    catalogue: &Catalogue,
    results: Results,
    known: &KnownFailures,
    run: &Run,
    connected: &Connected,
) -> Tallied {
    let stopped_answering = run
        .stops
        .target_stopped()
        .map(|reason| connected.redactor.redact_sent(reason));
    tally(config, catalogue, results, known, stopped_answering)
}

/// Report: the side files finished, the counterexamples found on a real target saved, and the
/// reports written into place together (or none, when they cannot be); the exit code is the
/// answer's, or the signal's.
fn report_stage(
    config: &RunConfig,
    run: &Run,
    report: Report,
    report_dir: Option<&ReportDir>,
    interrupts: &RunInterrupts,
) -> Result<RunOutcome, RunError> {
    let redactor = run.client.redactor();
    run.events.emit(&crate::engine::events::Event::RunFinished);
    if let Err(e) = save_regressions(config, &report, redactor) {
        stderrln!(
            "petstore-conformance: warning: counterexamples not saved: {e}; the reports are written all the same"
        );
    }
    interrupts.committing();
    let written = match report_dir {
        Some(dir) => {
            let configuration = crate::report::attestation::Configuration {
                contract_sha256: report.contract.sha256.clone(),
                catalogue_sha256: report.contract.catalogue_sha256.clone(),
                schemas_sha256: report.contract.schemas_sha256.clone(),
                tool_version: crate::SUITE_VERSION.to_string(),
            };
            let signing = config.sign_key.as_deref().map(|key| (key, &configuration));
            // The side files this run wrote (one it could not create is not its own).
            let written = run.events.files_written();
            let beside: Vec<&std::path::Path> =
                written.iter().map(std::path::PathBuf::as_path).collect();
            dir.commit(&report, redactor, &[CREATED_PETS_FILE], &beside, signing)
        }
        None => Ok(Vec::new()),
    };
    interrupts.committed();
    let written = written?;
    let signal = report
        .interrupted
        .then(|| super::interrupts::signalled().unwrap_or(super::interrupts::SIGINT_EXIT_CODE));
    Ok(RunOutcome {
        exit_code: exit_code(report.conformance, signal),
        report: Some(report),
        written,
    })
}
