//! The stages of a run: runs the suite stage by stage (settings.rs says what a run is asked; target.rs
//! loads and starts; trials.rs runs the rules; tally.rs answers) over one client, and writes
//! the report. Interrupts are heard here, from before anything is sent.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use super::error::{RunError, exit_code};
use super::known::KnownFailures;
use super::settings::{RunConfig, RunOutcome, Target, bound, generation_budget};
use super::tally::{save_regressions, tally};
use super::target::{Loaded, SHORT_KEY_NOTE, load, preflight, start_target};
use super::trials::run_trials;
use crate::contract::{
    CONTRACT_DOCUMENT, CONTRACT_TEXT, CONTRACT_TITLE, CONTRACT_VERSION, sha256_hex,
};
use crate::engine::oracles::Observations;
use crate::engine::run::Run;
use crate::engine::run::Stops;
use crate::engine::store_setup::{CreatedPets, Fixtures};
use crate::execution::{Client, Halt};
use crate::report::{
    CREATED_PETS_FILE, ContractInfo, CreatedPetsInfo, Named, Report, ReportDir, TargetInfo,
};
use crate::seed::run_prefix;

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
    let runtime = super::runtime::runtime()?;
    let target = start_target(&config, &runtime)?;
    // The budget counts from the start and bounds the preflight too; without one, the
    // default bound does.
    let (bound, bound_name) = bound(&config);
    let stops = Stops::new(
        Halt::until(deadline(started, Some(bound)), &bound_name),
        config.max_transport_failures,
        config.client.max_throttle_wait,
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
        crate::execution::files::create(path)
            .map_err(|e| {
                eprintln!(
                    "petstore-conformance: warning: --request-log {}: cannot create it ({e}); the run goes on without a request log",
                    path.display()
                );
            })
            .ok()
            .map(|file| Mutex::new(std::io::BufWriter::new(file)))
    });
    let har = config.har.as_ref().and_then(|path| {
        crate::execution::har::Har::create(path)
            .map_err(|e| {
                eprintln!(
                    "petstore-conformance: warning: --har {}: cannot create it ({e}); the run goes on without it",
                    path.display()
                );
            })
            .ok()
    });
    let created = match &report_dir {
        Some(dir) => CreatedPets::streamed_to(dir.stage(CREATED_PETS_FILE)?, redactor.clone()),
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
        seed: config.seed,
        cases: config.cases.max(1),
        concurrency: config.client.concurrency.max(1),
        categories: crate::generation::Categories(config.category_ids.clone()),
        deadline: deadline(started, config.time_budget.map(generation_budget)),
        stops,
        regressions,
        request_log,
        har,
        prefix: run_prefix(config.seed),
        fixtures: Fixtures::new(created),
        observations: Observations::default(),
        read_only: config.read_only,
        sent: Default::default(),
        first_pass_left: Default::default(),
        quiet_unanswered: Default::default(),
        space,
        input_tally: Default::default(),
        worker_slots: crate::engine::slots::WorkerSlots::for_concurrency(config.client.concurrency),
    });
    // The listener sets the flag once the run is in the slot; a signal that came before is
    // seen here (both sides write, then read the other's, with a full fence between).
    // The store before the run: recorded as every exchange is, and kept for the rules.
    if let Some(answers) = &preflight {
        run.record_all("preflight", answers);
        run.fixtures.snapshot_from(answers);
    }
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

    let shard = config
        .partition
        .map(|partition| super::shards::record(&config.libtest, &catalogue, partition));
    let Some(results) = run_trials(&config, &catalogue, &run, &known, shard.as_ref())? else {
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
    let first = preflight
        .as_ref()
        .and_then(|answers| answers.first())
        .map(|(_, exchange)| exchange);
    let statements = super::report::statement_matrix(&catalogue.rules, &rules);
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
            schemas_sha256: crate::report::attestation::schemas_sha256(&run.contract),
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
            http_version: first
                .and_then(|p| p.response.as_ref())
                .map(|r| r.version.clone())
                .unwrap_or_default(),
            stopped_answering,
            product: config.product.clone(),
            product_version: config.product_version.clone(),
            server: first.and_then(|p| p.header("server")).map(String::from),
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
        rerun: super::rerun::command(&config),
        rules,
        run_prefix: run.prefix.clone(),
        request_coverage: super::report::coverage_rows(&run.space, &run.input_tally),
        integrity: Default::default(),
        partition: shard,
        merged: None,
        statements,
        redaction: config.short_key_allowed.then(|| SHORT_KEY_NOTE.to_string()),
        created_pets: CreatedPetsInfo {
            count: run.fixtures.created.count(),
            file: report_dir.as_ref().map(|_| CREATED_PETS_FILE.to_string()),
            run_prefix: run.prefix.clone(),
        },
    };
    if let Some(log) = &run.request_log {
        let _ = log.lock().unwrap_or_else(|e| e.into_inner()).flush();
    }
    if let Some(har) = &run.har {
        har.finish();
    }
    run.fixtures.created.flush();
    if let Err(e) = save_regressions(&config, &report, &redactor) {
        eprintln!(
            "petstore-conformance: warning: counterexamples not saved: {e}; the reports are written all the same"
        );
    }
    commit.store(COMMITTING, Ordering::SeqCst);
    let written = match &report_dir {
        Some(dir) => {
            let configuration = crate::report::attestation::Configuration {
                contract_sha256: report.contract.sha256.clone(),
                catalogue_sha256: report.contract.catalogue_sha256.clone(),
                schemas_sha256: report.contract.schemas_sha256.clone(),
                tool_version: crate::SUITE_VERSION.to_string(),
            };
            let signing = config.sign_key.as_deref().map(|key| (key, &configuration));
            // The side files this run wrote (one it could not create is not its own).
            let beside: Vec<&std::path::Path> = [
                (&config.request_log, run.request_log.is_some()),
                (&config.har, run.har.is_some()),
            ]
            .into_iter()
            .filter_map(|(path, written)| path.as_deref().filter(|_| written))
            .collect();
            dir.commit(&report, &redactor, &[CREATED_PETS_FILE], &beside, signing)
        }
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
