//! `compare OLD.json NEW.json`: what changed between two runs, rule by rule: new failures
//! (gated and not), fixed, still failing, rules that stopped deciding (passed → inconclusive)
//! or got worse without passing (inconclusive → failed), new and removed rules. The nightly
//! job's gate: a rule that newly fails *and is gated* (under the gate the run used) is exit 1.
//! Whether it is gated is judged again from the gate the later run recorded and the rule's
//! level in the catalogue, never from the report's `gated` field: a reader could edit that and
//! recompute the report's digest. Two runs of different targets or catalogues are not
//! comparable: `mismatch` says why.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::facts::TargetKind;
use super::model::{Report, RuleReport};
use crate::catalogue::{Catalogue, Level};
use crate::outcome::VerdictKind;

/// The rules of two reports, sorted into what changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Failed now, not before, and gated by the later run's gate.
    pub new_failures: Vec<String>,
    /// Failed now, not before, but not gated (a recommended rule under `--gate required`).
    pub new_recommended_failures: Vec<String>,
    pub fixed: Vec<String>,
    pub still_failing: Vec<String>,
    /// Passed before, reached no verdict now: the evidence was lost, not the conformance.
    pub passed_to_inconclusive: Vec<String>,
    /// Inconclusive before, failed now (also counted in the new failures).
    pub inconclusive_to_failed: Vec<String>,
    pub new_rules: Vec<String>,
    pub removed_rules: Vec<String>,
}

impl Comparison {
    /// A gated rule that passed (or did not exist, or did not decide) before and fails now.
    pub fn regressed(&self) -> bool {
        !self.new_failures.is_empty()
    }
}

/// Why two reports are not runs of the same thing: another target, another catalogue or
/// contract. `None`: comparable.
pub fn mismatch(old: &Report, new: &Report) -> Option<String> {
    let mut reasons = Vec::new();
    // The built-in reference listens on a new ephemeral port each run, and its faults are how
    // it shows a regression: it is one target whatever its port.
    let external =
        old.target.kind == TargetKind::External || new.target.kind == TargetKind::External;
    if old.target.kind != new.target.kind
        || (external && old.target.base_url != new.target.base_url)
    {
        reasons.push(format!(
            "targets differ ({} {} vs {} {})",
            old.target.kind, old.target.base_url, new.target.kind, new.target.base_url
        ));
    }
    if old.contract.catalogue_sha256 != new.contract.catalogue_sha256 {
        reasons.push(format!(
            "rule catalogues differ (sha256 {} vs {})",
            short(&old.contract.catalogue_sha256),
            short(&new.contract.catalogue_sha256)
        ));
    }
    if old.contract.sha256 != new.contract.sha256 {
        reasons.push(format!(
            "contracts differ (sha256 {} vs {})",
            short(&old.contract.sha256),
            short(&new.contract.sha256)
        ));
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

fn short(digest: &str) -> &str {
    if digest.is_empty() {
        "none"
    } else {
        &digest[..digest.len().min(12)]
    }
}

/// Which of the later run's failures gate: its recorded gate over each rule's level, the level
/// from `catalogue` when the run used this very catalogue (its digest is the report's), else
/// the level the report recorded. (A gate this tool does not know does not read as a report.)
pub fn gating(new: &Report, catalogue: Option<&Catalogue>) -> impl Fn(&RuleReport) -> bool {
    let gate = new.gate;
    let levels: BTreeMap<String, Level> = catalogue
        .filter(|catalogue| catalogue.sha256() == new.contract.catalogue_sha256)
        .map(|catalogue| {
            catalogue
                .rules
                .iter()
                .map(|rule| (rule.id.clone(), rule.level))
                .collect()
        })
        .unwrap_or_default();
    move |rule: &RuleReport| gate.gates(levels.get(&rule.id).copied().unwrap_or(rule.level))
}

/// The rules of `old` and `new` sorted into what changed; `gated` says which of the later
/// run's failures gate (see [`gating`]).
pub fn compare(old: &Report, new: &Report, gated: impl Fn(&RuleReport) -> bool) -> Comparison {
    let old_rules: BTreeMap<&str, VerdictKind> = old
        .rules
        .iter()
        .map(|rule: &RuleReport| (rule.id.as_str(), rule.verdict))
        .collect();
    let mut comparison = Comparison::default();
    for rule in &new.rules {
        let id = rule.id.clone();
        let before = old_rules.get(rule.id.as_str()).copied();
        if before.is_none() {
            comparison.new_rules.push(id.clone());
        }
        let failed_before = before == Some(VerdictKind::Failed);
        match (rule.verdict, before) {
            (VerdictKind::Failed, _) if failed_before => comparison.still_failing.push(id),
            (VerdictKind::Failed, before) => {
                if before == Some(VerdictKind::Inconclusive) {
                    comparison.inconclusive_to_failed.push(id.clone());
                }
                // The later run's own gate decides, as it decided that run's exit code.
                if gated(rule) {
                    comparison.new_failures.push(id);
                } else {
                    comparison.new_recommended_failures.push(id);
                }
            }
            (VerdictKind::Passed, Some(VerdictKind::Failed)) => comparison.fixed.push(id),
            (VerdictKind::Inconclusive, Some(VerdictKind::Passed)) => {
                comparison.passed_to_inconclusive.push(id)
            }
            _ => {}
        }
    }
    let new_ids: std::collections::BTreeSet<&str> =
        new.rules.iter().map(|rule| rule.id.as_str()).collect();
    comparison.removed_rules = old_rules
        .keys()
        .filter(|id| !new_ids.contains(*id))
        .map(|id| id.to_string())
        .collect();
    comparison
}

fn sections(comparison: &Comparison) -> [(&'static str, &Vec<String>); 8] {
    [
        ("new failures (gated)", &comparison.new_failures),
        (
            "new failures, not gated (recommended)",
            &comparison.new_recommended_failures,
        ),
        ("fixed", &comparison.fixed),
        ("still failing", &comparison.still_failing),
        (
            "passed before, inconclusive now",
            &comparison.passed_to_inconclusive,
        ),
        (
            "inconclusive before, failed now",
            &comparison.inconclusive_to_failed,
        ),
        ("new rules", &comparison.new_rules),
        ("removed rules", &comparison.removed_rules),
    ]
}

fn gate_note(old: &Report, new: &Report) -> Option<String> {
    (old.gate != new.gate).then(|| {
        format!(
            "the runs used different gates ({} then {}): the later run's decides",
            old.gate, new.gate
        )
    })
}

/// For the terminal: what the reports hold (rule ids, times, gates) with control characters
/// escaped, one line each.
pub fn render_text(comparison: &Comparison, old: &Report, new: &Report) -> String {
    use super::terminal::line;
    let mut out = format!(
        "{} ({}) -> {} ({}), gate {}\n",
        line(&old.finished_at),
        old.conformance.as_str(),
        line(&new.finished_at),
        new.conformance.as_str(),
        new.gate
    );
    if let Some(note) = gate_note(old, new) {
        let _ = writeln!(out, "note: {}", line(&note));
    }
    for (title, ids) in sections(comparison) {
        let _ = writeln!(out, "{title}: {}", ids.len());
        for id in ids {
            let _ = writeln!(out, "  {}", line(id));
        }
    }
    out
}

/// For a CI summary.
pub fn render_markdown(comparison: &Comparison, old: &Report, new: &Report) -> String {
    let mut out = format!(
        "# Compared with the previous run: {}\n\n{} (`{}`) → {} (`{}`), gate `{}`\n",
        if comparison.regressed() {
            "a gated rule newly fails"
        } else {
            "no new gated failure"
        },
        old.finished_at,
        old.conformance.as_str(),
        new.finished_at,
        new.conformance.as_str(),
        new.gate
    );
    if let Some(note) = gate_note(old, new) {
        let _ = writeln!(out, "\nNote: {note}.");
    }
    for (title, ids) in sections(comparison) {
        let _ = writeln!(out, "\n## {title} ({})\n", ids.len());
        for id in ids {
            let _ = writeln!(out, "- `{id}`");
        }
    }
    out
}
