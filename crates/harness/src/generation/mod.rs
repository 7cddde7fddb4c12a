//! Generation: strategies and boundary values derived from the contract's schemas
//! ([`schema`]), and invalid input as named mutations of valid input ([`mutations`]).

pub mod confusion;
pub mod mutations;
pub mod operator;
pub mod operators;
pub mod parameter_values;
pub mod request;
pub mod schema;
pub mod space;

use serde_json::{Value, json};

pub use mutations::Marker;
pub use schema::{
    GenerationError, MAX_GENERATED_ITEMS, MAX_GENERATED_LENGTH, Schemas, boundaries, check_caps,
    strategy,
};

/// The NewPet to send: a generated one with the run prefix before its name, so that every pet
/// the run creates can be found again.
pub fn with_prefix(pet: &Value, prefix: &str) -> Value {
    let mut pet = pet.clone();
    if let Some(name) = pet.get("name").and_then(Value::as_str) {
        pet["name"] = json!(format!("{prefix}{name}"));
    }
    pet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_categories_replace_any_id_and_leave_others_alone() {
        let any = Categories::default();
        assert_eq!(any.accepted(i64::MIN), i64::MIN);
        let three = Categories(vec![1, 2, 3]);
        for wanted in [i64::MIN, -1, 0, 7, i64::MAX] {
            assert!([1, 2, 3].contains(&three.accepted(wanted)));
        }
        assert_eq!(three.accepted(0), 1);
        let pet = three.apply(json!({"name": "a", "categoryId": 9_000_000_000i64}));
        assert!([1, 2, 3].contains(&pet["categoryId"].as_i64().unwrap()));
        // Not a valid categoryId: not this type's business (an invalid-value rule's).
        let wrong = json!({"name": "a", "categoryId": "9"});
        assert_eq!(three.apply(wrong.clone()), wrong);
    }
}

/// The category ids a target accepts, for a store with referential integrity
/// (`--category-ids`, or `category_ids` in a profile). Empty: the contract's whole int64 range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Categories(pub Vec<i64>);

impl Categories {
    /// The category id a valid pet uses in place of `wanted`: `wanted` itself, or one of the
    /// accepted ids chosen by `wanted`, so that a generated id still shrinks (towards the
    /// first accepted one) and a seed still picks the same ids.
    pub fn accepted(&self, wanted: i64) -> i64 {
        match self.0.len() {
            0 => wanted,
            n => self.0[(wanted.unsigned_abs() % n as u64) as usize],
        }
    }

    /// `pet` with its categoryId one the target accepts.
    pub fn apply(&self, mut pet: Value) -> Value {
        if let Some(id) = pet.get("categoryId").and_then(Value::as_i64) {
            pet["categoryId"] = json!(self.accepted(id));
        }
        pet
    }
}

/// A NewPet as a report shows it: the JSON, and the length of its name.
pub fn describe_pet(pet: &Value) -> String {
    match pet.get("name").and_then(Value::as_str) {
        Some(name) => format!("NewPet {pet} (name of {} characters)", name.chars().count()),
        None => format!("NewPet {pet}"),
    }
}
