//! Generation: proptest strategies for valid input, and named mutations for invalid input.

pub mod mutations;

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::contract::PET_STATUSES;

/// A generated NewPet: the name is the run prefix plus `name_suffix`, so every pet the run
/// creates can be found again.
#[derive(Debug, Clone, PartialEq)]
pub struct NewPetCase {
    pub name_suffix: String,
    pub category_id: i64,
    pub status: Option<&'static str>,
}

impl NewPetCase {
    pub fn to_json(&self, prefix: &str) -> Value {
        let mut pet = json!({"name": format!("{prefix}{}", self.name_suffix), "categoryId": self.category_id});
        if let Some(status) = self.status {
            pet["status"] = json!(status);
        }
        pet
    }

    pub fn describe(&self, prefix: &str) -> String {
        let chars = prefix.chars().count() + self.name_suffix.chars().count();
        format!(
            "NewPet {} (name of {chars} characters)",
            self.to_json(prefix)
        )
    }
}

/// Names of any script and length, including quotes, backslashes and control characters.
pub fn name_suffix() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::collection::vec(any::<char>(), 0..24),
        1 => proptest::collection::vec(any::<char>(), 0..400),
    ]
    .prop_map(|chars| chars.into_iter().collect())
}

pub fn status() -> impl Strategy<Value = Option<&'static str>> {
    proptest::option::of(proptest::sample::select(PET_STATUSES.to_vec()))
}

/// Every valid NewPet (up to the prefix on the name).
pub fn new_pet() -> impl Strategy<Value = NewPetCase> {
    (name_suffix(), any::<i64>(), status()).prop_map(|(name_suffix, category_id, status)| {
        NewPetCase {
            name_suffix,
            category_id,
            status,
        }
    })
}

/// Boundary NewPets, sent before the generated ones.
pub fn new_pet_boundaries() -> Vec<NewPetCase> {
    let mut cases = vec![
        NewPetCase {
            name_suffix: String::new(),
            category_id: i64::MIN,
            status: None,
        },
        NewPetCase {
            name_suffix: "\"quoted\" \\ back/slash".into(),
            category_id: i64::MAX,
            status: None,
        },
        NewPetCase {
            name_suffix: "Ωmega 名前 🐕".into(),
            category_id: 1 << 31,
            status: None,
        },
        NewPetCase {
            name_suffix: "x".repeat(256),
            category_id: 0,
            status: None,
        },
    ];
    for (case, status) in cases.iter_mut().zip(PET_STATUSES.iter()) {
        case.status = Some(status);
    }
    cases
}

/// `limit` values inside the bounds, with the bounds and their neighbours first.
pub fn limit_in_bounds() -> impl Strategy<Value = i64> {
    1i64..=100
}

pub const LIMIT_BOUNDARIES: [i64; 4] = [1, 2, 99, 100];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Contract, SchemaName};
    use proptest::test_runner::TestRunner;

    #[test]
    fn generated_new_pets_are_valid() {
        let contract = Contract::built_in().unwrap();
        let mut runner = TestRunner::deterministic();
        runner
            .run(&new_pet(), |case| {
                let pet = case.to_json("pc-");
                prop_assert!(contract.is_valid(SchemaName::NewPet, &pet), "{pet}");
                Ok(())
            })
            .unwrap();
        for case in new_pet_boundaries() {
            assert!(contract.is_valid(SchemaName::NewPet, &case.to_json("pc-")));
        }
    }
}
