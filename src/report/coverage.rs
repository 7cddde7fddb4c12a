//! The request-coverage table: per operation and input, each class of values of the request
//! space (`cases/request-space.json`), whether the coverage pass tried it, how many cases got
//! an answer and how many failed. Classes the harness cannot send are rows too, with why, so
//! a user sees what was not tried. (Not the contract-statement coverage: this is about the
//! requests sent.)

use serde::{Deserialize, Serialize};

use crate::catalogue::Level;

/// One class of one input of one operation, and what the coverage pass found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputCoverage {
    pub operation: String,
    pub input: String,
    pub class: String,
    /// `tried`, `failed` (a case was answered otherwise than the class says), or `not-tried`.
    pub outcome: String,
    /// The class's level; none for a class the harness cannot send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// What the store must answer (accepted, refused-400, refused-4xx, refused-401, answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
    /// The rule that walks the class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Cases of the class that got a whole answer.
    pub cases: u32,
    /// Of those, the ones answered otherwise than the class says.
    pub failed: u32,
    /// Cases sent that got no whole answer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered: u32,
    /// The first failing case, or why the class was not tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Counts for a one-line summary: classes tried, failed, not tried.
pub fn counts(rows: &[InputCoverage]) -> (usize, usize, usize) {
    let of = |outcome: &str| rows.iter().filter(|row| row.outcome == outcome).count();
    (of("tried"), of("failed"), of("not-tried"))
}
