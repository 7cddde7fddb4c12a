//! A rule's distinct failures as every format words them: the count beside the first
//! failure's message, and each further failure (its class, message and replay) after it.

use super::model::{FailureReport, RuleReport};

/// " (and N more distinct failures)" for a rule that found several; empty otherwise.
pub fn count_suffix(rule: &RuleReport) -> String {
    match rule.more_failures.len() {
        0 => String::new(),
        1 => " (and 1 more distinct failure)".into(),
        n => format!(" (and {n} more distinct failures)"),
    }
}

/// The heading of a distinct failure: its place among the rule's and its class.
pub fn heading(rule: &RuleReport, index: usize, failure: &FailureReport) -> String {
    let total = rule
        .distinct_failures
        .max(1 + rule.more_failures.len() as u32);
    match &failure.class {
        Some(class) => format!("Distinct failure {} of {total}: {class}", index + 1),
        None => format!("Distinct failure {} of {total}", index + 1),
    }
}

/// Every failure of the rule, the first first, each with its heading when there are several.
pub fn each(rule: &RuleReport) -> Vec<(Option<String>, &FailureReport)> {
    let several = !rule.more_failures.is_empty();
    rule.failure
        .iter()
        .chain(&rule.more_failures)
        .enumerate()
        .map(|(n, failure)| (several.then(|| heading(rule, n, failure)), failure))
        .collect()
}

/// Each failure after the first, for a JUnit description: heading, message and replay.
pub fn junit_lines(rule: &RuleReport) -> String {
    let mut text = String::new();
    for (n, failure) in rule.more_failures.iter().enumerate() {
        text.push_str(&format!(
            "{}: {}\n",
            heading(rule, n + 1, failure),
            failure.message()
        ));
        if let Some(example) = &failure.counterexample {
            text.push_str(&format!("  minimal case: {}\n", example.minimal));
        }
        if let Some(curl) = &failure.curl {
            text.push_str(&format!("  reproduce: {curl}\n"));
        }
    }
    text
}
