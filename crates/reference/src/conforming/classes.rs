//! The request space as a store reads it (cases/request-space.json): the answers a class
//! allows, and which of them meets what the class expects.

use serde::Deserialize;

use petstore_vocabulary::contract::{Expect, Level};

/// The answer a store gives to a class of the request space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The operation's success: the input read as the contract's (a spelling taken, a value
    /// out of range clamped).
    Accepted,
    /// Accepted, a member named twice read from its first value.
    FirstWins,
    /// Accepted, a member named twice read from its last value.
    LastWins,
    /// A refusal with this status and an Error body.
    Refused(u16),
}

impl Answer {
    pub fn parse(name: &str) -> Option<Answer> {
        match name {
            "accepted" => Some(Answer::Accepted),
            "accepted-first-wins" => Some(Answer::FirstWins),
            "accepted-last-wins" => Some(Answer::LastWins),
            _ => name
                .strip_prefix("refused-")?
                .parse()
                .ok()
                .filter(|status| (400..500).contains(status))
                .map(Answer::Refused),
        }
    }
}

/// A class of the request space as the reference reads it: what a store may answer.
#[derive(Debug, Clone, Deserialize)]
pub struct AllowedAnswers {
    pub class: String,
    #[serde(default)]
    pub allows: Vec<String>,
    pub expect: Expect,
    pub level: Level,
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
    const SPACE: &str = include_str!("../../../../cases/request-space.json");
    // The built-in file, validated as it loads elsewhere: a store that read nothing from it
    // would answer every class alike and pass for conforming.
    let file: SpaceFile =
        serde_json::from_str(SPACE).expect("cases/request-space.json parses (tested)");
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

/// Whether `answer` is what a class's `expect` asks.
pub fn meets(answer: Answer, expect: Expect) -> bool {
    matches!(
        (answer, expect),
        (_, Expect::Answered | Expect::AnsweredJson)
            | (
                Answer::Accepted | Answer::FirstWins | Answer::LastWins,
                Expect::Accepted
            )
            | (Answer::Refused(400), Expect::Refused400)
            | (Answer::Refused(401), Expect::Refused401)
            | (Answer::Refused(_), Expect::Refused4xx)
    )
}
