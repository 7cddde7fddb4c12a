//! `summary.md`: what a person reads in ten seconds: the answer, then failures first.

use std::fmt::Write;

use super::coverage::{InputCoverage, counts, product};
use super::model::{FailureReport, Report};
use super::statements::{StatementCoverage, rules_list, summary};
use crate::catalogue::Level;

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    answer(&mut out, report);
    run_notes(&mut out, report);
    let _ = writeln!(out, "\n**{}**", report.totals.line());
    findings_section(&mut out, report);
    let _ = writeln!(out, "\nRe-run: `{}`", report.rerun);
    rules_table(&mut out, report);
    out.push_str(&statements_section(&report.statements));
    if let Some(note) = &report.redaction {
        let _ = writeln!(out, "\n> Redaction: {note}");
    }
    how_to_reproduce(&mut out, report);
    if report.created_pets.count > 0 {
        let _ = writeln!(
            out,
            "\n{} were created, named with the prefix `{}`; their ids are in {}.",
            report.created_pets.counted(),
            report.run_prefix,
            report
                .created_pets
                .file
                .as_deref()
                .unwrap_or("no file (no report directory)")
        );
    }
    coverage_section(&mut out, &report.request_coverage);
    out
}

/// The failures grouped by cause, before the table of rules: one bug reads as one line.
fn findings_section(out: &mut String, report: &Report) {
    if report.findings.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## {}: the failures by what the target did\n",
        super::finding::Finding::count(&report.findings)
    );
    for finding in &report.findings {
        let _ = writeln!(
            out,
            "- **{}**: {}",
            cell(&finding.headline()),
            finding.rules_shown(usize::MAX, |id| format!("`{id}`"))
        );
    }
}

/// The answer, and what was judged against what.
fn answer(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "# {} {}: {}",
        report.suite.name,
        report.suite.version,
        report.conformance.as_str()
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "The answer: {}.", report.answer_line());
    if let Some(note) = report.partial_note() {
        let _ = writeln!(out, "\n**{note}**");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Target `{}` ({}) against the {} {} · seed `{}` · gate `{}` · {} ms",
        report.target.base_url,
        report.target.kind,
        report.contract.title,
        report.contract.version,
        report.seed,
        report.gate,
        report.duration_ms
    );
    if let Some(product) = &report.target.product {
        let _ = writeln!(
            out,
            "\nProduct under test: **{}** {}",
            cell(product),
            report
                .target
                .product_version
                .as_deref()
                .map(cell)
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "\nContract text: `{}`, SHA-256 `{}`",
        report.contract.document, report.contract.sha256
    );
}

/// What the run met on the way: an interrupt, throttling, overload, a target that stopped
/// answering, answers cut mid-body, faults injected into the reference.
fn run_notes(out: &mut String, report: &Report) {
    if report.interrupted {
        let _ = writeln!(
            out,
            "\n**Interrupted** (SIGINT or SIGTERM): the rules not run are skipped."
        );
    }
    if report.throttling.waits > 0 || report.throttling.gave_up > 0 {
        let _ = writeln!(
            out,
            "\nThe target throttled: {} waits ({} ms in all), {} requests given up on (their rules inconclusive).",
            report.throttling.waits, report.throttling.waited_ms, report.throttling.gave_up
        );
    }
    if report.connections.backoffs > 0 {
        let _ = writeln!(
            out,
            "\nThe target showed overload: {}.",
            report.connections.describe()
        );
    }
    if let Some(reason) = &report.target.stopped_answering {
        let _ = writeln!(out, "\n**The target stopped answering**: {reason}.");
    }
    let cut: Vec<String> = report
        .rules
        .iter()
        .filter(|rule| rule.transport_cuts > 0)
        .map(|rule| format!("`{}` ({})", rule.id, rule.transport_cuts))
        .collect();
    if !cut.is_empty() {
        let _ = writeln!(
            out,
            "\nAnswers the transport cut mid-body, not judged (a GET was sent once more): {}.",
            cut.join(", ")
        );
    }
    if !report.target.faults.is_empty() {
        let _ = writeln!(
            out,
            "\nFaults injected into the reference: {}",
            report.target.faults.join(", ")
        );
    }
}

/// Every rule, failures first: its verdict, level, id and title, and what was seen.
fn rules_table(out: &mut String, report: &Report) {
    let _ = writeln!(out, "\n| verdict | level | rule | what was seen |");
    let _ = writeln!(out, "|---|---|---|---|");
    for rule in report.rules_failures_first() {
        let seen = match (&rule.failure, &rule.reason) {
            (Some(failure), _) => {
                format!(
                    "{}{}{}",
                    rule.expired_known_failure()
                        .map(|note| format!("{note}: "))
                        .unwrap_or_default(),
                    failure.message(),
                    super::distinct_failures::count_suffix(rule)
                )
            }
            (None, Some(reason)) => reason.clone(),
            (None, None) => format!("{} case(s)", rule.cases_run),
        };
        let seen: String = seen.chars().take(240).collect();
        let _ = writeln!(
            out,
            "| {} | {} | `{}` {} | {} |",
            rule.verdict.as_str().to_uppercase(),
            rule.level.as_str(),
            rule.id,
            cell(&rule.title),
            cell(&seen)
        );
    }
}

/// Each failure with the contract sentence it breaks and what replays it.
fn how_to_reproduce(out: &mut String, report: &Report) {
    let failures: Vec<_> = report
        .rules
        .iter()
        .filter(|rule| rule.failure.is_some())
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(out, "\n## How to reproduce the failures\n");
        for rule in failures {
            let Some(failure) = &rule.failure else {
                continue;
            };
            let _ = writeln!(out, "### `{}` ({})\n", rule.id, rule.level.as_str());
            let _ = writeln!(
                out,
                "> {}: \"{}\"\n",
                rule.citation.section, rule.citation.quote
            );
            reproduce(out, failure);
            for (n, more) in rule.more_failures.iter().enumerate() {
                let heading = super::distinct_failures::heading(rule, n + 1, more);
                let _ = writeln!(out, "#### {heading}\n\n{}\n", more.message());
                reproduce(out, more);
            }
        }
    }
}

/// The minimal case and the curl lines (or the steps) that replay one failure.
fn reproduce(out: &mut String, failure: &FailureReport) {
    if let Some(example) = &failure.counterexample {
        let _ = writeln!(
            out,
            "Minimal case ({} shrink steps): {}  \nFirst failing case: {}\n",
            example.shrink_steps, example.minimal, example.original
        );
    }
    if failure.steps.is_empty() {
        if let Some(curl) = &failure.curl {
            let _ = writeln!(out, "```sh\n{curl}\n```\n");
        }
    } else {
        let _ = writeln!(out, "The minimal sequence, step by step:\n");
        for step in &failure.steps {
            let status = step.status.map_or("no answer".into(), |s| s.to_string());
            let _ = writeln!(out, "- {} → {status}", step.what);
        }
        let lines: Vec<&str> = failure.steps.iter().map(|s| s.curl.as_str()).collect();
        let _ = writeln!(out, "\n```sh\n{}\n```\n", lines.join("\n"));
    }
}

/// The contract coverage matrix (empty when the report has none).
fn statements_section(rows: &[StatementCoverage]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Contract coverage\n\nEach statement of the contract, the rules that check it and their verdicts, or why it cannot be checked through this interface.\n\n| Section | Statement | Checked by | Verdicts |\n|---|---|---|---|\n",
    );
    for row in rows {
        let rules = rules_list(row)
            .iter()
            .map(|r| format!("`{r}`"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            cell(&row.section),
            cell(&row.text),
            if rules.is_empty() {
                "—".into()
            } else {
                cell(&rules)
            },
            cell(&summary(row))
        ));
    }
    out
}

/// The request-coverage table.
fn coverage_section(out: &mut String, rows: &[InputCoverage]) {
    if rows.is_empty() {
        return;
    }
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
    let product = product(rows);
    if product.operators.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### Positions × operators\n");
    let _ = writeln!(
        out,
        "The generated classes (`cases/operators.json`): cases answered per position and operator; `-` where the operator does not apply.\n"
    );
    let _ = writeln!(out, "| position | {} |", product.operators.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(product.operators.len()));
    for (position, cells) in &product.positions {
        let cells: Vec<String> = cells
            .iter()
            .map(|c| c.as_ref().map_or_else(|| "-".to_string(), |c| c.words()))
            .collect();
        let _ = writeln!(out, "| {} | {} |", cell(position), cells.join(" | "));
    }
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
            note: Some("not sent: a | b".into()),
            operator: None,
        }
    }

    /// Issue 36 item 7: the generated classes as positions × operators, a gap at a glance.
    #[test]
    fn the_product_shows_every_position_and_operator() {
        let generated = |input: &str, operator: &str, cases: u32, failed: u32| InputCoverage {
            input: input.into(),
            class: operator.into(),
            cases,
            failed,
            outcome: if failed > 0 { "failed" } else { "tried" }.into(),
            operator: Some(operator.into()),
            ..row(operator, "tried")
        };
        let rows = [
            row("charset-parameter", "tried"),
            generated("body field name", "padding", 3, 0),
            generated("body field status", "padding", 3, 1),
            generated("body field status", "letter-case", 2, 0),
        ];
        let mut md = String::new();
        coverage_section(&mut md, &rows);
        assert!(md.contains("| position | padding | letter-case |"), "{md}");
        assert!(md.contains("| createPet body field name | 3 | - |"), "{md}");
        assert!(
            md.contains("| createPet body field status | 1 of 3 failed | 2 |"),
            "{md}"
        );
        let mut listed = String::new();
        coverage_section(&mut listed, &rows[..1]);
        assert!(!listed.contains("Positions × operators"), "{listed}");
    }

    #[test]
    fn the_coverage_table_has_a_row_per_class() {
        let rows = [
            row("charset-parameter", "not-tried"),
            row("no-separator", "tried"),
        ];
        let mut md = String::new();
        coverage_section(&mut md, &rows);
        assert!(md.contains("| createPet | header Content-Type | `charset-parameter` | required | accepted | 0 | 0 | not sent: a \\| b |"), "{md}");
        assert!(
            md.contains("1 tried and answered as they must be, 0 failed, 1 not tried"),
            "{md}"
        );
    }
}
