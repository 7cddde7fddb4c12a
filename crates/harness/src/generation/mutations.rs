//! Invalid input as named mutations of valid input, derived from the schema: each says what it
//! breaks, so a report can name it.

use serde_json::{Value, json};

use super::request::{Body, RequestSpec};
use super::schema::integer_range;

/// What a refused request would have stored, had it been stored.
#[derive(Debug, Clone, Default)]
pub struct Marker {
    pub name: Option<String>,
    pub category_id: Option<i64>,
}

/// One way to make a valid body invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// A required property removed.
    Missing(String),
    /// A property of the wrong JSON type.
    WrongType(String),
    /// A required property set to null.
    Null(String),
    /// A value outside the property's enum.
    NotInEnum(String),
    /// A number that is not an integer, for an integer property.
    Fractional(String),
    /// An integer beyond the property's range (beyond int64 for int64).
    OutOfRange(String),
    /// A JSON array holding the body.
    NotAnObject,
    /// The body cut short: not well-formed JSON.
    MalformedJson,
    /// No bytes at all.
    EmptyBody,
    /// The valid body under `Content-Type: text/plain`.
    WrongContentType,
}

fn kebab(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl Mutation {
    /// The mutation's name, as the catalogue and the reports write it.
    pub fn name(&self) -> String {
        match self {
            Mutation::Missing(p) => format!("missing-{}", kebab(p)),
            Mutation::WrongType(p) => format!("{}-wrong-type", kebab(p)),
            Mutation::Null(p) => format!("{}-null", kebab(p)),
            Mutation::NotInEnum(p) => format!("{}-not-in-enum", kebab(p)),
            Mutation::Fractional(p) => format!("{}-fractional", kebab(p)),
            Mutation::OutOfRange(p) => format!("{}-out-of-range", kebab(p)),
            Mutation::NotAnObject => "not-an-object".into(),
            Mutation::MalformedJson => "malformed-json".into(),
            Mutation::EmptyBody => "empty-body".into(),
            Mutation::WrongContentType => "wrong-content-type".into(),
        }
    }

    /// What the mutation breaks, in words.
    pub fn breaks(&self) -> String {
        match self {
            Mutation::Missing(p) => format!("required property {p} removed"),
            Mutation::WrongType(p) => format!("{p} of the wrong JSON type"),
            Mutation::Null(p) => format!("required property {p} set to null"),
            Mutation::NotInEnum(p) => format!("{p} not one of its allowed values"),
            Mutation::Fractional(p) => format!("{p} is a number that is not an integer"),
            Mutation::OutOfRange(p) => format!("{p} beyond its range"),
            Mutation::NotAnObject => "the body is an array, not an object".into(),
            Mutation::MalformedJson => "the body is not well-formed JSON".into(),
            Mutation::EmptyBody => "the body is empty".into(),
            Mutation::WrongContentType => "the body is sent as text/plain".into(),
        }
    }

    /// The property the mutation touches, if any.
    pub fn property(&self) -> Option<&str> {
        match self {
            Mutation::Missing(p)
            | Mutation::WrongType(p)
            | Mutation::Null(p)
            | Mutation::NotInEnum(p)
            | Mutation::Fractional(p)
            | Mutation::OutOfRange(p) => Some(p),
            _ => None,
        }
    }

    /// Whether the mutated body is a JSON value the schema rejects (as opposed to a body that is
    /// not JSON at all, or is sent under another content type).
    pub fn breaks_schema(&self) -> bool {
        !matches!(
            self,
            Mutation::MalformedJson | Mutation::EmptyBody | Mutation::WrongContentType
        )
    }

    /// Whether the contract requires the mutated body refused: all but a valid NewPet under
    /// another media type, which the contract leaves open (see
    /// [`RequestSpec::refused_by_contract`]).
    pub fn refused_by_contract(&self) -> bool {
        !matches!(self, Mutation::WrongContentType)
    }

    /// The createPet of the mutated body.
    pub fn create(&self, schema: &Value, valid: &Value) -> RequestSpec {
        RequestSpec::post("/pets", self.apply(schema, valid))
            .refused_by_contract(self.refused_by_contract())
    }

    /// The mutated body; `schema` is the flattened schema `valid` satisfies.
    pub fn apply(&self, schema: &Value, valid: &Value) -> Body {
        let json = |value: Value| Body::Json(value);
        let raw = |content_type: &str, text: String| Body::Raw {
            content_type: Some(content_type.into()),
            bytes: text.into_bytes().into(),
        };
        let mut body = valid.clone();
        match self {
            Mutation::Missing(p) => {
                if let Some(object) = body.as_object_mut() {
                    object.remove(p);
                }
                json(body)
            }
            Mutation::WrongType(p) => {
                body[p.as_str()] = wrong_type(&schema["properties"][p.as_str()]);
                json(body)
            }
            Mutation::Null(p) => {
                body[p.as_str()] = Value::Null;
                json(body)
            }
            Mutation::NotInEnum(p) => {
                body[p.as_str()] = outside_enum(&schema["properties"][p.as_str()]);
                json(body)
            }
            Mutation::Fractional(p) => {
                body[p.as_str()] = json!(1.5);
                json(body)
            }
            Mutation::OutOfRange(p) => {
                let (_, max) = integer_range(&schema["properties"][p.as_str()]);
                body[p.as_str()] = if max == i64::MAX {
                    json!(9_223_372_036_854_775_808u64)
                } else {
                    json!(max + 1)
                };
                json(body)
            }
            Mutation::NotAnObject => json(json!([body])),
            Mutation::MalformedJson => {
                let mut text = body.to_string();
                text.pop(); // the closing brace
                raw("application/json", text)
            }
            Mutation::EmptyBody => raw("application/json", String::new()),
            Mutation::WrongContentType => raw("text/plain", body.to_string()),
        }
    }

    /// What would identify the body in the store had it been stored: the `name` and the
    /// `categoryId` of `valid` wherever the mutation leaves them as they were.
    pub fn marker(&self, valid: &Value) -> Marker {
        if *self == Mutation::EmptyBody {
            return Marker::default();
        }
        let kept = |field: &str| self.property() != Some(field);
        Marker {
            name: valid["name"]
                .as_str()
                .filter(|_| kept("name"))
                .map(String::from),
            category_id: valid["categoryId"].as_i64().filter(|_| kept("categoryId")),
        }
    }
}

fn wrong_type(property: &Value) -> Value {
    match property.get("type").and_then(Value::as_str) {
        Some("string") => json!(42),
        Some("integer") | Some("number") => json!("12"),
        Some("boolean") => json!("true"),
        Some("array") | Some("object") => json!("x"),
        _ if property.get("enum").is_some() => json!(42),
        _ => json!([]),
    }
}

fn outside_enum(property: &Value) -> Value {
    let values = property["enum"].as_array().cloned().unwrap_or_default();
    ["lost", "unknown-value", "x-lost"]
        .iter()
        .map(|candidate| json!(candidate))
        .find(|candidate| !values.contains(candidate))
        .unwrap_or(json!(0))
}

/// Every mutation of a flattened object schema: per property and for the body as a whole.
pub fn for_schema(schema: &Value) -> Vec<Mutation> {
    let mut mutations = Vec::new();
    let required = super::schema::required(schema);
    for name in &required {
        mutations.push(Mutation::Missing(name.to_string()));
    }
    for (name, property) in &super::schema::properties(schema) {
        mutations.push(Mutation::WrongType(name.clone()));
        // null for an optional property is often read as "absent"; the contract does not
        // say, so only required properties get null.
        if required.contains(&name.as_str()) {
            mutations.push(Mutation::Null(name.clone()));
        }
        if property.get("enum").is_some() {
            mutations.push(Mutation::NotInEnum(name.clone()));
        }
        if property.get("type").and_then(Value::as_str) == Some("integer") {
            mutations.push(Mutation::Fractional(name.clone()));
            mutations.push(Mutation::OutOfRange(name.clone()));
        }
    }
    mutations.extend([
        Mutation::NotAnObject,
        Mutation::MalformedJson,
        Mutation::EmptyBody,
        Mutation::WrongContentType,
    ]);
    mutations
}

/// The mutation of `schema` with this name.
pub fn named(schema: &Value, name: &str) -> Option<Mutation> {
    for_schema(schema).into_iter().find(|m| m.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Contract, SchemaName};
    use crate::generation::schema::{Schemas, strategy};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    /// The built-in contract and its flattened NewPet schema.
    fn new_pet() -> (Contract, Value) {
        let contract = Contract::built_in().unwrap();
        let schema = Schemas::new(&contract)
            .flatten(&contract, SchemaName::NewPet)
            .unwrap();
        (contract, schema)
    }

    /// A mutation's createPet may be sent again where the contract requires it refused, and
    /// only there: a valid NewPet under another media type, which a store may take and keep,
    /// goes once.
    #[test]
    fn a_create_goes_twice_only_where_the_contract_requires_it_refused() {
        let (_, schema) = new_pet();
        let valid = json!({"name": "pc-1-mutated", "categoryId": 1});
        let mut once = Vec::new();
        for mutation in for_schema(&schema) {
            let create = mutation.create(&schema, &valid);
            assert_eq!(create.method, "POST");
            if !create.repeatable() {
                once.push(mutation.name());
            }
        }
        assert_eq!(once, ["wrong-content-type"]);
        assert!(RequestSpec::get("/pets").repeatable());
        assert!(!RequestSpec::post("/pets", Body::Json(valid)).repeatable());
    }

    /// Every mutated body fails validation, and for the reason its mutation names: at the
    /// property it touches (or, for a missing property, for `required`), over many generated
    /// valid bodies.
    #[test]
    fn every_mutation_breaks_the_schema_where_it_says() {
        let (contract, schema) = new_pet();
        let mutations = for_schema(&schema);
        let names: Vec<String> = mutations.iter().map(Mutation::name).collect();
        for expected in [
            "missing-name",
            "missing-category-id",
            "category-id-out-of-range",
            "status-not-in-enum",
        ] {
            assert!(names.contains(&expected.to_string()), "{names:?}");
        }
        let mut runner = TestRunner::new(Config {
            cases: 256,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&strategy(&schema).unwrap(), |valid| {
                for mutation in mutations.iter().filter(|m| m.breaks_schema()) {
                    let Body::Json(body) = mutation.apply(&schema, &valid) else {
                        panic!("{} is not JSON", mutation.name());
                    };
                    let reason = contract.check(SchemaName::NewPet, &body);
                    prop_assert!(reason.is_err(), "{} left {body} valid", mutation.name());
                    let reason = reason.unwrap_err();
                    let expected = match mutation {
                        Mutation::Missing(p) => p.clone(),
                        Mutation::NotAnObject => "at /:".into(),
                        other => format!("at /{}", other.property().unwrap()),
                    };
                    prop_assert!(reason.contains(&expected), "{}: {reason}", mutation.name());
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn raw_mutations_are_not_a_valid_json_new_pet() {
        let (_, schema) = new_pet();
        let valid = json!({"name": "Rex", "categoryId": 1});
        for mutation in [Mutation::MalformedJson, Mutation::EmptyBody] {
            let Body::Raw { bytes, .. } = mutation.apply(&schema, &valid) else {
                panic!()
            };
            assert!(serde_json::from_slice::<Value>(&bytes).is_err());
        }
        let Body::Raw { content_type, .. } = Mutation::WrongContentType.apply(&schema, &valid)
        else {
            panic!()
        };
        assert_eq!(content_type.as_deref(), Some("text/plain"));
    }
}
