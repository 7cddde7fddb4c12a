//! The operations as `schemas/openapi.yaml` describes them: method, path, parameters with
//! their schemas, and the documented response statuses. Generation reads the request space
//! from here, so editing the OpenAPI file changes what is generated, with no Rust change.

use std::path::Path;

use serde_json::{Map, Value};
use yaml_rust2::{Yaml, YamlLoader};

use super::names::SchemaName;
use super::operations::Operation;

/// Where a parameter goes in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterIn {
    Path,
    Query,
}

/// One parameter of an operation, its schema resolved to plain JSON Schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub location: ParameterIn,
    pub required: bool,
    pub schema: Value,
}

/// One operation of the OpenAPI description.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationModel {
    pub operation: Operation,
    pub method: String,
    /// As written in the description, e.g. `/pets/{petId}`.
    pub path: String,
    pub parameters: Vec<Parameter>,
    /// The statuses the description documents, e.g. `[200, 401, 404]`.
    pub statuses: Vec<u16>,
}

impl OperationModel {
    /// The path with every path parameter replaced by its (already encoded) value.
    pub fn path_with(&self, values: &[(&str, &str)]) -> String {
        let mut path = self.path.clone();
        for (name, value) in values {
            path = path.replace(&format!("{{{name}}}"), value);
        }
        path
    }

    /// The statuses a request that is valid and carries the key may get: the documented ones
    /// less 401 (the key is valid) and 400 (the request is valid).
    pub fn valid_request_statuses(&self) -> Vec<u16> {
        self.statuses
            .iter()
            .copied()
            .filter(|status| !matches!(status, 400 | 401))
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{file}: {reason}")]
pub struct OpenApiError {
    pub file: String,
    pub reason: String,
}

/// The operations of the description, in the order it lists them.
#[derive(Debug, Clone, Default)]
pub struct OpenApi {
    pub operations: Vec<OperationModel>,
}

/// The built-in copy, for a binary run outside the repository.
pub const EMBEDDED: &str = include_str!("../../../../schemas/openapi.yaml");

/// YAML as JSON: the description uses only what JSON can say.
fn to_json(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Yaml::Integer(n) => Value::from(*n),
        Yaml::String(text) => Value::String(text.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Hash(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, value)| {
                    let name = match name {
                        Yaml::String(text) => text.clone(),
                        Yaml::Integer(n) => n.to_string(),
                        other => format!("{other:?}"),
                    };
                    (name, to_json(value))
                })
                .collect::<Map<String, Value>>(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

impl OpenApi {
    /// Reads `openapi.yaml` from `dir`, or the built-in copy when `dir` is `None`.
    pub fn load(
        dir: Option<&Path>,
        schema: impl Fn(SchemaName) -> Value,
    ) -> Result<OpenApi, OpenApiError> {
        let (file, text) = match dir {
            Some(dir) => {
                let file = dir.join("openapi.yaml");
                let text = std::fs::read_to_string(&file).map_err(|e| OpenApiError {
                    file: file.display().to_string(),
                    reason: format!("cannot read: {e}"),
                })?;
                (file.display().to_string(), text)
            }
            None => ("schemas/openapi.yaml".to_string(), EMBEDDED.to_string()),
        };
        Self::parse(&file, &text, schema)
    }

    pub fn parse(
        file: &str,
        text: &str,
        schema: impl Fn(SchemaName) -> Value,
    ) -> Result<OpenApi, OpenApiError> {
        let fail = |reason: String| OpenApiError {
            file: file.to_string(),
            reason,
        };
        let documents = YamlLoader::load_from_str(text).map_err(|e| fail(e.to_string()))?;
        let document = documents
            .first()
            .map(to_json)
            .ok_or_else(|| fail("empty document".into()))?;
        let resolve = |value: &Value| resolve(&document, value, &schema);
        let mut operations = Vec::new();
        let paths = document["paths"]
            .as_object()
            .ok_or_else(|| fail("no `paths`".into()))?;
        for (path, item) in paths {
            let Some(methods) = item.as_object() else {
                continue;
            };
            for (method, body) in methods {
                let Some(id) = body["operationId"].as_str() else {
                    continue;
                };
                let operation = Operation::from_name(id).ok_or_else(|| {
                    fail(format!(
                        "{method} {path}: operationId {id:?} is not in the contract"
                    ))
                })?;
                let mut parameters = Vec::new();
                for parameter in body["parameters"].as_array().into_iter().flatten() {
                    let parameter = resolve(parameter);
                    let location = match parameter["in"].as_str() {
                        Some("path") => ParameterIn::Path,
                        Some("query") => ParameterIn::Query,
                        _ => continue, // headers and cookies: none in this contract
                    };
                    let name = parameter["name"].as_str().ok_or_else(|| {
                        fail(format!("{method} {path}: a parameter without a name"))
                    })?;
                    parameters.push(Parameter {
                        name: name.to_string(),
                        location,
                        required: parameter["required"].as_bool().unwrap_or(false),
                        schema: resolve(&parameter["schema"]),
                    });
                }
                let mut statuses: Vec<u16> = body["responses"]
                    .as_object()
                    .into_iter()
                    .flat_map(|responses| responses.keys())
                    .filter_map(|status| status.parse().ok())
                    .collect();
                statuses.sort_unstable();
                operations.push(OperationModel {
                    operation,
                    method: method.to_ascii_uppercase(),
                    path: path.clone(),
                    parameters,
                    statuses,
                });
            }
        }
        Ok(OpenApi { operations })
    }

    pub fn operation(&self, operation: Operation) -> Option<&OperationModel> {
        self.operations.iter().find(|o| o.operation == operation)
    }
}

/// A value with `$ref`s to `#/...` and to the sibling schema files replaced by what they
/// name (the files as the contract loaded them).
fn resolve(document: &Value, value: &Value, schema: &impl Fn(SchemaName) -> Value) -> Value {
    let mut value = value.clone();
    for _ in 0..8 {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
            return value;
        };
        value = if let Some(pointer) = reference.strip_prefix('#') {
            document.pointer(pointer).cloned().unwrap_or(Value::Null)
        } else {
            let file = reference.trim_start_matches("./");
            SchemaName::ALL
                .into_iter()
                .find(|name| name.file_name() == file)
                .map_or(Value::Null, schema)
        };
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Contract;

    #[test]
    fn the_built_in_description_gives_every_operation_and_parameter() {
        let contract = Contract::built_in().unwrap();
        let api = OpenApi::load(None, |name| contract.document(name).clone()).unwrap();
        let list = api.operation(Operation::ListPets).unwrap();
        assert_eq!(list.method, "GET");
        assert_eq!(list.statuses, vec![200, 401]);
        let limit = &list.parameters[0];
        assert_eq!(
            (limit.name.as_str(), limit.location),
            ("limit", ParameterIn::Query)
        );
        assert_eq!(limit.schema["maximum"], 100);
        let status = &list.parameters[1];
        assert_eq!(status.schema["enum"][0], "available");
        let get = api.operation(Operation::GetPet).unwrap();
        assert_eq!(get.parameters[0].location, ParameterIn::Path);
        assert_eq!(get.parameters[0].schema["format"], "int64");
        assert_eq!(get.valid_request_statuses(), vec![200, 404]);
        assert_eq!(get.path_with(&[("petId", "7")]), "/pets/7");
        let create = api.operation(Operation::CreatePet).unwrap();
        assert_eq!(create.statuses, vec![201, 400, 401]);
    }
}
