//! `junit.xml`: one testcase per rule, classname = the rule's area, for CI dashboards. The
//! suite carries tests, failures, skipped, time and timestamp; a failure's `type` is the level
//! and contract section of the statement it breaks, its body the citation, the request and the
//! response, and the commands that replay it.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::model::{FailureReport, Report, RuleReport};
use crate::outcome::VerdictKind;

pub fn render(report: &Report) -> String {
    let mut suite = TestSuite::new(report.suite.name.clone());
    for (name, value) in [
        ("suite.version", report.suite.version.clone()),
        ("contract.version", report.contract.version.clone()),
        ("contract.sha256", report.contract.sha256.clone()),
        ("interrupted", report.interrupted.to_string()),
        ("target", report.target.base_url.clone()),
        // "built-in reference server" or "external": a CI system's view of the run says which.
        ("target.kind", report.target.kind.to_string()),
        ("seed", report.seed.to_string()),
        ("gate", report.gate.to_string()),
        ("conformance", report.conformance.as_str().to_string()),
        ("answer", report.answer_line()),
        // The count the terminal and the other reports give; `failures` above counts only
        // the failures the gate counts (the red testcases).
        ("totals", report.totals.line()),
    ] {
        suite.add_property(Property::new(name, value));
    }
    if let Some(note) = report.partial_note() {
        suite.add_property(Property::new("partial", note));
    }
    let mut skipped = 0;
    for rule in &report.rules {
        let case = test_case(rule);
        if matches!(case.status, TestCaseStatus::Skipped { .. }) {
            skipped += 1;
        }
        suite.add_test_case(case);
    }
    suite.set_time(Duration::from_millis(report.duration_ms));
    // Not in quick-junit's model, read by Jenkins, GitLab and the JUnit XSD all the same.
    suite
        .extra
        .insert("skipped".into(), skipped.to_string().into());
    suite
        .extra
        .insert("timestamp".into(), report.started_at.clone().into());
    let mut junit = quick_junit::Report::new(report.suite.name.clone());
    junit.set_time(Duration::from_millis(report.duration_ms));
    junit.add_test_suite(suite);
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot serialize JUnit report: {e} -->\n"))
}

/// One rule as a testcase, counted as the terminal counts it (`Totals::failed`): a gated
/// failure is red (<failure>); a failure the gate does not count (a recommended rule, a known
/// failure) is <skipped> with type `warning`, its message saying it failed and the evidence as
/// the skip's text, so `failures` and `skipped` read as libtest's "failed" and "ignored"; a rule
/// that reached no verdict is <skipped> with the reason.
fn test_case(rule: &RuleReport) -> TestCase {
    let warned = matches!(
        rule.verdict,
        VerdictKind::Failed | VerdictKind::KnownFailure
    ) && !rule.gated;
    let mut status = match rule.verdict {
        VerdictKind::Passed => TestCaseStatus::success(),
        VerdictKind::Failed if !warned => TestCaseStatus::non_success(NonSuccessKind::Failure),
        _ => TestCaseStatus::skipped(),
    };
    if warned {
        status.set_type("warning");
    } else if rule.verdict == VerdictKind::Failed {
        status.set_type(format!(
            "{}: {}",
            rule.level.as_str(),
            rule.citation.section
        ));
    }
    let message = match (&rule.failure, &rule.reason) {
        (Some(failure), _) => Some(
            format!(
                "{}{}: {}",
                match (rule.gated, &rule.known_failure) {
                    (true, _) => rule
                        .expired_known_failure()
                        .map(|note| format!("{note}: "))
                        .unwrap_or_default(),
                    (false, Some(known)) if rule.verdict == VerdictKind::KnownFailure => {
                        format!("WARNING known failure, not gated ({}): ", known.reason)
                    }
                    (false, _) =>
                        format!("WARNING {} rule failed, not gated: ", rule.level.as_str()),
                },
                rule.id,
                failure.message()
            ) + &super::distinct_failures::count_suffix(rule),
        ),
        (None, Some(reason)) => Some(format!("{}: {reason}", rule.verdict)),
        (None, None) => None,
    };
    if let Some(message) = message {
        status.set_message(message);
    }
    if let Some(failure) = &rule.failure {
        status.set_description(failure_text(rule, failure));
    }
    let mut case = TestCase::new(rule.id.clone(), status);
    case.set_classname(rule.id.split('/').next().unwrap_or("rules").to_string());
    case.set_time(Duration::from_millis(rule.duration_ms));
    case.add_property(Property::new("level", rule.level.as_str()));
    case.add_property(Property::new("verdict", rule.verdict.as_str()));
    case
}

/// The body of a failure: the rule's citation, the request and the response, and what
/// replays it.
fn failure_text(rule: &RuleReport, failure: &FailureReport) -> String {
    let mut text = format!(
        "{} ({}) cites {}: \"{}\"\n",
        rule.title,
        rule.level.as_str(),
        rule.citation.section,
        rule.citation.quote
    );
    if let Some(request) = &failure.request {
        text.push_str(&format!(
            "\nrequest:\n{}\n",
            super::exchange::request_text(request)
        ));
    }
    if let Some(response) = &failure.response {
        text.push_str(&format!(
            "\nresponse:\n{}\n{}",
            super::exchange::response_text(response),
            if response.body_truncated {
                "[the body exceeded --body-cap and was cut]\n"
            } else {
                ""
            }
        ));
    }
    if let Some(error) = &failure.transport_error {
        text.push_str(&format!("\nno response: {error}\n"));
    }
    if let Some(curl) = &failure.curl {
        text.push_str(&format!("\nreproduce: {curl}\n"));
    }
    for step in &failure.steps {
        text.push_str(&format!("step {}: {}\n", step.what, step.curl));
    }
    text.push_str(&super::distinct_failures::junit_lines(rule));
    text
}
