//! The response oracles: statements that hold on every response, whichever rule sent the
//! request (fixtures, generated cases, shrinking steps, auth probes): JSON content type, Error
//! bodies whose `status` repeats the HTTP status, no 5xx, 2xx bodies valid against the
//! operation's response schema, deprecation headers on getPet only. Every exchange of the run
//! is inspected as it passes the recorder ([`Observations::inspect`]); the rules read the tally
//! once every other rule has finished, after a small read-only sweep of their own so that they
//! have evidence even when run alone. A rule's own verdict and an oracle's are both reported.

use std::sync::Mutex;

use serde_json::Value;

use super::{Checked, RuleCtx, Verdict};
use crate::contract::{Contract, Operation, SchemaName};
use crate::generation::request::{Credential, RequestSpec};
use crate::outcome::Exchange;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Statement {
    JsonContentType,
    ErrorBody,
    NoServerError,
    SuccessSchema,
    DeprecationOnGetPetOnly,
}

const STATEMENTS: [Statement; 5] = [
    Statement::JsonContentType,
    Statement::ErrorBody,
    Statement::NoServerError,
    Statement::SuccessSchema,
    Statement::DeprecationOnGetPetOnly,
];

#[derive(Default, Clone)]
struct Tally {
    inspected: usize,
    violations: usize,
    first: Option<(String, String, Box<Exchange>)>,
}

/// The running tally of every response against the cross-cutting statements.
#[derive(Default)]
pub struct Observations {
    tallies: Mutex<[Tally; STATEMENTS.len()]>,
    /// The sweep is sent once per run: the three statements read the same tally.
    swept: std::sync::OnceLock<()>,
}

/// What is wrong with `exchange` under `statement`, if anything; `None` when it does not apply.
fn problem(
    statement: Statement,
    operation: Option<Operation>,
    exchange: &Exchange,
    contract: &Contract,
) -> Option<Option<String>> {
    let response = exchange.response.as_ref()?;
    match statement {
        Statement::SuccessSchema => {
            let schema = match (operation?, response.status) {
                (Operation::ListPets, 200) => SchemaName::Pets,
                (Operation::CreatePet, 201) | (Operation::GetPet, 200) => SchemaName::Pet,
                _ => return None, // not a documented success: the status rules judge it
            };
            if response.body_truncated {
                return None; // a body cut at --body-cap cannot be judged
            }
            let name = schema.file_name().trim_end_matches(".json");
            Some(match &response.json {
                None => Some(format!("{} with a body that is not JSON", response.status)),
                Some(body) => contract
                    .check(schema, body)
                    .err()
                    .map(|reason| format!("{} body not a valid {name}: {reason}", response.status)),
            })
        }
        Statement::DeprecationOnGetPetOnly => {
            let operation = operation?;
            if !matches!(operation, Operation::ListPets | Operation::CreatePet) {
                return None;
            }
            let announced: Vec<String> = ["deprecation", "sunset"]
                .iter()
                .filter_map(|name| exchange.header(name).map(|v| format!("{name}: {v}")))
                .collect();
            Some((!announced.is_empty()).then(|| {
                format!(
                    "{} answered with {}",
                    operation.name(),
                    announced.join(", ")
                )
            }))
        }
        Statement::JsonContentType => {
            let content_type = exchange.header("content-type");
            let essence = content_type
                .and_then(|value| value.split(';').next())
                .map(|essence| essence.trim().to_ascii_lowercase());
            Some(match essence.as_deref() {
                Some("application/json") => None,
                Some(_) => Some(format!("Content-Type: {}", content_type.unwrap_or(""))),
                None => Some("no Content-Type".into()),
            })
        }
        Statement::ErrorBody => {
            if response.status < 400 || response.body_truncated {
                return None; // a body cut at --body-cap cannot be judged
            }
            let Some(body) = &response.json else {
                return Some(Some(format!(
                    "{} with a body that is not JSON",
                    response.status
                )));
            };
            if let Err(reason) = contract.check(SchemaName::Error, body) {
                return Some(Some(format!("{}: {reason}", response.status)));
            }
            let field = body.get("status").and_then(Value::as_i64);
            Some((field != Some(i64::from(response.status))).then(|| {
                format!(
                    "HTTP {} with an Error whose status is {}",
                    response.status,
                    field.map_or("missing".into(), |s| s.to_string())
                )
            }))
        }
        Statement::NoServerError => {
            Some((response.status >= 500).then(|| format!("{} (server error)", response.status)))
        }
    }
}

impl Observations {
    /// Tallies one exchange; called for every exchange of the run.
    pub fn inspect(
        &self,
        rule_id: &str,
        operation: Option<Operation>,
        exchange: &Exchange,
        contract: &Contract,
    ) {
        if exchange.gave_up_throttled() {
            return; // a throttling answer is the gateway's, not the contract's
        }
        let found: Vec<Option<Option<String>>> = STATEMENTS
            .iter()
            .map(|statement| problem(*statement, operation, exchange, contract))
            .collect();
        let mut tallies = self.tallies.lock().unwrap_or_else(|e| e.into_inner());
        for (tally, found) in tallies.iter_mut().zip(found) {
            let Some(problem) = found else { continue };
            tally.inspected += 1;
            if let Some(problem) = problem {
                tally.violations += 1;
                if tally.first.is_none() {
                    tally.first =
                        Some((rule_id.to_string(), problem, Box::new(exchange.evidence())));
                }
            }
        }
    }

    fn tally(&self, statement: Statement) -> Tally {
        let index = STATEMENTS.iter().position(|s| *s == statement).unwrap_or(0);
        self.tallies.lock().unwrap_or_else(|e| e.into_inner())[index].clone()
    }
}

/// A few read-only requests whose answers every statement applies to: success, 401, 404, 400.
fn sweep(ctx: &RuleCtx) {
    ctx.run.observations.swept.get_or_init(|| send_sweep(ctx));
}

fn send_sweep(ctx: &RuleCtx) {
    let requests = [
        RequestSpec::get("/pets"),
        RequestSpec::get("/pets").query("limit", "1"),
        RequestSpec::get("/pets").credential(Credential::Missing),
        RequestSpec::get(format!("/pets/{}", i64::MAX)),
        RequestSpec::get("/pets").query("limit", "0"),
        RequestSpec::get("/store/orders"),
    ];
    for spec in &requests {
        ctx.send(spec);
        ctx.case_done();
    }
}

fn verdict(ctx: &RuleCtx, statement: Statement, expected: &str) -> Checked {
    sweep(ctx);
    let tally = ctx.run.observations.tally(statement);
    if tally.inspected == 0 {
        return Err(Verdict::skipped(
            "no response this statement applies to was received",
        ));
    }
    match tally.first {
        None => Ok(()),
        Some((rule_id, problem, exchange)) => Err(Verdict::failed(
            expected,
            format!(
                "{} of {} responses break it; first, during {rule_id}: {problem}",
                tally.violations, tally.inspected
            ),
            &exchange,
        )),
    }
}

pub fn json_content_type(ctx: &RuleCtx) -> Checked {
    verdict(
        ctx,
        Statement::JsonContentType,
        "Content-Type: application/json on every response",
    )
}

pub fn error_body(ctx: &RuleCtx) -> Checked {
    verdict(
        ctx,
        Statement::ErrorBody,
        "an Error body (code, message, status) whose status repeats the HTTP status on every 4xx and 5xx",
    )
}

pub fn no_server_error(ctx: &RuleCtx) -> Checked {
    verdict(
        ctx,
        Statement::NoServerError,
        "no 5xx answer to any request of the suite",
    )
}

pub fn success_schema(ctx: &RuleCtx) -> Checked {
    verdict(
        ctx,
        Statement::SuccessSchema,
        "every 2xx body valid against its operation's response schema (Pets for listPets, Pet for createPet and getPet)",
    )
}

pub fn deprecation_on_get_pet_only(ctx: &RuleCtx) -> Checked {
    verdict(
        ctx,
        Statement::DeprecationOnGetPetOnly,
        "no Deprecation or Sunset header on a listPets or createPet response",
    )
}
