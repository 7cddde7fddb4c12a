//! `compare OLD.json NEW.json`: what changed between two runs, rule by rule: new failures,
//! fixed, still failing, new and removed rules. The nightly job's gate: a rule that newly
//! fails is exit 1.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{Report, RuleReport};
use crate::outcome::VerdictKind;

/// The rules of two reports, sorted into what changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub new_failures: Vec<String>,
    pub fixed: Vec<String>,
    pub still_failing: Vec<String>,
    pub new_rules: Vec<String>,
    pub removed_rules: Vec<String>,
}

impl Comparison {
    /// A rule that passed (or did not exist) before and fails now.
    pub fn regressed(&self) -> bool {
        !self.new_failures.is_empty()
    }
}

pub fn compare(old: &Report, new: &Report) -> Comparison {
    let by_id = |report: &Report| -> BTreeMap<String, VerdictKind> {
        report
            .rules
            .iter()
            .map(|rule: &RuleReport| (rule.id.clone(), rule.verdict))
            .collect()
    };
    let (old_rules, new_rules) = (by_id(old), by_id(new));
    let mut comparison = Comparison::default();
    for (id, verdict) in &new_rules {
        let before = old_rules.get(id);
        if before.is_none() {
            comparison.new_rules.push(id.clone());
        }
        let failed_before = before == Some(&VerdictKind::Failed);
        match (*verdict == VerdictKind::Failed, failed_before) {
            (true, true) => comparison.still_failing.push(id.clone()),
            (true, false) => comparison.new_failures.push(id.clone()),
            (false, true) if *verdict == VerdictKind::Passed => comparison.fixed.push(id.clone()),
            _ => {}
        }
    }
    comparison.removed_rules = old_rules
        .keys()
        .filter(|id| !new_rules.contains_key(*id))
        .cloned()
        .collect();
    comparison
}

fn sections(comparison: &Comparison) -> [(&'static str, &Vec<String>); 5] {
    [
        ("new failures", &comparison.new_failures),
        ("fixed", &comparison.fixed),
        ("still failing", &comparison.still_failing),
        ("new rules", &comparison.new_rules),
        ("removed rules", &comparison.removed_rules),
    ]
}

/// For the terminal.
pub fn render_text(comparison: &Comparison, old: &Report, new: &Report) -> String {
    let mut out = format!(
        "{} ({}) -> {} ({})\n",
        old.finished_at,
        old.conformance.as_str(),
        new.finished_at,
        new.conformance.as_str()
    );
    for (title, ids) in sections(comparison) {
        let _ = writeln!(out, "{title}: {}", ids.len());
        for id in ids {
            let _ = writeln!(out, "  {id}");
        }
    }
    out
}

/// For a CI summary.
pub fn render_markdown(comparison: &Comparison, old: &Report, new: &Report) -> String {
    let mut out = format!(
        "# Compared with the previous run: {}\n\n{} (`{}`) → {} (`{}`)\n",
        if comparison.regressed() {
            "a rule newly fails"
        } else {
            "no new failure"
        },
        old.finished_at,
        old.conformance.as_str(),
        new.finished_at,
        new.conformance.as_str()
    );
    for (title, ids) in sections(comparison) {
        let _ = writeln!(out, "\n## {title} ({})\n", ids.len());
        for id in ids {
            let _ = writeln!(out, "- `{id}`");
        }
    }
    out
}
