//! Size ladders: names and whole bodies climbing past the sizes real columns, parsers and
//! proxies break at. The contract gives `name` no maximum and the body no limit, so every rung
//! is a valid NewPet: it is stored (201) and reads back byte for byte, or refused as too large
//! (413, a limit the contract leaves the store; for a whole body, the contract's 400 too), with
//! a JSON Error. A 5xx, another refusal, a refusal that is no JSON Error (Django's HTML page
//! past 2.5 MB), or a name that comes back cut or altered contradicts it. Each ladder goes out
//! at once (one round trip), its read-back at once too (one more); the body ladder climbs past
//! 1 MiB (to 16 MiB, every common limit) in a second batch, only when nothing refused the first.

use serde_json::{Value, json};

use crate::contract::SchemaName;
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Checked, Exchange, Failure, Verdict};

/// Characters a ladder name repeats: a cut, a dropped or a shifted byte shows as a change.
const FILLER: &str = "abcdefghijklmnopqrstuvwxyz0123456789";

/// A name of exactly `length` characters: the run prefix first where it fits, so the pet
/// can be found and removed.
pub fn ladder_name(prefix: &str, length: usize) -> String {
    let mut name = if prefix.len() <= length {
        prefix.to_string()
    } else {
        String::new()
    };
    while name.len() < length {
        let left = length - name.len();
        name.push_str(&FILLER[..left.min(FILLER.len())]);
    }
    name
}

/// How a name read back differs from the one sent, in a line (never the whole name).
fn difference(sent: &str, got: &str) -> String {
    let at = sent
        .chars()
        .zip(got.chars())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| sent.chars().count().min(got.chars().count()));
    let excerpt: String = got.chars().skip(at).take(16).collect();
    format!(
        "a name of {} characters, not {} (first difference at character {at}: {excerpt:?})",
        got.chars().count(),
        sent.chars().count()
    )
}

/// The distinct failures of a ladder, the first (smallest rung) of each class.
#[derive(Default)]
struct Failures(Vec<Failure>);

impl Failures {
    fn add(&mut self, verdict: Verdict) {
        if let Verdict::Failed(failure) = verdict {
            let key = failure.class_key();
            if !self.0.iter().any(|f| f.class_key() == key) {
                self.0.push(*failure);
            }
        }
    }
}

fn failed(class: String, expected: &str, observed: String, exchange: &Exchange) -> Verdict {
    Verdict::failed(expected, observed, exchange).in_class(class)
}

/// A refusal of a rung as too large: a JSON Error under a JSON media type ("Errors use the
/// Error body ... with `Content-Type: application/json`"), whatever the status.
fn judge_refusal(ctx: &RuleCtx, rung: &str, exchange: &Exchange, failures: &mut Failures) {
    let media = exchange.header("content-type").unwrap_or("");
    let essence = media.split(';').next().unwrap_or("").trim();
    let status = exchange.status().unwrap_or_default();
    if !essence.eq_ignore_ascii_case("application/json") {
        failures.add(failed(
            format!("createPet refused a large body with {status} and no JSON media type"),
            &format!("a refusal of {rung} with an Error under Content-Type: application/json"),
            exchange.summary(),
            exchange,
        ));
        return;
    }
    if let Err(verdict) = expect::error_body(ctx.contract(), exchange) {
        failures.add(verdict.in_class(format!(
            "createPet refused a large body with {status} and no Error"
        )));
    }
}

/// What a rung's createPet answered, judged (`refusals`: the statuses that may say it is too
/// large): the id of the stored pet when it was stored.
fn judge_create(
    ctx: &RuleCtx,
    rung: &str,
    sent_name: &str,
    exchange: &Exchange,
    refusals: &[u16],
    failures: &mut Failures,
) -> Option<i64> {
    let Ok(response) = expect::response(exchange) else {
        return None; // no whole answer: no evidence either way
    };
    match response.status {
        status if refusals.contains(&status) => {
            judge_refusal(ctx, rung, exchange, failures);
            None
        }
        201 => {
            let pet = match expect::body(ctx.contract(), exchange, SchemaName::Pet) {
                Ok(pet) => pet,
                Err(verdict) => {
                    failures.add(verdict.in_class("createPet answered a body that is not a Pet"));
                    return None;
                }
            };
            let got = pet.get("name").and_then(Value::as_str).unwrap_or_default();
            if got != sent_name {
                failures.add(failed(
                    "createPet answered another name than the one sent".into(),
                    &format!("the Pet echoes the name sent ({rung}) byte for byte"),
                    difference(sent_name, got),
                    exchange,
                ));
            }
            expect::pet_id(pet)
        }
        status => {
            failures.add(failed(
                format!("createPet answered {status}"),
                &format!(
                    "201 with the Pet, or {} (past the body size the store accepts), for a valid NewPet ({rung})",
                    refusals
                        .iter()
                        .map(u16::to_string)
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
                exchange.summary(),
                exchange,
            ));
            None
        }
    }
}

/// Names of each of `lengths` characters are stored and read back byte for byte by createPet,
/// getPet and listPets (where the listing shows the pet: listPets states no order).
pub fn name_ladder(ctx: &RuleCtx, lengths: &[u64]) -> Checked {
    let prefix = ctx.pet_name("");
    let names: Vec<String> = lengths
        .iter()
        .map(|length| ladder_name(&prefix, usize::try_from(*length).unwrap_or(usize::MAX)))
        .collect();
    let specs: Vec<RequestSpec> = names
        .iter()
        .enumerate()
        .map(|(n, name)| {
            let category = ctx.categories().accepted(n as i64);
            RequestSpec::post(
                "/pets",
                Body::Json(json!({"name": name, "categoryId": category})),
            )
        })
        .collect();
    let mut failures = Failures::default();
    let mut stored: Vec<(i64, &str, String)> = Vec::new();
    let mut decided = 0;
    for ((name, length), exchange) in names.iter().zip(lengths).zip(ctx.send_all(&specs)) {
        ctx.case_done();
        let rung = format!("a name of {length} characters");
        if exchange.response.is_some() && !exchange.cut_by_transport() {
            decided += 1;
        }
        if let Some(id) = judge_create(ctx, &rung, name, &exchange, &[413], &mut failures) {
            stored.push((id, name, rung));
        }
    }
    // Read back, all at once: each stored pet by id, and one listing that may show them.
    let mut reads: Vec<RequestSpec> = stored
        .iter()
        .map(|(id, _, _)| RequestSpec::get(format!("/pets/{id}")))
        .collect();
    reads.push(RequestSpec::get("/pets").query("limit", "100"));
    let mut answers = if stored.is_empty() {
        Vec::new()
    } else {
        ctx.send_all(&reads)
    };
    let listing = answers.pop();
    for ((_, sent, rung), exchange) in stored.iter().zip(&answers) {
        let Ok(response) = expect::response(exchange) else {
            continue;
        };
        if response.status != 200 {
            failures.add(failed(
                format!("getPet answered {}", response.status),
                &format!("200 with the pet stored ({rung})"),
                exchange.summary(),
                exchange,
            ));
            continue;
        }
        match expect::body(ctx.contract(), exchange, SchemaName::Pet) {
            Ok(pet) => {
                let got = pet.get("name").and_then(Value::as_str).unwrap_or_default();
                if got != *sent {
                    failures.add(failed(
                        "getPet answered another name than the one stored".into(),
                        &format!("getPet reads back the name stored ({rung}) byte for byte"),
                        difference(sent, got),
                        exchange,
                    ));
                }
            }
            Err(verdict) => {
                failures.add(verdict.in_class("getPet answered a body that is not a Pet"))
            }
        }
    }
    if let Some(exchange) = &listing
        && let Ok(response) = expect::response(exchange)
    {
        match expect::listing(exchange) {
            Ok(pets) => {
                for (id, sent, rung) in &stored {
                    let Some(listed) = pets.iter().find(|p| expect::pet_id(p) == Some(*id)) else {
                        continue; // not on this page: listPets states no order
                    };
                    let got = listed
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    if got != *sent {
                        failures.add(failed(
                            "listPets showed another name than the one stored".into(),
                            &format!("listPets shows the name stored ({rung}) byte for byte"),
                            difference(sent, got),
                            exchange,
                        ));
                    }
                }
            }
            Err(verdict @ Verdict::Failed(_)) => failures.add(verdict.in_class(format!(
                "listPets answered {} after the ladder",
                response.status
            ))),
            Err(_) => {}
        }
    }
    if let Some(verdict) = Verdict::failed_distinct(failures.0) {
        return Err(verdict);
    }
    if decided == 0 {
        return Err(Verdict::inconclusive(
            "no rung of the name ladder was answered",
        ));
    }
    Ok(())
}

/// The rungs of the body ladder sent in the first batch: up to 1 MiB (nginx's default limit);
/// the rungs past it go out together only when none of these was refused.
const FIRST_BATCH_UP_TO: u64 = 1 << 20;

/// Whole bodies of each of `sizes` bytes (a small pet, padded with whitespace) are stored
/// (201, echoing the pet) or refused as too large (413, or the contract's 400) with a JSON
/// Error; never a 5xx or another refusal. Past [`FIRST_BATCH_UP_TO`] the climb goes on only
/// when nothing was refused, so a store with a limit costs no large body past it.
pub fn body_ladder(ctx: &RuleCtx, sizes: &[u64]) -> Checked {
    let rung = |n: usize, size: u64| {
        let pet = json!({
            "name": ctx.pet_name(&format!("body-{size}")),
            "categoryId": ctx.categories().accepted(n as i64),
        });
        let head = serde_json::to_vec(&pet).unwrap_or_default().into();
        let length = usize::try_from(size).unwrap_or(usize::MAX);
        (
            pet,
            RequestSpec::post("/pets", Body::Padded { head, length }),
        )
    };
    let (first, rest): (Vec<_>, Vec<_>) = sizes
        .iter()
        .enumerate()
        .partition(|(_, size)| **size <= FIRST_BATCH_UP_TO);
    let mut failures = Failures::default();
    let mut decided = 0;
    let mut refused = false;
    for batch in [first, rest] {
        if batch.is_empty() || refused {
            continue;
        }
        let (pets, specs): (Vec<Value>, Vec<RequestSpec>) =
            batch.iter().map(|(n, size)| rung(*n, **size)).unzip();
        for (((_, size), pet), exchange) in batch.iter().zip(&pets).zip(ctx.send_all(&specs)) {
            ctx.case_done();
            if exchange.response.is_some() && !exchange.cut_by_transport() {
                decided += 1;
            }
            refused |= exchange
                .status()
                .is_some_and(|status| (400..500).contains(&status));
            let name = pet.get("name").and_then(Value::as_str).unwrap_or_default();
            let rung = format!("a body of {size} bytes, whitespace after the NewPet");
            judge_create(ctx, &rung, name, &exchange, &[413, 400], &mut failures);
        }
    }
    if let Some(verdict) = Verdict::failed_distinct(failures.0) {
        return Err(verdict);
    }
    if decided == 0 {
        return Err(Verdict::inconclusive(
            "no rung of the body ladder was answered",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_names_have_the_length_asked_and_the_prefix_where_it_fits() {
        for length in [0, 1, 5, 12, 255, 256, 1000, 1001, 4096] {
            let name = ladder_name("pc-0123abcd-", length);
            assert_eq!(name.len(), length);
            assert_eq!(name.chars().count(), length);
            if length >= 12 {
                assert!(name.starts_with("pc-0123abcd-"), "{name}");
            }
        }
    }

    #[test]
    fn a_padded_body_is_the_size_asked_and_still_the_pet() {
        let pet = json!({"name": "pc-x", "categoryId": 1});
        let head = serde_json::to_vec(&pet).unwrap().into();
        let padded = Body::Padded {
            head,
            length: 16384,
        };
        let body = padded.bytes().unwrap();
        assert_eq!(body.len(), 16384);
        assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), pet);
    }

    #[test]
    fn a_difference_names_the_lengths_and_the_place() {
        let sent = ladder_name("", 1001);
        let got = &sent[..1000];
        let text = difference(&sent, got);
        assert!(
            text.starts_with("a name of 1000 characters, not 1001"),
            "{text}"
        );
        assert!(text.contains("at character 1000"), "{text}");
    }
}
