//! What the coverage pass over the request space found, per operation, input and class: the
//! run keeps it for the report's request-coverage table (`rules/inputs.rs` counts each case).

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::catalogue::Level;
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
    /// For a class outside the request space: the level of the rule that judged it, and
    /// what that rule expects of its cases.
    pub judged: Option<(Level, &'static str)>,
}

/// Per (operation, input, class): what the coverage pass found; and apart, per the rule that
/// sent them, the classes of rules outside the request space (a parameter's operator, which
/// list-pets/parameters and get-pet/parameters send), so that a name both use is two rows.
#[derive(Debug, Default)]
pub struct InputTally(Mutex<BTreeMap<Key, ClassTally>>);

/// A class of an input of an operation: what the tally counts by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassKey {
    pub operation: Operation,
    /// `body field name`, `query limit`, `path petId`.
    pub input: String,
    pub class: String,
}

impl ClassKey {
    pub fn new(operation: Operation, input: impl Into<String>, class: impl Into<String>) -> Self {
        ClassKey {
            operation,
            input: input.into(),
            class: class.into(),
        }
    }

    fn order(&self) -> (&'static str, &str, &str) {
        (self.operation.name(), &self.input, &self.class)
    }
}

/// By the operation's name, then input and class: the order the report lists them in.
impl Ord for ClassKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

impl PartialOrd for ClassKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A class, and the rule outside the request space that counted it.
type Key = (ClassKey, Option<String>);

impl InputTally {
    /// Counts one case of a class; `what` words a failure.
    pub fn count(&self, key: ClassKey, outcome: Outcome, what: impl FnOnce() -> String) {
        self.count_key((key, None), outcome, what);
    }

    fn count_key(&self, key: Key, outcome: Outcome, what: impl FnOnce() -> String) {
        // A failing value sent again to confirm it is one case, counted the first time.
        if super::resending::resending() {
            return;
        }
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

    /// Counts one case that `rule` (of `level`, expecting `expect`) sent of a class that is
    /// none of the request space's.
    pub fn count_by(
        &self,
        (rule, level, expect): (&str, Level, &'static str),
        key: ClassKey,
        outcome: Outcome,
        what: impl FnOnce() -> String,
    ) {
        let key = (key, Some(rule.to_string()));
        self.count_key(key.clone(), outcome, what);
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = map.get_mut(&key) {
            entry.judged = Some((level, expect));
        }
    }

    /// Every class counted by a rule outside the request space, in key order: the class,
    /// the rule, and what it found.
    pub fn by_rules(&self) -> Vec<(ClassKey, String, ClassTally)> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.iter()
            .filter_map(|((key, rule), tally)| Some((key.clone(), rule.clone()?, tally.clone())))
            .collect()
    }

    /// What the pass found for a class, if the pass sent any of its cases.
    pub fn get(&self, operation: Operation, input: &str, class: &str) -> Option<ClassTally> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(ClassKey::new(operation, input, class), None))
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
