//! The contract coverage matrix: each statement of the contract (section and sentence, list
//! item or table row, as `cases/statements.json` lists them) with the rules that check it and
//! their verdicts, or why it cannot be checked through this interface. A rule checks a
//! statement when its citation quotes it (or is quoted by it), or when the statement names the
//! rule in `checked_by`.

use serde::{Deserialize, Serialize};

use crate::catalogue::Rule;
use crate::outcome::VerdictKind;

/// The statements of the contract, kept as data beside the rule catalogue.
pub const STATEMENTS_JSON: &str = include_str!("../../../../cases/statements.json");

#[derive(Debug, Clone, Deserialize)]
struct StatementsFile {
    statements: Vec<Statement>,
}

/// One statement as `cases/statements.json` writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Statement {
    pub section: String,
    pub text: String,
    #[serde(default)]
    pub checked_by: Vec<String>,
    #[serde(default)]
    pub not_testable: Option<String>,
}

/// A rule that checks a statement, with its verdict in this run (none: not selected).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckedBy {
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<VerdictKind>,
}

/// A row of the matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatementCoverage {
    pub section: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<CheckedBy>,
    /// "not testable through this interface, because …".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_testable: Option<String>,
}

/// The statements of the built-in list (an error names what does not parse).
pub fn statements() -> Result<Vec<Statement>, String> {
    serde_json::from_str::<StatementsFile>(STATEMENTS_JSON)
        .map(|file| file.statements)
        .map_err(|e| format!("cases/statements.json: {e}"))
}

/// Whitespace collapsed, table bars and spaces trimmed: quotes cite table rows both with and
/// without their outer bars.
fn normalized(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_matches(|c: char| c == '|' || c == ' ')
        .to_string()
}

/// Whether `rule`'s citation quotes `statement` (a quote joins passages with " … ").
pub fn cites(rule: &Rule, statement: &Statement) -> bool {
    cites_passages(
        rule,
        &passages(rule),
        statement,
        &normalized(&statement.text),
    )
}

/// A rule's citation as the passages [`cites`] compares, normalized: computed once per rule
/// where every statement is compared with every rule (a report's matrix).
pub fn passages(rule: &Rule) -> Vec<String> {
    rule.citation
        .quote
        .split('…')
        .map(normalized)
        .filter(|passage| !passage.is_empty())
        .collect()
}

/// [`cites`], the rule's passages and the statement's text normalized already.
pub fn cites_passages(rule: &Rule, passages: &[String], statement: &Statement, text: &str) -> bool {
    passages
        .iter()
        .any(|passage| passage.contains(text) || text.contains(passage.as_str()))
        || statement.checked_by.contains(&rule.id)
}

/// A statement's text as [`cites_passages`] compares it.
pub fn statement_text(statement: &Statement) -> String {
    normalized(&statement.text)
}

/// A row's verdicts in a few words: "3 passed, 1 failed", "not run", or why not testable.
pub fn summary(row: &StatementCoverage) -> String {
    if row.rules.is_empty() {
        return match &row.not_testable {
            Some(reason) => format!("not testable through this interface, because {reason}"),
            None => "NO RULE and no reason given".into(),
        };
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for checked in &row.rules {
        let name = checked.verdict.map_or("not run".to_string(), |v| {
            serde_json::to_value(v)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        });
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => counts.push((name, 1)),
        }
    }
    counts
        .iter()
        .map(|(name, count)| format!("{count} {name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rules of a row as a report lists them: `id (verdict)`.
pub fn rules_list(row: &StatementCoverage) -> Vec<String> {
    row.rules
        .iter()
        .map(|checked| match checked.verdict {
            Some(verdict) => format!("{} ({})", checked.rule, verdict.as_str()),
            None => format!("{} (not run)", checked.rule),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;

    #[test]
    fn every_statement_is_the_contract_s_own_and_every_rule_cites_one() {
        let catalogue = Catalogue::built_in().unwrap();
        let statements = statements().unwrap();
        assert!(statements.len() > 50);
        let contract = crate::contract::CONTRACT_TEXT;
        for statement in &statements {
            assert!(
                contract.contains(statement.text.as_str()),
                "not a sentence of the contract: {:?}",
                statement.text
            );
            for id in &statement.checked_by {
                assert!(
                    catalogue.get(id).is_some(),
                    "checked_by names no rule: {id}"
                );
            }
        }
        // Every rule checks some statement: a citation that quotes no statement is a typo.
        for rule in &catalogue.rules {
            assert!(
                statements.iter().any(|s| cites(rule, s)),
                "{}: its citation quotes no statement of the contract",
                rule.id
            );
        }
    }
}
