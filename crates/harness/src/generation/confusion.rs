//! Type confusion in a request body: every property of a schema given each JSON type it is
//! not (null, a boolean, an integer, a fraction, a numeric string, another string, an array,
//! an object), another case of an enum value, or left out; alone and combined. Whether a
//! confused body is one the schema refuses is for the schema to say (the rule validates it).

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a property is turned into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Null,
    Boolean,
    Integer,
    Fraction,
    NumericString,
    Text,
    Array,
    Object,
    /// An enum value in upper case (values are case-sensitive).
    OtherCase,
    /// Left out.
    Absent,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Null,
        Kind::Boolean,
        Kind::Integer,
        Kind::Fraction,
        Kind::NumericString,
        Kind::Text,
        Kind::Array,
        Kind::Object,
        Kind::OtherCase,
        Kind::Absent,
    ];

    /// The value it puts in place of `original`; `None` when the property is left out or the
    /// kind does not apply (another case of a value without letters).
    fn value(self, original: &Value) -> Option<Value> {
        Some(match self {
            Kind::Null => Value::Null,
            Kind::Boolean => json!(true),
            Kind::Integer => json!(7),
            Kind::Fraction => json!(1.5),
            Kind::NumericString => json!("7"),
            Kind::Text => json!("seven"),
            Kind::Array => json!([original]),
            Kind::Object => json!({"value": original}),
            Kind::OtherCase => {
                let text = original.as_str()?;
                let upper = text.to_uppercase();
                if upper == text {
                    return None;
                }
                json!(upper)
            }
            Kind::Absent => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "a boolean",
            Kind::Integer => "an integer",
            Kind::Fraction => "a fraction",
            Kind::NumericString => "a numeric string",
            Kind::Text => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
            Kind::OtherCase => "in upper case",
            Kind::Absent => "left out",
        }
    }
}

/// One property turned into another kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    pub property: String,
    pub kind: Kind,
}

/// The body with every confusion applied.
pub fn apply(valid: &Value, confusions: &[Confusion]) -> Value {
    let mut body = valid.clone();
    for confusion in confusions {
        let original = valid
            .get(&confusion.property)
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(object) = body.as_object_mut() {
            match confusion.kind.value(&original) {
                Some(value) => object.insert(confusion.property.clone(), value),
                None if confusion.kind == Kind::Absent => object.remove(&confusion.property),
                None => None,
            };
        }
    }
    body
}

/// The confusions that change `valid` at all: every property, every kind.
pub fn singles(schema: &Value, valid: &Value) -> Vec<Confusion> {
    super::schema::properties(schema)
        .into_iter()
        .flat_map(|(property, _)| {
            Kind::ALL.into_iter().map(move |kind| Confusion {
                property: property.clone(),
                kind,
            })
        })
        .filter(|confusion| apply(valid, std::slice::from_ref(confusion)) != *valid)
        .collect()
}

/// One to three properties of `schema`, each confused.
pub fn strategy(schema: &Value) -> BoxedStrategy<Vec<Confusion>> {
    let properties: Vec<String> = super::schema::properties(schema)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let count = properties.len().clamp(1, 3);
    proptest::sample::subsequence(properties, 1..=count)
        .prop_flat_map(|chosen| {
            let kinds = proptest::collection::vec(
                proptest::sample::select(Kind::ALL.to_vec()),
                chosen.len(),
            );
            (Just(chosen), kinds)
        })
        .prop_map(|(chosen, kinds)| {
            chosen
                .into_iter()
                .zip(kinds)
                .map(|(property, kind)| Confusion { property, kind })
                .collect()
        })
        .boxed()
}

/// How a report names a set of confusions.
pub fn describe(confusions: &[Confusion]) -> String {
    confusions
        .iter()
        .map(|c| format!("{} {}", c.property, c.kind.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusions_change_one_property_each() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "status": {"enum": ["available", "sold"]}}});
        let valid = json!({"name": "rex", "status": "sold"});
        let singles = singles(&schema, &valid);
        assert!(singles.contains(&Confusion {
            property: "status".into(),
            kind: Kind::OtherCase
        }));
        let upper = apply(
            &valid,
            &[Confusion {
                property: "status".into(),
                kind: Kind::OtherCase,
            }],
        );
        assert_eq!(upper["status"], "SOLD");
        let gone = apply(
            &valid,
            &[Confusion {
                property: "name".into(),
                kind: Kind::Absent,
            }],
        );
        assert!(gone.get("name").is_none());
        assert_eq!(describe(&singles[..1]), "name null");
    }
}
