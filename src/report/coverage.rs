//! The request-coverage table: per operation and input, each class of values of the request
//! space (`cases/request-space.json`), whether the coverage pass tried it, how many cases got
//! an answer and how many failed. Classes the harness cannot send are rows too, with why, so
//! a user sees what was not tried. (Not the contract-statement coverage: this is about the
//! requests sent.)

use std::fmt::Write;

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

    fn row(class: &str, outcome: &str) -> InputCoverage {
        InputCoverage {
            operation: "createPet".into(),
            input: "header Content-Type".into(),
            class: class.into(),
            outcome: outcome.into(),
            level: Some(Level::Required),
            expect: Some("accepted".into()),
            rule: Some("inputs/create-pet/required".into()),
            cases: 0,
            failed: 0,
            unanswered: 0,
            note: Some("not sent".into()),
        }
    }

    #[test]
    fn the_table_has_a_row_per_class_in_markdown_and_html() {
        let rows = [
            row("charset-parameter", "not-tried"),
            row("no-separator", "tried"),
        ];
        let mut md = String::new();
        markdown(&mut md, &rows);
        assert!(md.contains("| createPet | header Content-Type | `charset-parameter` | required | accepted | 0 | 0 |"), "{md}");
        assert!(
            md.contains("1 tried and answered as they must be, 0 failed, 1 not tried"),
            "{md}"
        );
        let mut page = String::new();
        html(&mut page, &rows, |text| text.replace('<', "&lt;"));
        assert!(
            page.contains("<td><code>no-separator</code></td>"),
            "{page}"
        );
    }
}
