//! Stateful sequences: proptest generates short sequences of createPet, getPet and listPets
//! (with `status` and `limit`), runs them against the target, and checks each answer against
//! a model of the store restricted to the pets this sequence created (a shared staging store
//! holds others): read-your-writes, filters agree with the model, ids never reused. A failing
//! sequence shrinks to a minimal one, reported step by step with a curl line per step.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::get_pet;
use crate::contract::{PET_STATUSES, SchemaName};
use crate::engine::ctx::RuleCtx;
use crate::engine::{expect, property};
use crate::generation;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Checked, Exchange, SequenceStep, Verdict};

/// One step of a sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// createPet with this NewPet.
    Create(Value),
    /// getPet of the pet created by the n-th create of the sequence (modulo how many there
    /// were); nothing when none was created yet.
    Get(usize),
    /// listPets with these parameters.
    List {
        status: Option<String>,
        limit: Option<u8>,
    },
}

fn describe_step(step: &Step) -> String {
    match step {
        Step::Create(pet) => format!("createPet {}", generation::describe_pet(pet)),
        Step::Get(n) => format!("getPet of created pet #{n}"),
        Step::List { status, limit } => format!(
            "listPets status={} limit={}",
            status.as_deref().unwrap_or("(none)"),
            limit.map_or("(none)".into(), |l| l.to_string())
        ),
    }
}

fn describe(steps: &[Step]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(n, step)| format!("{}. {}", n + 1, describe_step(step)))
        .collect::<Vec<_>>()
        .join("; ")
}

fn strategy(ctx: &RuleCtx, max_steps: u64) -> Result<BoxedStrategy<Vec<Step>>, Verdict> {
    let prefix = ctx.pet_name("seq-");
    let categories = ctx.categories().clone();
    let pets = generation::strategy(ctx.new_pet_schema())
        .map_err(|e| Verdict::skipped(e.to_string()))?
        .prop_map(move |pet| {
            Step::Create(categories.apply(generation::with_prefix(&pet, &prefix)))
        });
    let statuses: Vec<String> = PET_STATUSES.iter().map(|s| s.to_string()).collect();
    let list = (
        proptest::option::of(proptest::sample::select(statuses)),
        proptest::option::of(1u8..=100),
    )
        .prop_map(|(status, limit)| Step::List { status, limit });
    let step = prop_oneof![2 => pets, 2 => (0usize..8).prop_map(Step::Get), 2 => list];
    let length = max_steps.max(1) as usize;
    Ok(proptest::collection::vec(step, 1..=length).boxed())
}

/// What the sequence has seen so far: each step's exchange, for the report.
struct Transcript {
    steps: Vec<(String, Exchange)>,
}

impl Transcript {
    fn fail(self, verdict: Verdict) -> Verdict {
        let steps = self
            .steps
            .into_iter()
            .map(|(what, exchange)| SequenceStep { what, exchange })
            .collect();
        verdict.with_steps(steps)
    }
}

/// Runs one sequence against the target and its model, in waves: a wave is the longest run of
/// steps in which no read follows a create, so every read waits for the creates before it and
/// nothing else. A wave's requests go out at once (one round trip); a create may then be
/// answered before a read that comes earlier in the sequence, which the model allows for: a
/// read is judged only on the pets created before it. The answers are judged in the
/// sequence's order, and the first failure ends it.
fn run_sequence(ctx: &RuleCtx, steps: &[Step]) -> Checked {
    let mut created: Vec<Value> = Vec::new();
    let mut transcript = Transcript { steps: Vec::new() };
    for wave in waves(steps) {
        let specs: Vec<Option<RequestSpec>> =
            wave.clone().map(|n| request(&steps[n], &created)).collect();
        let sent: Vec<RequestSpec> = specs.iter().flatten().cloned().collect();
        let mut answers = ctx.send_all(&sent).into_iter();
        for (n, spec) in wave.zip(specs) {
            let Some(exchange) = spec.and_then(|_| answers.next()) else {
                continue; // a getPet before any pet was created: nothing to ask
            };
            let what = format!("{}. {}", n + 1, describe_step(&steps[n]));
            transcript.steps.push((what, exchange.evidence()));
            if let Err(verdict) = judge(ctx, &steps[n], &exchange, &mut created) {
                return Err(match verdict {
                    failed @ Verdict::Failed(_) => transcript.fail(failed),
                    other => other,
                });
            }
        }
    }
    Ok(())
}

/// The steps of a sequence cut into waves: a new wave starts at a read that follows a create.
fn waves(steps: &[Step]) -> Vec<std::ops::Range<usize>> {
    let mut waves = Vec::new();
    let mut start = 0;
    for n in 1..steps.len() {
        let read = !matches!(steps[n], Step::Create(_));
        if read && matches!(steps[n - 1], Step::Create(_)) {
            waves.push(start..n);
            start = n;
        }
    }
    if start < steps.len() {
        waves.push(start..steps.len());
    }
    waves
}

/// A step's request, given the pets created before it; `None` for a getPet with none.
fn request(step: &Step, created: &[Value]) -> Option<RequestSpec> {
    match step {
        Step::Create(pet) => Some(RequestSpec::post("/pets", Body::Json(pet.clone()))),
        Step::Get(n) => {
            let pet = created.get(n % created.len().max(1))?;
            let id = expect::pet_id(pet).unwrap_or_default();
            Some(RequestSpec::get(format!("/pets/{id}")))
        }
        Step::List { status, limit } => {
            let mut spec = RequestSpec::get("/pets");
            if let Some(status) = status {
                spec = spec.query("status", status.clone());
            }
            if let Some(limit) = limit {
                spec = spec.query("limit", limit.to_string());
            }
            Some(spec)
        }
    }
}

/// Judges a step's answer against the model: the pets created before it.
fn judge(ctx: &RuleCtx, step: &Step, exchange: &Exchange, created: &mut Vec<Value>) -> Checked {
    match step {
        Step::Create(_) => {
            expect::status(exchange, &[201], "201 (the animal was added)")?;
            let answered = expect::body(ctx.contract(), exchange, SchemaName::Pet)?.clone();
            let id = expect::pet_id(&answered);
            if let Some(earlier) = created.iter().find(|p| expect::pet_id(p) == id) {
                return Err(Verdict::failed(
                    "a new id for every pet created",
                    format!("the id of {earlier} was given again: {answered}"),
                    exchange,
                ));
            }
            created.push(answered);
        }
        Step::Get(n) => {
            let pet = &created[n % created.len().max(1)];
            expect::status(
                exchange,
                &[200],
                "200 with the pet created earlier in the sequence",
            )?;
            let fetched = expect::body(ctx.contract(), exchange, SchemaName::Pet)?;
            get_pet::same_pet(pet, fetched, exchange)?;
        }
        Step::List { status, limit } => {
            let pets = expect::listing(exchange)?;
            let max = limit.map_or(20, usize::from);
            if pets.len() > max {
                return Err(Verdict::failed(
                    format!("at most {max} pets"),
                    format!("{} pets", pets.len()),
                    exchange,
                ));
            }
            for listed in pets {
                if let Some(status) = status
                    && listed.get("status").and_then(Value::as_str) != Some(status.as_str())
                {
                    return Err(Verdict::failed(
                        format!("only pets whose status is {status}"),
                        format!("{listed} is listed"),
                        exchange,
                    ));
                }
                let id = expect::pet_id(listed);
                if let Some(mine) = created.iter().find(|p| expect::pet_id(p) == id) {
                    get_pet::same_pet(mine, listed, exchange)?;
                }
            }
        }
    }
    Ok(())
}

/// Random sequences of createPet, getPet and listPets agree with a model of the pets they
/// created.
pub fn read_your_writes(ctx: &RuleCtx, max_steps: u64) -> Checked {
    let strategy = strategy(ctx, max_steps)?;
    property::check_all(
        ctx,
        Vec::new(),
        strategy,
        |steps| describe(steps),
        |steps| run_sequence(ctx, steps),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wave_ends_where_a_read_follows_a_create() {
        let create = || Step::Create(Value::Null);
        let list = || Step::List {
            status: None,
            limit: None,
        };
        let steps = [
            list(),
            Step::Get(0),
            create(),
            create(),
            Step::Get(1),
            list(),
            create(),
            list(),
        ];
        assert_eq!(waves(&steps), vec![0..4, 4..7, 7..8]);
        assert_eq!(waves(&[create(), create()]), vec![0..2]);
        assert_eq!(waves(&[]), Vec::<std::ops::Range<usize>>::new());
    }
}
