//! The checks a rule can name, as data: one variant per check, with the params it reads,
//! typed. The case files write a check as `"check": "<name>"` beside `"params": {...}`
//! (serde's adjacent tagging), so a misspelt check, a param the check does not read or a
//! param of the wrong kind is an error when the catalogue loads, naming the field.
//!
//! What a check does is in `crates/harness/src/rules/` (`rules::run`); when it runs is stated beside its
//! declaration here, from the words of [`super::traits`]; this floor only says what a rule may
//! write.

use serde::{Deserialize, Deserializer, Serialize, de};

use super::traits::{LAST, MAIN, ORACLES, QUIET, Reads, Stores, Traits};

use crate::contract::credential::{Credential, NearMiss};
use serde_json::Value;

/// Declares [`Check`] (one variant per check, with the params it reads) and, from the
/// `=> traits` after each, [`Check::traits`]: a check states its params and its scheduling
/// traits in one place.
macro_rules! checks {
    ($(
        $(#[$meta:meta])*
        $name:ident { $( $(#[$field_meta:meta])* $field:ident : $ty:ty ),* $(,)? } => $traits:expr
    ),* $(,)?) => {
        /// The check that implements a rule, with its params. Each variant's name is the
        /// check's name in the case files, in kebab case; a param a variant does not name is
        /// an error (`deny_unknown_fields` holds for every variant's fields).
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(
            tag = "check",
            content = "params",
            rename_all = "kebab-case",
            deny_unknown_fields
        )]
        pub enum Check {
            $( $(#[$meta])* $name { $( $(#[$field_meta])* $field : $ty ),* } ),*
        }

        impl Check {
            /// This check's scheduling traits, as its declaration states them.
            pub const fn traits(&self) -> Traits {
                match self {
                    $( Check::$name { .. } => $traits ),*
                }
            }
        }
    };
}

checks! {
    // Each check's scheduling traits stand after its `=>` (see `traits`): a check does not
    // compile until they are stated, and nothing else decides them.

    // Authentication (`auth.json`).
    /// The rule's operation, sent with `credential` (missing, wrong-key, ...), gets 401 and
    /// an Error.
    AuthRefused {
        #[serde(deserialize_with = "credential", serialize_with = "credential_name")]
        credential: Credential,
    } => MAIN.reads(Reads::OnlyWhenListing),
    /// The rule's operation, sent with `credential` (a variant of the key), is not refused.
    AuthAccepted {
        #[serde(deserialize_with = "credential", serialize_with = "credential_name")]
        credential: Credential,
    } => MAIN.reads(Reads::OnlyWhenListing),
    /// A createPet refused for its credential stores nothing.
    AuthRefusedCreateStoresNothing {} => QUIET,
    /// A near miss of the key (`near_miss`: char-appended, case-swapped, ...) is refused by
    /// every operation.
    AuthNearMissRefused {
        #[serde(deserialize_with = "near_miss")]
        near_miss: NearMiss,
    } => MAIN,
    /// Requests invalid in other ways too (`queries` for listPets, `pet_ids` for getPet,
    /// `mutations` for createPet), sent with each of `credentials`, still get 401.
    AuthPrecedence {
        #[serde(deserialize_with = "credentials", serialize_with = "credential_names")]
        credentials: Vec<Credential>,
        #[serde(
            default,
            deserialize_with = "some_texts",
            skip_serializing_if = "Option::is_none"
        )]
        queries: Option<Vec<String>>,
        #[serde(
            default,
            deserialize_with = "some_texts",
            skip_serializing_if = "Option::is_none"
        )]
        pet_ids: Option<Vec<String>>,
        #[serde(
            default,
            deserialize_with = "some_texts",
            skip_serializing_if = "Option::is_none"
        )]
        mutations: Option<Vec<String>>,
    } => MAIN.reads(Reads::OnlyWhenListing),
    /// listStoreOrders, with the key, is answered.
    StoreOrdersAnswered {} => MAIN.reads(Reads::Only),

    // Parameters from openapi.yaml.
    /// Every value a parameter's schema allows is answered.
    ParametersAnswered {} => MAIN.early(),
    /// Every value a parameter's schema refuses is refused with 400.
    ParametersRefused {} => MAIN.reads(Reads::Only),

    // listPets (`list-pets.json`).
    /// listPets answers 200 with a Pets array.
    ListOk {} => MAIN.reads(Reads::Only),
    /// A status filter that matches nothing answers `[]`, not `null`.
    ListEmptyIsArray {} => QUIET,
    /// Without `limit`, at most `max` pets; with `header` (`Name: value`, a parameter moved
    /// out of the query) sent besides, a 200 still holds at most `max`.
    ListDefaultAtMost {
        #[serde(default = "twenty", deserialize_with = "count")]
        max: u64,
        #[serde(
            default,
            deserialize_with = "some_header",
            skip_serializing_if = "Option::is_none"
        )]
        header: Option<String>,
    } => MAIN.early().long_chain(),
    /// Any `limit` in 1..=100 is accepted and caps the listing.
    ListLimitProperty {} => MAIN.early().long_chain(),
    /// `limit` (a bound) is accepted and caps the listing.
    ListLimitAccepted {
        #[serde(deserialize_with = "text")]
        limit: String,
    } => MAIN.long_chain(),
    /// With more pets stored than the page holds, the page (of `limit`, or the default) holds
    /// exactly `expect` pets.
    ListFillsPage {
        #[serde(default = "twenty", deserialize_with = "count")]
        expect: u64,
        #[serde(
            default,
            deserialize_with = "some_text",
            skip_serializing_if = "Option::is_none"
        )]
        limit: Option<String>,
    } => MAIN.early().long_chain(),
    /// `limit` (out of range or malformed) is refused with 400 and an Error.
    ListLimitRefused {
        #[serde(deserialize_with = "text")]
        limit: String,
    } => MAIN.reads(Reads::Only),
    /// Whatever the answer to each of `limits`, a 200 carries at most 100 pets.
    ListOutOfRangeCapped {
        #[serde(deserialize_with = "texts")]
        limits: Vec<String>,
    } => MAIN.long_chain(),
    /// `limit` beside each of `besides` (parameters the contract does not name, as raw query
    /// text): whatever the answer, a 200 carries at most `limit` pets.
    ListLimitBeside {
        #[serde(deserialize_with = "text")]
        limit: String,
        #[serde(deserialize_with = "texts")]
        besides: Vec<String>,
    } => MAIN.long_chain(),
    /// On a store filled past each of `past` pets (row limits of common databases and
    /// drivers), listPets still answers 200 with a Pets array of at most `limit` pets. It
    /// fills the store only under `--fill-store`, after every other rule's listings.
    ListCrowded {
        #[serde(deserialize_with = "counts")]
        past: Vec<u64>,
    } => LAST.early().main_under_budget().stores(Stores::Fill),
    /// Every PetStatus filters the listing to pets of that status.
    ListStatusProperty {} => MAIN.early().long_chain(),
    /// `status` (not a PetStatus) is refused with 400.
    ListStatusRefused {
        #[serde(deserialize_with = "text")]
        status: String,
    } => MAIN.reads(Reads::Only),

    // createPet (`create-pet.json`).
    /// Every valid NewPet is created, 201 with the Pet.
    CreateProperty {} => MAIN.early().stores(Stores::Many),
    /// `count` pets created one after another get distinct ids.
    CreateUniqueIds {
        #[serde(default = "eight", deserialize_with = "count")]
        count: u64,
    } => MAIN.early().long_chain(),
    // Reads back the pets create-pet/valid/created stored: after it.
    /// A created pet, fetched by its id, is the pet created.
    CreateRoundTrip {} => LAST.main_under_budget().stores(Stores::EveryCase),
    /// The body broken by `mutation` is refused (`expect`: exactly 400, or any 4xx) with an
    /// Error and stores nothing.
    CreateRefused {
        #[serde(deserialize_with = "text")]
        mutation: String,
        expect: Refusal,
    } => QUIET,
    /// Every schema mutation of generated pets is refused.
    CreateMutationsProperty {} => MAIN.early(),
    /// Bodies with values of the wrong JSON type are refused.
    CreateTypeConfusion {} => MAIN.early(),
    /// Bodies with values of the wrong JSON type store nothing.
    CreateTypeConfusionStoresNothing {} => QUIET,
    /// `clients` creates at the same moment, `rounds` times, get distinct ids.
    CreateConcurrentDistinctIds {
        #[serde(default = "seventy_two", deserialize_with = "count")]
        clients: u64,
        #[serde(default = "three", deserialize_with = "count")]
        rounds: u64,
    } => MAIN.early().long_chain().stores(Stores::Many),
    /// `clients` pets created at the same moment are all listed.
    CreateConcurrentAllListed {
        #[serde(default = "seventy_two", deserialize_with = "count")]
        clients: u64,
    } => QUIET.early(),
    /// Well-formed bodies broken by each of `mutations` get exactly 400.
    #[serde(rename = "create-invalid-values-400")]
    CreateInvalidValues400 {
        #[serde(deserialize_with = "texts")]
        mutations: Vec<String>,
    } => MAIN,

    /// Names of each of `lengths` characters are stored and read back byte for byte.
    CreateNameLadder {
        #[serde(deserialize_with = "counts")]
        lengths: Vec<u64>,
    } => QUIET.early(),
    /// Whole bodies of each of `sizes` bytes are stored, or refused as too large (413 or 400)
    /// with a JSON Error; past 1 MiB only when nothing smaller was refused.
    CreateBodyLadder {
        #[serde(deserialize_with = "counts")]
        sizes: Vec<u64>,
    } => MAIN.long_chain(),
    // A pet it stores may break every read that shows it: after the other rules' reads.
    /// A name with a lone surrogate escape is refused or stored; reads after it never 5xx.
    CreatePoisonedReadBack {} => LAST.main_under_budget(),
    /// The request space's createPet bodies that are not UTF-8, sent last, judged as their
    /// classes say; listings after them never 5xx.
    CreatePoisonedBytes {} => LAST.main_under_budget(),

    // Sequences (`sequences.json`).
    /// Random sequences of at most `max_steps` steps agree with a model of the store.
    SequencesReadYourWrites {
        #[serde(default = "eight", deserialize_with = "count")]
        max_steps: u64,
    } => MAIN.early().long_chain().stores(Stores::Many),

    // getPet (`get-pet.json`).
    /// An existing pet is answered 200 with the Pet.
    GetExisting {} => MAIN,
    /// An unknown id is answered 404 with an Error.
    GetUnknown {} => MAIN,
    /// `pet_id` (not an integer) is a client error.
    GetNonInteger {
        #[serde(deserialize_with = "text")]
        pet_id: String,
    } => MAIN.reads(Reads::Only),

    // Deprecation of getPet (`deprecation.json`).
    DeprecationSignalled {} => MAIN,
    DeprecationSyntax {} => MAIN,
    SunsetPresent {} => MAIN,
    SunsetDate {} => MAIN,
    SunsetAfterDeprecation {} => MAIN,
    /// A Deprecation date is not after the stated removal.
    DeprecationBeforeRemoval {} => MAIN,
    SuccessorLink {} => MAIN,
    /// A successor-version link resolves, against the request's URL, to listPets.
    SuccessorIsListPets {} => MAIN,
    /// The rule's operation carries no Deprecation header.
    NotDeprecated {} => MAIN.reads(Reads::Only),

    // Every response of the run (`responses.json`).
    ResponsesJsonContentType {} => ORACLES,
    ResponsesErrorBody {} => ORACLES,
    ResponsesNoServerError {} => ORACLES,
    ResponsesSuccessSchema {} => ORACLES,
    ResponsesDeprecationGetPetOnly {} => ORACLES,
    ResponsesOutsideNoServerError {} => ORACLES,

    // The request space (`inputs.json`, `request-space.json`).
    /// Every case of every class of the rule's operation at the rule's level is answered as
    /// its class says.
    InputsWalk {} => MAIN.early().stores(Stores::EveryCaseOfCreatePet),
    /// Every body of the request space a store must refuse, refused, stores nothing: the
    /// marker's baseline, the bodies, then the listing, the quiet-store phase's longest chain.
    InputsStoresNothing {} => QUIET.early().long_chain(),
}

/// What a refused createPet must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Refusal {
    /// Exactly 400: the contract names it.
    #[serde(rename = "400")]
    Exactly400,
    /// Any 4xx: the contract is silent on which.
    #[serde(rename = "4xx")]
    Any4xx,
}

impl Check {
    /// The check `name` of a case file with its `params` (an object; `{}` when the rule has
    /// none). An error names the field: `check: "x" does not exist (...)`, or
    /// `params.<key>: ...` for a param the check does not read or of the wrong kind.
    pub fn from_parts(name: &str, params: Value) -> Result<Check, String> {
        let mut parts = serde_json::Map::new();
        parts.insert("check".into(), Value::String(name.into()));
        parts.insert("params".into(), params);
        serde_path_to_error::deserialize(Value::Object(parts)).map_err(|error| {
            let path = error.path().to_string();
            let inner = error.into_inner();
            if path == "check" {
                // serde's "unknown variant `x`, expected one of `a`, `b`": the checks there are.
                let message = inner.to_string();
                let known = message
                    .split_once(", expected ")
                    .map_or(message.as_str(), |(_, known)| known);
                format!("check: {name:?} does not exist (expected {known})")
            } else {
                format!("{path}: {inner}")
            }
        })
    }
}

fn twenty() -> u64 {
    20
}

fn eight() -> u64 {
    8
}

fn three() -> u64 {
    3
}

fn seventy_two() -> u64 {
    72
}

fn kind<E: de::Error>(what: &str, value: &Value) -> E {
    E::custom(format!("must be {what}, not {value}"))
}

/// A credential param: its name (`missing`, `wrong-key`, a near miss's).
fn credential<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Credential, D::Error> {
    let name = text(deserializer)?;
    Credential::parse(&name)
        .ok_or_else(|| de::Error::custom(format!("{name:?} names no credential")))
}

fn credentials<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Credential>, D::Error> {
    texts(deserializer)?
        .iter()
        .map(|name| {
            Credential::parse(name)
                .ok_or_else(|| de::Error::custom(format!("{name:?} names no credential")))
        })
        .collect()
}

fn near_miss<'de, D: Deserializer<'de>>(deserializer: D) -> Result<NearMiss, D::Error> {
    let name = text(deserializer)?;
    NearMiss::parse(&name)
        .ok_or_else(|| de::Error::custom(format!("{name:?} names no near miss of the key")))
}

fn credential_name<S: serde::Serializer>(
    credential: &Credential,
    out: S,
) -> Result<S::Ok, S::Error> {
    out.serialize_str(&credential.name())
}

fn credential_names<S: serde::Serializer>(
    credentials: &[Credential],
    out: S,
) -> Result<S::Ok, S::Error> {
    out.collect_seq(credentials.iter().map(Credential::name))
}

/// A string param.
fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(text) => Ok(text),
        other => Err(kind("a string", &other)),
    }
}

fn some_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    text(deserializer).map(Some)
}

/// A request header as `Name: value`, its name an HTTP token (RFC 9110 section 5.1).
fn some_header<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let header = text(deserializer)?;
    match header.split_once(": ") {
        Some((name, _))
            if !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)) =>
        {
            Ok(Some(header))
        }
        _ => Err(kind("a header as `Name: value`", &Value::String(header))),
    }
}

/// A whole number of 0 or more.
fn count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let value = Value::deserialize(deserializer)?;
    value.as_u64().ok_or_else(|| kind("a whole number", &value))
}

/// A list of whole numbers of 0 or more.
fn counts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u64>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    value
        .as_array()
        .and_then(|items| items.iter().map(Value::as_u64).collect())
        .ok_or_else(|| kind("a list of whole numbers", &value))
}

/// A list of strings.
fn texts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect()
        })
        .ok_or_else(|| kind("a list of strings", &value))
}

fn some_texts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    texts(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_check_reads_its_typed_params_and_writes_them_back_unchanged() {
        for (name, params) in [
            ("auth-refused", json!({"credential": "missing"})),
            ("list-ok", json!({})),
            ("list-fills-page", json!({"expect": 20})),
            ("list-fills-page", json!({"limit": "100", "expect": 100})),
            (
                "list-default-at-most",
                json!({"max": 20, "header": "limit: 100"}),
            ),
            ("list-crowded", json!({"past": [999, 1000]})),
            (
                "create-refused",
                json!({"mutation": "name-null", "expect": "4xx"}),
            ),
            ("create-invalid-values-400", json!({"mutations": ["a"]})),
            (
                "auth-precedence",
                json!({"credentials": ["missing"], "pet_ids": ["0"]}),
            ),
        ] {
            let check = Check::from_parts(name, params.clone()).unwrap();
            assert_eq!(
                serde_json::to_value(&check).unwrap(),
                json!({"check": name, "params": params})
            );
        }
        assert_eq!(
            Check::from_parts("create-unique-ids", json!({})).unwrap(),
            Check::CreateUniqueIds { count: 8 }
        );
    }

    /// A header param is `Name: value` with a token for a name, or the case file is refused.
    #[test]
    fn a_header_param_without_a_name_and_a_value_is_an_error() {
        for header in ["limit 100", ": 100", "li mit: 100", "limit:100"] {
            let err = Check::from_parts("list-default-at-most", json!({"header": header}))
                .unwrap_err()
                .to_string();
            assert!(err.contains("a header as `Name: value`"), "{header}: {err}");
        }
    }

    #[test]
    fn a_misspelt_check_or_param_is_an_error_naming_the_field() {
        let err = Check::from_parts("auth-refuesd", json!({})).unwrap_err();
        assert!(
            err.starts_with("check: \"auth-refuesd\" does not exist"),
            "{err}"
        );
        let err = Check::from_parts("auth-refused", json!({"credentail": "missing"})).unwrap_err();
        assert!(err.starts_with("params.credentail: "), "{err}");
        let err = Check::from_parts("auth-refused", json!({})).unwrap_err();
        assert!(err.contains("credential"), "{err}");
        let err = Check::from_parts("list-ok", json!({"limit": "1"})).unwrap_err();
        assert!(err.starts_with("params.limit: "), "{err}");
        let err = Check::from_parts("create-unique-ids", json!({"count": "eight"})).unwrap_err();
        assert_eq!(err, "params.count: must be a whole number, not \"eight\"");
        let err = Check::from_parts("create-unique-ids", json!({"count": -1})).unwrap_err();
        assert_eq!(err, "params.count: must be a whole number, not -1");
        let err =
            Check::from_parts("list-out-of-range-capped", json!({"limits": [1]})).unwrap_err();
        assert_eq!(err, "params.limits: must be a list of strings, not [1]");
        let err = Check::from_parts("create-refused", json!({"mutation": "x", "expect": "401"}))
            .unwrap_err();
        assert!(err.starts_with("params.expect: "), "{err}");
        // Credentials and near misses are names the harness knows, read as the file loads.
        let err =
            Check::from_parts("auth-refused", json!({"credential": "wrong-keys"})).unwrap_err();
        assert_eq!(err, "params.credential: \"wrong-keys\" names no credential");
        let err =
            Check::from_parts("auth-near-miss-refused", json!({"near_miss": "typo"})).unwrap_err();
        assert!(err.starts_with("params.near_miss: "), "{err}");
        let err = Check::from_parts(
            "auth-precedence",
            json!({"credentials": ["missing", "nope"], "queries": []}),
        )
        .unwrap_err();
        assert!(err.starts_with("params.credentials: "), "{err}");
    }
}
