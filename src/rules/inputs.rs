//! The coverage pass over the request space (`cases/request-space.json`): every case of every
//! class of an operation at a level, sent at once (one round trip), each judged as its class
//! says. What each class got is tallied for the report's request-coverage table.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::auth;
use crate::contract::Operation;
use crate::engine::coverage::Outcome;
use crate::engine::ctx::RuleCtx;
use crate::engine::{expect, property};
use crate::generation::request::Body;
use crate::generation::space::{Class, Expect};
use crate::outcome::{Checked, Exchange, Verdict, VerdictKind};

/// One case of the request space as a property rule draws it: the input, the class and the
/// case's index in it, and for createPet a generated valid NewPet to send instead of the
/// fixed one (for a case that leaves the body as it is).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drawn {
    pub input: String,
    pub class: String,
    pub case: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pet: Option<Value>,
}

/// Sends every case of every class of the rule's operation at the rule's level, all at once
/// (the deterministic coverage pass), and judges each: the rule fails on the first case (in
/// the file's order) answered otherwise than its class says; every case is tallied. For
/// createPet, the cases that leave the body as it is (a Content-Type spelling, a credential)
/// are then drawn at random with generated valid NewPets (shrunk on failure), as the other
/// property rules draw their cases.
pub fn walk(ctx: &RuleCtx) -> Checked {
    let operation = ctx.rule.operation;
    let classes = ctx.run.space.classes(operation, ctx.rule.level);
    if classes.is_empty() {
        return Err(Verdict::skipped(format!(
            "the request space has no {} class for {}",
            ctx.rule.level.as_str(),
            operation.name()
        )));
    }
    let valid = auth::request_for(ctx, operation)?;
    let mut coverage = Vec::new();
    let mut pool = Vec::new();
    for (input, class) in &classes {
        for (n, case) in class.cases.iter().enumerate() {
            let drawn = Drawn {
                input: input.input.clone(),
                class: class.class.clone(),
                case: n,
                pet: None,
            };
            if operation == Operation::CreatePet && case.body.is_none() {
                pool.push(drawn.clone());
            }
            coverage.push(drawn);
        }
    }
    let find = |drawn: &Drawn| {
        classes
            .iter()
            .find(|(input, class)| input.input == drawn.input && class.class == drawn.class)
            .and_then(|(input, class)| Some((*input, *class, class.cases.get(drawn.case)?)))
    };
    let describe = |drawn: &Drawn| match (find(drawn), &drawn.pet) {
        (Some((input, class, case)), pet) => {
            let pet = pet.as_ref().map_or(String::new(), |pet| {
                format!(" with {}", crate::generation::describe_pet(pet))
            });
            format!(
                "class {} of {}: {}{pet}",
                class.class,
                input.input,
                case.describe()
            )
        }
        (None, _) => format!("{drawn:?} (no such case in the request space)"),
    };
    let case = |drawn: &Drawn| -> Checked {
        let Some((input, class, case)) = find(drawn) else {
            return Ok(()); // a saved case the space no longer holds
        };
        let mut valid = valid.clone();
        if let Some(pet) = &drawn.pet {
            valid.body = Body::Json(pet.clone());
        }
        let name = ctx.pet_name(&format!("inputs-{}-{}", class.class, drawn.case));
        let spec = case.apply(&valid, &name, ctx.run.categories.accepted(1));
        let exchange = ctx.send(&spec);
        let key = (
            operation.name().to_string(),
            input.input.clone(),
            class.class.clone(),
        );
        let described = describe(drawn);
        // A response may echo the key: the note is redacted as a verdict is.
        let what = || {
            let note = format!("{described}: {}", exchange.summary());
            ctx.run.client.redactor().redact(&note)
        };
        match judge(ctx, operation, class.expect, &exchange) {
            Ok(()) => {
                ctx.run.input_tally.count(key, Outcome::Passed, what);
                Ok(())
            }
            Err(verdict) if verdict.kind() == VerdictKind::Failed && !unanswered(&exchange) => {
                ctx.run.input_tally.count(key, Outcome::Failed, what);
                Err(annotate(verdict, class, &described))
            }
            Err(verdict) => {
                ctx.run.input_tally.count(key, Outcome::Unanswered, what);
                Err(verdict)
            }
        }
    };
    if pool.is_empty() {
        return first_of(&coverage, &case, ctx);
    }
    let schema = &ctx.run.new_pet_schema;
    let prefix = ctx.pet_name("");
    let categories = ctx.run.categories.clone();
    let pets = crate::generation::strategy(schema).map_err(|e| Verdict::skipped(e.to_string()))?;
    let strategy = (proptest::sample::select(pool), pets).prop_map(move |(drawn, pet)| Drawn {
        pet: Some(categories.apply(crate::generation::with_prefix(&pet, &prefix))),
        ..drawn
    });
    property::check_all(ctx, coverage, strategy, describe, case)
}

/// The coverage pass alone: every case at once, the first failure in the file's order.
fn first_of(cases: &[Drawn], case: &(impl Fn(&Drawn) -> Checked + Sync), ctx: &RuleCtx) -> Checked {
    let mut first_undecided = None;
    for verdict in property::judge_all(ctx, cases, case) {
        match verdict {
            Ok(()) => {}
            Err(verdict) if verdict.kind() == VerdictKind::Failed => return Err(verdict),
            Err(verdict) => {
                first_undecided.get_or_insert(verdict);
            }
        }
    }
    first_undecided.map_or(Ok(()), Err)
}

fn unanswered(exchange: &Exchange) -> bool {
    exchange.response.is_none() || exchange.cut_by_transport()
}

/// The failure, saying which input, class and case showed it.
fn annotate(verdict: Verdict, class: &Class, described: &str) -> Verdict {
    match verdict {
        Verdict::Failed(mut failure) => {
            failure.expected = format!("{} ({described}; {})", failure.expected, class.reason);
            Verdict::Failed(failure)
        }
        other => other,
    }
}

/// The answer to one case against what its class says.
fn judge(ctx: &RuleCtx, operation: Operation, expect: Expect, exchange: &Exchange) -> Checked {
    match expect {
        Expect::Accepted => {
            let (status, what) = match operation {
                Operation::CreatePet => (201, "201 (the animal was added)"),
                _ => (200, "200 (the request is valid)"),
            };
            expect::status(exchange, &[status], what)
        }
        Expect::Refused400 => {
            expect::status(exchange, &[400], "400 with an Error body")?;
            expect::error_body(ctx, exchange)
        }
        Expect::Refused4xx => {
            expect::client_error(exchange, "a 4xx with an Error body (a refusal)")?;
            expect::error_body(ctx, exchange)
        }
        Expect::Refused401 => {
            expect::status(exchange, &[401], "401 (missing or invalid API key)")?;
            expect::error_body(ctx, exchange)
        }
        Expect::Answered => {
            let response = expect::response(exchange)?;
            if response.status >= 500 {
                return Err(Verdict::failed(
                    "any answer but a 5xx (no operation lists one)",
                    exchange.summary(),
                    exchange,
                ));
            }
            Ok(())
        }
    }
}
