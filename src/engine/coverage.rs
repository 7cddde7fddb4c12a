//! What the coverage pass over the request space found, per operation, input and class: the
//! run keeps it for the report's request-coverage table (`rules/inputs.rs` counts each case).

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::contract::Operation;

/// What the coverage pass found for one class of one input of one operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassTally {
    /// Cases that got a whole answer.
    pub cases: u32,
    /// Of those, the ones answered otherwise than the class says.
    pub failed: u32,
    /// Cases sent that got no whole answer (a transport cut, a stop of the run).
    pub unanswered: u32,
    /// Cases not sent because the run sends their header itself (`-H`).
    pub withheld: u32,
    /// The first failing case, in words.
    pub first_failure: Option<String>,
}

/// Per (operation, input, class): what the coverage pass found.
#[derive(Debug, Default)]
pub struct Tally(Mutex<BTreeMap<(String, String, String), ClassTally>>);

impl Tally {
    /// Counts one case of a class (`key`: operation, input, class); `what` words a failure.
    pub fn count(
        &self,
        key: (String, String, String),
        outcome: Outcome,
        what: impl FnOnce() -> String,
    ) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let entry = map.entry(key).or_default();
        match outcome {
            Outcome::Passed => entry.cases += 1,
            Outcome::Failed => {
                entry.cases += 1;
                entry.failed += 1;
                if entry.first_failure.is_none() {
                    entry.first_failure = Some(what());
                }
            }
            Outcome::Unanswered => entry.unanswered += 1,
            Outcome::Withheld => entry.withheld += 1,
        }
    }

    /// What the pass found for a class, if the pass sent any of its cases.
    pub fn get(&self, operation: Operation, input: &str, class: &str) -> Option<ClassTally> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(
            operation.name().to_string(),
            input.to_string(),
            class.to_string(),
        ))
        .cloned()
    }
}

/// What one case of a class got.
pub enum Outcome {
    Passed,
    Failed,
    Unanswered,
    /// Not sent: the run sends the case's header itself (`-H`).
    Withheld,
}
