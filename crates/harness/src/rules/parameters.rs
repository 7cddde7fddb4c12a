//! The path and query parameters of listPets and getPet, generated from `openapi.yaml`: every
//! bound and near miss of each parameter's schema, then random values (see
//! [`crate::generation::parameter_values`]). A value the schema allows gets one of the operation's
//! documented statuses; no value gets a 5xx; a value it does not allow is, by HTTP practice,
//! refused with a 4xx and an Error.

use proptest::prelude::*;
use proptest::strategy::Union;

use crate::contract::Operation;
use crate::contract::openapi::{OperationModel, ParameterIn};
use crate::engine::ctx::RuleCtx;
use crate::engine::input_tally::{ClassKey, Outcome};
use crate::engine::property::SentAhead;
use crate::engine::{expect, property};
use crate::generation::parameter_values::{self, Class, ParameterValue};
use crate::generation::request::RequestSpec;
use crate::outcome::{Checked, Exchange, Verdict, VerdictKind};

/// One generated case: a parameter's name and its value.
type Case = (String, ParameterValue);

fn model<'c>(ctx: &'c RuleCtx) -> Result<&'c OperationModel, Verdict> {
    ctx.contract()
        .openapi
        .operation(ctx.rule.operation)
        .filter(|model| !model.parameters.is_empty())
        .ok_or_else(|| {
            Verdict::skipped(format!(
                "openapi.yaml describes no parameter of {}",
                ctx.rule.operation.name()
            ))
        })
}

/// The request of `model` with one parameter set to `value`, the others absent.
fn request(model: &OperationModel, (name, value): &Case) -> RequestSpec {
    let in_path = model
        .parameters
        .iter()
        .any(|p| &p.name == name && p.location == ParameterIn::Path);
    if in_path {
        return RequestSpec::get(model.path_with(&[(name, &value.wire)]));
    }
    let mut query = format!("{}={}", parameter_values::encode(name), value.wire);
    if let Some(repeat) = &value.repeat {
        query.push_str(&format!("&{}={repeat}", parameter_values::encode(name)));
    }
    RequestSpec::get(model.path.clone()).raw_query(query)
}

fn describe((name, value): &Case) -> String {
    // In a report's words, not the enum's.
    let class = match value.class {
        parameter_values::Class::Allowed => "the schema allows it",
        parameter_values::Class::Refused => "the schema does not allow it",
        parameter_values::Class::Open => "the contract leaves it open",
    };
    format!("{name} = {} ({class})", value.what)
}

/// Every parameter's boundary values, and a strategy over all of its generated values.
fn space(ctx: &RuleCtx, model: &OperationModel) -> (Vec<Case>, BoxedStrategy<Case>) {
    let operators = &ctx.space().operators;
    let boundary = model
        .parameters
        .iter()
        .flat_map(|p| {
            parameter_values::boundary_values(&p.schema, operators)
                .into_iter()
                .map(|value| (p.name.clone(), value))
        })
        .collect();
    let strategies: Vec<BoxedStrategy<Case>> = model
        .parameters
        .iter()
        .map(|p| {
            let name = p.name.clone();
            parameter_values::strategy(&p.schema)
                .prop_map(move |value| (name.clone(), value))
                .boxed()
        })
        .collect();
    (boundary, Union::new(strategies).boxed())
}

/// A value the schema allows gets a documented status; no value gets a 5xx.
pub fn answered(ctx: &RuleCtx) -> Checked {
    let model = model(ctx)?;
    let (boundary, strategy) = space(ctx, model);
    let documented = model.valid_request_statuses();
    let first = |case: &Case| Some(request(model, case));
    let ahead = SentAhead::first(&first);
    property::check_all_sent_ahead(ctx, boundary, strategy, describe, ahead, |case| {
        let spec = request(model, case);
        let exchange = ctx.send(&spec);
        if Operation::of(spec.method, &spec.path).is_none() {
            // The value took the request off the operation (an empty petId is `GET /pets/`):
            // a robustness probe, which only responses/outside-operations/no-server-error judges.
            return Ok(());
        }
        let judged = judge(case, &documented, &exchange);
        tally(ctx, model, case, &exchange, &judged, "answered");
        judged
    })
}

/// No 5xx; a documented status for a value the schema allows.
fn judge(case: &Case, documented: &[u16], exchange: &Exchange) -> Checked {
    let response = expect::response(exchange)?;
    if response.status >= 500 {
        return Err(Verdict::failed(
            format!("no 5xx for {}", describe(case)),
            exchange.summary(),
            exchange,
        ));
    }
    if case.1.class == Class::Allowed {
        let statuses: Vec<String> = documented.iter().map(u16::to_string).collect();
        expect::status(
            exchange,
            documented,
            &format!(
                "one of {} ({} is allowed by the schema)",
                statuses.join(", "),
                describe(case)
            ),
        )?;
    }
    Ok(())
}

/// Counts an operator's value for the request-coverage table, under its parameter's position
/// (`query limit`, `path petId`) and its operator, as the rule judged it (`expecting`).
fn tally(
    ctx: &RuleCtx,
    model: &OperationModel,
    case: &Case,
    exchange: &Exchange,
    judged: &Checked,
    expecting: &'static str,
) {
    let Some(operator) = &case.1.operator else {
        return;
    };
    let place = match model.parameters.iter().find(|p| p.name == case.0) {
        Some(p) if p.location == ParameterIn::Path => "path",
        _ => "query",
    };
    let key = ClassKey::new(
        ctx.rule.operation,
        format!("{place} {}", case.0),
        operator.clone(),
    );
    let what = || {
        let note = format!("{}: {}", describe(case), exchange.summary());
        ctx.redactor().redact_sent(&note)
    };
    let outcome = match judged {
        Ok(()) => Outcome::Passed,
        Err(verdict) if verdict.kind() == VerdictKind::Failed => Outcome::Failed,
        Err(_) => Outcome::Unanswered,
    };
    let rule = (ctx.rule.id.as_str(), ctx.rule.level, expecting);
    ctx.input_tally().count_by(rule, key, outcome, what);
}

/// A value the schema does not allow is refused with a 4xx and an Error body.
pub fn refused(ctx: &RuleCtx) -> Checked {
    let model = model(ctx)?;
    let (boundary, _) = space(ctx, model);
    let refused: Vec<Case> = boundary
        .into_iter()
        .filter(|(_, value)| value.class == Class::Refused)
        // A value that takes the request off the operation (an empty petId) is no request of
        // this operation to be refused: the robustness rule alone judges its answer.
        .filter(|case| {
            let spec = request(model, case);
            Operation::of(spec.method, &spec.path).is_some()
        })
        .collect();
    let specs: Vec<RequestSpec> = refused.iter().map(|case| request(model, case)).collect();
    // Every value judged and tallied (the coverage table shows each operator's), the first
    // failure reported.
    let mut first = Ok(());
    for (case, exchange) in refused.iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        let judged = expect::client_error(
            &exchange,
            &format!(
                "a 4xx refusal ({} is not allowed by the schema)",
                describe(case)
            ),
        )
        .and_then(|()| expect::error_body(ctx.contract(), &exchange));
        tally(ctx, model, case, &exchange, &judged, "refused-4xx");
        if first.is_ok() {
            first = judged;
        }
    }
    first
}
