//! The tally stage: verdicts tallied into rule reports and the run's answer; and, as the
//! report is written, counterexamples found on a real target kept for the next run.

pub use super::error::RunError;
use super::known::KnownFailures;
use super::regressions::{self, Regression};
use super::settings::{RunConfig, Target};
use super::trials::Results;
use crate::catalogue::Catalogue;
use crate::execution::Redactor;
use crate::outcome::Verdict;
use crate::outcome::VerdictKind;
use crate::report::{Conformance, Report, RuleReport, Totals};

/// What the tally found: each selected rule's report, the counts, and the answer.
pub(super) struct Tallied {
    pub(super) rules: Vec<RuleReport>,
    pub(super) totals: Totals,
    pub(super) conformance: Conformance,
    /// Why the run stopped sending, when the target stopped answering (redacted).
    pub(super) stopped_answering: Option<String>,
}

/// Verdicts tallied into rule reports and the run's answer. A failure on the list of
/// known failures (not expired) is a `known-failure`, not gated; a listed rule that passes
/// says it can come off the list; an expired entry gates again and says so. The answer is the
/// selected rules': a rule the user left out (a filter, --read-only) did not "reach no
/// verdict", the report says it was left out; a selected required rule that reached none
/// (inconclusive, skipped), or a target that stopped answering, leaves the answer undetermined.
pub(super) fn tally(
    config: &RunConfig,
    catalogue: &Catalogue,
    results: Results,
    known: &KnownFailures,
    stopped_answering: Option<String>,
) -> Tallied {
    let today = super::known::today();
    let mut not_selected = 0;
    let mut reports = Vec::new();
    for (rule, result) in catalogue.rules.iter().zip(results) {
        let Some(result) = result else {
            not_selected += 1;
            continue;
        };
        let entry = known.get(&rule.id);
        let failed = matches!(result.verdict, Verdict::Failed(_));
        let excused = failed && entry.is_some_and(|entry| !entry.expired(&today));
        let gated_failure = failed && !excused && config.options.gate.gates(rule.level);
        let mut report = RuleReport::new(
            rule,
            &result.verdict,
            gated_failure,
            result.cases_run,
            result.duration_ms,
            &config.options.api_key_env,
        );
        report.round_trips = result.round_trips;
        report.transport_cuts = result.transport_cuts;
        if let Some(entry) = entry {
            report.known_failure = Some(entry.clone());
            if excused {
                report.verdict = VerdictKind::KnownFailure;
                report.reason = Some(format!("known failure: {}", entry.reason));
            } else if failed {
                report.reason = Some(entry.expired_note());
            } else if report.verdict == VerdictKind::Passed {
                report.reason = Some("fixed: remove it from the known failures".into());
            }
        }
        reports.push(report);
    }
    let (totals, conformance) = Totals::tally(
        &reports,
        config.options.gate,
        not_selected,
        stopped_answering.is_some(),
    );
    Tallied {
        rules: reports,
        totals,
        conformance,
        stopped_answering,
    }
}

/// Counterexamples found on a real target are kept for the next run; a reference
/// with injected faults is a demonstration, not a target to remember.
pub(super) fn save_regressions(
    config: &RunConfig,
    report: &Report,
    redactor: &Redactor,
) -> Result<(), RunError> {
    let (Some(path), Target::External { .. }) = (&config.regressions, &config.target) else {
        return Ok(());
    };
    let found: Vec<Regression> = report
        .rules
        .iter()
        .filter_map(|rule| {
            let example = rule.failure.as_ref()?.counterexample.as_ref()?;
            Some(Regression {
                rule: rule.id.clone(),
                value: redactor.redact_json(&example.minimal_value),
                description: redactor.redact(&example.minimal),
                found_at: report.finished_at.clone(),
                seed: report.seed,
                target: report.target.base_url.clone(),
            })
        })
        .collect();
    regressions::save(path, found).map_err(RunError::Config)?;
    Ok(())
}
