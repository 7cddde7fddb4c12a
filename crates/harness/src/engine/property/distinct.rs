//! The distinct failures of a property rule: told apart by the answer and by the class of the
//! input (which strings are empty, long, non-ASCII or hold what JSON escapes; which numbers
//! are negative or past 32 bits; which values are null), each with its own counterexample.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::outcome::{Failure, MAX_DISTINCT_FAILURES};

/// The class of a case's input, from its value as data: which of its strings are empty,
/// long, non-ASCII or hold what JSON escapes, which numbers are negative or past 32 bits,
/// which values are null. Two failures with the same answer but inputs of different classes
/// are told apart (a 500 on long names, another on negative categories).
pub fn input_class(value: &Value) -> BTreeSet<String> {
    fn walk(value: &Value, path: &str, out: &mut BTreeSet<String>) {
        let at = if path.is_empty() { "value" } else { path };
        match value {
            Value::Object(fields) => {
                for (key, field) in fields {
                    let path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(field, &path, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, path, out)),
            Value::String(text) => {
                let length = text.chars().count();
                if length == 0 {
                    out.insert(format!("empty {at}"));
                }
                if length > 255 {
                    out.insert(format!("{at} over 255 characters"));
                }
                if !text.is_ascii() {
                    out.insert(format!("non-ASCII {at}"));
                }
                if text
                    .chars()
                    .any(|c| c.is_control() || c == '"' || c == '\\')
                {
                    out.insert(format!("{at} with characters JSON escapes"));
                }
            }
            Value::Number(number) => match number.as_i64() {
                Some(n) if i32::try_from(n).is_err() => {
                    out.insert(format!("{at} past 32 bits"));
                }
                Some(n) if n < 0 => {
                    out.insert(format!("negative {at}"));
                }
                Some(_) => {}
                None => {
                    out.insert(format!("{at} not an int64"));
                }
            },
            Value::Null => {
                out.insert(format!("null {at}"));
            }
            Value::Bool(_) => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(value, "", &mut out);
    out
}

fn class_name(key: &str, input: &BTreeSet<String>) -> String {
    if input.is_empty() {
        return key.to_string();
    }
    let input: Vec<&str> = input.iter().map(String::as_str).collect();
    format!("{key}; input: {}", input.join(", "))
}

/// The distinct failures of a rule, by class, each with its own counterexample.
#[derive(Default)]
pub(super) struct Distinct {
    /// (answer key, input class, failure), in the order found.
    pub(super) found: Vec<(String, BTreeSet<String>, Box<Failure>)>,
    /// Failing generated cases shrunk so far: each costs a chain of requests.
    pub(super) shrunk: usize,
    /// Shrinking steps taken so far, of the rule's [`MAX_SHRINK_STEPS`].
    pub(super) shrink_steps: u32,
}

impl Distinct {
    pub(super) fn full(&self) -> bool {
        self.found.len() >= MAX_DISTINCT_FAILURES
    }

    /// A failure like one already found: the same answer, and an input of that class or
    /// more (a long non-ASCII name failing as a long name did). A failure found on plain
    /// input covers every input that gets the same answer: the input did not matter.
    pub(super) fn covers(&self, key: &str, input: &BTreeSet<String>) -> bool {
        self.found
            .iter()
            .any(|(k, found, _)| k == key && found.is_subset(input))
    }

    pub(super) fn add(&mut self, key: String, input: BTreeSet<String>, mut failure: Box<Failure>) {
        failure.class = Some(class_name(&key, &input));
        self.found.push((key, input, failure));
    }

    pub(super) fn into_failures(self) -> Vec<Failure> {
        self.found.into_iter().map(|(_, _, f)| *f).collect()
    }
}
