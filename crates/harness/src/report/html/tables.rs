//! The report's two coverage tables in HTML: the contract's statements and the rules that
//! check them, and the classes of request inputs the coverage pass tried.

use std::fmt::Write;

use super::escape::escape;
use crate::catalogue::Level;
use crate::report::coverage::{InputCoverage, counts, product};
use crate::report::statements::{StatementCoverage, rules_list, summary};

/// The contract coverage matrix (empty when the report has none).
pub(super) fn statements_section(rows: &[StatementCoverage]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"coverage\">\n<h2>Contract coverage</h2>\n<table>\n<thead><tr><th>Section</th><th>Statement</th><th>Checked by</th><th>Verdicts</th></tr></thead>\n<tbody>\n",
    );
    for row in rows {
        let rules = rules_list(row)
            .iter()
            .map(|r| format!("<code>{}</code>", escape(r)))
            .collect::<Vec<_>>()
            .join("<br>");
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(&row.section),
            escape(&row.text),
            if rules.is_empty() {
                "—".into()
            } else {
                rules
            },
            escape(&summary(row))
        ));
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    out
}

/// The request-coverage table (empty when the report has none).
pub(super) fn coverage_section(out: &mut String, rows: &[InputCoverage]) {
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
    let _ = writeln!(out, "</tbody>\n</table>");
    let product = product(rows);
    if !product.operators.is_empty() {
        let _ = writeln!(
            out,
            "<h3>Positions × operators</h3>\n<p>The generated classes (<code>cases/operators.json</code>): cases answered per position and operator; - where the operator does not apply.</p>"
        );
        let head: String = product
            .operators
            .iter()
            .map(|o| format!("<th>{}</th>", escape(o)))
            .collect();
        let _ = writeln!(
            out,
            "<table class=\"product\">\n<thead><tr><th>position</th>{head}</tr></thead>\n<tbody>"
        );
        for (position, cells) in &product.positions {
            let cells: String = cells
                .iter()
                .map(|c| {
                    let text = c.as_ref().map_or_else(|| "-".to_string(), |c| c.words());
                    format!("<td>{}</td>", escape(&text))
                })
                .collect();
            let _ = writeln!(out, "<tr><td>{}</td>{cells}</tr>", escape(position));
        }
        let _ = writeln!(out, "</tbody>\n</table>");
    }
    let _ = writeln!(out, "</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::statements::CheckedBy;

    #[test]
    fn the_tables_escape_what_they_show() {
        let row = InputCoverage {
            operation: "createPet".into(),
            input: "body <name>".into(),
            class: "no-separator".into(),
            outcome: "tried".into(),
            level: Some(Level::Required),
            expect: Some("accepted".into()),
            rule: None,
            cases: 1,
            failed: 0,
            unanswered: 0,
            note: None,
            operator: None,
        };
        let mut page = String::new();
        coverage_section(&mut page, &[row]);
        assert!(
            page.contains("<td><code>no-separator</code></td>"),
            "{page}"
        );
        assert!(page.contains("<td>body &lt;name&gt;</td>"), "{page}");
        let statement = StatementCoverage {
            section: "Errors".into(),
            text: "a \"quoted\" <b>".into(),
            rules: vec![CheckedBy {
                rule: "responses/error-body".into(),
                verdict: None,
            }],
            not_testable: None,
        };
        let section = statements_section(&[statement]);
        assert!(
            section.contains("a &quot;quoted&quot; &lt;b&gt;"),
            "{section}"
        );
        assert!(
            section.contains("<code>responses/error-body (not run)</code>"),
            "{section}"
        );
    }
}
