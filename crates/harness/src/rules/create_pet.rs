//! createPet: `POST /pets` stores valid NewPets and refuses invalid ones.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{auth::marker_category, get_pet};
use crate::catalogue::Refusal;
use crate::contract::SchemaName;
use crate::engine::ctx::RuleCtx;
use crate::engine::property::SentAhead;
use crate::engine::store_setup::Marker;
use crate::engine::{expect, property};
use crate::generation::confusion::{self, Confusion};
use crate::generation::request::{Body, RequestSpec};
use crate::generation::{self, mutations};
use crate::outcome::{Checked, Verdict};

/// The createPet of one NewPet.
fn create(pet: &Value) -> RequestSpec {
    RequestSpec::post("/pets", Body::Json(pet.clone()))
}

/// Sends one NewPet and checks the 201 Pet echoes it; returns the Pet.
fn create_and_echo(ctx: &RuleCtx, sent: &Value) -> Result<Value, Verdict> {
    let exchange = ctx.send(&create(sent));
    expect::status(&exchange, &[201], "201 (the animal was added) with the Pet")?;
    let pet = expect::body(ctx.contract(), &exchange, SchemaName::Pet)?;
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

/// Valid NewPets from the schema, with the run prefix before each name and a category the
/// target accepts: the boundary values and the strategy.
fn new_pets(ctx: &RuleCtx) -> Result<(Vec<Value>, BoxedStrategy<Value>), Verdict> {
    let schema = ctx.new_pet_schema();
    let prefix = ctx.pet_name("");
    let categories = ctx.categories().clone();
    let boundary = generation::boundaries(schema)
        .iter()
        .map(|pet| categories.apply(generation::with_prefix(pet, &prefix)))
        .collect();
    let strategy = generation::strategy(schema)
        .map_err(|e| Verdict::skipped(e.to_string()))?
        .prop_map(move |pet| categories.apply(generation::with_prefix(&pet, &prefix)))
        .boxed();
    Ok((boundary, strategy))
}

/// Every valid NewPet gets 201 with a Pet that echoes it and carries an id.
pub fn created_property(ctx: &RuleCtx) -> Checked {
    let (boundary, strategy) = new_pets(ctx)?;
    let first = |pet: &Value| Some(create(pet));
    let describe = generation::describe_pet;
    let ahead = SentAhead::first(&first);
    property::check_all_sent_ahead(ctx, boundary, strategy, describe, ahead, |pet| {
        // What was answered is read back by create-pet/valid/round-trip, which stores none.
        create_and_echo(ctx, pet).map(|answered| ctx.fixtures().answered.keep(&answered))
    })
}

/// "Unique identifier, assigned by the service on creation." Checks this rule's own pets,
/// then every pet the run has seen created, whichever rule created it.
pub fn unique_ids(ctx: &RuleCtx, count: u64) -> Checked {
    let mut ids = BTreeSet::new();
    for n in 0..count {
        let sent = serde_json::json!({"name": ctx.pet_name(&format!("unique-{n}")), "categoryId": ctx.categories().accepted(n as i64)});
        let exchange = ctx.send(&RequestSpec::post("/pets", Body::Json(sent)));
        ctx.case_done();
        // Whether the answer is 201 is create-pet/valid/created's business; here, the ids of
        // what the target says it created. No answer, or a refusal, shows nothing about ids.
        let response = expect::response(&exchange)?;
        if !(200..300).contains(&response.status) {
            return Err(Verdict::inconclusive(format!(
                "createPet did not create the pet whose id to compare: {}",
                exchange.summary()
            )));
        }
        expect::truncated(&exchange)?;
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
    }
    if let Some(duplicate) = ctx.fixtures().created.duplicate() {
        let (earlier, later) = (&duplicate.earlier, &duplicate.later);
        return Err(Verdict::failed(
            "a new id for every pet created",
            format!(
                "id {} was given to {:?} (during {}) and to {:?} (during {})",
                later.id, earlier.name, earlier.rule, later.name, later.rule
            ),
            &duplicate.exchange,
        ));
    }
    Ok(())
}

/// A created pet, fetched by its id, is the pet createPet returned: the pets answered to
/// create-pet/valid/created's generated NewPets (names of any script, categoryIds over int64),
/// read back all at once after that rule is done, so that this rule stores none of its own.
/// Alone (valid/created skipped or in another shard) it creates its own, as a property.
pub fn round_trip(ctx: &RuleCtx) -> Checked {
    if ctx.deadline().is_some() {
        // Under a budget (main phase): after valid/created's first batch, before the end.
        ctx.wait_for_first_passes();
    }
    let answered = ctx.fixtures().answered.all();
    if answered.is_empty() {
        return round_trip_own(ctx);
    }
    let fetches: Vec<RequestSpec> = answered
        .iter()
        .map(|pet| RequestSpec::get(format!("/pets/{}", expect::pet_id(pet).unwrap_or_default())))
        .collect();
    let mut failures = Vec::new();
    let mut undecided = None;
    for (created, fetched) in answered.iter().zip(ctx.send_all(&fetches)) {
        ctx.case_done();
        let judged = expect::status(&fetched, &[200], "200 with the created Pet")
            .and_then(|()| expect::body(ctx.contract(), &fetched, SchemaName::Pet).cloned())
            .and_then(|pet| get_pet::same_pet(created, &pet, &fetched));
        match judged {
            Ok(()) => {}
            Err(Verdict::Failed(failure)) => failures.push((created.to_string().len(), *failure)),
            Err(other) => {
                undecided.get_or_insert(other);
            }
        }
    }
    // Each kind of failure once, shown on the shortest pet that reads back wrong: the
    // plainest request that shows it.
    failures.sort_by_key(|(size, _)| *size);
    let mut kinds = BTreeSet::new();
    let failures = failures
        .into_iter()
        .map(|(_, failure)| failure)
        .filter(|failure| kinds.insert(failure.class_key()))
        .collect();
    match (Verdict::failed_distinct(failures), undecided) {
        (Some(failed), _) | (None, Some(failed)) => Err(failed),
        (None, None) => Ok(()),
    }
}

/// [`round_trip`] on pets of its own: generated NewPets, each created, then fetched.
fn round_trip_own(ctx: &RuleCtx) -> Checked {
    let (boundary, strategy) = new_pets(ctx)?;
    property::check_all(ctx, boundary, strategy, generation::describe_pet, |sent| {
        let exchange = ctx.send(&RequestSpec::post("/pets", Body::Json(sent.clone())));
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
        let pet = expect::body(ctx.contract(), &fetched, SchemaName::Pet)?;
        get_pet::same_pet(&created, pet, &fetched)
    })
}

/// The fixed valid pet the named mutations are applied to: its name and categoryId are unique
/// to the rule, so a pet stored from the refused body can be recognised.
fn marked_pet(ctx: &RuleCtx, tag: &str) -> Value {
    json!({"name": ctx.pet_name(tag), "categoryId": marker_category(ctx), "status": "pending"})
}

fn mutation(ctx: &RuleCtx, name: &str) -> Result<mutations::Mutation, Verdict> {
    mutations::named(ctx.new_pet_schema(), name)
        .ok_or_else(|| Verdict::skipped(format!("NewPet.json has no mutation {name:?}")))
}

/// An invalid body is refused with an Error and stores nothing.
pub fn refused(ctx: &RuleCtx, name: &str, expect: Refusal) -> Checked {
    let mutation = mutation(ctx, name)?;
    let valid = marked_pet(ctx, name);
    let create = mutation.create(ctx.new_pet_schema(), &valid);
    let watch = ctx.fixtures().watch(ctx);
    let exchange = ctx.send(&create);
    ctx.case_done();
    let what = mutation.breaks();
    match expect {
        Refusal::Exactly400 => expect::status(&exchange, &[400], &format!("400 ({what})"))?,
        Refusal::Any4xx => expect::client_error(&exchange, &format!("a 4xx refusal ({what})"))?,
    }
    expect::error_body(ctx.contract(), &exchange)?;
    let marker = mutation.marker(&valid);
    if marker.name.is_none() && marker.category_id.is_none() {
        return Ok(()); // nothing in the body would identify a stored pet
    }
    watch.assert_not_stored(ctx, &marker)
}

/// Every schema mutation, of the fixed pet and then of generated pets, is refused.
pub fn mutations_property(ctx: &RuleCtx) -> Checked {
    let schema = ctx.new_pet_schema();
    let all: Vec<mutations::Mutation> = mutations::for_schema(schema)
        .into_iter()
        .filter(mutations::Mutation::breaks_schema)
        .collect();
    let (_, pets) = new_pets(ctx)?;
    let fixed = marked_pet(ctx, "mutated");
    let boundary: Vec<(Value, usize)> =
        (0..all.len()).map(|index| (fixed.clone(), index)).collect();
    let strategy = (pets, 0..all.len());
    let request = |(pet, index): &(Value, usize)| all[*index].create(schema, pet);
    property::check_all_sent_ahead(
        ctx,
        boundary,
        strategy,
        |(pet, index)| {
            format!(
                "{} ({}) of {}",
                all[*index].name(),
                all[*index].breaks(),
                generation::describe_pet(pet)
            )
        },
        SentAhead::first(&|case| Some(request(case))),
        |case| {
            let mutation = &all[case.1];
            let exchange = ctx.send(&request(case));
            expect::client_error(&exchange, &format!("a 4xx refusal ({})", mutation.breaks()))?;
            expect::error_body(ctx.contract(), &exchange)
        },
    )
}

/// Well-formed bodies with invalid values get exactly 400, as the contract says.
pub fn invalid_values_400(ctx: &RuleCtx, mutations: &[String]) -> Checked {
    let mut sent = Vec::new();
    let mut specs = Vec::new();
    for name in mutations {
        let mutation = mutation(ctx, name)?;
        specs.push(mutation.create(ctx.new_pet_schema(), &marked_pet(ctx, name)));
        sent.push(mutation);
    }
    for (mutation, exchange) in sent.iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        expect::status(&exchange, &[400], &format!("400 ({})", mutation.breaks()))?;
    }
    Ok(())
}

/// Whether a confused body is still a valid NewPet (a string for a string): no confusion.
/// Any other is refused; null for an optional property too, being present and none of its
/// allowed values (optional means it may be left out).
fn still_valid(ctx: &RuleCtx, body: &Value) -> bool {
    ctx.contract().is_valid(SchemaName::NewPet, body)
}

/// The createPet of the confused body, unless it is still a valid NewPet.
fn confused(ctx: &RuleCtx, valid: &Value, confusions: &[Confusion]) -> Option<RequestSpec> {
    let body = confusion::apply(valid, confusions);
    (!still_valid(ctx, &body)).then(|| create(&body).refused_by_contract(true))
}

/// Sends the confused body; a body the schema refuses gets a 4xx and an Error, and no body
/// gets a 5xx.
fn send_confused(ctx: &RuleCtx, valid: &Value, confusions: &[Confusion]) -> Checked {
    let Some(request) = confused(ctx, valid, confusions) else {
        return Ok(());
    };
    let exchange = ctx.send(&request);
    let response = expect::response(&exchange)?;
    let what = confusion::describe(confusions);
    if response.status >= 500 {
        return Err(Verdict::failed(
            format!("no 5xx ({what})"),
            exchange.summary(),
            &exchange,
        ));
    }
    expect::client_error(&exchange, &format!("a 4xx refusal ({what})"))?;
    expect::error_body(ctx.contract(), &exchange)
}

/// Every property of NewPet given every JSON type it is not, another case, or left out: alone
/// (boundary cases), then combined on generated pets.
pub fn type_confusion(ctx: &RuleCtx) -> Checked {
    let schema = ctx.new_pet_schema();
    let fixed = marked_pet(ctx, "confused");
    let boundary: Vec<(Value, Vec<Confusion>)> = confusion::singles(schema, &fixed)
        .into_iter()
        .map(|single| (fixed.clone(), vec![single]))
        .collect();
    let (_, pets) = new_pets(ctx)?;
    let strategy = (pets, confusion::strategy(schema));
    property::check_all_sent_ahead(
        ctx,
        boundary,
        strategy,
        |(pet, confusions)| {
            format!(
                "{} in {}",
                confusion::describe(confusions),
                generation::describe_pet(pet)
            )
        },
        SentAhead::first(&|(pet, confusions)| confused(ctx, pet, confusions)),
        |(pet, confusions)| send_confused(ctx, pet, confusions),
    )
}

/// A body refused for type confusion stores nothing (checked in one listing, before the store
/// fills up). Each case has a name and a categoryId of its own, so a stored one is recognised
/// by whichever of the two it left as it was.
pub fn type_confusion_stores_nothing(ctx: &RuleCtx) -> Checked {
    let schema = ctx.new_pet_schema();
    let mut markers = Vec::new();
    let mut sent = Vec::new();
    let mut specs = Vec::new();
    let singles = confusion::singles(schema, &marked_pet(ctx, "confused"));
    for (n, single) in singles.into_iter().enumerate() {
        let name = ctx.pet_name(&format!("confused-{n}"));
        let category = marker_category(ctx) + n as i64;
        let valid = json!({"name": name, "categoryId": category, "status": "pending"});
        let body = confusion::apply(&valid, std::slice::from_ref(&single));
        if still_valid(ctx, &body) {
            continue;
        }
        specs.push(RequestSpec::post("/pets", Body::Json(body)).refused_by_contract(true));
        sent.push((name, category, single));
    }
    // Independent bodies: sent together; what is stored is looked at once, after all.
    let watch = ctx.fixtures().watch(ctx);
    for ((name, category, single), exchange) in sent.into_iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        // What the answer should be is type-confusion's business; here, only what is stored.
        if exchange.cut_by_transport() || exchange.status().is_none_or(|s| (200..300).contains(&s))
        {
            continue; // unanswered or cut, or stored and said so: not a refusal to check
        }
        markers.push(Marker {
            name: (single.property != "name").then_some(name),
            category_id: (single.property != "categoryId").then_some(category),
        });
    }
    if markers.is_empty() {
        return Err(Verdict::inconclusive("no confused body was refused"));
    }
    watch.assert_none_stored(ctx, &markers)
}
