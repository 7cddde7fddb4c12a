//! createPet: `POST /pets` stores valid NewPets and refuses invalid ones.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Checked, RuleCtx, Verdict, auth::marker_category, expect, get_pet, property};
use crate::contract::SchemaName;
use crate::execution::fixtures::{CreatedPet, assert_not_stored};
use crate::execution::{Body, RequestSpec};
use crate::generation::{self, NewPetCase, mutations};

/// Sends one NewPet and checks the 201 Pet echoes it; returns the Pet.
fn create_and_echo(ctx: &RuleCtx, sent: &Value) -> Result<Value, Verdict> {
    let exchange = ctx.send(&RequestSpec::post("/pets", Body::Json(sent.clone())));
    expect::status(&exchange, &[201], "201 (the animal was added) with the Pet")?;
    let pet = expect::body(ctx, &exchange, SchemaName::Pet)?;
    for field in ["name", "categoryId", "status"] {
        let Some(value) = sent.get(field) else {
            continue; // "No default is stated": any valid status, or none, may come back
        };
        if pet.get(field) != Some(value) {
            return Err(Verdict::failed(
                format!("the Pet echoes {field} = {value}"),
                format!("{field} = {}", pet.get(field).unwrap_or(&Value::Null)),
                &exchange,
            ));
        }
    }
    Ok(pet.clone())
}

/// Every valid NewPet gets 201 with a Pet that echoes it and carries an id.
pub fn created_property(ctx: &RuleCtx) -> Checked {
    let prefix = ctx.pet_name("");
    property::check_all(
        ctx,
        generation::new_pet_boundaries(),
        generation::new_pet(),
        |case: &NewPetCase| case.describe(&prefix),
        |case| create_and_echo(ctx, &case.to_json(&prefix)).map(|_| ()),
    )
}

/// "Unique identifier, assigned by the service on creation." Checks this rule's own pets,
/// then every pet the run has seen created, whichever rule created it.
pub fn unique_ids(ctx: &RuleCtx) -> Checked {
    let count = ctx
        .rule
        .params
        .get("count")
        .and_then(Value::as_u64)
        .unwrap_or(8);
    let mut ids = BTreeSet::new();
    let mut last = None;
    for n in 0..count {
        let sent =
            serde_json::json!({"name": ctx.pet_name(&format!("unique-{n}")), "categoryId": n});
        let exchange = ctx.send(&RequestSpec::post("/pets", Body::Json(sent)));
        ctx.case_done();
        // Whether the answer is 201 is create-pet/valid/created's business; here, the ids.
        let Some(id) = exchange.json().and_then(expect::pet_id) else {
            return Err(Verdict::failed(
                "a Pet with an integer id",
                exchange.summary(),
                &exchange,
            ));
        };
        if !ids.insert(id) {
            return Err(Verdict::failed(
                "a new id for every pet created",
                format!("id {id} given again, after {} pets", ids.len()),
                &exchange,
            ));
        }
        last = Some(exchange);
    }
    let mut seen: BTreeMap<i64, CreatedPet> = BTreeMap::new();
    for pet in ctx.run.fixtures.created() {
        if let Some(earlier) = seen.get(&pet.id) {
            let observed = format!(
                "id {} was given to {:?} (during {}) and to {:?} (during {})",
                pet.id, earlier.name, earlier.rule, pet.name, pet.rule
            );
            return match &last {
                Some(exchange) => Err(Verdict::failed(
                    "a new id for every pet created",
                    observed,
                    exchange,
                )),
                None => Err(Verdict::inconclusive(observed)),
            };
        }
        seen.insert(pet.id, pet);
    }
    Ok(())
}

/// A created pet, fetched by its id, is the pet createPet returned.
pub fn round_trip(ctx: &RuleCtx) -> Checked {
    let prefix = ctx.pet_name("");
    property::check_all(
        ctx,
        generation::new_pet_boundaries(),
        generation::new_pet(),
        |case: &NewPetCase| case.describe(&prefix),
        |case| {
            let sent = case.to_json(&prefix);
            let exchange = ctx.send(&RequestSpec::post("/pets", Body::Json(sent)));
            let created = match (exchange.status(), exchange.json()) {
                (Some(200..=299), Some(pet)) if expect::pet_id(pet).is_some() => pet.clone(),
                _ => {
                    return Err(Verdict::inconclusive(format!(
                        "createPet did not answer with a Pet to fetch: {}",
                        exchange.summary()
                    )));
                }
            };
            let id = expect::pet_id(&created).unwrap_or_default();
            let fetched = ctx.send(&RequestSpec::get(format!("/pets/{id}")));
            expect::status(&fetched, &[200], "200 with the created Pet")?;
            let pet = expect::body(ctx, &fetched, SchemaName::Pet)?;
            get_pet::same_pet(&created, pet, &fetched)
        },
    )
}

/// An invalid body is refused with an Error and stores nothing.
pub fn refused(ctx: &RuleCtx) -> Checked {
    let mutation = ctx.param_str("mutation")?;
    let exact_400 = ctx.param_str("expect")? == "400";
    let (body, marker) =
        mutations::create_body(mutation, &ctx.pet_name(mutation), marker_category(ctx))
            .ok_or_else(|| Verdict::skipped(format!("unknown mutation {mutation:?}")))?;
    let exchange = ctx.send(&RequestSpec::post("/pets", body));
    ctx.case_done();
    if exact_400 {
        expect::status(&exchange, &[400], &format!("400 (the body is {mutation})"))?;
    } else {
        expect::client_error(
            &exchange,
            &format!("a 4xx refusal (the body is {mutation})"),
        )?;
    }
    expect::error_body(ctx, &exchange)?;
    if marker.name.is_none() && marker.category_id.is_none() {
        return Ok(()); // nothing in the body would identify a stored pet
    }
    assert_not_stored(ctx, &marker)
}

/// Well-formed bodies with invalid values get exactly 400, as the contract says.
pub fn invalid_values_400(ctx: &RuleCtx) -> Checked {
    for mutation in ctx.rule.param_list("mutations") {
        let (body, _) =
            mutations::create_body(mutation, &ctx.pet_name(mutation), marker_category(ctx))
                .ok_or_else(|| Verdict::skipped(format!("unknown mutation {mutation:?}")))?;
        let exchange = ctx.send(&RequestSpec::post("/pets", body));
        ctx.case_done();
        expect::status(&exchange, &[400], &format!("400 (the body is {mutation})"))?;
    }
    Ok(())
}
