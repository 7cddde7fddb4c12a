//! The request-coverage table: per operation and input, each class of values of the request
//! space (`cases/request-space.json`), whether the coverage pass tried it, how many cases got
//! an answer and how many failed. Classes the harness cannot send are rows too, with why, so
//! a user sees what was not tried. (Not the contract-statement coverage: this is about the
//! requests sent.)

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::catalogue::Level;
use crate::generation::space::RequestSpace;
use crate::rules::inputs::{Tally, operation_name};

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
pub fn rows(space: &RequestSpace, tally: &Tally) -> Vec<InputCoverage> {
    let mut rows = Vec::new();
    for input in &space.inputs {
        for &operation in &input.operations {
            let name = operation_name(operation);
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
                } else if found.withheld > 0 {
                    (
                        "not-tried",
                        Some("not sent: the run sends this header itself (-H)".into()),
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

/// Counts for a one-line summary: classes tried, failed, not tried.
fn counts(rows: &[InputCoverage]) -> (usize, usize, usize) {
    let of = |outcome: &str| rows.iter().filter(|row| row.outcome == outcome).count();
    (of("tried"), of("failed"), of("not-tried"))
}

/// The table in Markdown (summary.md).
pub fn markdown(out: &mut String, rows: &[InputCoverage]) {
    if rows.is_empty() {
        return;
    }
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let (tried, failed, not_tried) = counts(rows);
    let _ = writeln!(out, "\n## Request coverage\n");
    let _ = writeln!(
        out,
        "Classes of input values of `cases/request-space.json`: {tried} tried and answered as they must be, {failed} failed, {not_tried} not tried.\n"
    );
    let _ = writeln!(
        out,
        "| operation | input | class | level | must be | cases | failed | note |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | `{}` | {} | {} | {} | {} | {} |",
            row.operation,
            cell(&row.input),
            row.class,
            row.level.map_or("-", Level::as_str),
            row.expect.as_deref().unwrap_or("-"),
            row.cases,
            row.failed,
            cell(row.note.as_deref().unwrap_or(""))
        );
    }
}

/// The table in HTML (report.html); `escape` is the page's own.
pub fn html(out: &mut String, rows: &[InputCoverage], escape: fn(&str) -> String) {
    if rows.is_empty() {
        return;
    }
    let (tried, failed, not_tried) = counts(rows);
    let _ = writeln!(
        out,
        "<section id=\"request-coverage\">\n<h2>Request coverage</h2>"
    );
    let _ = writeln!(
        out,
        "<p>Classes of input values of <code>cases/request-space.json</code>: {tried} tried and answered as they must be, {failed} failed, {not_tried} not tried.</p>"
    );
    let _ = writeln!(
        out,
        "<table class=\"coverage\">\n<thead><tr><th>operation</th><th>input</th><th>class</th><th>level</th><th>must be</th><th>cases</th><th>failed</th><th>note</th></tr></thead>\n<tbody>"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "<tr data-outcome=\"{}\"><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&row.outcome),
            escape(&row.operation),
            escape(&row.input),
            escape(&row.class),
            row.level.map_or("-", Level::as_str),
            escape(row.expect.as_deref().unwrap_or("-")),
            row.cases,
            row.failed,
            escape(row.note.as_deref().unwrap_or(""))
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_a_row_and_untried_ones_say_why() {
        let space = RequestSpace::built_in();
        let rows = rows(&space, &Tally::default());
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
        let mut md = String::new();
        markdown(&mut md, &rows);
        assert!(md.contains("| createPet | header Content-Type | `charset-parameter` | required | accepted | 0 | 0 |"), "{md}");
        let mut page = String::new();
        html(&mut page, &rows, |text| text.replace('<', "&lt;"));
        assert!(
            page.contains("<td><code>no-separator</code></td>"),
            "{page}"
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
