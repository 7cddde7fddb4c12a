//! Property rules: pinned cases first (saved regressions, then the boundary values), then
//! proptest-generated cases from the rule's seed. A failing generated case is shrunk, each step
//! a real request, to a minimal one; a pinned failure does not stop the search, because a
//! generated failure can be shrunk and a pinned one cannot. Before it is reported, a failing
//! value is sent again, so the report can say whether it shows again (intermittent); it is a
//! failure either way.
//!
//! Cases are independent requests, so a batch of them is judged on several workers at once
//! (the run's `--concurrency`): against a remote target the rule then costs a round trip per
//! batch, not per case. The values of a batch are drawn one after another from the rule's
//! seed before any is sent, so a seed sends the same set of requests at any concurrency, and
//! `--concurrency 1` sends them in exactly that order. Shrinking is a chain of dependent
//! requests and stays sequential.

mod cases;
mod distinct;

use std::fmt::Debug;
use std::time::Instant;

use proptest::strategy::Strategy;
use proptest::test_runner::TestRunner;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ctx::RuleCtx;
use crate::outcome::{CasePhase, Checked, Failure, MAX_DISTINCT_FAILURES, Verdict};
use cases::{
    CaseSeed, MAX_MORE_SHRINK_STEPS, MAX_SHRINK_STEPS, confirm, generate, rng_for, runner_config,
    shrink, tree_of, with_counterexample,
};
use distinct::{Distinct, input_class};

/// Generated cases are drawn and judged in batches of at least this size when a time budget
/// is set, so that the budget is checked between batches.
const BATCH: u32 = 16;

/// Under a time budget, the first batch of a rule: as many cases as a run without a budget
/// judges by default.
const FIRST_BATCH: u32 = 32;

pub use super::workers::SentAhead;
pub(crate) use super::workers::judge_all;

/// Runs `case` on the rule's saved regressions, on every boundary value, then on generated
/// values until `ctx.run.cases` have run or the run's time budget is spent. Every distinct
/// failure (another answer, or an input of another class) is kept with its own shrunk
/// counterexample, up to [`MAX_DISTINCT_FAILURES`]; the first generated one comes first, as
/// the one failure reported before there were several.
pub fn check_all<T, S>(
    ctx: &RuleCtx,
    boundary: Vec<T>,
    strategy: S,
    describe: impl Fn(&T) -> String,
    case: impl Fn(&T) -> Checked + Sync,
) -> Checked
where
    T: Clone + Debug + Serialize + DeserializeOwned + Send + Sync,
    S: Strategy<Value = T>,
{
    check(ctx, (boundary, strategy), describe, None, case)
}

/// [`check_all`] for cases whose requests are known before they run (`ahead`): each batch's
/// go ahead at once, and a case judges what came back (see
/// `workers::judge_all`). A case shrunk or confirmed sends its own.
pub fn check_all_sent_ahead<T, S>(
    ctx: &RuleCtx,
    boundary: Vec<T>,
    strategy: S,
    describe: impl Fn(&T) -> String,
    ahead: SentAhead<T>,
    case: impl Fn(&T) -> Checked + Sync,
) -> Checked
where
    T: Clone + Debug + Serialize + DeserializeOwned + Send + Sync,
    S: Strategy<Value = T>,
{
    check(ctx, (boundary, strategy), describe, Some(ahead), case)
}

fn check<T, S>(
    ctx: &RuleCtx,
    (boundary, strategy): (Vec<T>, S),
    describe: impl Fn(&T) -> String,
    ahead: Option<SentAhead<T>>,
    case: impl Fn(&T) -> Checked + Sync,
) -> Checked
where
    T: Clone + Debug + Serialize + DeserializeOwned + Send + Sync,
    S: Strategy<Value = T>,
{
    let pinned = pinned_cases(ctx, boundary);
    let mut search = Search::new(ctx, strategy);
    // The first batch of generated values is judged together with the pinned ones: a remote
    // target answers both within the chain of one.
    let first = search.first_batch();
    let mut all_values: Vec<T> = pinned.iter().map(|(_, value)| value.clone()).collect();
    all_values.extend(first.0.iter().cloned());
    let mut pinned_verdicts = judge_all(ctx, &all_values, ahead, &case);
    let first_verdicts = pinned_verdicts.split_off(pinned.len());
    drop(all_values);
    search.judge_pinned(&pinned, pinned_verdicts, &describe, &case);
    let first = (first.0, first.1, first_verdicts);
    search.generated_cases(first, &describe, (ahead, &case))?;
    search.conclude()
}

/// The rule's pinned cases, in the order they are tried: its saved regressions (those that
/// still read as a value of the rule), then the boundary values.
fn pinned_cases<T: DeserializeOwned>(ctx: &RuleCtx, boundary: Vec<T>) -> Vec<(CasePhase, T)> {
    let regressions: Vec<T> = ctx
        .saved_values()
        .into_iter()
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect();
    regressions
        .into_iter()
        .map(|value| (CasePhase::Regression, value))
        .chain(
            boundary
                .into_iter()
                .map(|value| (CasePhase::Boundary, value)),
        )
        .collect()
}

/// A value as data, for its input class and a saved counterexample.
fn as_data<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Generated values, their seeds and their verdicts, in the order drawn.
type Judged<T> = (Vec<T>, Vec<CaseSeed>, Vec<Checked>);

/// One property rule's search: how many cases it generates and in what batches, what it has
/// decided so far, and the distinct failures its pinned and its generated cases found.
struct Search<'c, S> {
    ctx: &'c RuleCtx<'c>,
    strategy: S,
    runner: TestRunner,
    /// Generated cases per rule (`--cases`), and the batch drawn before the budget is checked.
    total: u32,
    batch: u32,
    /// Under a budget, the batch after the first: one value per worker.
    large_batch: u32,
    budget: bool,
    /// Undecided cases (the target gave nothing to check) are replaced by new ones, up to a
    /// point: a target that leaves most cases undecided gets an inconclusive verdict.
    rejects: u32,
    max_rejects: u32,
    last_undecided: Option<String>,
    decided: u32,
    undecided: u32,
    pinned: Distinct,
    generated: Distinct,
}

impl<'c, T, S> Search<'c, S>
where
    T: Clone + Debug + Serialize + Send + Sync,
    S: Strategy<Value = T>,
{
    fn new(ctx: &'c RuleCtx<'c>, strategy: S) -> Self {
        let total = if super::scheduler::stores_every_case(ctx.rule) {
            ctx.run.storing_cases
        } else {
            ctx.run.cases
        };
        // Under a budget: a first batch as large as a default run's, then batches of one value
        // per worker, once every rule has had its first pass. A rule holds no more generated
        // values (and their shrink trees) than it can send at once: at eight per worker, a 5 s
        // budget peaked at 146 MB resident, at one 63 MB, for a tenth fewer requests.
        let budget = ctx.run.deadline.is_some();
        let batch = if budget { FIRST_BATCH } else { total.max(1) };
        Search {
            ctx,
            strategy,
            runner: TestRunner::new_with_rng(runner_config(), rng_for(ctx.seed)),
            total,
            batch,
            large_batch: BATCH.max(u32::try_from(ctx.run.concurrency).unwrap_or(u32::MAX)),
            budget,
            rejects: 0,
            max_rejects: total.min(batch).saturating_mul(8).max(32),
            last_undecided: None,
            decided: 0,
            undecided: 0,
            pinned: Distinct::default(),
            generated: Distinct::default(),
        }
    }

    /// Past the time budget, or, for a rule that creates pets, past the pets the run may
    /// create under it (`--max-pets`): the rule's search ends there, its cases so far judged.
    fn past_deadline(&self) -> bool {
        self.ctx
            .run
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
            || (self.ctx.rule.writes && self.ctx.run.out_of_pets())
    }

    /// `wanted` generated values and their seeds, drawn from the rule's runner.
    fn draw(&mut self, wanted: u32) -> (Vec<T>, Vec<CaseSeed>) {
        generate(
            &mut self.runner,
            &self.strategy,
            wanted,
            (&mut self.rejects, self.max_rejects),
            &mut self.last_undecided,
        )
    }

    /// The first batch of generated values (none past the deadline).
    fn first_batch(&mut self) -> (Vec<T>, Vec<CaseSeed>) {
        let wanted = if self.past_deadline() {
            0
        } else {
            self.batch.min(self.total)
        };
        self.draw(wanted)
    }

    /// The pinned cases' verdicts: each distinct failure kept, confirmed, as its own
    /// counterexample (a pinned value is not shrunk).
    fn judge_pinned(
        &mut self,
        pinned: &[(CasePhase, T)],
        verdicts: Vec<Checked>,
        describe: &impl Fn(&T) -> String,
        case: &impl Fn(&T) -> Checked,
    ) {
        for ((phase, value), verdict) in pinned.iter().zip(verdicts) {
            match verdict {
                Ok(()) => self.decided += 1,
                Err(Verdict::Failed(failure)) => {
                    self.decided += 1;
                    let key = failure.class_key();
                    let data = as_data(value);
                    let input = input_class(&data);
                    if self.pinned.full() || self.pinned.covers(&key, &input) {
                        continue;
                    }
                    let description = describe(value);
                    let failure = confirm(self.ctx, value, failure, case);
                    if let Verdict::Failed(failure) = with_counterexample(
                        failure,
                        description.clone(),
                        description,
                        data,
                        0,
                        *phase,
                    ) {
                        self.pinned.add(key, input, failure);
                    }
                }
                Err(other) => {
                    self.undecided += 1;
                    self.last_undecided = Some(other.message());
                }
            }
        }
    }

    /// Generated values, batch by batch, until `total` have run, the deadline passed, or too
    /// many could not be decided; `first` is the batch already judged with the pinned cases.
    fn generated_cases(
        &mut self,
        first: Judged<T>,
        describe: &impl Fn(&T) -> String,
        (ahead, case): (Option<SentAhead<T>>, &(impl Fn(&T) -> Checked + Sync)),
    ) -> Result<(), Verdict> {
        let mut prejudged = Some(first);
        let mut done = 0u32;
        while done < self.total {
            if self.past_deadline() {
                break;
            }
            if self.budget && done > 0 {
                self.ctx.wait_for_first_passes();
                self.batch = self.large_batch;
                if self.past_deadline() {
                    break;
                }
            }
            let mut wanted = self.batch.min(self.total - done);
            done += wanted;
            while wanted > 0 {
                let judged = match prejudged.take() {
                    Some(first) => first,
                    None => {
                        let (values, seeds) = self.draw(wanted);
                        // Under a budget, the batches after the first go case by case on the
                        // workers: sent ahead, every rule's batch of a worker's worth of
                        // creates went at once and took the --max-pets left before the
                        // rules that need a few (the poisoned creates: inconclusive).
                        let ahead = ahead.filter(|_| !self.budget);
                        let verdicts = judge_all(self.ctx, &values, ahead, case);
                        (values, seeds, verdicts)
                    }
                };
                wanted = self.judge_generated(judged, describe, case);
                // Past the budget, cases left undecided (not sent, or cut off) are not
                // replaced: the budget ended them, not the target.
                if self.past_deadline() {
                    return Ok(());
                }
                if self.rejects > self.max_rejects {
                    if self.pinned.found.is_empty() && self.generated.found.is_empty() {
                        return Err(Verdict::inconclusive(format!(
                            "too many generated cases could not be decided ({}); last: {}",
                            self.rejects,
                            self.last_undecided.take().unwrap_or_default()
                        )));
                    }
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// One batch's verdicts: its failures shrunk, each distinct one kept; returns how many of
    /// its cases could not be decided (to be replaced).
    fn judge_generated(
        &mut self,
        (values, seeds, verdicts): Judged<T>,
        describe: &impl Fn(&T) -> String,
        case: &impl Fn(&T) -> Checked,
    ) -> u32 {
        let mut undecided = 0;
        let mut failing = Vec::new();
        for (index, verdict) in verdicts.into_iter().enumerate() {
            match verdict {
                Ok(()) => self.decided += 1,
                Err(Verdict::Failed(failure)) => {
                    self.decided += 1;
                    failing.push((index, failure));
                }
                Err(other) => {
                    self.rejects += 1;
                    undecided += 1;
                    self.last_undecided = Some(other.message());
                }
            }
        }
        for (index, failure) in failing {
            if self.generated.full() || self.generated.shrunk >= MAX_DISTINCT_FAILURES {
                break;
            }
            self.shrink_failure(&values[index], &seeds[index], failure, describe, case);
        }
        undecided
    }

    /// A failing generated value, shrunk (its tree drawn again from its seed) to a minimal one
    /// that fails the same way, confirmed, and kept when its class is new.
    fn shrink_failure(
        &mut self,
        value: &T,
        seed: &CaseSeed,
        failure: Box<Failure>,
        describe: &impl Fn(&T) -> String,
        case: &impl Fn(&T) -> Checked,
    ) {
        let key = failure.class_key();
        if self.generated.covers(&key, &input_class(&as_data(value))) {
            return; // most likely the failure already found, on a richer input
        }
        let again = &mut TestRunner::new_with_rng(runner_config(), rng_for(0));
        let Ok(tree) = tree_of(again, seed, &self.strategy) else {
            return;
        };
        self.generated.shrunk += 1;
        let original = describe(value);
        let left = MAX_SHRINK_STEPS.saturating_sub(self.generated.shrink_steps);
        let max_steps = if !self.ctx.run.shrink {
            0
        } else if self.generated.found.is_empty() {
            left
        } else {
            left.min(MAX_MORE_SHRINK_STEPS)
        };
        let (minimal, failure, steps) = shrink(self.ctx, tree, failure, case, max_steps);
        self.generated.shrink_steps += steps;
        let data = as_data(&minimal);
        let input = input_class(&data);
        if self.generated.covers(&key, &input) {
            return;
        }
        let failure = confirm(self.ctx, &minimal, failure, case);
        if let Verdict::Failed(failure) = with_counterexample(
            failure,
            original,
            describe(&minimal),
            data,
            steps,
            CasePhase::Generated,
        ) {
            self.generated.add(key, input, failure);
        }
    }

    /// The rule's verdict: its distinct failures (the first generated one first, as before
    /// distinct failures were kept, then the others, then the pinned ones of a class
    /// generation did not find), or inconclusive when no case could be decided.
    fn conclude(self) -> Checked {
        let mut failures = self.generated.found;
        for (key, input, failure) in self.pinned.found {
            if !failures
                .iter()
                .any(|(k, i, _)| *k == key && i.is_subset(&input))
            {
                failures.push((key, input, failure));
            }
        }
        let failures = Distinct {
            found: failures,
            ..Distinct::default()
        }
        .into_failures();
        if let Some(verdict) = Verdict::failed_distinct(failures) {
            return Err(verdict);
        }
        if self.decided == 0 && (self.undecided > 0 || self.rejects > 0) {
            return Err(Verdict::inconclusive(format!(
                "no case could be decided; the last: {}",
                self.last_undecided
                    .unwrap_or_else(|| "no reason given".into())
            )));
        }
        Ok(())
    }
}
