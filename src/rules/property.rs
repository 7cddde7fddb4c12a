//! Property rules: fixed boundary cases first, then proptest-generated cases from the rule's
//! seed; a failing generated case is shrunk (each step a real request) to a minimal one.

use std::cell::RefCell;
use std::fmt::Debug;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde::Serialize;

use super::{Checked, Failure, RuleCtx, Verdict};

/// The failing input as first found, and as shrunk.
#[derive(Debug, Clone, Serialize)]
pub struct Counterexample {
    pub original: String,
    pub minimal: String,
    pub shrink_steps: u32,
    /// "boundary" for a fixed boundary case, "generated" for a proptest case.
    pub phase: &'static str,
}

/// Shrinking stops after this many steps; each step is one or two requests.
const MAX_SHRINK_STEPS: u32 = 1024;

/// A deterministic RNG for proptest from a 64-bit seed.
pub fn rng_for(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    let mut state = seed;
    for chunk in bytes.chunks_mut(8) {
        state = splitmix64(state);
        chunk.copy_from_slice(&state.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Progress {
    first: Option<String>,
    last_failure: Option<(String, Box<Failure>)>,
    steps_after_first: u32,
    last_undecided: Option<String>,
}

/// Runs `case` on every boundary value, then on `ctx.run.cases` generated values.
pub fn check_all<T, S>(
    ctx: &RuleCtx,
    boundary: Vec<T>,
    strategy: S,
    describe: impl Fn(&T) -> String,
    case: impl Fn(&T) -> Checked,
) -> Checked
where
    T: Clone + Debug,
    S: Strategy<Value = T>,
{
    for value in &boundary {
        ctx.case_done();
        match case(value) {
            Ok(()) => {}
            Err(Verdict::Failed(mut failure)) => {
                failure.counterexample = Some(Counterexample {
                    original: describe(value),
                    minimal: describe(value),
                    shrink_steps: 0,
                    phase: "boundary",
                });
                return Err(Verdict::Failed(failure));
            }
            Err(other) => return Err(other),
        }
    }
    let config = Config {
        cases: ctx.run.cases,
        max_shrink_iters: MAX_SHRINK_STEPS,
        max_global_rejects: ctx.run.cases.saturating_mul(2).max(8),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, rng_for(ctx.seed));
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
                progress.last_failure = Some((description, failure));
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
    match result {
        Ok(()) => Ok(()),
        Err(TestError::Fail(_, minimal)) => {
            let (description, mut failure) = progress
                .last_failure
                .unwrap_or_else(|| (describe(&minimal), Box::new(empty_failure())));
            failure.counterexample = Some(Counterexample {
                original: progress.first.unwrap_or_else(|| description.clone()),
                minimal: description,
                shrink_steps: progress.steps_after_first,
                phase: "generated",
            });
            Err(Verdict::Failed(failure))
        }
        Err(TestError::Abort(reason)) => Err(Verdict::inconclusive(format!(
            "too many generated cases could not be decided ({reason}); last: {}",
            progress.last_undecided.unwrap_or_default()
        ))),
    }
}

fn empty_failure() -> Failure {
    Failure {
        expected: "the property holds".into(),
        observed: "a failing case".into(),
        exchange: None,
        counterexample: None,
    }
}
