//! Invalid createPet bodies, each named by what it breaks.

use serde_json::json;

use crate::execution::Body;
use crate::execution::fixtures::Marker;

/// The body for a named mutation, and what would identify it in the store had it been stored.
/// `name` and `category_id` are unique to the rule, so a stored pet can be recognised.
pub fn create_body(mutation: &str, name: &str, category_id: i64) -> Option<(Body, Marker)> {
    let by_name = Marker {
        name: Some(name.into()),
        category_id: None,
    };
    let by_category = Marker {
        name: None,
        category_id: Some(category_id),
    };
    let both = Marker {
        name: Some(name.into()),
        category_id: Some(category_id),
    };
    let raw = |text: String| Body::Raw {
        content_type: Some("application/json".into()),
        bytes: text.into_bytes(),
    };
    Some(match mutation {
        "missing-name" => (
            Body::Json(json!({"categoryId": category_id, "status": "pending"})),
            by_category,
        ),
        "missing-category-id" => (
            Body::Json(json!({"name": name, "status": "pending"})),
            by_name,
        ),
        "name-wrong-type" => (
            Body::Json(json!({"name": 42, "categoryId": category_id})),
            by_category,
        ),
        "name-null" => (
            Body::Json(json!({"name": null, "categoryId": category_id})),
            by_category,
        ),
        "category-id-wrong-type" => (
            Body::Json(json!({"name": name, "categoryId": "12"})),
            by_name,
        ),
        "category-id-fractional" => (
            Body::Json(json!({"name": name, "categoryId": 1.5})),
            by_name,
        ),
        "category-id-beyond-int64" => (
            Body::Json(json!({"name": name, "categoryId": 9_223_372_036_854_775_808u64})),
            by_name,
        ),
        "unknown-status" => (
            Body::Json(json!({"name": name, "categoryId": category_id, "status": "lost"})),
            both,
        ),
        "not-an-object" => (
            Body::Json(json!([{"name": name, "categoryId": category_id}])),
            both,
        ),
        "malformed-json" => (
            raw(format!(
                "{{\"name\": {}, \"categoryId\": {category_id}",
                json!(name)
            )),
            both,
        ),
        "empty-body" => (raw(String::new()), Marker::default()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Contract, SchemaName};

    const MUTATIONS: [&str; 11] = [
        "missing-name",
        "missing-category-id",
        "name-wrong-type",
        "name-null",
        "category-id-wrong-type",
        "category-id-fractional",
        "category-id-beyond-int64",
        "unknown-status",
        "not-an-object",
        "malformed-json",
        "empty-body",
    ];

    #[test]
    fn every_mutation_is_an_invalid_new_pet() {
        let contract = Contract::built_in().unwrap();
        for mutation in MUTATIONS {
            let (body, _) = create_body(mutation, "pc-x", 7).expect(mutation);
            let valid = match body {
                Body::Json(value) => contract.is_valid(SchemaName::NewPet, &value),
                Body::Raw { bytes, .. } => serde_json::from_slice::<serde_json::Value>(&bytes)
                    .is_ok_and(|value| contract.is_valid(SchemaName::NewPet, &value)),
                Body::None => false,
            };
            assert!(!valid, "{mutation} produced a valid NewPet");
        }
        assert!(create_body("no-such-mutation", "x", 1).is_none());
    }
}
