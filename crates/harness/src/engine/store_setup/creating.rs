//! The pets the store setup creates, and the answers it reads them from.

use serde_json::{Value, json};

use super::access::StoreAccess;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::Exchange;

pub(super) fn create_request(
    ctx: &impl StoreAccess,
    name: &str,
    status: Option<&str>,
) -> RequestSpec {
    let mut pet = json!({"name": name, "categoryId": ctx.accepted_category()});
    if let Some(status) = status {
        pet["status"] = json!(status);
    }
    RequestSpec::post("/pets", Body::Json(pet))
}

/// The pet a createPet answer says it created, or why the rule cannot have it.
pub(super) fn created(exchange: &Exchange) -> Result<Value, String> {
    match (exchange.status(), exchange.json()) {
        (Some(200..=299), Some(pet)) if pet.get("id").and_then(Value::as_i64).is_some() => {
            Ok(pet.clone())
        }
        _ => Err(format!(
            "could not create the pet this rule needs: POST /pets answered {}",
            exchange.summary()
        )),
    }
}

pub(super) fn created_id(exchange: &Exchange) -> Result<i64, String> {
    created(exchange).map(|pet| pet.get("id").and_then(Value::as_i64).unwrap_or_default())
}

pub(super) fn create(
    ctx: &impl StoreAccess,
    name: &str,
    status: Option<&str>,
) -> Result<Value, String> {
    let exchange = ctx.send(&create_request(ctx, name, status));
    if exchange.cut_by_transport() {
        // The answer naming the pet was cut; the pet may be stored all the same. A fixture
        // only needs a pet, so one more is created rather than the rules left without.
        return created(&ctx.send(&create_request(ctx, name, status)));
    }
    created(&exchange)
}

/// Under the read-only profile: a pet the store already holds.
pub(super) fn first_listed(ctx: &impl StoreAccess) -> Result<Value, String> {
    let listing = ctx.send(&RequestSpec::get("/pets").query("limit", "1"));
    match listing
        .json()
        .and_then(Value::as_array)
        .and_then(|pets| pets.first())
    {
        Some(pet) if pet.get("id").and_then(Value::as_i64).is_some() => Ok(pet.clone()),
        _ => Err(format!(
            "read-only profile: the store lists no pet to use ({})",
            listing.summary()
        )),
    }
}
