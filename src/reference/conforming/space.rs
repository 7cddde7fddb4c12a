//! The request space's classes as the reference reads them: every answer a store may give.

use serde::Deserialize;

/// A class of the request space as the reference reads it: what a store may answer.
#[derive(Debug, Clone, Deserialize)]
pub struct AllowedAnswers {
    pub class: String,
    #[serde(default)]
    pub allows: Vec<String>,
    pub expect: String,
    pub level: String,
    /// The requests of the class: two classes of the same requests (one required, one
    /// recommended) are one answer of a store.
    pub cases: serde_json::Value,
}

#[derive(Deserialize)]
struct SpaceInput {
    operations: Vec<String>,
    input: String,
    classes: Vec<AllowedAnswers>,
}

#[derive(Deserialize)]
struct SpaceFile {
    inputs: Vec<SpaceInput>,
}

/// The request space's classes, with the operations of their input: (operations, input, class).
pub fn space_classes() -> Vec<(Vec<String>, String, AllowedAnswers)> {
    const SPACE: &str = include_str!("../../../cases/request-space.json");
    let file: SpaceFile = serde_json::from_str(SPACE).unwrap_or(SpaceFile { inputs: Vec::new() });
    file.inputs
        .into_iter()
        .flat_map(|input| {
            let operations = input.operations;
            let name = input.input;
            input
                .classes
                .into_iter()
                .map(move |class| (operations.clone(), name.clone(), class))
        })
        .collect()
}
