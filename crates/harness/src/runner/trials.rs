//! The judge stage: the selected rules as libtest-mimic trials, phase by phase (a quiet store first,
//! the rules that must run last last), each trial's verdict kept for the tally.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use libtest_mimic::{Completion, Failed, Trial};

pub use super::error::RunError;
use super::known::KnownFailures;
use super::progress::Progress;
use super::settings::{DEFAULT_TEST_THREADS, RunConfig};
use crate::catalogue::{Catalogue, Rule};
use crate::engine::ctx::RuleCtx;
use crate::engine::events::{Event, Judged, Judgement, Subscriber};
use crate::engine::run::Run;
use crate::engine::scheduler::{self, Phase};
use crate::outcome::Verdict;
use crate::report::READ_ONLY_SKIP;
use crate::rules;

/// What the trials hand back: one slot per catalogue rule, `None` when not selected.
pub(super) type Results = Vec<Option<Judgement>>;

/// The judgements of a run's rules, each in its catalogue slot, as the event stream tells them.
struct Collected(Mutex<Results>);

impl Subscriber for Collected {
    fn on(&self, event: &Event<'_>) {
        if let Event::VerdictReached(judged) = event
            && let Some(slot) = self
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(judged.index)
        {
            *slot = Some(judged.judgement.clone());
        }
    }
}

/// What every trial of a run shares: the run, whose scheduler holds the phases.
struct Shared {
    run: Arc<Run>,
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
    let shared = Shared {
        run: Arc::clone(run),
    };
    let collected = Arc::new(Collected(Mutex::new(
        (0..catalogue.rules.len()).map(|_| None).collect(),
    )));
    let collector: Arc<dyn Subscriber> = collected.clone();
    run.events.subscribe(Arc::clone(&collector));
    let mut trials = Vec::new();
    let mut remaining = [0usize; 3];
    let mut quiet_unanswered = 0;
    for (index, rule, phase) in in_order(catalogue, run) {
        // Another shard's rule is not this run's: not selected, as a filter leaves it.
        if shard.is_some_and(|shard| !super::shards::takes(shard, &rule.id)) {
            continue;
        }
        let trial = trial(&shared, (index, rule, phase), config, known, &today);
        if !args.is_filtered_out(&trial) && !args.is_ignored(&trial) {
            remaining[match phase {
                Phase::QuietStore => 0,
                Phase::Main => 1,
                Phase::Last => 2,
            }] += 1;
            if scheduler::phase(&rule.check) == Phase::QuietStore {
                quiet_unanswered += 1;
            }
        }
        trials.push(trial);
    }
    run.scheduler.select(remaining, quiet_unanswered);
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
    if remaining.iter().sum::<usize>() == 0
        && !args.list
        && shard.is_none_or(|s| s.selected.is_empty())
    {
        return Err(RunError::Config(format!(
            "no rule matches the filter {:?} (skip {:?}); `petstore-conformance run --list` lists the rule ids",
            args.filter.as_deref().unwrap_or(""),
            args.skip
        )));
    }
    let rules = remaining.iter().sum::<usize>() as u64;
    run_libtest(config, args, trials, &shared, rules);
    run.events.unsubscribe(&collector);
    if config.libtest.list {
        return Ok(None);
    }
    Ok(Some(std::mem::take(
        &mut *collected.0.lock().unwrap_or_else(|e| e.into_inner()),
    )))
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
            *index,
        )
    });
    ordered
}

/// One rule as a trial: it waits for the earlier phases, is judged, and leaves its result in
/// its slot (and its line on the progress bar).
fn trial(
    shared: &Shared,
    (index, rule, phase): (usize, &Rule, Phase),
    config: &RunConfig,
    known: &KnownFailures,
    today: &str,
) -> Trial {
    let run = Arc::clone(&shared.run);
    let rule_owned = rule.clone();
    let gates = config.options.gate.gates(rule.level);
    // A failure on the known list shows as such, not as a failure, while it lasts.
    let excuse = known
        .get(&rule.id)
        .filter(|entry| !entry.expired(today))
        .map(|entry| format!("known failure ({})", entry.reason));
    // One that ran out gates again, and its failure says why it is back.
    let expired = known
        .get(&rule.id)
        .filter(|entry| entry.expired(today))
        .map(|entry| entry.expired_note());
    Trial::ignorable_test(rule.id.clone(), move || {
        run.scheduler.wait_for_earlier_phases(phase);
        let judgement = judge_rule(&run, &rule_owned, phase);
        let outcome = libtest_outcome(
            &judgement.verdict,
            gates,
            excuse.as_deref(),
            expired.as_deref(),
        );
        run.events.emit(&Event::VerdictReached(&Judged {
            index,
            rule: &rule_owned,
            judgement: &judgement,
            gated: gates && excuse.is_none(),
            known: excuse.is_some(),
            message: &failure_message(&judgement.verdict, expired.as_deref()),
        }));
        run.scheduler.judged(phase);
        outcome
    })
    .with_kind(rule.level.as_str())
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

/// libtest runs the trials: on a terminal under a progress bar (libtest's lines go to a file,
/// then away), off one through a relay (a reader that goes away costs the lines, not the run).
fn run_libtest(
    config: &RunConfig,
    mut args: libtest_mimic::Arguments,
    trials: Vec<Trial>,
    shared: &Shared,
    rules: u64,
) {
    let run = &shared.run;
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
    let _conclusion = libtest_mimic::run(&args, trials);
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

/// A main-phase rule that runs beside the quiet-store rules (it only reads).
fn beside_quiet(rule: &Rule, phase: Phase) -> bool {
    phase == Phase::QuietStore && scheduler::phase(&rule.check) != Phase::QuietStore
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
