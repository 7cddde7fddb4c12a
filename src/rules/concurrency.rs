//! Concurrency: clients creating pets at the same moment, as a real store sees them. A store
//! that hands one id to two pets, or answers 201 and then loses the pet, shows here rather
//! than by luck.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Checked, RuleCtx, Verdict, expect, get_pet};
use crate::contract::{PET_STATUSES, SchemaName};
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::Exchange;
use crate::rules::fixtures::listing_room;

/// One round: `clients` createPet requests sent at the same moment, each answered 201 with a
/// Pet; returns the pets with the exchanges that created them. Their statuses take turns,
/// unless `status` names one for all.
fn create_at_once(
    ctx: &RuleCtx,
    clients: u64,
    round: u64,
    status: Option<&str>,
) -> Result<Vec<(Value, Exchange)>, Verdict> {
    let clients = clients as usize;
    let specs: Vec<RequestSpec> = (0..clients)
        .map(|n| {
            let pet = json!({
                "name": ctx.pet_name(&format!("concurrent-{round}-{n}")),
                "categoryId": ctx.run.categories.accepted(n as i64),
                "status": status.unwrap_or(PET_STATUSES[n % PET_STATUSES.len()]),
            });
            RequestSpec::post("/pets", Body::Json(pet))
        })
        .collect();
    let mut created = Vec::new();
    for exchange in ctx.send_at_once(&specs) {
        ctx.case_done();
        expect::status(
            &exchange,
            &[201],
            &format!("201 (the animal was added), with {clients} creates at the same moment"),
        )?;
        let pet = expect::body(ctx, &exchange, SchemaName::Pet)?.clone();
        created.push((pet, exchange));
    }
    Ok(created)
}

/// "Unique identifier, assigned by the service on creation", under concurrency: every id
/// distinct, and every pet, fetched by its id, the pet createPet returned. A round's pets are
/// fetched while the next round is created (the fetches need only their own round's ids), so
/// the rounds cost one round trip each, and one more.
pub fn distinct_ids(ctx: &RuleCtx, clients: u64, rounds: u64) -> Checked {
    let mut seen: BTreeMap<i64, Value> = BTreeMap::new();
    let mut to_fetch: Vec<(Value, Exchange)> = Vec::new();
    for round in 0..=rounds {
        let fetches: Vec<RequestSpec> = to_fetch
            .iter()
            .map(|(pet, _)| {
                RequestSpec::get(format!("/pets/{}", expect::pet_id(pet).unwrap_or_default()))
            })
            .collect();
        // One request at a time (`--concurrency 1`), in one fixed order: fetches, then creates.
        let sequential = ctx.run.concurrency == 1;
        let fetched_first = if sequential && !fetches.is_empty() {
            ctx.send_all(&fetches)
        } else {
            Vec::new()
        };
        let (created, fetched) = std::thread::scope(|scope| {
            // The fetches count as part of this round's round trip, not one of their own.
            let fetching = (!sequential && !fetches.is_empty())
                .then(|| scope.spawn(|| super::lane_collect(|| ctx.send_all(&fetches))));
            let created = (round < rounds).then(|| create_at_once(ctx, clients, round, None));
            let fetched = fetching.map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            });
            (created, fetched.unwrap_or(fetched_first))
        });
        for ((pet, _), fetched) in to_fetch.iter().zip(&fetched) {
            ctx.case_done();
            expect::status(
                fetched,
                &[200],
                "200 with the pet createPet answered 201 for (created at the same moment as others)",
            )?;
            let body = expect::body(ctx, fetched, SchemaName::Pet)?;
            get_pet::same_pet(pet, body, fetched)?;
        }
        let Some(created) = created else {
            break;
        };
        let mut created = created?;
        // Fetched in id order: the ids follow arrival order, which varies from run to run; the
        // requests of a seed stay the same.
        created.sort_by_key(|(pet, _)| expect::pet_id(pet));
        for (pet, exchange) in &created {
            let id = expect::pet_id(pet).unwrap_or_default();
            if let Some(earlier) = seen.insert(id, pet.clone()) {
                return Err(Verdict::failed(
                    "a new id for every pet, whatever is created at the same moment",
                    format!("id {id} given to {earlier} and to {pet}"),
                    exchange,
                ));
            }
        }
        to_fetch = created;
    }
    Ok(())
}

/// Every pet created at the same moment is in the listing, when the listing shows every pet
/// that matches (fewer than the page holds): the whole store's, or on a crowded store the
/// least crowded status's. Nothing is created when no listing has room.
pub fn all_listed(ctx: &RuleCtx, clients: u64) -> Checked {
    let status = listing_room(ctx, clients as usize)?;
    // Its pets take every status: the store's empty states are looked at before.
    ctx.run.fixtures.first_status_pages(ctx);
    let created = create_at_once(ctx, clients, 0, status)?;
    let mut spec = RequestSpec::get("/pets").query("limit", "100");
    if let Some(status) = status {
        spec = spec.query("status", status);
    }
    let listing = ctx.send(&spec);
    ctx.case_done();
    let pets = expect::listing(&listing)?;
    if pets.len() >= 100 {
        return Err(Verdict::inconclusive(
            "the listing filled to 100 pets or more while the rule ran, so a pet missing from \
             the first page could sit on another",
        ));
    }
    for (pet, _) in &created {
        let id = expect::pet_id(pet);
        if !pets.iter().any(|listed| expect::pet_id(listed) == id) {
            return Err(Verdict::failed(
                format!(
                    "every pet created is listed (the listing holds {} pets, so all of them)",
                    pets.len()
                ),
                format!("{pet} is missing"),
                &listing,
            ));
        }
    }
    Ok(())
}
