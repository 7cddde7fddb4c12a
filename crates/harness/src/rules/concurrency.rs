//! Concurrency: clients creating pets at the same moment, as a real store sees them. A store
//! that hands one id to two pets, or answers 201 and then loses the pet, shows here rather
//! than by luck.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::get_pet;
use crate::contract::{PET_STATUSES, SchemaName};
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::engine::store_setup::listing_room;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Checked, Exchange, Verdict};

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
                "categoryId": ctx.categories().accepted(n as i64),
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
        let pet = expect::body(ctx.contract(), &exchange, SchemaName::Pet)?.clone();
        created.push((pet, exchange));
    }
    Ok(created)
}

/// A round of [`distinct_ids`]: each pet with the exchanges that created and fetched it.
type Round = Vec<(Value, Exchange, Exchange)>;

/// One round of [`distinct_ids`]: `clients` pets created at the same moment, then each fetched
/// by its id (all at once); the pets in id order.
fn create_and_fetch(ctx: &RuleCtx, clients: u64, round: u64) -> Result<Round, Verdict> {
    let mut created = create_at_once(ctx, clients, round, None)?;
    // Fetched in id order: the ids follow arrival order, which varies from run to run; the
    // requests of a seed stay the same.
    created.sort_by_key(|(pet, _)| expect::pet_id(pet));
    let fetches: Vec<RequestSpec> = created
        .iter()
        .map(|(pet, _)| {
            RequestSpec::get(format!("/pets/{}", expect::pet_id(pet).unwrap_or_default()))
        })
        .collect();
    let fetched = ctx.send_all(&fetches);
    Ok(created
        .into_iter()
        .zip(fetched)
        .map(|((pet, created), fetched)| (pet, created, fetched))
        .collect())
}

/// "Unique identifier, assigned by the service on creation", under concurrency: every id
/// distinct, and every pet, fetched by its id, the pet createPet returned. The rounds are
/// bursts of their own that overlap (each starts as soon as it has its places, not when the
/// one before is answered), so the rule costs two round trips, not two per round; under
/// `--concurrency 1` they go one after another, in one fixed order.
pub fn distinct_ids(ctx: &RuleCtx, clients: u64, rounds: u64) -> Checked {
    let results: Vec<Result<Round, Verdict>> = if ctx.concurrency() == 1 {
        (0..rounds)
            .map(|round| create_and_fetch(ctx, clients, round))
            .collect()
    } else {
        let (results, longest) = std::thread::scope(|scope| {
            let rounds: Vec<_> = (0..rounds)
                .map(|round| {
                    scope.spawn(move || {
                        crate::engine::ctx::lane_collect(|| create_and_fetch(ctx, clients, round))
                    })
                })
                .collect();
            let mut longest = 0;
            let results: Vec<_> = rounds
                .into_iter()
                .map(|handle| {
                    let (result, trips) = handle
                        .join()
                        .unwrap_or_else(|e| std::panic::resume_unwind(e));
                    longest = longest.max(trips);
                    result
                })
                .collect();
            (results, longest)
        });
        ctx.add_round_trips(longest);
        results
    };
    let mut seen: BTreeMap<i64, Value> = BTreeMap::new();
    for result in results {
        let round = result?;
        for (pet, created, _) in &round {
            let id = expect::pet_id(pet).unwrap_or_default();
            if let Some(earlier) = seen.insert(id, pet.clone()) {
                return Err(Verdict::failed(
                    "a new id for every pet, whatever is created at the same moment",
                    format!("id {id} given to {earlier} and to {pet}"),
                    created,
                ));
            }
        }
        for (pet, _, fetched) in &round {
            ctx.case_done();
            expect::status(
                fetched,
                &[200],
                "200 with the pet createPet answered 201 for (created at the same moment as others)",
            )?;
            let body = expect::body(ctx.contract(), fetched, SchemaName::Pet)?;
            get_pet::same_pet(pet, body, fetched)?;
        }
    }
    Ok(())
}

/// Every pet created at the same moment is in the listing, when the listing shows every pet
/// that matches (fewer than the page holds): the whole store's, or on a crowded store the
/// least crowded status's. Where the whole store filled while the rule ran (the rules beside
/// store pets too), each status's listing shows its pets instead. Nothing is created when no
/// listing has room.
pub fn all_listed(ctx: &RuleCtx, clients: u64) -> Checked {
    let status = listing_room(ctx.fixtures(), ctx, clients as usize)?;
    // Its pets take every status: the store's empty states are looked at before.
    ctx.fixtures().first_status_pages(ctx);
    let created = create_at_once(ctx, clients, 0, status)?;
    let listed = |status: Option<&str>| {
        let mut spec = RequestSpec::get("/pets").query("limit", "100");
        if let Some(status) = status {
            spec = spec.query("status", status);
        }
        spec
    };
    let listing = ctx.send(&listed(status));
    ctx.case_done();
    let pets = expect::listing(&listing)?;
    if pets.len() < 100 {
        return each_listed(&created, pets, &listing);
    }
    if status.is_some() {
        return Err(filled());
    }
    let statuses: Vec<&str> = PET_STATUSES
        .iter()
        .copied()
        .filter(|status| created.iter().any(|(pet, _)| pet["status"] == *status))
        .collect();
    let specs: Vec<RequestSpec> = statuses.iter().map(|status| listed(Some(status))).collect();
    for (status, listing) in statuses.into_iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        let pets = expect::listing(&listing)?;
        if pets.len() >= 100 {
            return Err(filled());
        }
        let of_status: Vec<(Value, Exchange)> = created
            .iter()
            .filter(|(pet, _)| pet["status"] == status)
            .cloned()
            .collect();
        each_listed(&of_status, pets, &listing)?;
    }
    Ok(())
}

fn filled() -> Verdict {
    Verdict::inconclusive(
        "the listing filled to 100 pets or more while the rule ran, so a pet missing from \
         the first page could sit on another",
    )
}

/// Every pet of `created` is in `pets`, a listing of fewer than 100 (so of every match).
fn each_listed(created: &[(Value, Exchange)], pets: &[Value], listing: &Exchange) -> Checked {
    for (pet, _) in created {
        let id = expect::pet_id(pet);
        if !pets.iter().any(|listed| expect::pet_id(listed) == id) {
            return Err(Verdict::failed(
                format!(
                    "every pet created is listed (the listing holds {} pets, so all of them)",
                    pets.len()
                ),
                format!("{pet} is missing"),
                listing,
            ));
        }
    }
    Ok(())
}
