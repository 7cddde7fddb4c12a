//! Assertions shared by the checks: each turns an exchange into `Ok` or the verdict it shows.

use serde_json::Value;

use crate::contract::{Contract, SchemaName};
use crate::outcome::{Checked, Exchange, ExchangeState, NoJson, RecordedResponse, Verdict};

/// The response, or an inconclusive verdict when the target sent none, or one the transport
/// cut short: a transport failure is not evidence about the contract.
pub fn response(exchange: &Exchange) -> Result<&RecordedResponse, Verdict> {
    if exchange.gave_up_throttled() {
        return Err(throttled(exchange));
    }
    if let Some(retries) = exchange.never_answered() {
        return Err(never_answered(exchange, retries));
    }
    match exchange.state() {
        ExchangeState::Answered(response) => Ok(response),
        ExchangeState::Cut(..) => Err(cut(exchange)),
        ExchangeState::NotSent(_) | ExchangeState::Unanswered(_) => {
            Err(Verdict::inconclusive(format!(
                "{} {}: {}",
                exchange.request.method,
                exchange.request.url,
                exchange.summary()
            )))
        }
    }
}

/// The verdict of a request no try of which got an answer while the store answered a read sent
/// alone between its last two tries: the operation does not answer it as the contract says.
fn never_answered(exchange: &Exchange, retries: &crate::outcome::Retries) -> Verdict {
    let tries = retries.unanswered.len() + 1;
    let mut observed = format!(
        "no answer to {} {} in {tries} tries (the later ones on fresh connections, the last two sent alone): ",
        exchange.request.method, exchange.request.url
    );
    for why in &retries.unanswered {
        observed.push_str(why);
        observed.push_str("; ");
    }
    observed.push_str(
        &(exchange.transport_error.as_ref()).map_or("no response".into(), ToString::to_string),
    );
    if let Some(answered) = &retries.store_answered {
        observed.push_str(&format!("; meanwhile {answered}"));
    }
    Verdict::failed(
        "an answer: the contract gives every operation its responses",
        observed,
        exchange,
    )
}

/// The verdict of a request the target kept throttling: nothing about the contract.
pub fn throttled(exchange: &Exchange) -> Verdict {
    let waits = exchange.throttled.map_or(0, |t| t.waits);
    Verdict::inconclusive(format!(
        "target throttled: {} {} still answered {} after {waits} waits (raise --max-throttle-wait, or lower --rate)",
        exchange.request.method,
        exchange.request.url,
        exchange.summary()
    ))
}

/// The verdict of a response whose body the transport cut: nothing about the contract.
pub fn cut(exchange: &Exchange) -> Verdict {
    Verdict::inconclusive(format!(
        "the response was cut by the transport, so it cannot be judged: {} {} answered {} ({})",
        exchange.request.method,
        exchange.request.url,
        exchange
            .status()
            .map_or("nothing".into(), |s| s.to_string()),
        (exchange.transport_error.as_ref()).map_or("cut".into(), ToString::to_string)
    ))
}

/// Inconclusive when the body was cut at `--body-cap`, or not read (nested past the JSON
/// reader's bound): what it would have parsed to is unknown.
pub fn truncated(exchange: &Exchange) -> Checked {
    match &exchange.response {
        Some(response) if response.body_truncated => Err(Verdict::inconclusive(format!(
            "the body passed --body-cap, so it cannot be judged (raise the cap): {}",
            exchange.summary()
        ))),
        Some(RecordedResponse {
            json_error: Some(NoJson::NotRead(reason)),
            ..
        }) => Err(Verdict::inconclusive(format!(
            "the body was not read ({reason}), so it cannot be judged: {}",
            exchange.summary()
        ))),
        _ => Ok(()),
    }
}

/// The status is one of `expected`; `what` says in words what that status means.
pub fn status(exchange: &Exchange, expected: &[u16], what: &str) -> Checked {
    let response = response(exchange)?;
    if expected.contains(&response.status) {
        return Ok(());
    }
    Err(Verdict::failed(what, exchange.summary(), exchange))
}

/// A 4xx status (any client error); `what` says in words what is expected.
pub fn client_error(exchange: &Exchange, what: &str) -> Checked {
    let response = response(exchange)?;
    if (400..500).contains(&response.status) {
        return Ok(());
    }
    Err(Verdict::failed(what, exchange.summary(), exchange))
}

/// The body is JSON valid against `schema`; returns it.
pub fn body<'e>(
    contract: &Contract,
    exchange: &'e Exchange,
    schema: SchemaName,
) -> Result<&'e Value, Verdict> {
    let response = response(exchange)?;
    let name = schema.file_name().trim_end_matches(".json");
    truncated(exchange)?;
    let Some(json) = response.json.as_deref() else {
        let reason = response.not_json().unwrap_or("not JSON");
        return Err(Verdict::failed(
            format!("a JSON body valid against {name}"),
            format!("a body that is not JSON ({reason}): {}", exchange.summary()),
            exchange,
        ));
    };
    contract.check(schema, json).map_err(|reason| {
        Verdict::failed(format!("a body valid against {name}"), reason, exchange)
    })?;
    Ok(json)
}

/// The body is an Error (`code`, `message`, `status`).
pub fn error_body(contract: &Contract, exchange: &Exchange) -> Checked {
    body(contract, exchange, SchemaName::Error).map(|_| ())
}

/// The body is a valid Pets array; returns its items.
pub fn pets<'e>(contract: &Contract, exchange: &'e Exchange) -> Result<&'e Vec<Value>, Verdict> {
    let json = body(contract, exchange, SchemaName::Pets)?;
    json.as_array()
        .ok_or_else(|| Verdict::failed("a JSON array of Pet", exchange.summary(), exchange))
}

/// A 200 answer whose body is a JSON array. Whether its items are valid Pets is the business
/// of `list-pets/success/pets-array`; rules about counts and filters only need the array.
pub fn listing(exchange: &Exchange) -> Result<&Vec<Value>, Verdict> {
    status(exchange, &[200], "200 with an array of Pet")?;
    truncated(exchange)?;
    match exchange.json() {
        Some(Value::Array(items)) => Ok(items),
        _ => Err(Verdict::failed(
            "a JSON array of Pet",
            exchange.summary(),
            exchange,
        )),
    }
}

/// Fields of a pet as the harness compares them.
pub fn pet_id(pet: &Value) -> Option<i64> {
    pet.get("id").and_then(Value::as_i64)
}
