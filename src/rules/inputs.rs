//! The coverage pass over the request space (`cases/request-space.json`): every case of every
//! class of an operation at a level, sent at once (one round trip), each judged as its class
//! says. What each class got is tallied for the report's request-coverage table.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{Checked, RuleCtx, Verdict, auth, expect};
use crate::contract::Operation;
use crate::generation::space::{Class, Expect, Input};
use crate::outcome::{Exchange, VerdictKind};

/// What the coverage pass found for one class of one input of one operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassTally {
    /// Cases that got a whole answer.
    pub cases: u32,
    /// Of those, the ones answered otherwise than the class says.
    pub failed: u32,
    /// Cases sent that got no whole answer (a transport cut, a stop of the run).
    pub unanswered: u32,
    /// The first failing case, in words.
    pub first_failure: Option<String>,
}

/// Per (operation, input, class): what the coverage pass found.
#[derive(Debug, Default)]
pub struct Tally(Mutex<BTreeMap<(String, String, String), ClassTally>>);

impl Tally {
    fn count(
        &self,
        key: (String, String, String),
        outcome: Outcome,
        what: impl FnOnce() -> String,
    ) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let entry = map.entry(key).or_default();
        match outcome {
            Outcome::Passed => entry.cases += 1,
            Outcome::Failed => {
                entry.cases += 1;
                entry.failed += 1;
                if entry.first_failure.is_none() {
                    entry.first_failure = Some(what());
                }
            }
            Outcome::Unanswered => entry.unanswered += 1,
        }
    }

    /// What the pass found for a class, if the pass sent any of its cases.
    pub fn get(&self, operation: Operation, input: &str, class: &str) -> Option<ClassTally> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(
            operation_name(operation).to_string(),
            input.to_string(),
            class.to_string(),
        ))
        .cloned()
    }
}

enum Outcome {
    Passed,
    Failed,
    Unanswered,
}

/// The contract's name of an operation, as the case files write it.
pub fn operation_name(operation: Operation) -> &'static str {
    match operation {
        Operation::ListPets => "listPets",
        Operation::CreatePet => "createPet",
        Operation::GetPet => "getPet",
        Operation::ListStoreOrders => "listStoreOrders",
        Operation::Any => "any",
    }
}

/// Sends every case of every class of the rule's operation at the rule's level, all at once,
/// and judges each: the rule fails on the first case (in the file's order) answered otherwise
/// than its class says; every case is tallied, failing or not.
pub fn walk(ctx: &RuleCtx) -> Checked {
    let operation = ctx.rule.operation;
    let classes = ctx.run.space.classes(operation, ctx.rule.level);
    if classes.is_empty() {
        return Err(Verdict::skipped(format!(
            "the request space has no {} class for {}",
            ctx.rule.level.as_str(),
            operation_name(operation)
        )));
    }
    let valid = auth::request_for(ctx, operation)?;
    let category = ctx.run.categories.accepted(1);
    let mut cases: Vec<(&Input, &Class, String)> = Vec::new();
    let mut specs = Vec::new();
    for (input, class) in classes {
        for (n, case) in class.cases.iter().enumerate() {
            let name = ctx.pet_name(&format!("inputs-{}-{n}", class.class));
            specs.push(case.apply(&valid, &name, category));
            cases.push((input, class, case.describe()));
        }
    }
    let mut first_failure = None;
    let mut first_undecided = None;
    for ((input, class, described), exchange) in cases.into_iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        let key = (
            operation_name(operation).to_string(),
            input.input.clone(),
            class.class.clone(),
        );
        let judged = judge(ctx, operation, class.expect, &exchange);
        // A response may echo the key: the note is redacted as a verdict is.
        let what = || {
            let note = format!("{described}: {}", exchange.summary());
            ctx.run.client.redactor().redact(&note)
        };
        match judged {
            Ok(()) => ctx.run.input_tally.count(key, Outcome::Passed, what),
            Err(verdict) if verdict.kind() == VerdictKind::Failed && !unanswered(&exchange) => {
                ctx.run.input_tally.count(key, Outcome::Failed, what);
                first_failure.get_or_insert_with(|| annotate(verdict, input, class, &described));
            }
            Err(verdict) => {
                ctx.run.input_tally.count(key, Outcome::Unanswered, what);
                first_undecided.get_or_insert(verdict);
            }
        }
    }
    match first_failure.or(first_undecided) {
        Some(verdict) => Err(verdict),
        None => Ok(()),
    }
}

fn unanswered(exchange: &Exchange) -> bool {
    exchange.response.is_none() || exchange.cut_by_transport()
}

/// The failure, saying which input, class and case showed it.
fn annotate(verdict: Verdict, input: &Input, class: &Class, described: &str) -> Verdict {
    match verdict {
        Verdict::Failed(mut failure) => {
            failure.expected = format!(
                "{} (class {} of {}: {described}; {})",
                failure.expected, class.class, input.input, class.reason
            );
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
