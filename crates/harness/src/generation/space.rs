//! The request space of each operation, as data (`cases/request-space.json`): for every input
//! the contract or HTTP gives meaning to, the classes of values to try, each with what the
//! store must do and the level. Loaded and validated before anything is sent; a bad file is an
//! error naming the file and the field.
//!
//! A case is a change to a valid request of its operation, so the data says only what differs:
//! a raw query, a Content-Type (or none), a body (or none, or bytes that are not UTF-8), a
//! credential.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::request::{Body, Credential, RequestSpec};
use crate::catalogue::Level;
use crate::contract::Operation;

/// The JSON Schema the request space is validated against.
pub const SPACE_SCHEMA: &str = include_str!("../../../../cases/request-space.schema.json");
/// The built-in copy of the request space.
pub const BUILT_IN: &str = include_str!("../../../../cases/request-space.json");
/// The file's name in a cases directory.
pub const FILE_NAME: &str = "request-space.json";

/// A request space that cannot be read or is invalid: the file, and the field.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {reason}")]
pub struct SpaceError {
    pub file: PathBuf,
    pub reason: String,
}

/// Every input of every operation, with its classes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpace {
    pub description: String,
    pub inputs: Vec<Input>,
    /// Its operators (`cases/operators.json`), for the path and query parameters too.
    #[serde(skip)]
    pub operators: Vec<super::operator::Operator>,
}

/// One input (a header, a query parameter, the body or a field of it) of some operations.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub operations: Vec<Operation>,
    /// `header Authorization`, `query limit`, `body`, `body field status`.
    pub input: String,
    pub classes: Vec<Class>,
    /// Classes the harness cannot send, and why.
    #[serde(default)]
    pub untried: Vec<Untried>,
}

/// A class of values of an input: what the store must do with every case of it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    pub class: String,
    pub expect: Expect,
    /// Every answer a conforming store may give (the conforming-store generator's draw).
    pub allows: Vec<String>,
    pub level: Level,
    /// Why the level is what it is, in one line (`catalogue::check_ruling`).
    pub ruling: String,
    pub reason: String,
    /// createPet only: what an accepted case stored is read back (the Pet answered and getPet
    /// of its id hold what the body spells under the contract's member names; a pet whose id
    /// the body names is as it was).
    #[serde(default)]
    pub read_back: bool,
    /// The operator that generated the class (`cases/operators.json`); `None` for a listed one.
    #[serde(skip)]
    pub operator: Option<String>,
    pub cases: Vec<Case>,
}

impl Class {
    /// Whether the contract's own words require every case refused (a required refusal): a
    /// store that conforms stores none of them (see [`RequestSpec::refused_by_contract`]).
    pub fn requires_refusal(&self) -> bool {
        self.level == Level::Required && self.expect.is_refusal()
    }

    /// Whether every case sends a body that is not UTF-8: a store that keeps such bytes may
    /// break every read after it, so these go last (`create-pet/poisoned/not-utf-8`).
    pub fn poisons(&self) -> bool {
        let not_utf_8 = |case: &Case| {
            case.body_bytes
                .as_deref()
                .and_then(unescape_bytes)
                .is_some_and(|bytes| std::str::from_utf8(&bytes).is_err())
        };
        !self.cases.is_empty() && self.cases.iter().all(not_utf_8)
    }

    /// Whether the walk of its level leaves it to the last phase: a required class that
    /// poisons (a recommended one is the recommended walk's, early: no such class yet).
    pub fn goes_last(&self) -> bool {
        self.level == Level::Required && self.poisons()
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Untried {
    pub class: String,
    pub reason: String,
}

pub use crate::contract::Expect;

/// A change to a valid request. An absent field leaves the request as it is; `null` for
/// `content_type` or `body` removes it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub content_type: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    pub body: Option<Option<String>>,
    /// A body that may hold bytes a JSON string cannot (not UTF-8): as `body`, with `\xHH`
    /// standing for the byte 0xHH (any other backslash is itself).
    #[serde(default)]
    pub body_bytes: Option<String>,
    /// The categoryId the body spells in place of `{category}`: the case is sent only where
    /// the run accepts that category (`--category-ids`).
    #[serde(default)]
    pub spells_category: Option<i64>,
    #[serde(default)]
    pub credential: Option<String>,
    /// Request headers as a client sends them (a browser's `Referer`, curl's `Accept: */*`),
    /// each in the place of the client's own of that name.
    #[serde(default)]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
}

/// What a case's placeholders stand for in one run: `{name}` (the name, as a JSON string;
/// `{name-text}` its characters as a JSON string holds them, `{name-escaped}` the same string
/// with every character a `\u` escape),
/// `{category}` (a category the run accepts), `{marker}` (a categoryId no other request of
/// the run uses, so a pet stored from the case is recognised), `{existing-id}` (the id of a
/// pet that exists) and `{unused-id}` (an id no pet is likely to have).
#[derive(Debug, Clone, PartialEq)]
pub struct Fill<'a> {
    pub name: &'a str,
    pub category: i64,
    pub marker: i64,
    /// Whether `marker` is the run's own category (the store took it), so that a pet with it
    /// is one of the case's; else it is an accepted category like any other pet's.
    pub marker_is_own: bool,
    pub existing_id: Option<i64>,
    pub unused_id: i64,
}

/// The placeholders a body may hold.
pub const PLACEHOLDERS: [&str; 7] = [
    "{name}",
    "{name-text}",
    "{name-escaped}",
    "{category}",
    "{marker}",
    "{existing-id}",
    "{unused-id}",
];

impl Fill<'_> {
    /// `template` with every placeholder replaced.
    pub fn text(&self, template: &str) -> String {
        let existing = self
            .existing_id
            .map_or_else(|| "null".to_string(), |id| id.to_string());
        let name = Value::String(self.name.into()).to_string();
        template
            .replace("{name-text}", &name[1..name.len() - 1])
            .replace("{name-escaped}", &super::operator::escape_all(self.name))
            .replace("{name}", &name)
            .replace("{category}", &self.category.to_string())
            .replace("{marker}", &self.marker.to_string())
            .replace("{existing-id}", &existing)
            .replace("{unused-id}", &self.unused_id.to_string())
    }
}

/// `text` as bytes, each `\xHH` the byte 0xHH; `None` for an escape that is not two hex digits.
pub fn unescape_bytes(text: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, after)) = rest.split_first() {
        if first == b'\\' && after.first() == Some(&b'x') {
            let hex = std::str::from_utf8(after.get(1..3)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &after[3..];
        } else {
            bytes.push(first);
            rest = after;
        }
    }
    Some(bytes)
}

/// A field that is there, `null` or not: `Some(None)` for `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

impl Case {
    /// `valid` (a valid request of the operation) changed by this case; in a body, `{name}`
    /// stands for `name` (as a JSON string) and `{category}` and `{marker}` for `category`.
    pub fn apply(&self, valid: &RequestSpec, name: &str, category: i64) -> RequestSpec {
        let fill = Fill {
            name,
            category,
            marker: category,
            marker_is_own: false,
            existing_id: None,
            unused_id: category,
        };
        self.apply_filled(valid, &fill)
    }

    /// The case's own body template, if it sends one (`body` or `body_bytes`).
    pub fn body_template(&self) -> Option<&str> {
        match (&self.body, &self.body_bytes) {
            (Some(Some(text)), _) => Some(text),
            (_, Some(text)) => Some(text),
            _ => None,
        }
    }

    /// Whether the case sends a body of its own (rather than the valid request's).
    pub fn sends_body(&self) -> bool {
        self.body.is_some() || self.body_bytes.is_some()
    }

    /// What a pet stored from the case would carry that no other request of the run does: the
    /// name where the body holds `{name}`, the category where it holds `{marker}`.
    pub fn marker(&self, fill: &Fill) -> (Option<String>, Option<i64>) {
        let template = self.body_template().unwrap_or("");
        (
            (template.contains("{name}") || template.contains("{name-escaped}"))
                .then(|| fill.name.to_string()),
            (fill.marker_is_own && template.contains("{marker}")).then_some(fill.marker),
        )
    }

    /// [`Case::apply`] with every placeholder filled from `fill`.
    pub fn apply_filled(&self, valid: &RequestSpec, fill: &Fill) -> RequestSpec {
        let mut spec = valid.clone();
        if let Some(query) = &self.query {
            spec = spec.raw_query(query.clone());
        }
        if let Some(credential) = self.credential.as_deref().and_then(Credential::parse) {
            spec = spec.credential(credential);
        }
        for (name, value) in self.headers.iter().flatten() {
            spec.headers.push((name.clone(), value.clone()));
        }
        if self.content_type.is_none() && !self.sends_body() {
            return spec;
        }
        let (content_type, bytes) = match &spec.body {
            Body::Json(value) => (
                Some("application/json".to_string()),
                Some(serde_json::to_vec(value).unwrap_or_default().into()),
            ),
            Body::Raw {
                content_type,
                bytes,
            } => (content_type.clone(), Some(bytes.clone())),
            Body::Padded { .. } => (
                Some("application/json".to_string()),
                spec.body.bytes().map(|bytes| bytes.into_owned().into()),
            ),
            Body::None => (None, None),
        };
        let content_type = self.content_type.clone().unwrap_or(content_type);
        let bytes = match (&self.body, &self.body_bytes) {
            (Some(Some(text)), _) => Some(fill.text(text).into_bytes().into()),
            (Some(None), _) => None,
            // Checked as the space loads: every escape is two hex digits.
            (None, Some(text)) => Some(unescape_bytes(&fill.text(text)).unwrap_or_default().into()),
            (None, None) => bytes,
        };
        spec.body = match (content_type, bytes) {
            (None, None) => Body::None,
            (content_type, bytes) => Body::Raw {
                content_type,
                bytes: bytes.unwrap_or_default(),
            },
        };
        spec
    }

    /// The case in words, for the report: what differs from a valid request.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(query) = &self.query {
            parts.push(format!("?{query}"));
        }
        match &self.content_type {
            Some(Some(value)) => parts.push(format!("Content-Type: {value:?}")),
            Some(None) => parts.push("no Content-Type".into()),
            None => {}
        }
        match (&self.body, &self.body_bytes) {
            (Some(Some(text)), _) if text.is_empty() => parts.push("an empty body".into()),
            (Some(Some(text)), _) => parts.push(format!("body {text}")),
            (Some(None), _) => parts.push("no body".into()),
            (None, Some(text)) => parts.push(format!("body bytes {text}")),
            (None, None) => {}
        }
        if let Some(credential) = &self.credential {
            parts.push(format!("credential {credential}"));
        }
        for (name, value) in self.headers.iter().flatten() {
            parts.push(format!("{name}: {value}"));
        }
        parts.join(", ")
    }
}

impl RequestSpace {
    /// Loads from `dir`, or `./cases` when it holds the file, or else the built-in copy.
    pub fn load(dir: Option<&Path>) -> Result<RequestSpace, SpaceError> {
        let (file, text) = read_cases_file(dir, FILE_NAME, BUILT_IN, false)?;
        Self::parse(file, &text)
    }

    /// The built-in space's listed classes alone.
    pub fn built_in_listed() -> RequestSpace {
        Self::parse(PathBuf::from("cases").join(FILE_NAME), BUILT_IN)
            .expect("the built-in request space is valid (tested)")
    }

    /// Parses and validates: the file's shape against its schema (the error names the place,
    /// `/inputs/2/classes/0/expect`), then what a schema cannot say (credentials that exist,
    /// cases that fit their operations, class names unique per input).
    pub fn parse(file: PathBuf, text: &str) -> Result<RequestSpace, SpaceError> {
        let invalid = |reason: String| SpaceError {
            file: file.clone(),
            reason,
        };
        let json: Value = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let schema: Value =
            serde_json::from_str(SPACE_SCHEMA).map_err(|e| invalid(format!("schema: {e}")))?;
        let validator = jsonschema::options()
            .offline()
            .build(&schema)
            .map_err(|e| invalid(format!("schema: {e}")))?;
        if let Some(error) = validator.iter_errors(&json).next() {
            return Err(invalid(format!("{}: {error}", error.instance_path())));
        }
        let space: RequestSpace = serde_path_to_error::deserialize(json)
            .map_err(|e| invalid(format!("{}: {}", e.path(), e.inner())))?;
        space.check().map_err(invalid)?;
        Ok(space)
    }

    fn check(&self) -> Result<(), String> {
        for (n, input) in self.inputs.iter().enumerate() {
            let mut names = std::collections::BTreeSet::new();
            let untried = input.untried.iter().map(|u| &u.class);
            for name in input.classes.iter().map(|c| &c.class).chain(untried) {
                if !names.insert(name) {
                    return Err(format!("inputs[{n}]: class {name:?} is named twice"));
                }
            }
            for (c, class) in input.classes.iter().enumerate() {
                crate::catalogue::check_ruling(class.level, &class.ruling)
                    .map_err(|e| format!("inputs[{n}].classes[{c}] ({}): {e}", class.class))?;
                if class.read_back && input.operations != [Operation::CreatePet] {
                    return Err(format!(
                        "inputs[{n}].classes[{c}].read_back: only createPet's pets are read back"
                    ));
                }
                for (k, case) in class.cases.iter().enumerate() {
                    let at = format!("inputs[{n}].classes[{c}].cases[{k}]");
                    if let Some(name) = &case.credential
                        && Credential::parse(name).is_none()
                    {
                        return Err(format!("{at}.credential: no credential {name:?}"));
                    }
                    check_body(case).map_err(|e| format!("{at}: {e}"))?;
                    let sends_body = case.content_type.is_some() || case.sends_body();
                    if sends_body && input.operations != [Operation::CreatePet] {
                        return Err(format!(
                            "{at}: a body or Content-Type only fits createPet alone"
                        ));
                    }
                    // listPets' query is the case's; createPet's valid request has none, so a
                    // field sent there travels in a channel the contract does not give it.
                    let one_with_query = input.operations == [Operation::ListPets]
                        || input.operations == [Operation::CreatePet];
                    if case.query.is_some() && !one_with_query {
                        return Err(format!(
                            "{at}.query: a query only fits listPets or createPet alone"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The classes of `operation` at `level`, with their input, in the file's order.
    pub fn classes(&self, operation: Operation, level: Level) -> Vec<(&Input, &Class)> {
        self.inputs
            .iter()
            .filter(|input| input.operations.contains(&operation))
            .flat_map(|input| input.classes.iter().map(move |class| (input, class)))
            .filter(|(_, class)| class.level == level)
            .collect()
    }
}

/// A cases file: `dir`'s (or, where `optional` and `dir` lacks it, the built-in copy), else
/// `./cases`' when it holds one, else the built-in copy; its path and text.
pub(super) fn read_cases_file(
    dir: Option<&Path>,
    name: &str,
    built_in: &str,
    optional: bool,
) -> Result<(PathBuf, String), SpaceError> {
    let local = Path::new("cases").join(name);
    let file = match dir {
        Some(dir) if !optional || dir.join(name).is_file() => dir.join(name),
        None if local.is_file() => local,
        _ => return Ok((Path::new("cases").join(name), built_in.to_string())),
    };
    let text = std::fs::read_to_string(&file).map_err(|e| SpaceError {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    Ok((file, text))
}

/// What a schema cannot say of a case's body: `body` and `body_bytes` not both, every escape
/// two hex digits, every placeholder one of [`PLACEHOLDERS`].
fn check_body(case: &Case) -> Result<(), String> {
    if case.body.is_some() && case.body_bytes.is_some() {
        return Err("body and body_bytes: one body at most".into());
    }
    if let Some(text) = &case.body_bytes
        && unescape_bytes(text).is_none()
    {
        return Err("body_bytes: an escape is \\xHH, two hex digits".into());
    }
    let template = case.body_template().unwrap_or("");
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        rest = &rest[at..];
        let end = rest.find('}').unwrap_or(0);
        let token = &rest[..=end];
        let word = token.len() > 2
            && token[1..token.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-');
        if word && !PLACEHOLDERS.contains(&token) {
            return Err(format!("no placeholder {token} (one of {PLACEHOLDERS:?})"));
        }
        rest = &rest[1..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_space_loads_and_every_credential_exists() {
        let space = RequestSpace::built_in();
        assert!(
            !space
                .classes(Operation::CreatePet, Level::Required)
                .is_empty()
        );
        // getPet's required classes are about the credential and a client's headers: its one
        // input, the petId, is the parameters rules'.
        assert!(
            space
                .classes(Operation::GetPet, Level::Required)
                .iter()
                .all(|(input, class)| input.input.starts_with("header ")
                    || input.input == "query api_key"
                    || (input.input == "headers" && class.expect == Expect::Accepted))
        );
    }

    #[test]
    fn a_bad_file_names_the_field() {
        let mut json: Value = serde_json::from_str(BUILT_IN).unwrap();
        json["inputs"][1]["classes"][0]["expect"] = "refused".into();
        let err = RequestSpace::parse("x.json".into(), &json.to_string()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("x.json: /inputs/1/classes/0/expect"),
            "{err}"
        );
        let mut json: Value = serde_json::from_str(BUILT_IN).unwrap();
        json["inputs"][0]["classes"][0]["cases"][0]["credential"] = "bearer-ish".into();
        let err = RequestSpace::parse("x.json".into(), &json.to_string()).unwrap_err();
        assert!(
            err.to_string()
                .contains("inputs[0].classes[0].cases[0].credential"),
            "{err}"
        );
        let mut json: Value = serde_json::from_str(BUILT_IN).unwrap();
        json["inputs"][0]["classes"][1]["class"] = "no-separator".into();
        let err = RequestSpace::parse("x.json".into(), &json.to_string()).unwrap_err();
        assert!(err.to_string().contains("named twice"), "{err}");
    }

    #[test]
    fn a_case_changes_only_what_it_names() {
        let valid = RequestSpec::post(
            "/pets",
            Body::Json(serde_json::json!({"name": "a", "categoryId": 1})),
        );
        let case = |json: Value| -> Case { serde_json::from_value(json).unwrap() };
        let spec =
            case(serde_json::json!({"content_type": "Application/JSON"})).apply(&valid, "n", 7);
        let Body::Raw {
            content_type,
            bytes,
        } = &spec.body
        else {
            panic!("{spec:?}")
        };
        assert_eq!(content_type.as_deref(), Some("Application/JSON"));
        assert_eq!(&bytes[..], br#"{"categoryId":1,"name":"a"}"#);
        let spec =
            case(serde_json::json!({"body": null, "content_type": null})).apply(&valid, "n", 7);
        assert_eq!(spec.body, Body::None);
        let spec =
            case(serde_json::json!({"body": "{\"name\": {name}, \"categoryId\": {category}}"}))
                .apply(&valid, "pc-\"x", 7);
        assert_eq!(
            spec.body,
            Body::Raw {
                content_type: Some("application/json".into()),
                bytes: br#"{"name": "pc-\"x", "categoryId": 7}"#.as_slice().into()
            }
        );
        let spec = case(serde_json::json!({"credential": "no-separator"})).apply(&valid, "n", 7);
        assert_eq!(spec.credential, Credential::parse("no-separator").unwrap());
        assert_eq!(spec.body, valid.body);
        let spec = case(serde_json::json!({"headers": {"Accept": "*/*"}})).apply(&valid, "n", 7);
        assert_eq!(spec.headers, [("Accept".to_string(), "*/*".to_string())]);
        assert_eq!(spec.body, valid.body);
    }
}
