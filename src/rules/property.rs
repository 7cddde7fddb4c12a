//! Property rules: pinned cases first (saved regressions, then the boundary values), then
//! proptest-generated cases from the rule's seed. A failing generated case is shrunk, each step
//! a real request, to a minimal one; a pinned failure does not stop the search, because a
//! generated failure can be shrunk and a pinned one cannot.

use std::cell::RefCell;
use std::fmt::Debug;
use std::time::Instant;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Checked, Failure, RuleCtx, Verdict};
use crate::outcome::{CasePhase, Counterexample};

/// Shrinking stops after this many steps; each step is one or two requests.
const MAX_SHRINK_STEPS: u32 = 1024;

/// Generated cases run in batches of this size when a time budget is set, so that the budget
/// is checked between batches.
const BATCH: u32 = 16;

/// A deterministic RNG for proptest from a 64-bit seed.
pub fn rng_for(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    let mut state = seed;
    for chunk in bytes.chunks_mut(8) {
        state = crate::seed::splitmix64(state);
        chunk.copy_from_slice(&state.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

struct Progress {
    first: Option<String>,
    last_failure: Option<(String, Value, Box<Failure>)>,
    steps_after_first: u32,
    last_undecided: Option<String>,
}

fn with_counterexample(
    mut failure: Box<Failure>,
    original: String,
    minimal: String,
    minimal_value: Value,
    shrink_steps: u32,
    phase: CasePhase,
) -> Verdict {
    failure.counterexample = Some(Counterexample {
        original,
        minimal,
        shrink_steps,
        phase,
        minimal_value,
    });
    Verdict::Failed(failure)
}

/// Runs `case` on the rule's saved regressions, on every boundary value, then on generated
/// values until `ctx.run.cases` have run or the run's time budget is spent.
pub fn check_all<T, S>(
    ctx: &RuleCtx,
    boundary: Vec<T>,
    strategy: S,
    describe: impl Fn(&T) -> String,
    case: impl Fn(&T) -> Checked,
) -> Checked
where
    T: Clone + Debug + Serialize + DeserializeOwned,
    S: Strategy<Value = T>,
{
    let regressions: Vec<T> = ctx
        .run
        .regressions_for(&ctx.rule.id)
        .into_iter()
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect();
    let pinned = regressions
        .into_iter()
        .map(|value| (CasePhase::Regression, value))
        .chain(
            boundary
                .into_iter()
                .map(|value| (CasePhase::Boundary, value)),
        );
    let mut pinned_failure: Option<Verdict> = None;
    let mut last_undecided: Option<String> = None;
    let mut undecided = 0u32;
    let mut decided = 0u32;
    for (phase, value) in pinned {
        ctx.case_done();
        match case(&value) {
            Ok(()) => decided += 1,
            Err(Verdict::Failed(failure)) => {
                decided += 1;
                if pinned_failure.is_none() {
                    let description = describe(&value);
                    let data = serde_json::to_value(&value).unwrap_or(Value::Null);
                    pinned_failure = Some(with_counterexample(
                        failure,
                        description.clone(),
                        description,
                        data,
                        0,
                        phase,
                    ));
                }
            }
            Err(other) => {
                undecided += 1;
                last_undecided = Some(other.message());
            }
        }
    }

    let total = ctx.run.cases;
    let batch = if ctx.run.deadline.is_some() {
        BATCH
    } else {
        total.max(1)
    };
    let mut done = 0u32;
    let mut batch_index = 0u64;
    while done < total {
        if ctx
            .run
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            break;
        }
        let cases = batch.min(total - done);
        let config = Config {
            cases,
            max_shrink_iters: MAX_SHRINK_STEPS,
            // Undecided cases (the target gave nothing to check) are replaced by new ones, up to a
            // point: a target that leaves most cases undecided gets an inconclusive verdict.
            max_global_rejects: cases.saturating_mul(8).max(32),
            failure_persistence: None,
            ..Config::default()
        };
        let seed = if batch_index == 0 {
            ctx.seed
        } else {
            crate::seed::splitmix64(ctx.seed ^ batch_index)
        };
        let mut runner = TestRunner::new_with_rng(config, rng_for(seed));
        let progress = RefCell::new(Progress {
            first: None,
            last_failure: None,
            steps_after_first: 0,
            last_undecided: None,
        });
        let result = runner.run(&strategy, |value| {
            ctx.case_done();
            let outcome = case(&value);
            let mut progress = progress.borrow_mut();
            if progress.first.is_some() {
                progress.steps_after_first += 1;
            }
            match outcome {
                Ok(()) => Ok(()),
                Err(Verdict::Failed(failure)) => {
                    let description = describe(&value);
                    let message = format!("{}; observed {}", failure.expected, failure.observed);
                    if progress.first.is_none() {
                        progress.first = Some(description.clone());
                    }
                    let data = serde_json::to_value(&value).unwrap_or(Value::Null);
                    progress.last_failure = Some((description, data, failure));
                    Err(TestCaseError::fail(message))
                }
                Err(other) => {
                    let reason = other.message();
                    progress.last_undecided = Some(reason.clone());
                    Err(TestCaseError::reject(reason))
                }
            }
        });
        let progress = progress.into_inner();
        last_undecided = progress.last_undecided.or(last_undecided);
        match result {
            Ok(()) => decided += cases,
            Err(TestError::Fail(_, _)) => {
                if let Some((description, data, failure)) = progress.last_failure {
                    let original = progress.first.unwrap_or_else(|| description.clone());
                    return Err(with_counterexample(
                        failure,
                        original,
                        description,
                        data,
                        progress.steps_after_first,
                        CasePhase::Generated,
                    ));
                }
            }
            Err(TestError::Abort(reason)) => {
                if pinned_failure.is_none() {
                    return Err(Verdict::inconclusive(format!(
                        "too many generated cases could not be decided ({reason}); last: {}",
                        last_undecided.unwrap_or_default()
                    )));
                }
                break;
            }
        }
        done += cases;
        batch_index += 1;
    }
    if let Some(failure) = pinned_failure {
        return Err(failure);
    }
    if decided == 0 && undecided > 0 {
        return Err(Verdict::inconclusive(format!(
            "no case could be decided; the last: {}",
            last_undecided.unwrap_or_else(|| "no reason given".into())
        )));
    }
    Ok(())
}
