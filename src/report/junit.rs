//! `junit.xml`: one testcase per rule, classname = the rule's area, for CI dashboards.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::Report;
use crate::outcome::VerdictKind;

pub fn render(report: &Report) -> String {
    let mut suite = TestSuite::new(report.suite.name.clone());
    for (name, value) in [
        ("suite.version", report.suite.version.clone()),
        ("contract.version", report.contract.version.clone()),
        ("contract.sha256", report.contract.sha256.clone()),
        ("interrupted", report.interrupted.to_string()),
        ("target", report.target.base_url.clone()),
        ("seed", report.seed.to_string()),
        ("gate", report.gate.clone()),
        ("conformance", report.conformance.as_str().to_string()),
        ("answer", report.answer_line()),
    ] {
        suite.add_property(Property::new(name, value));
    }
    if let Some(note) = report.partial_note() {
        suite.add_property(Property::new("partial", note));
    }
    for rule in &report.rules {
        let mut status = match rule.verdict {
            VerdictKind::Passed => TestCaseStatus::success(),
            VerdictKind::Failed if rule.gated => {
                TestCaseStatus::non_success(NonSuccessKind::Failure)
            }
            _ => TestCaseStatus::skipped(),
        };
        let message = match (&rule.failure, &rule.reason) {
            (Some(failure), _) => Some(
                format!(
                    "{}{}: {}",
                    match (rule.gated, &rule.known_failure) {
                        (true, _) => String::new(),
                        (false, Some(known)) if rule.verdict == VerdictKind::KnownFailure => {
                            format!("known failure, not gated ({}): ", known.reason)
                        }
                        (false, _) => "not gated (recommended): ".into(),
                    },
                    rule.id,
                    failure.message()
                ) + &super::distinct::count_suffix(rule),
            ),
            (None, Some(reason)) => Some(format!("{}: {reason}", rule.verdict)),
            (None, None) => None,
        };
        if let Some(message) = message {
            status.set_message(message);
        }
        if let Some(failure) = &rule.failure {
            let mut description = format!(
                "{} ({}) cites {}: \"{}\"\n",
                rule.title,
                rule.level.as_str(),
                rule.citation.section,
                rule.citation.quote
            );
            if let Some(curl) = &failure.curl {
                description.push_str(&format!("reproduce: {curl}\n"));
            }
            for step in &failure.steps {
                description.push_str(&format!("step {}: {}\n", step.what, step.curl));
            }
            description.push_str(&super::distinct::junit_lines(rule));
            status.set_description(description);
        }
        let mut case = TestCase::new(rule.id.clone(), status);
        case.set_classname(rule.id.split('/').next().unwrap_or("rules").to_string());
        case.set_time(Duration::from_millis(rule.duration_ms));
        case.add_property(Property::new("level", rule.level.as_str()));
        suite.add_test_case(case);
    }
    let mut junit = quick_junit::Report::new(report.suite.name.clone());
    junit.set_time(Duration::from_millis(report.duration_ms));
    junit.add_test_suite(suite);
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot serialize JUnit report: {e} -->\n"))
}
