//! The request space of each operation, as data (`cases/request-space.json`): for every input
//! the contract or HTTP gives meaning to, the classes of values to try, each with what the
//! store must do and the level. Loaded and validated before anything is sent; a bad file is an
//! error naming the file and the field.
//!
//! A case is a change to a valid request of its operation, so the data says only what differs:
//! a raw query, a Content-Type (or none), a body (or none), a credential.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::request::{Body, Credential, RequestSpec};
use crate::catalogue::Level;
use crate::contract::Operation;

/// The JSON Schema the request space is validated against.
pub const SPACE_SCHEMA: &str = include_str!("../../cases/request-space.schema.json");
/// The built-in copy of the request space.
pub const BUILT_IN: &str = include_str!("../../cases/request-space.json");
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
    pub cases: Vec<Case>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Untried {
    pub class: String,
    pub reason: String,
}

/// What a store must answer to a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// The operation's success: 200, or 201 for createPet.
    Accepted,
    /// Exactly 400, with an Error body.
    #[serde(rename = "refused-400")]
    Refused400,
    /// Any 4xx, with an Error body.
    #[serde(rename = "refused-4xx")]
    Refused4xx,
    /// 401, with an Error body.
    #[serde(rename = "refused-401")]
    Refused401,
    /// Any answer but a 5xx.
    Answered,
    /// Any answer but a 5xx, whose body is JSON under a JSON Content-Type: an Error for a
    /// 4xx (the status is the contract's silent area, the body's media type is not).
    AnsweredJson,
}

impl Expect {
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Accepted => "accepted",
            Expect::Refused400 => "refused-400",
            Expect::Refused4xx => "refused-4xx",
            Expect::Refused401 => "refused-401",
            Expect::Answered => "answered",
            Expect::AnsweredJson => "answered-json",
        }
    }
}

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
    #[serde(default)]
    pub credential: Option<String>,
    /// Request headers as a client sends them (a browser's `Referer`, curl's `Accept: */*`),
    /// each in the place of the client's own of that name.
    #[serde(default)]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
}

/// A field that is there, `null` or not: `Some(None)` for `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

impl Case {
    /// `valid` (a valid request of the operation) changed by this case; in a body, `{name}`
    /// stands for `name` (as a JSON string) and `{category}` for `category`.
    pub fn apply(&self, valid: &RequestSpec, name: &str, category: i64) -> RequestSpec {
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
        if self.content_type.is_none() && self.body.is_none() {
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
            Body::None => (None, None),
        };
        let content_type = self.content_type.clone().unwrap_or(content_type);
        let bytes = match &self.body {
            Some(Some(text)) => Some(
                text.replace("{name}", &Value::String(name.into()).to_string())
                    .replace("{category}", &category.to_string())
                    .into_bytes()
                    .into(),
            ),
            Some(None) => None,
            None => bytes,
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
        match &self.body {
            Some(Some(text)) if text.is_empty() => parts.push("an empty body".into()),
            Some(Some(text)) => parts.push(format!("body {text}")),
            Some(None) => parts.push("no body".into()),
            None => {}
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
        let local = Path::new("cases").join(FILE_NAME);
        let file = match dir {
            Some(dir) => dir.join(FILE_NAME),
            None if local.is_file() => local,
            None => return Self::parse(Path::new("cases").join(FILE_NAME), BUILT_IN),
        };
        let text = std::fs::read_to_string(&file).map_err(|e| SpaceError {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        Self::parse(file, &text)
    }

    pub fn built_in() -> RequestSpace {
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
                for (k, case) in class.cases.iter().enumerate() {
                    let at = format!("inputs[{n}].classes[{c}].cases[{k}]");
                    if let Some(name) = &case.credential
                        && Credential::parse(name).is_none()
                    {
                        return Err(format!("{at}.credential: no credential {name:?}"));
                    }
                    let sends_body = case.content_type.is_some() || case.body.is_some();
                    if sends_body && input.operations != [Operation::CreatePet] {
                        return Err(format!(
                            "{at}: a body or Content-Type only fits createPet alone"
                        ));
                    }
                    if case.query.is_some() && input.operations != [Operation::ListPets] {
                        return Err(format!("{at}.query: a query only fits listPets alone"));
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
