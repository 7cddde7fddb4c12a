//! The table of failed rules at the top of report.html, each row linking to the rule's card.

use std::fmt::Write;

use super::escape::escape;
use crate::outcome::VerdictKind;
use crate::report::model::{Report, RuleReport};

pub(super) fn is_failure(rule: &RuleReport) -> bool {
    matches!(
        rule.verdict,
        VerdictKind::Failed | VerdictKind::KnownFailure
    )
}

/// The anchor of a rule's card (a rule id holds only `[a-z0-9/-]`, which ids and fragments allow).
pub(super) fn anchor(rule: &RuleReport) -> String {
    format!("rule-{}", escape(&rule.id))
}

/// The failures grouped by cause, first thing under the answer: each cause once, with links
/// to the cards of the rules it broke.
pub(super) fn findings(out: &mut String, report: &Report) {
    if report.findings.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"findings\" aria-label=\"Findings\">\n<h2>{}: the failures by what the target did</h2>\n<ul>",
        crate::report::finding::Finding::count(&report.findings)
    );
    for finding in &report.findings {
        let _ = writeln!(
            out,
            "<li data-gated=\"{}\"><strong>{}</strong>: {}</li>",
            finding.gated,
            escape(&finding.headline()),
            finding.rules_shown(usize::MAX, |id| format!(
                "<a href=\"#rule-{0}\"><code>{0}</code></a>",
                escape(id)
            ))
        );
    }
    let _ = writeln!(out, "</ul>\n</section>");
}

/// The failed rules first thing under the answer: one row each, linking to its card.
pub(super) fn failed_index(out: &mut String, report: &Report) {
    let failed: Vec<&RuleReport> = report
        .rules_failures_first()
        .into_iter()
        .filter(|rule| is_failure(rule))
        .collect();
    if failed.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<nav id=\"failed-index\" aria-label=\"Failed rules\">\n<h2>Failed rules ({})</h2>\n<table class=\"failed\">\n<thead><tr><th>rule</th><th>level</th><th>operation</th><th>what was seen</th></tr></thead>\n<tbody>",
        failed.len()
    );
    for rule in failed {
        let seen = rule
            .failure
            .as_ref()
            .map(|failure| failure.message())
            .unwrap_or_default();
        let seen: String = seen.chars().take(200).collect();
        let _ = writeln!(
            out,
            "<tr data-verdict=\"{}\" data-gated=\"{}\"><td><a href=\"#{}\"><code>{}</code></a></td><td>{}{}</td><td><code>{}</code></td><td>{}</td></tr>",
            rule.verdict.as_str(),
            rule.gated,
            anchor(rule),
            escape(&rule.id),
            rule.level.as_str(),
            match (rule.verdict, rule.gated) {
                (VerdictKind::KnownFailure, _) => ", known failure",
                (_, false) => ", not gated",
                _ => "",
            },
            rule.operation.name(),
            escape(&seen)
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</nav>");
}
