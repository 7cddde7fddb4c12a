//! Authentication: "All operations require a bearer credential."

use serde_json::json;

use crate::contract::Operation;
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::engine::store_setup::Marker;
use crate::generation::request::NearMiss;
use crate::generation::request::{Body, Credential, RequestSpec};
use crate::outcome::{Checked, Verdict};

/// The request of the rule's operation, as it would be sent with the key.
fn request(ctx: &RuleCtx) -> Result<RequestSpec, Verdict> {
    request_for(ctx, ctx.rule.operation)
}

/// A valid request of `operation`, as it would be sent with the key.
pub(super) fn request_for(ctx: &RuleCtx, operation: Operation) -> Result<RequestSpec, Verdict> {
    Ok(match operation {
        Operation::ListPets => RequestSpec::get("/pets"),
        Operation::CreatePet => {
            let pet = json!({"name": ctx.pet_name("auth"), "categoryId": ctx.categories().accepted(1), "status": "pending"});
            RequestSpec::post("/pets", Body::Json(pet))
        }
        Operation::GetPet => {
            let pet = ctx.fixtures().existing_pet(ctx)?;
            RequestSpec::get(format!("/pets/{}", expect::pet_id(&pet).unwrap_or(1)))
        }
        Operation::ListStoreOrders => RequestSpec::get("/store/orders"),
        Operation::Any => return Err(Verdict::skipped("auth rules name one operation")),
    })
}

/// A request whose credential is missing or invalid gets 401 with an Error body.
pub fn refused(ctx: &RuleCtx, credential: &Credential) -> Checked {
    let spec = request(ctx)?.credential(credential.clone());
    let exchange = ctx.send(&spec);
    ctx.case_done();
    expect::status(&exchange, &[401], "401 (missing or invalid API key)")?;
    expect::error_body(ctx.contract(), &exchange)
}

/// The operations a credential rule of operation `any` probes.
const EVERY_OPERATION: [Operation; 4] = [
    Operation::ListPets,
    Operation::CreatePet,
    Operation::GetPet,
    Operation::ListStoreOrders,
];

/// A near miss of the key (one character more or less, another case, twice) is another
/// token: every operation refuses it with 401 and an Error.
pub fn near_miss_refused(ctx: &RuleCtx, near: &NearMiss) -> Checked {
    let near = *near;
    let name = near.name();
    if !ctx.near_miss_differs(near) {
        return Err(Verdict::skipped(format!(
            "the key has no {name} near miss that differs from it (empty, or no letter, digit or token68 symbol)"
        )));
    }
    let mut specs = Vec::new();
    for operation in EVERY_OPERATION {
        specs.push(request_for(ctx, operation)?.credential(Credential::NearMiss(near)));
    }
    // Independent requests: sent together, judged in order.
    for exchange in ctx.send_all(&specs) {
        ctx.case_done();
        expect::status(
            &exchange,
            &[401],
            &format!("401 (the key {name} is an invalid key)"),
        )?;
        expect::error_body(ctx.contract(), &exchange)?;
    }
    Ok(())
}

/// The requests, invalid in other ways than their credential, that an auth-precedence rule
/// sends: the ones of the rule's operation.
pub struct Invalid<'p> {
    /// Query strings (`name=value`) for listPets.
    pub queries: &'p [String],
    /// petId values for getPet.
    pub pet_ids: &'p [String],
    /// Named body mutations for createPet.
    pub mutations: &'p [String],
}

/// The invalid requests of the rule's operation, from its params: query strings for
/// listPets, petId values for getPet, named body mutations for createPet.
fn invalid_requests(ctx: &RuleCtx, invalid: &Invalid) -> Result<Vec<RequestSpec>, Verdict> {
    Ok(match ctx.rule.operation {
        Operation::ListPets => invalid
            .queries
            .iter()
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                RequestSpec::get("/pets").query(name, value)
            })
            .collect(),
        Operation::GetPet => invalid
            .pet_ids
            .iter()
            .map(|id| RequestSpec::get(format!("/pets/{id}")))
            .collect(),
        Operation::CreatePet => {
            let schema = ctx.new_pet_schema();
            let valid =
                json!({"name": ctx.pet_name("precedence"), "categoryId": marker_category(ctx)});
            let mut specs = Vec::new();
            for name in invalid.mutations {
                let mutation =
                    crate::generation::mutations::named(schema, name).ok_or_else(|| {
                        Verdict::skipped(format!("NewPet.json has no mutation {name:?}"))
                    })?;
                specs.push(RequestSpec::post("/pets", mutation.apply(schema, &valid)));
            }
            specs
        }
        _ => Vec::new(),
    })
}

/// "When the key is missing or invalid, the operation answers 401": before anything else is
/// looked at, so a request that is also invalid in other ways still gets 401.
pub fn precedence(ctx: &RuleCtx, credentials: &[Credential], invalid: Invalid) -> Checked {
    let specs: Vec<RequestSpec> = invalid_requests(ctx, &invalid)?
        .into_iter()
        .flat_map(|spec| {
            credentials
                .iter()
                .map(move |credential| spec.clone().credential(credential.clone()))
        })
        .collect();
    for exchange in ctx.send_all(&specs) {
        ctx.case_done();
        expect::status(
            &exchange,
            &[401],
            "401 (missing or invalid API key), before what else is wrong with the request",
        )?;
        expect::error_body(ctx.contract(), &exchange)?;
    }
    Ok(())
}

/// A request with a valid key under a differently-cased scheme name is not refused.
pub fn accepted(ctx: &RuleCtx, credential: &Credential) -> Checked {
    let spec = request(ctx)?.credential(credential.clone());
    let exchange = ctx.send(&spec);
    ctx.case_done();
    let response = expect::response(&exchange)?;
    if matches!(response.status, 401 | 403) {
        return Err(Verdict::failed(
            "the request is authorized (the scheme name is case-insensitive)",
            exchange.summary(),
            &exchange,
        ));
    }
    Ok(())
}

/// A createPet refused for its credential leaves the store as it was.
pub fn refused_create_stores_nothing(ctx: &RuleCtx) -> Checked {
    let marker = Marker {
        name: Some(ctx.pet_name("refused")),
        category_id: Some(marker_category(ctx)),
    };
    let watch = ctx.fixtures().watch(ctx);
    let pet = json!({"name": marker.name, "categoryId": marker.category_id, "status": "pending"});
    let specs: Vec<RequestSpec> = [Credential::Missing, Credential::WrongKey]
        .into_iter()
        .map(|credential| {
            RequestSpec::post("/pets", Body::Json(pet.clone())).credential(credential)
        })
        .collect();
    // Both at once: neither depends on the other, and the listing after waits for both.
    for _ in ctx.send_all(&specs) {
        ctx.case_done();
    }
    watch.assert_not_stored(ctx, &marker)
}

/// A categoryId no other request of the run uses, so a stored pet can be recognised; between
/// 10^9 and 2^31 (with the few added to it), where every store takes an int64: a probe for
/// one mistake carries no value another store refuses for its own reason (19 digits, past
/// 2^53, past int32), which would answer the probe for that reason and hide what it probes.
pub fn marker_category(ctx: &RuleCtx) -> i64 {
    marker_of(ctx.seed)
}

fn marker_of(seed: u64) -> i64 {
    1_000_000_007 + (seed % 1_000_000_000) as i64
}

/// "A listing of store orders at `GET /store/orders` is named as existing."
pub fn store_orders_answered(ctx: &RuleCtx) -> Checked {
    let exchange = ctx.send(&RequestSpec::get("/store/orders"));
    ctx.case_done();
    let response = expect::response(&exchange)?;
    if matches!(response.status, 401 | 404) {
        return Err(Verdict::failed(
            "an answer other than 404 (the operation exists) and 401 (the key is valid)",
            exchange.summary(),
            &exchange,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod marker_tests {
    #[test]
    fn every_seed_marks_within_int32_and_seeds_differ() {
        for seed in [0, 1, 999_999_999, 1 << 53, u64::MAX - 1, u64::MAX] {
            let marker = super::marker_of(seed);
            // Room for the thousand added to it by the rules that mark several pets.
            assert!(
                (1_000_000_000..i64::from(i32::MAX) - 1000).contains(&marker),
                "{seed}: {marker}"
            );
        }
        assert_ne!(super::marker_of(1), super::marker_of(2));
    }
}
