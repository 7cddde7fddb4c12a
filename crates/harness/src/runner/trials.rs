//! The judge stage: the run's scheduler judges the selected rules on threads of its own, phase
//! by phase (a quiet store first, the rules that must run last last), and each verdict reached
//! is told to the event stream, kept for the tally; libtest-mimic only formats them, a trial
//! per rule that waits for its rule's judgement.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use libtest_mimic::{Completion, Failed, Trial};

pub use super::error::RunError;
use super::known::KnownFailures;
use super::progress::Progress;
use super::settings::{DEFAULT_TEST_THREADS, RunConfig};
use crate::catalogue::traits::Stores;
use crate::catalogue::{Catalogue, Rule};
use crate::engine::ctx::RuleCtx;
use crate::engine::events::{Event, Judged, Judgement, Subscriber};
use crate::engine::run::Run;
use crate::engine::scheduler::{self, Phase};
use crate::outcome::Verdict;
use crate::report::{FILL_STORE_SKIP, READ_ONLY_SKIP};
use crate::rules;

/// What the trials hand back: one slot per catalogue rule, `None` when not selected.
pub(super) type Results = Vec<Option<Judgement>>;

/// The judgements of a run's rules, each in its catalogue slot, as the event stream tells them.
/// A slot has its own condition: the one trial waiting on it is woken, not all (a hundred
/// trials woken for each verdict were a third of a run's context switches).
struct Collected {
    slots: Vec<(Mutex<Option<Judgement>>, Condvar)>,
}

impl Subscriber for Collected {
    fn on(&self, event: &Event<'_>) {
        if let Event::VerdictReached(judged) = event
            && let Some((slot, filled)) = self.slots.get(judged.index)
        {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(judged.judgement.clone());
            filled.notify_all();
        }
    }
}

impl Collected {
    fn new(rules: usize) -> Collected {
        Collected {
            slots: (0..rules).map(|_| Default::default()).collect(),
        }
    }

    /// The judgement of the rule in slot `index`, once the scheduler has reached it.
    fn wait_for(&self, index: usize) -> Judgement {
        let (slot, filled) = &self.slots[index];
        let mut judgement = slot.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(judgement) = &*judgement {
                return judgement.clone();
            }
            judgement = filled.wait(judgement).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Every slot's judgement, taken.
    fn take(&self) -> Results {
        (self.slots.iter())
            .map(|(slot, _)| slot.lock().unwrap_or_else(|e| e.into_inner()).take())
            .collect()
    }
}

/// How the run's gate reads a rule's failure: whether its level gates, and what the list of
/// known failures says of it.
#[derive(Clone)]
struct Reading {
    gates: bool,
    /// A failure on the known list shows as such, not as a failure, while it lasts.
    excuse: Option<String>,
    /// One that ran out gates again, and its failure says why it is back.
    expired: Option<String>,
}

impl Reading {
    fn of(rule: &Rule, config: &RunConfig, known: &KnownFailures, today: &str) -> Reading {
        Reading {
            gates: config.options.gate.gates(rule.level),
            excuse: known
                .get(&rule.id)
                .filter(|entry| !entry.expired(today))
                .map(|entry| format!("known failure ({})", entry.reason)),
            expired: known
                .get(&rule.id)
                .filter(|entry| entry.expired(today))
                .map(|entry| entry.expired_note()),
        }
    }
}

/// A selected rule, queued for the scheduler.
struct Queued {
    index: usize,
    rule: Rule,
    phase: Phase,
    reading: Reading,
}

/// The selected rules as libtest-mimic trials, phase by phase; `None` under `--list`.
pub(super) fn run_trials(
    config: &RunConfig,
    catalogue: &Catalogue,
    run: &Arc<Run>,
    known: &KnownFailures,
    shard: Option<&crate::catalogue::partition::ShardRecord>,
) -> Result<Option<Results>, RunError> {
    let today = super::known::today();
    let mut args = config.libtest_args();
    if args.test_threads.is_none() {
        args.test_threads = Some(DEFAULT_TEST_THREADS);
    }
    let collected = Arc::new(Collected::new(catalogue.rules.len()));
    let collector: Arc<dyn Subscriber> = collected.clone();
    run.events.subscribe(Arc::clone(&collector));
    let mut trials = Vec::new();
    let mut queue = Vec::new();
    let mut quiet_unanswered = 0;
    let mut quiet_reserve = 0;
    for (index, rule, phase) in in_order(catalogue, run) {
        // Another shard's rule is not this run's: not selected, as a filter leaves it.
        if shard.is_some_and(|shard| !super::shards::takes(shard, &rule.id)) {
            continue;
        }
        let reading = Reading::of(rule, config, known, &today);
        let trial = trial(&collected, index, rule, reading.clone());
        if !args.is_filtered_out(&trial) && !args.is_ignored(&trial) {
            queue.push((
                phase,
                Queued {
                    index,
                    rule: rule.clone(),
                    phase,
                    reading,
                },
            ));
            if scheduler::phase(&rule.check) == Phase::QuietStore {
                quiet_unanswered += 1;
                quiet_reserve += scheduler::quiet_pets(&rule.check);
            }
        }
        trials.push(trial);
    }
    run.scheduler.select(
        queue.iter().map(|(phase, _)| *phase),
        quiet_unanswered,
        quiet_reserve,
    );
    // A `--skip` that matches no rule is a typo, not a choice: it would skip nothing, silently.
    let skips_nothing: Vec<&str> = config
        .options
        .skip
        .iter()
        .map(String::as_str)
        .filter(|skip| !skip.is_empty())
        .filter(|skip| {
            !catalogue.rules.iter().any(|rule| {
                if args.exact {
                    rule.id == *skip
                } else {
                    rule.id.contains(skip)
                }
            })
        })
        .collect();
    if !skips_nothing.is_empty() {
        return Err(RunError::Config(format!(
            "--skip {:?} matches no rule and would skip nothing; `petstore-conformance run --list` lists the rule ids",
            skips_nothing
        )));
    }
    // A shard may be dealt nothing of a small selection; the selection is what must match.
    if queue.is_empty() && !args.list && shard.is_none_or(|s| s.selected.is_empty()) {
        return Err(RunError::Config(format!(
            "no rule matches the filter {:?} (skip {:?}); `petstore-conformance run --list` lists the rule ids",
            args.filter.as_deref().unwrap_or(""),
            args.skip
        )));
    }
    run_libtest(config, args, trials, run, &queue);
    run.events.unsubscribe(&collector);
    if config.libtest.list {
        return Ok(None);
    }
    Ok(Some(collected.take()))
}

/// The rules in the order they are queued: by phase; within a phase, the quiet-store rules
/// before the reads beside them, the rules that store many pets first (a page's pets are
/// theirs: the population fixture finds them running, and makes none of its own), long
/// chains next, then catalogue order.
fn in_order<'c>(catalogue: &'c Catalogue, run: &Run) -> Vec<(usize, &'c Rule, Phase)> {
    let mut ordered: Vec<(usize, &Rule, Phase)> = catalogue
        .rules
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            let phase = scheduler::phase_for(rule, run.deadline.is_some());
            (index, rule, phase)
        })
        .collect();
    ordered.sort_by_key(|(index, rule, phase)| {
        (
            *phase,
            beside_quiet(rule, *phase),
            !scheduler::stores_many(rule),
            !scheduler::starts_early(&rule.check),
            !scheduler::on_long_chain(&rule.check),
            *index,
        )
    });
    ordered
}

/// One rule as a trial: it waits for its rule's judgement and shows it as libtest does.
fn trial(collected: &Arc<Collected>, index: usize, rule: &Rule, reading: Reading) -> Trial {
    let collected = Arc::clone(collected);
    Trial::ignorable_test(rule.id.clone(), move || {
        let judgement = collected.wait_for(index);
        libtest_outcome(
            &judgement.verdict,
            reading.gates,
            reading.excuse.as_deref(),
            reading.expired.as_deref(),
        )
    })
    .with_kind(rule.level.as_str())
}

/// The scheduler judges the queue on `threads` threads of its own; each verdict reached goes
/// to the event stream. A panic outside a check (which `rules::evaluate` catches) still leaves a
/// verdict, so that no trial waits for one in vain.
fn judge_queue(run: &Run, queue: &[(Phase, Queued)], threads: usize) {
    run.scheduler.judge_all(queue, threads, &|queued: &Queued| {
        let judgement = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            judge_rule(run, &queued.rule, queued.phase)
        }))
        .unwrap_or_else(|_| Judgement {
            verdict: Verdict::inconclusive("the harness panicked while judging this rule"),
            cases_run: 0,
            round_trips: 0,
            transport_cuts: 0,
            duration_ms: 0,
        });
        if scheduler::phase(&queued.rule.check) == Phase::QuietStore {
            run.scheduler.quiet_rule_judged();
        }
        let reading = &queued.reading;
        run.events.emit(&Event::VerdictReached(&Judged {
            index: queued.index,
            rule: &queued.rule,
            judgement: &judgement,
            gated: reading.gates && reading.excuse.is_none(),
            known: reading.excuse.is_some(),
            message: &failure_message(&judgement.verdict, reading.expired.as_deref()),
        }));
    });
}

/// One rule judged: skipped when the run was interrupted or the rule writes under
/// `--read-only`; an interrupt or the run's bound that cut it short says so.
fn judge_rule(run: &Run, rule: &Rule, phase: Phase) -> Judgement {
    let ctx = RuleCtx::new(run, rule);
    if beside_quiet(rule, phase) {
        ctx.wait_for_quiet_creates();
    }
    let started = Instant::now();
    let verdict = if run.stops.interrupted() {
        Verdict::skipped("interrupted: not run")
    } else if run.read_only && rule.writes {
        Verdict::skipped(READ_ONLY_SKIP)
    } else if run.fill_store.is_none() && rule.check.traits().stores == Stores::Fill {
        Verdict::skipped(FILL_STORE_SKIP)
    } else {
        match rules::evaluate(&ctx) {
            // Evidence gathered before the interrupt still stands; anything else the
            // interrupt may have cut short.
            verdict @ Verdict::Failed(_) => verdict,
            _ if run.stops.interrupted() => Verdict::skipped("interrupted: stopped while running"),
            // A rule the budget cut short says so, whatever its last request showed.
            Verdict::Inconclusive { reason }
                if !reason.contains("time budget")
                    && run
                        .stops
                        .hard_deadline()
                        .is_some_and(|end| Instant::now() >= end) =>
            {
                Verdict::inconclusive(format!("cut short by {} ({reason})", run.stops.bound()))
            }
            verdict => verdict,
        }
    };
    ctx.end_first_pass();
    ctx.answered_once();
    Judgement {
        cases_run: ctx.cases_run(),
        round_trips: ctx.round_trips(),
        transport_cuts: run.observations.cuts_of(&rule.id),
        duration_ms: started.elapsed().as_millis() as u64,
        verdict,
    }
}

/// The scheduler judges the queue while libtest shows the trials: on a terminal under a
/// progress bar (libtest's lines go to a file, then away), off one through a relay (a reader
/// that goes away costs the lines, not the run). Under `--list`, nothing is judged.
fn run_libtest(
    config: &RunConfig,
    mut args: libtest_mimic::Arguments,
    trials: Vec<Trial>,
    run: &Arc<Run>,
    queue: &[(Phase, Queued)],
) {
    let rules = queue.len() as u64;
    let threads = args.test_threads.unwrap_or(DEFAULT_TEST_THREADS);
    let mut libtest_log = None;
    let mut progress = None;
    if config.progress && !args.list && args.logfile.is_none() {
        // libtest opens the log itself, following links: inside a new directory only this
        // user can enter, no link can be planted where it goes.
        if let Ok(dir) = crate::execution::files::private_dir("petstore-conformance-log") {
            let log = dir.join(format!("run-{}.log", run.seed));
            args.logfile = Some(log.display().to_string());
            libtest_log = Some(dir);
        }
        let bar = Arc::new(Progress::start(
            rules,
            run.events.exchanges(),
            run.stops.hard_deadline(),
            (config.color, config.time_budget().is_some()),
        ));
        let subscriber: Arc<dyn Subscriber> = bar.clone();
        run.events.subscribe(Arc::clone(&subscriber));
        progress = Some((bar, subscriber));
    }
    let relay = match args.logfile {
        None => super::relay::Relay::start(),
        Some(_) => None,
    };
    if let Some((_, path)) = &relay {
        args.logfile = Some(path.clone());
    }
    std::thread::scope(|scope| {
        if !args.list {
            scope.spawn(|| judge_queue(run, queue, threads));
        }
        let _conclusion = libtest_mimic::run(&args, trials);
    });
    if let Some((relay, _)) = relay {
        relay.finish();
    }
    if let Some((progress, subscriber)) = progress {
        run.events.unsubscribe(&subscriber);
        if !run.stops.interrupted() {
            progress.complete();
        }
        progress.finish();
    }
    if let Some(dir) = libtest_log {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A rule that starts beside the quiet-store rules: a main-phase rule (its creates within the
/// room those rules leave), or one that only reads, run as one of them. It waits for their
/// first answers, or a target seen answering, before it sends.
fn beside_quiet(rule: &Rule, phase: Phase) -> bool {
    phase == Phase::Main
        || (phase == Phase::QuietStore && scheduler::phase(&rule.check) != Phase::QuietStore)
}

/// The verdict as libtest shows it: a failure that the gate does not count is shown as
/// ignored with its reason, so libtest's summary agrees with the exit code.
pub(super) fn libtest_outcome(
    verdict: &Verdict,
    gated: bool,
    excuse: Option<&str>,
    expired: Option<&str>,
) -> Result<Completion, Failed> {
    let ignored = match verdict {
        Verdict::Passed => return Ok(Completion::Completed),
        Verdict::Failed(_) if excuse.is_some() => format!(
            "{}, not gated: {}",
            excuse.unwrap_or_default(),
            verdict.message()
        ),
        Verdict::Failed(_) if gated => {
            return Err(crate::report::terminal::lines(&failure_message(verdict, expired)).into());
        }
        Verdict::Failed(_) => format!("recommended, not gated: {}", verdict.message()),
        Verdict::Inconclusive { reason } => format!("inconclusive: {reason}"),
        Verdict::Skipped { reason } => format!("skipped: {reason}"),
        Verdict::NotDecidable { reason } => format!("not decidable on this store: {reason}"),
    };
    // What a target sent is in the messages: no control character reaches the terminal.
    Ok(Completion::ignored_with(crate::report::terminal::lines(
        &ignored,
    )))
}

/// A failure's message, after the note of a known failure whose entry ran out.
fn failure_message(verdict: &Verdict, expired: Option<&str>) -> String {
    match expired {
        Some(note) => format!("{note}: {}", verdict.message()),
        None => verdict.message(),
    }
}
