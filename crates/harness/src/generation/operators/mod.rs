//! The request space's generated part (`cases/operators.json`): every operator applied to
//! every position of createPet's body that NewPet's schema names, each case the plainest
//! accepted body with exactly one change. What a store must answer is derived, not listed:
//! the changed body is read as RFC 8259 reads it and validated against NewPet (not JSON: 400;
//! a valid NewPet: accepted and stored as it reads; an invalid one: refused, nothing stored).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

pub use super::operator::{Channel, Kind, Operator, escape_all};
use super::space::{Case, Class, Expect, Fill, Input, RequestSpace, SpaceError, unescape_bytes};
use crate::catalogue::Level;
use crate::contract::Operation;

/// The built-in copy of the operators.
pub const BUILT_IN: &str = include_str!("../../../../../cases/operators.json");
/// The file's name in a cases directory.
pub const FILE_NAME: &str = "operators.json";

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operators {
    pub description: String,
    pub operators: Vec<Operator>,
}

/// A member of NewPet: its name, kind, whether required, and its baseline value's spellings.
#[derive(Debug, Clone)]
struct Position {
    member: String,
    kind: Kind,
    required: bool,
    /// The plainest accepted value, as JSON (placeholders allowed).
    json: String,
    /// Its text: a string's characters as a JSON string holds them, an integer's digits.
    text: String,
    /// A string's every character a `\u` escape, as JSON.
    escaped: String,
    /// An enumeration's value in upper case and capitalised, as JSON.
    cases: Option<(String, String)>,
}

impl RequestSpace {
    /// The built-in space: its listed classes and the operators applied to the built-in NewPet
    /// (here, where the operators are applied: the space itself names none).
    pub fn built_in() -> RequestSpace {
        let contract = crate::contract::Contract::built_in().expect("the built-in schemas load");
        let new_pet = super::Schemas::new(&contract)
            .flatten(&contract, crate::contract::SchemaName::NewPet)
            .expect("the built-in NewPet flattens");
        let operators = Operators::built_in();
        Self::built_in_listed()
            .with_operators(&operators, &new_pet)
            .expect("the built-in operators apply (tested)")
    }
}

impl Operators {
    /// Loads from `dir` when it holds the file, or `./cases` when it does, or else the
    /// built-in copy.
    pub fn load(dir: Option<&Path>) -> Result<Operators, SpaceError> {
        // A cases directory written before operators were data has none: the built-in ones.
        let (file, text) = super::space::read_cases_file(dir, FILE_NAME, BUILT_IN, true)?;
        Self::parse(file, &text)
    }

    /// The built-in copy.
    pub fn built_in() -> Operators {
        Self::parse(Path::new("cases").join(FILE_NAME), BUILT_IN)
            .expect("the built-in operators are valid (tested)")
    }

    pub fn parse(file: PathBuf, text: &str) -> Result<Operators, SpaceError> {
        let invalid = |reason: String| SpaceError {
            file: file.clone(),
            reason,
        };
        let mut reader = serde_json::Deserializer::from_str(text);
        let operators: Operators = serde_path_to_error::deserialize(&mut reader)
            .map_err(|e| invalid(format!("{}: {}", e.path(), e.inner())))?;
        let mut names = std::collections::BTreeSet::new();
        for (n, operator) in operators.operators.iter().enumerate() {
            if !names.insert(&operator.operator) {
                return Err(invalid(format!("operators[{n}]: named twice")));
            }
            if operator.channel.is_none()
                && operator.spellings.is_empty()
                && operator.parameter_spellings.is_empty()
            {
                return Err(invalid(format!("operators[{n}]: no spellings")));
            }
        }
        Ok(operators)
    }
}

/// The positions of NewPet's schema (flattened: `$ref`s inlined), in the schema's order.
fn positions(new_pet: &Value) -> Vec<Position> {
    let required: Vec<&str> = new_pet["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut positions = Vec::new();
    for (member, schema) in new_pet["properties"].as_object().into_iter().flatten() {
        let required = required.contains(&member.as_str());
        let enumerated = schema["enum"].as_array().and_then(|values| {
            values
                .iter()
                .find_map(Value::as_str)
                .map(|first| first.to_string())
        });
        let position = match (enumerated, schema["type"].as_str()) {
            (Some(value), _) => {
                let json = Value::String(value.clone()).to_string();
                let capitalised: String = value
                    .chars()
                    .enumerate()
                    .map(|(n, c)| if n == 0 { c.to_ascii_uppercase() } else { c })
                    .collect();
                Position {
                    member: member.clone(),
                    kind: Kind::Enum,
                    required,
                    text: json[1..json.len() - 1].to_string(),
                    escaped: escape_all(&value),
                    cases: Some((
                        Value::String(value.to_uppercase()).to_string(),
                        Value::String(capitalised).to_string(),
                    )),
                    json,
                }
            }
            (None, Some("string")) if member == "name" => Position {
                member: member.clone(),
                kind: Kind::String,
                required,
                json: "{name}".into(),
                text: "{name-text}".into(),
                escaped: "{name-escaped}".into(),
                cases: None,
            },
            (None, Some("integer")) => Position {
                member: member.clone(),
                kind: Kind::Integer,
                required,
                json: "1".into(),
                text: "1".into(),
                escaped: String::new(),
                cases: None,
            },
            // A member of another shape has no baseline the harness can spell plainly.
            _ => continue,
        };
        positions.push(position);
    }
    positions
}

/// The JSON type of a spelling, where it is JSON: integer and fraction apart.
fn json_type(text: &str) -> Option<&'static str> {
    Some(match serde_json::from_str::<Value>(text).ok()? {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "fraction",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    })
}

/// The plainest body with `member` spelt as `value` (`None`: left out), every other member the
/// plainest accepted value: `{name}` and a category that marks a stored pet where the member
/// is another (`{marker}`), and no status unless it is the member.
fn body(positions: &[Position], member: &str, value: Option<&str>) -> String {
    let mut parts = Vec::new();
    for position in positions {
        let spelled = if position.member == member {
            match value {
                Some(value) => value.to_string(),
                None => continue,
            }
        } else if !position.required {
            continue;
        } else if position.kind == Kind::Integer {
            "{marker}".to_string()
        } else {
            position.json.clone()
        };
        parts.push(format!(
            "{}: {spelled}",
            Value::String(position.member.clone())
        ));
    }
    format!("{{{}}}", parts.join(", "))
}

/// The sample a derivation reads a template with: any name, any category.
fn sample(template: &str) -> Option<Vec<u8>> {
    let fill = Fill {
        name: "pc-x",
        category: 1,
        marker: 2,
        marker_is_own: true,
        existing_id: None,
        unused_id: 3,
    };
    unescape_bytes(&fill.text(template))
}

/// What a store must answer to `bytes` as a createPet body, from RFC 8259 and NewPet.
fn derive(bytes: &[u8], new_pet: &jsonschema::Validator) -> Derived {
    match read(bytes) {
        None => Derived::NotJson,
        Some(value) if new_pet.is_valid(&value) => Derived::Valid,
        Some(_) => Derived::Invalid,
    }
}

/// `bytes` read as RFC 8259 reads them, if they are JSON text.
fn read(bytes: &[u8]) -> Option<Value> {
    crate::json::read(bytes).ok().map(|read| read.value)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Derived {
    NotJson,
    Valid,
    Invalid,
}

impl RequestSpace {
    /// The space with every operator applied to every position of `new_pet` (NewPet's schema,
    /// flattened) as classes of createPet's `body field <member>` inputs; a spelling a listed
    /// class of the same input already sends is left to it.
    pub fn with_operators(
        mut self,
        operators: &Operators,
        new_pet: &Value,
    ) -> Result<RequestSpace, String> {
        let validator = jsonschema::options()
            .offline()
            .build(new_pet)
            .map_err(|e| format!("NewPet: {e}"))?;
        let positions = positions(new_pet);
        self.operators = operators.operators.clone();
        for position in &positions {
            let input_name = format!("body field {}", position.member);
            let listed = self
                .inputs
                .iter()
                .find(|input| {
                    input.input == input_name && input.operations == [Operation::CreatePet]
                })
                .map(listed_bodies)
                .unwrap_or_default();
            let mut classes = Vec::new();
            for operator in &operators.operators {
                if !operator.applies.contains(&position.kind)
                    || (operator.required_only && !position.required)
                    || (operator.spellings.is_empty() && operator.channel.is_none())
                {
                    continue;
                }
                let class = generate(operator, position, &positions, &listed, &validator)?;
                classes.extend(class);
            }
            if classes.is_empty() {
                continue;
            }
            match self.inputs.iter_mut().find(|input| {
                input.input == input_name && input.operations == [Operation::CreatePet]
            }) {
                Some(input) => {
                    for class in classes {
                        if input.classes.iter().any(|c| c.class == class.class) {
                            return Err(format!(
                                "{input_name}: operator {} has a listed class's name",
                                class.class
                            ));
                        }
                        input.classes.push(class);
                    }
                }
                None => self.inputs.push(Input {
                    operations: vec![Operation::CreatePet],
                    input: input_name,
                    classes,
                    untried: Vec::new(),
                }),
            }
        }
        Ok(self)
    }
}

/// The bodies the listed classes of an input send with no header of their own, as read with
/// the sample fill: their bytes, and the JSON they read as.
fn listed_bodies(input: &Input) -> Vec<(Vec<u8>, Option<Value>)> {
    input
        .classes
        .iter()
        .flat_map(|class| &class.cases)
        .filter(|case| case.headers.is_none())
        .filter_map(|case| case.body_template().and_then(sample))
        .map(|bytes| {
            let value = read(&bytes);
            (bytes, value)
        })
        .collect()
}

/// An operator's class at a position: its cases, grouped by what they must get (a spelling
/// that keeps a valid NewPet is accepted, one that breaks it refused), at most one class per
/// answer; the class is named after the operator (with `-accepted` where it splits).
fn generate(
    operator: &Operator,
    position: &Position,
    positions: &[Position],
    listed: &[(Vec<u8>, Option<Value>)],
    validator: &jsonschema::Validator,
) -> Result<Vec<Class>, String> {
    let mut cases: Vec<(Derived, Case)> = Vec::new();
    if let Some(channel) = operator.channel {
        let value = match position.kind {
            Kind::Integer => "1".to_string(),
            _ => "pc-moved".to_string(),
        };
        let template = body(positions, &position.member, None);
        let derived = derive(&sample(&template).unwrap_or_default(), validator);
        let case = Case {
            body: Some(Some(template)),
            ..Case::default()
        };
        let case = match channel {
            Channel::Header => Case {
                headers: Some([(position.member.clone(), value)].into()),
                ..case
            },
            Channel::Query => Case {
                query: Some(format!("{}={value}", position.member)),
                ..case
            },
        };
        cases.push((derived, case));
    }
    for spelling in &operator.spellings {
        let mut value = spelling
            .replace("{json}", &position.json)
            .replace("{text}", &position.text)
            .replace("{escaped}", &position.escaped);
        if let Some((upper, capitalised)) = &position.cases {
            value = value
                .replace("{upper}", upper)
                .replace("{capitalised}", capitalised);
        }
        if operator.skip_same_type {
            let plain = |t: &str| sample(t).and_then(|b| String::from_utf8(b).ok());
            let same = plain(&value)
                .zip(plain(&position.json))
                .is_some_and(|(a, b)| json_type(&a).is_some() && json_type(&a) == json_type(&b));
            if same {
                continue;
            }
        }
        let template = body(positions, &position.member, Some(&value));
        let Some(bytes) = sample(&template) else {
            return Err(format!(
                "operator {}: {spelling:?} has an escape that is not \\xHH",
                operator.operator
            ));
        };
        let ours = read(&bytes);
        let sent_already = listed.iter().any(|(raw, value)| match &ours {
            Some(ours) => value.as_ref() == Some(ours),
            None => raw == &bytes,
        });
        if sent_already {
            continue; // a listed class sends it, with its own ruling
        }
        let derived = derive(&bytes, validator);
        // A pet stored from an accepted case is a pet like any other: an accepted category.
        let template = if derived == Derived::Valid {
            template.replace("{marker}", "{category}")
        } else {
            template
        };
        let case = if operator.bytes {
            Case {
                body_bytes: Some(template),
                ..Case::default()
            }
        } else {
            Case {
                body: Some(Some(template)),
                ..Case::default()
            }
        };
        cases.push((derived, case));
    }
    let mut classes = Vec::new();
    for derived in [Derived::NotJson, Derived::Invalid, Derived::Valid] {
        let of: Vec<Case> = cases
            .iter()
            .filter(|(d, _)| *d == derived)
            .map(|(_, case)| case.clone())
            .collect();
        if of.is_empty() {
            continue;
        }
        let splits = cases.iter().any(|(d, _)| *d != derived);
        let name = match (derived, splits) {
            (Derived::Valid, true) => format!("{}-accepted", operator.operator),
            _ => operator.operator.clone(),
        };
        classes.push(class(name, derived, operator, position, of));
    }
    // Two refused groups (not JSON and invalid) would share a name: one class, the looser answer.
    if classes.len() > 1 && classes[0].class == classes[1].class {
        let invalid = classes.remove(1);
        classes[0].cases.extend(invalid.cases);
        classes[0] = Class {
            expect: Expect::Refused4xx,
            allows: vec!["refused-400".into(), "refused-422".into()],
            ..classes[0].clone()
        };
    }
    Ok(classes)
}

fn class(
    name: String,
    derived: Derived,
    operator: &Operator,
    position: &Position,
    cases: Vec<Case>,
) -> Class {
    let member = &position.member;
    let (expect, allows, ruling, read_back) = match derived {
        Derived::NotJson => (
            Expect::Refused400,
            vec!["refused-400".to_string()],
            format!(
                "Required: the body is no JSON text (RFC 8259), so it holds no NewPet: \"400 | Error | The body is missing required fields or has invalid values.\" (generated: {} at `{member}`)",
                operator.operator
            ),
            false,
        ),
        Derived::Invalid => (
            Expect::Refused4xx,
            vec!["refused-400".to_string(), "refused-422".to_string()],
            format!(
                "Required: NewPet's schema refuses the body, so it \"is missing required fields or has invalid values\": refused (any 4xx), nothing stored (generated: {} at `{member}`)",
                operator.operator
            ),
            false,
        ),
        Derived::Valid => (
            Expect::Accepted,
            vec!["accepted".to_string()],
            format!(
                "Required: the body is a valid NewPet, read as JSON reads it: \"201 | Pet | The animal was added.\", stored as it reads (generated: {} at `{member}`)",
                operator.operator
            ),
            true,
        ),
    };
    Class {
        class: name,
        expect,
        allows,
        level: Level::Required,
        ruling,
        reason: operator.reason.clone(),
        read_back,
        operator: Some(operator.operator.clone()),
        cases,
    }
}

#[cfg(test)]
mod tests;
