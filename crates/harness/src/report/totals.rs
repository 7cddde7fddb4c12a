//! The counts of a report's rules, and the one line every format says them in.

use super::model::{Conformance, RuleReport, Totals, left_out_by_option, rules};
use crate::catalogue::{Gate, Level};
use crate::outcome::VerdictKind;

impl Totals {
    /// The one failure count: the failures the gate counts. The terminal's bar and its last
    /// line, libtest's "failed", junit.xml's `failures` and the HTML say this number; a failure
    /// the gate does not count is a warning (libtest's "ignored", JUnit's `<skipped>` with its
    /// message), and a known failure is counted apart (it is on the list, not new).
    pub fn failed(&self) -> usize {
        (self.failed_required + self.failed_recommended).saturating_sub(self.failed_not_gated)
    }

    /// What libtest calls "ignored" and junit.xml `skipped`: every rule neither passed nor
    /// failed under the gate.
    pub fn not_counted(&self) -> usize {
        self.rules.saturating_sub(self.passed + self.failed())
    }

    /// The counts and the answer of the rules reported, for `run` and `merge` alike:
    /// `not_selected` rules were left out by a filter; `undecided` is true when the run's
    /// answer is undetermined whatever the rules say (the target stopped answering, a shard is
    /// missing). A rule skipped by `--read-only` was left out by the user, not undecided.
    pub fn tally(
        rules: &[RuleReport],
        gate: Gate,
        not_selected: usize,
        undecided: bool,
    ) -> (Totals, Conformance) {
        let mut totals = Totals {
            rules: rules.len(),
            not_selected,
            ..Totals::default()
        };
        let mut required_undecided = undecided;
        let mut required_known = false;
        for rule in rules {
            let required = rule.level == Level::Required;
            match rule.verdict {
                VerdictKind::Passed => totals.passed += 1,
                VerdictKind::Failed => {
                    if required {
                        totals.failed_required += 1;
                    } else {
                        totals.failed_recommended += 1;
                    }
                    if !rule.gated {
                        totals.failed_not_gated += 1;
                    }
                }
                VerdictKind::KnownFailure => {
                    totals.known_failures += 1;
                    required_known |= required;
                }
                VerdictKind::Inconclusive => {
                    totals.inconclusive += 1;
                    required_undecided |= required;
                }
                VerdictKind::Skipped => {
                    totals.skipped += 1;
                    required_undecided |= required && !left_out_by_option(rule.reason.as_deref());
                }
                VerdictKind::NotDecidable => {
                    totals.not_decidable += 1;
                    required_undecided |= gate.needs_decided(rule.level);
                }
            }
        }
        let conformance = Conformance::of(
            rules.iter().any(|r| r.gated),
            required_undecided,
            required_known,
        );
        (totals, conformance)
    }

    /// "102 rules: 90 passed, 10 failed, 2 failed not gated (recommended), 0 inconclusive, 0
    /// skipped", and the counts that are not zero of what is neither. "failed" is the gate's
    /// count (with its levels when both are in it, as under `--gate all`); what libtest and
    /// JUnit show as ignored or skipped is every count after it.
    pub fn line(&self) -> String {
        // A required failure is gated under every gate.
        let gated_recommended = self.failed().saturating_sub(self.failed_required);
        let levels = if self.failed_required > 0 && gated_recommended > 0 {
            format!(
                " ({} required, {gated_recommended} recommended)",
                self.failed_required
            )
        } else {
            String::new()
        };
        let not_gated = if self.failed_not_gated > 0 {
            format!(", {} failed not gated (recommended)", self.failed_not_gated)
        } else {
            String::new()
        };
        let extra: String = [
            (self.known_failures, "known failures (not gated)"),
            (self.not_decidable, "not decidable on this store"),
            (self.not_selected, "not selected"),
        ]
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!(", {count} {what}"))
        .collect();
        format!(
            "{}: {} passed, {} failed{levels}{not_gated}, {} inconclusive, {} skipped{extra}",
            rules(self.rules),
            self.passed,
            self.failed(),
            self.inconclusive,
            self.skipped
        )
    }
}
