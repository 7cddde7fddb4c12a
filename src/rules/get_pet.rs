//! getPet: `GET /pets/{petId}` (deprecated).

use crate::contract::SchemaName;
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::generation::request::RequestSpec;
use crate::outcome::{Checked, Verdict};

/// "200 | Pet | The animal exists."
pub fn existing(ctx: &RuleCtx) -> Checked {
    let created = ctx.run.fixtures.existing_pet(ctx)?;
    let id = expect::pet_id(&created).unwrap_or_default();
    let exchange = ctx.send(&RequestSpec::get(format!("/pets/{id}")));
    ctx.case_done();
    expect::status(&exchange, &[200], "200 with the Pet")?;
    let fetched = expect::body(ctx, &exchange, SchemaName::Pet)?;
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

/// Ids unlikely to exist; an id that does exist is skipped, not counted against the target.
pub fn unknown_ids(ctx: &RuleCtx) -> [i64; 3] {
    [i64::MAX, i64::MAX - 1, (ctx.seed >> 1) as i64 | (1 << 61)]
}

/// "404 | Error | The animal could not be found."
pub fn unknown(ctx: &RuleCtx) -> Checked {
    for id in unknown_ids(ctx) {
        let exchange = ctx.send(&RequestSpec::get(format!("/pets/{id}")));
        ctx.case_done();
        let response = expect::response(&exchange)?;
        let is_that_pet = response.status == 200
            && response.json.as_ref().is_some_and(|pet| {
                ctx.contract().is_valid(SchemaName::Pet, pet) && expect::pet_id(pet) == Some(id)
            });
        if is_that_pet {
            continue; // a pet with this id exists after all: try another id
        }
        expect::status(&exchange, &[404], "404 (no animal with this petId)")?;
        return expect::error_body(ctx, &exchange);
    }
    Err(Verdict::inconclusive(
        "every id tried belongs to an existing pet; no unknown id to ask for",
    ))
}

/// A petId that is not an integer is a client error, never a success or a crash.
pub fn non_integer(ctx: &RuleCtx, pet_id: &str) -> Checked {
    let exchange = ctx.send(&RequestSpec::get(format!("/pets/{pet_id}")));
    ctx.case_done();
    expect::status(&exchange, &[400, 404], "400 or 404 (petId is an int64)")?;
    expect::error_body(ctx, &exchange)
}
