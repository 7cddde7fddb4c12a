//! The report stage: the report model filled from what the run found.

use crate::catalogue::{Level, Rule};
use crate::engine::coverage::Tally;
use crate::generation::space::RequestSpace;
use crate::report::RuleReport;
use crate::report::coverage::InputCoverage;
use crate::report::statements::{CheckedBy, StatementCoverage, cites, statements};

/// The rule id that walks `operation`'s classes at `level` (cases/inputs.json).
fn rule_id(operation: &str, level: Level) -> String {
    let slug = match operation {
        "listPets" => "list-pets",
        "createPet" => "create-pet",
        "getPet" => "get-pet",
        other => other,
    };
    format!("inputs/{slug}/{}", level.as_str())
}

/// Every class of the space, in the file's order, with what the pass found.
pub(super) fn coverage_rows(space: &RequestSpace, tally: &Tally) -> Vec<InputCoverage> {
    let mut rows = Vec::new();
    for input in &space.inputs {
        for &operation in &input.operations {
            let name = operation.name();
            for class in &input.classes {
                let found = tally
                    .get(operation, &input.input, &class.class)
                    .unwrap_or_default();
                let rule = rule_id(name, class.level);
                let (outcome, note) = if found.failed > 0 {
                    ("failed", found.first_failure)
                } else if found.cases > 0 {
                    ("tried", None)
                } else if found.unanswered > 0 {
                    (
                        "not-tried",
                        Some("sent, but no case got a whole answer".into()),
                    )
                } else {
                    ("not-tried", Some(format!("not sent: {rule} was not run")))
                };
                rows.push(InputCoverage {
                    operation: name.into(),
                    input: input.input.clone(),
                    class: class.class.clone(),
                    outcome: outcome.into(),
                    level: Some(class.level),
                    expect: Some(class.expect.as_str().into()),
                    rule: Some(rule),
                    cases: found.cases,
                    failed: found.failed,
                    unanswered: found.unanswered,
                    note,
                });
            }
            for untried in &input.untried {
                rows.push(InputCoverage {
                    operation: name.into(),
                    input: input.input.clone(),
                    class: untried.class.clone(),
                    outcome: "not-tried".into(),
                    level: None,
                    expect: None,
                    rule: None,
                    cases: 0,
                    failed: 0,
                    unanswered: 0,
                    note: Some(untried.reason.clone()),
                });
            }
        }
    }
    rows
}

/// The matrix for `catalogue`'s rules, with the verdicts of `reports` (a rule not run has
/// none).
pub(super) fn statement_matrix(
    catalogue: &[Rule],
    reports: &[RuleReport],
) -> Vec<StatementCoverage> {
    let Ok(statements) = statements() else {
        return Vec::new();
    };
    statements
        .into_iter()
        .map(|statement| StatementCoverage {
            rules: catalogue
                .iter()
                .filter(|rule| cites(rule, &statement))
                .map(|rule| CheckedBy {
                    rule: rule.id.clone(),
                    verdict: reports.iter().find(|r| r.id == rule.id).map(|r| r.verdict),
                })
                .collect(),
            section: statement.section,
            text: statement.text,
            not_testable: statement.not_testable,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_has_rules_or_a_reason() {
        let catalogue = crate::catalogue::Catalogue::built_in().unwrap();
        for row in statement_matrix(&catalogue.rules, &[]) {
            assert!(
                !row.rules.is_empty() || row.not_testable.is_some(),
                "{} / {:?}: no rule checks it and no reason says why not",
                row.section,
                row.text
            );
        }
    }

    #[test]
    fn every_class_is_a_row_and_untried_ones_say_why() {
        let space = RequestSpace::built_in();
        let rows = coverage_rows(&space, &Tally::default());
        let classes: usize = space
            .inputs
            .iter()
            .map(|input| input.operations.len() * (input.classes.len() + input.untried.len()))
            .sum();
        assert_eq!(rows.len(), classes);
        assert!(
            rows.iter()
                .all(|row| row.outcome == "not-tried" && row.note.is_some())
        );
        // Every class is walked by a rule of the catalogue.
        let catalogue = crate::catalogue::Catalogue::built_in().unwrap();
        for row in &rows {
            if let Some(rule) = &row.rule {
                assert!(
                    catalogue.rules.iter().any(|r| &r.id == rule),
                    "{rule} (class {}) is in no case file",
                    row.class
                );
            }
        }
    }
}
