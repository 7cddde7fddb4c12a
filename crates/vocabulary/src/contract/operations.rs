//! The operations of the contract as it names them, and its constants (version, statuses,
//! the removal date of getPet, the `limit` bounds).

use serde::{Deserialize, Serialize};

pub const CONTRACT_TITLE: &str = "Pet Store Service Interface";
/// "The interface description is at version 1.0.0."
pub const CONTRACT_VERSION: &str = "1.0.0";
/// The allowed values of PetStatus, in contract order.
pub const PET_STATUSES: [&str; 3] = ["available", "pending", "sold"];
/// "`GET /pets/{petId}` is deprecated and is to be removed on 5 December 2030."
pub const SUNSET_HTTP_DATE: &str = "Thu, 05 Dec 2030 00:00:00 GMT";
pub const SUNSET_UNIX: u64 = 1_922_659_200;
/// When the reference server says getPet was deprecated (1 January 2025); the contract names no
/// date, so this is only the reference's choice.
pub const DEPRECATED_SINCE_UNIX: u64 = 1_735_689_600;

/// The `limit` query parameter of listPets as a JSON Schema: "minimum 1, maximum 100",
/// default 20.
pub fn limit_parameter() -> serde_json::Value {
    serde_json::json!({"title": "limit", "type": "integer", "minimum": 1, "maximum": 100, "default": 20})
}

/// An operation of the contract, named as the contract names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operation {
    #[serde(rename = "listPets")]
    ListPets,
    #[serde(rename = "createPet")]
    CreatePet,
    #[serde(rename = "getPet")]
    GetPet,
    /// "A listing of store orders at `GET /store/orders` is named as existing."
    #[serde(rename = "listStoreOrders")]
    ListStoreOrders,
    /// A rule that looks at every response of the run rather than at one operation.
    #[serde(rename = "any")]
    Any,
}

impl Operation {
    /// The operation a request is for, from its method and its path below the base address;
    /// `None` for a request no operation matches (an empty petId `/pets/`, a trailing slash,
    /// a dot segment a URL resolves away, a method no operation names).
    pub fn of(method: &str, path: &str) -> Option<Operation> {
        let path = path.split('?').next().unwrap_or(path);
        let pet_id = path.strip_prefix("/pets/").filter(|segment| {
            !segment.is_empty() && !segment.contains('/') && !matches!(*segment, "." | "..")
        });
        match (method, path) {
            ("GET", "/pets") => Some(Operation::ListPets),
            ("POST", "/pets") => Some(Operation::CreatePet),
            ("GET", "/store/orders") => Some(Operation::ListStoreOrders),
            ("GET", _) if pet_id.is_some() => Some(Operation::GetPet),
            _ => None,
        }
    }

    /// The operation an `operationId` names.
    pub fn from_name(name: &str) -> Option<Operation> {
        [
            Operation::ListPets,
            Operation::CreatePet,
            Operation::GetPet,
            Operation::ListStoreOrders,
        ]
        .into_iter()
        .find(|operation| operation.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Operation::ListPets => "listPets",
            Operation::CreatePet => "createPet",
            Operation::GetPet => "getPet",
            Operation::ListStoreOrders => "listStoreOrders",
            Operation::Any => "any",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_operations_paths_are_operations() {
        assert_eq!(Operation::of("GET", "/pets"), Some(Operation::ListPets));
        assert_eq!(
            Operation::of("GET", "/pets?limit=1"),
            Some(Operation::ListPets)
        );
        assert_eq!(Operation::of("POST", "/pets"), Some(Operation::CreatePet));
        assert_eq!(Operation::of("GET", "/pets/7"), Some(Operation::GetPet));
        assert_eq!(Operation::of("GET", "/pets/x%2Fy"), Some(Operation::GetPet));
        for (method, path) in [
            ("GET", "/pets/"),
            ("GET", "/pets/?limit=1"),
            ("GET", "/pets/7/"),
            ("GET", "/pets/.."),
            ("GET", "/store/orders/"),
            ("POST", "/pets/"),
            ("DELETE", "/pets/7"),
        ] {
            assert_eq!(Operation::of(method, path), None, "{method} {path}");
        }
    }

    #[test]
    fn sunset_constants_agree() {
        let parsed = httpdate::parse_http_date(SUNSET_HTTP_DATE).expect("valid HTTP-date");
        let secs = parsed
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after epoch")
            .as_secs();
        assert_eq!(secs, SUNSET_UNIX);
        const { assert!(DEPRECATED_SINCE_UNIX < SUNSET_UNIX) };
    }
}
