//! The response oracles as rules: each reads the tally of its statement over every response
//! of the run (`engine::oracles`), once every other rule has finished, after a small read-only
//! sweep of its own (sent beside the last phase) so that it has evidence even when run alone. A rule's own verdict and an
//! oracle's are both reported.

use crate::engine::ctx::RuleCtx;
use crate::engine::oracles::Statement;
use crate::generation::request::{Credential, RequestSpec};
use crate::outcome::{Checked, Verdict};

/// A few read-only requests whose answers every statement applies to: success, 401, 404, 400.
fn sweep(ctx: &RuleCtx) {
    ctx.observations().swept.get_or_init(|| send_sweep(ctx));
}

fn send_sweep(ctx: &RuleCtx) {
    let requests = [
        RequestSpec::get("/pets"),
        RequestSpec::get("/pets").query("limit", "1"),
        RequestSpec::get("/pets").credential(Credential::Missing),
        RequestSpec::get(format!("/pets/{}", i64::MAX)),
        RequestSpec::get("/pets").query("limit", "0"),
        RequestSpec::get("/store/orders"),
        // Outside the operations: an empty petId, trailing slashes.
        RequestSpec::get("/pets/"),
        RequestSpec::get(format!("/pets/{}/", i64::MAX)),
    ];
    // Independent reads: sent at once, one round trip (one after another, they were the
    // last eight round trips of every run).
    for _ in ctx.send_all(&requests) {
        ctx.case_done();
    }
}

fn verdict(ctx: &RuleCtx, statement: Statement, expected: &str) -> Checked {
    sweep(ctx);
    // Started beside the last phase (its reads with theirs): judged after it.
    ctx.wait_for_last_phase();
    let tally = ctx.observations().tally(statement);
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

/// Robustness: a request no operation of the contract matches is still no cause for a 5xx.
pub fn outside_no_server_error(ctx: &RuleCtx) -> Checked {
    verdict(
        ctx,
        Statement::OutsideNoServerError,
        "no 5xx answer to a request outside the contract's operations (an empty petId, a trailing slash)",
    )
}

pub fn deprecation_on_get_pet_only(ctx: &RuleCtx) -> Checked {
    verdict(
        ctx,
        Statement::DeprecationOnGetPetOnly,
        "no Deprecation or Sunset header on a listPets or createPet response",
    )
}
