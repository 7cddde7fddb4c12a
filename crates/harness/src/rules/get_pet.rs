//! getPet: `GET /pets/{petId}` (deprecated).

use crate::contract::SchemaName;
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::generation::request::RequestSpec;
use crate::outcome::{Checked, Exchange, Verdict};

/// "200 | Pet | The animal exists."
pub fn existing(ctx: &RuleCtx) -> Checked {
    let created = ctx.fixtures().existing_pet(ctx)?;
    let id = expect::pet_id(&created).unwrap_or_default();
    let exchange = ctx.send(&RequestSpec::get(format!("/pets/{id}")));
    ctx.case_done();
    expect::status(&exchange, &[200], "200 with the Pet")?;
    let fetched = expect::body(ctx.contract(), &exchange, SchemaName::Pet)?;
    same_pet(&created, fetched, &exchange)
}

/// The fetched pet has the contract's fields the created one has, with the same values (a
/// status createPet left out is not compared: "No default is stated"; extra fields neither).
pub fn same_pet(
    created: &serde_json::Value,
    fetched: &serde_json::Value,
    exchange: &crate::outcome::Exchange,
) -> Checked {
    for field in ["id", "name", "categoryId", "status"] {
        if created.get(field).is_some() && created.get(field) != fetched.get(field) {
            return Err(Verdict::failed(
                format!("the pet as createPet returned it: {created}"),
                format!("{field} differs: {fetched}"),
                exchange,
            ));
        }
    }
    Ok(())
}

/// Ids unlikely to exist, each of a kind a store reads its own way (int64's ends, past 2^53
/// where a double loses the last digit, past 2^31, small), then [`RANDOM_IDS`] drawn at random
/// past 2^62, which no store of any size holds by chance: one answered wrongly does not hide
/// another. Offsets come from the seed and step past any id the run has seen (the store's
/// first page, the run's own pets); an id that does exist after all is skipped, not counted.
/// [`beside_stored`] adds ids relative to a stored pet's.
pub fn unknown_ids(ctx: &RuleCtx) -> [(i64, &'static str); 5 + RANDOM_IDS] {
    let offset = (ctx.seed % 1_000_000) as i64;
    let known = |id: &i64| ctx.fixtures().seen(*id);
    let unseen = |start: i64| (start..).step_by(2).find(|id| !known(id)).unwrap_or(start);
    let random = |n: u64| {
        let drawn = crate::seed::splitmix64(ctx.seed ^ (0x7261_6e64 + n));
        unseen((1 << 62) | (drawn >> 2) as i64)
    };
    [
        (i64::MAX, "int64's maximum"),
        (i64::MIN, "int64's minimum"),
        (unseen((1 << 53) + (1 << 21) + 2 * offset + 1), "past 2^53"),
        (unseen((1 << 31) + 1_000_000 + offset), "past 2^31"),
        (unseen(1_000_001 + offset), "small"),
        (random(0), "random past 2^62"),
        (random(1), "random past 2^62"),
        (random(2), "random past 2^62"),
    ]
}

/// Ids drawn at random past 2^62 among the unknown ids. A store holds one of them only if it
/// made it up: one answered with a Pet of its id is taken to exist (the run does not know
/// every id), two are not.
pub const RANDOM_IDS: usize = 3;

/// Ids that share the low 32 or 31 bits of a stored pet's id (`id` ± 2^32, + 2^31): a store
/// that keeps ids in an int32 column, or casts them, finds that pet under another id.
fn beside_stored(ctx: &RuleCtx, id: i64) -> Vec<(i64, &'static str)> {
    [
        (id.checked_add(1 << 32), "a stored pet's id plus 2^32"),
        (id.checked_sub(1 << 32), "a stored pet's id minus 2^32"),
        (id.checked_add(1 << 31), "a stored pet's id plus 2^31"),
    ]
    .into_iter()
    .filter_map(|(id, kind)| Some((id?, kind)))
    .filter(|(id, _)| !ctx.fixtures().seen(*id))
    .collect()
}

/// "404 | Error | The animal could not be found.": every unknown id, all sent at once and
/// each judged, so that one wrong answer (422 to int64's maximum) does not mask another (200
/// to the others); each distinct wrong answer is reported.
pub fn unknown(ctx: &RuleCtx) -> Checked {
    let mut ids = unknown_ids(ctx).to_vec();
    // The pet every getPet rule reads; without one (a read-only run), the ids above.
    if let Ok(pet) = ctx.fixtures().existing_pet(ctx)
        && let Some(id) = expect::pet_id(&pet)
    {
        ids.extend(beside_stored(ctx, id));
    }
    let specs: Vec<RequestSpec> = ids
        .iter()
        .map(|(id, _)| RequestSpec::get(format!("/pets/{id}")))
        .collect();
    let mut judged = 0;
    let mut failures = Vec::new();
    let mut undecided = None;
    let mut made_up = Vec::new();
    for ((id, kind), exchange) in ids.iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        let response = match expect::response(&exchange) {
            Ok(response) => response,
            Err(verdict) => {
                undecided.get_or_insert(verdict);
                continue;
            }
        };
        let is_that_pet = response.status == 200
            && response.json.as_ref().is_some_and(|pet| {
                ctx.contract().is_valid(SchemaName::Pet, pet) && expect::pet_id(pet) == Some(*id)
            });
        if is_that_pet {
            if kind.starts_with("random") {
                made_up.push(exchange);
            }
            continue; // a pet with this id exists after all: not an unknown id
        }
        judged += 1;
        let verdict = expect::status(
            &exchange,
            &[404],
            &format!("404 (no animal with this petId, {kind})"),
        )
        .and_then(|()| expect::error_body(ctx.contract(), &exchange));
        match verdict {
            Err(Verdict::Failed(mut failure)) => {
                let status = exchange.status().unwrap_or_default();
                failure.class = Some(format!("{kind}: {status}"));
                failures.push(*failure);
            }
            Err(other) => {
                undecided.get_or_insert(other);
            }
            Ok(()) => {}
        }
    }
    if made_up.len() > 1 {
        // Pets of several random 63-bit ids: the store answers a Pet for an id it never gave.
        let shown: Vec<String> = made_up.iter().map(Exchange::summary).collect();
        let failure = Verdict::failed(
            "404 (no animal with this petId): ids drawn at random past 2^62, which no store \
             holds unless it made them up",
            format!(
                "a Pet of the id asked for, for {} of {RANDOM_IDS} random ids: {}",
                made_up.len(),
                shown.join("; ")
            ),
            &made_up[0],
        )
        .in_class("random ids: 200");
        if let Verdict::Failed(failure) = failure {
            failures.push(*failure);
        }
    }
    if let Some(verdict) = Verdict::failed_distinct(failures) {
        return Err(verdict);
    }
    if let Some(verdict) = undecided {
        return Err(verdict);
    }
    if judged == 0 {
        return Err(Verdict::inconclusive(
            "every id tried belongs to an existing pet; no unknown id to ask for",
        ));
    }
    Ok(())
}

/// A petId that is not an integer is a client error, never a success or a crash.
pub fn non_integer(ctx: &RuleCtx, pet_id: &str) -> Checked {
    let exchange = ctx.send(&RequestSpec::get(format!("/pets/{pet_id}")));
    ctx.case_done();
    expect::status(&exchange, &[400, 404], "400 or 404 (petId is an int64)")?;
    expect::error_body(ctx.contract(), &exchange)
}
