//! Generation: strategies and boundary values derived from the contract's schemas
//! ([`schema`]), and invalid input as named mutations of valid input ([`mutations`]).

pub mod confusion;
pub mod mutations;
pub mod parameters;
pub mod request;
pub mod schema;

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

/// A NewPet as a report shows it: the JSON, and the length of its name.
pub fn describe_pet(pet: &Value) -> String {
    match pet.get("name").and_then(Value::as_str) {
        Some(name) => format!("NewPet {pet} (name of {} characters)", name.chars().count()),
        None => format!("NewPet {pet}"),
    }
}
