//! A property rule's cases as proptest draws them: from the rule's seed, each case's tree
//! drawn again from its own seed to shrink it, a failing value shrunk one request after
//! another, and sent again before it is reported.

use proptest::prelude::RngCore;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, Reason, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use crate::engine::ctx::RuleCtx;
use crate::outcome::{CasePhase, Checked, Counterexample, Failure, Verdict};

/// Shrinking stops after this many steps; each step is one or two requests. They are the
/// rule's in all: its first failure takes what it needs, later distinct failures share what
/// is left, each at most [`MAX_MORE_SHRINK_STEPS`] (on a target that fails everything, ten
/// distinct failures would otherwise cost ten chains of sequential requests).
pub(super) const MAX_SHRINK_STEPS: u32 = 1024;
pub(super) const MAX_MORE_SHRINK_STEPS: u32 = 256;

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

/// What a case's value tree is drawn from: the tree can be drawn again from it (to shrink a
/// failing case) rather than kept for every case in flight.
pub(super) type CaseSeed = [u8; 32];

/// The next case's seed and value tree, drawn as proptest's own runner draws it (a fresh
/// ChaCha RNG per case, seeded from the runner's), so that a seed gives the values it gave
/// before cases were judged concurrently: a seed in an old report still names the same cases.
fn next_tree<S: Strategy>(
    runner: &mut TestRunner,
    strategy: &S,
) -> (CaseSeed, Result<S::Tree, Reason>) {
    let mut seed = [0u8; 32];
    for byte in &mut seed {
        *byte = runner.rng().next_u32() as u8;
    }
    (seed, tree_of(runner, &seed, strategy))
}

pub(super) fn tree_of<S: Strategy>(
    runner: &mut TestRunner,
    seed: &CaseSeed,
    strategy: &S,
) -> Result<S::Tree, Reason> {
    *runner.rng() = TestRng::from_seed(RngAlgorithm::ChaCha, seed);
    strategy.new_tree(runner)
}

/// The runner that draws a rule's cases; another one draws a case's tree again.
pub(super) fn runner_config() -> Config {
    Config {
        failure_persistence: None,
        ..Config::default()
    }
}

/// `wanted` cases from `strategy`: each one's value and seed. Its tree (many times the value:
/// every element's shrink state) is let go at once and drawn again if the case fails. A value
/// the strategy rejects counts against `max_rejects`, past which fewer come back.
pub(super) fn generate<T, S: Strategy<Value = T>>(
    runner: &mut TestRunner,
    strategy: &S,
    wanted: u32,
    (rejects, max_rejects): (&mut u32, u32),
    last_undecided: &mut Option<String>,
) -> (Vec<T>, Vec<CaseSeed>) {
    let mut values = Vec::with_capacity(wanted as usize);
    let mut seeds = Vec::with_capacity(wanted as usize);
    while values.len() < wanted as usize {
        match next_tree(runner, strategy) {
            (seed, Ok(tree)) => {
                values.push(tree.current());
                seeds.push(seed);
            }
            (_, Err(reason)) => {
                *rejects += 1;
                *last_undecided = Some(reason.to_string());
                if *rejects > max_rejects {
                    break;
                }
            }
        }
    }
    (values, seeds)
}

pub(super) fn with_counterexample(
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

/// How many times a failing value is sent again, so the report can say whether its failure
/// shows again. Re-sending never decides the verdict: a complete exchange that contradicts the
/// contract is evidence whether or not it happens again (a fault that depends on the store's
/// state, every second id reused, a write lost under load, may well not).
const RESENDS: u32 = 3;

/// A failing value, sent again before it is reported: a failure that does not show again is
/// still a failure, marked intermittent. A re-send that fails, or gives no evidence either way
/// (not sent, cut, throttled), leaves it as it is.
pub(super) fn confirm<T>(
    ctx: &RuleCtx,
    value: &T,
    mut failure: Box<Failure>,
    case: &impl Fn(&T) -> Checked,
) -> Box<Failure> {
    let _resending = crate::engine::resending::Resending::start();
    for _ in 0..RESENDS {
        ctx.case_done();
        if case(value).is_err() {
            return failure;
        }
    }
    failure.intermittent = Some(format!(
        "failed once, then passed each of the {RESENDS} times it was sent again"
    ));
    failure
}

/// Shrinks a failing generated value, one request after another: a simpler value that still
/// fails is kept and simplified further; one that passes (or cannot be decided) is made a
/// little less simple. Returns the minimal failing value, its failure and the steps taken.
pub(super) fn shrink<T>(
    ctx: &RuleCtx,
    mut tree: impl ValueTree<Value = T>,
    failure: Box<Failure>,
    case: &impl Fn(&T) -> Checked,
    max_steps: u32,
) -> (T, Box<Failure>, u32) {
    // A simpler value counts as still failing only the same way: shrinking one distinct
    // failure must not wander into another.
    let key = failure.class_key();
    let mut minimal = (tree.current(), failure);
    let mut steps = 0;
    if !tree.simplify() {
        return (minimal.0, minimal.1, steps);
    }
    while steps < max_steps {
        let value = tree.current();
        steps += 1;
        ctx.case_done();
        match case(&value) {
            Err(Verdict::Failed(failure)) if failure.class_key() == key => {
                minimal = (value, failure);
                if !tree.simplify() {
                    break;
                }
            }
            _ => {
                if !tree.complicate() {
                    break;
                }
            }
        }
    }
    (minimal.0, minimal.1, steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_drawn_again_from_its_seed_is_the_case_drawn() {
        // A filter rejects draws through the runner: the case drawn again takes the same path.
        let strategy = proptest::collection::vec("[a-z]{0,8}", 0..6)
            .prop_filter("not two alike", |v| v.first() != v.last() || v.len() < 2);
        let mut runner = TestRunner::new_with_rng(runner_config(), rng_for(7));
        for _ in 0..200 {
            let (seed, tree) = next_tree(&mut runner, &strategy);
            let tree = tree.unwrap();
            let again = &mut TestRunner::new_with_rng(runner_config(), rng_for(0));
            let mut drawn_again = tree_of(again, &seed, &strategy).unwrap();
            assert_eq!(drawn_again.current(), tree.current());
            // It shrinks as the first tree would have.
            let mut tree = tree;
            assert_eq!(drawn_again.simplify(), tree.simplify());
            assert_eq!(drawn_again.current(), tree.current());
        }
    }
}
