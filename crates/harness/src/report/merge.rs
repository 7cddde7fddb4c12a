//! `merge`: the reports of the shards of one split run (`run --partition`) put together into
//! the report the whole run would have written: each dealt rule's verdict from the shard that
//! ran it, each response oracle's from all of them (the oracles judge every response of the
//! run, and each shard judged its own), and the answer tallied again as `run` tallies it.
//!
//! Shards of different runs (seed, catalogue, contract, target, suite, gate, cases, split,
//! options, invocation) are refused, the odd one named; two reports of one shard too. A shard not given leaves its rules skipped and the
//! answer undetermined, and the report names it.

use std::collections::BTreeMap;

use super::facts::TargetKind;
use super::model::{Merged, MergedShard, Report, RuleReport, Totals};
use crate::catalogue::Catalogue;
use crate::catalogue::partition::{Partition, ShardRecord};
use crate::outcome::Verdict;

/// Why shards cannot be merged: exit code 2, one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MergeError(pub String);

/// A shard's report and where it was read from (named in refusals).
pub struct Shard {
    pub source: String,
    pub report: Report,
}

/// What must be equal for reports to be shards of one run: the name and how to show a value.
fn identity(report: &Report) -> [(&'static str, String); 8] {
    let target = if report.target.kind == TargetKind::External {
        report.target.base_url.clone()
    } else {
        // Each shard starts its own reference, on its own port: the faults and variants
        // name the target.
        format!(
            "{} (faults [{}], variants [{}])",
            report.target.kind,
            report.target.faults.join(", "),
            report.target.variants.join(", ")
        )
    };
    [
        ("seed", report.seed.to_string()),
        ("contract", report.contract.sha256.clone()),
        ("catalogue", report.contract.catalogue_sha256.clone()),
        ("target", target),
        ("suite version", report.suite.version.clone()),
        ("gate", report.gate.to_string()),
        (
            "cases per property rule",
            report.cases_per_property.to_string(),
        ),
        ("schemas", report.contract.schemas.clone()),
    ]
}

/// The split of a shard's report, or a refusal naming the report.
fn record(shard: &Shard) -> Result<&ShardRecord, MergeError> {
    shard.report.partition.as_ref().ok_or_else(|| {
        MergeError(format!(
            "{}: not a shard (run without --partition); merge takes the reports of `run --partition K/N`",
            shard.source
        ))
    })
}

fn split_name(partition: &Partition) -> String {
    partition
        .to_string()
        .replacen(&format!(":{}/", partition.shard), ":*/", 1)
}

/// Checks that `shards` are parts of one run, then merges them. `catalogue` (when it is the
/// shards' own) gives the rules of a missing shard their titles and citations.
pub fn merge(shards: &[Shard], catalogue: Option<&Catalogue>) -> Result<Report, MergeError> {
    let first = shards
        .first()
        .ok_or_else(|| MergeError("merge: no shard reports given".into()))?;
    let split = record(first)?;
    let by_shard = of_one_split(first, split, shards)?;
    let missing: Vec<u32> = (1..=split.partition.of)
        .filter(|k| !by_shard.contains_key(k))
        .collect();
    let catalogue = catalogue.filter(|c| c.sha256() == first.report.contract.catalogue_sha256);
    let (rules, not_run) = merged_rules(split, &by_shard, &missing, catalogue)?;
    let reports: Vec<&Report> = by_shard.values().map(|s| &s.report).collect();
    let mut merged = first.report.clone();
    merged.partition = None;
    merged.integrity = Default::default();
    add_up(&mut merged, &reports);
    merged.rerun = without_partition(&merged.rerun);
    let catalogue_size = first.report.totals.rules + first.report.totals.not_selected;
    let (totals, conformance) = Totals::tally(
        &rules,
        merged.gate,
        catalogue_size.saturating_sub(split.selected.len()),
        !missing.is_empty() || merged.target.stopped_answering.is_some(),
    );
    merged.findings = super::causes::findings(&rules, &merged.target.base_url);
    merged.rules = rules;
    merged.totals = totals;
    merged.conformance = conformance;
    merged.merged = Some(Merged {
        split: split_name(&split.partition),
        shards: by_shard
            .values()
            .map(|shard| MergedShard {
                shard: record(shard).map(|r| r.name.clone()).unwrap_or_default(),
                report_sha256: shard.report.integrity.sha256.clone(),
                duration_ms: shard.report.duration_ms,
                rules: shard.report.rules.len(),
            })
            .collect(),
        missing: missing
            .iter()
            .map(|k| split.partition.with_shard(*k).to_string())
            .collect(),
        not_run,
    });
    Ok(merged)
}

/// The shards by their number, once each checked to be a shard of one run and split: the run
/// most of them are of (the first's, when none has more), each odd one refused by name with
/// what differs.
fn of_one_split<'s>(
    first: &Shard,
    split: &ShardRecord,
    shards: &'s [Shard],
) -> Result<BTreeMap<u32, &'s Shard>, MergeError> {
    for shard in shards {
        record(shard)?;
    }
    let usual = usual_run(shards).unwrap_or(first);
    let expected = run_of(usual);
    let mut by_shard: BTreeMap<u32, &Shard> = BTreeMap::new();
    for shard in shards {
        let this = record(shard)?;
        if let Some((what, expected, found)) = expected
            .iter()
            .zip(run_of(shard))
            .find(|((_, expected), (_, found))| expected != found)
            .map(|((what, expected), (_, found))| (what, expected, found))
        {
            return Err(MergeError(format!(
                "{} and {} are not shards of one run: {what} {expected} vs {found}{}",
                usual.source,
                shard.source,
                odd_one(shards, shard, what)
            )));
        }
        if this.partition.scheme != split.partition.scheme
            || this.partition.of != split.partition.of
            || this.selected != split.selected
            || this.every_shard != split.every_shard
        {
            return Err(MergeError(format!(
                "{} and {} are not shards of one split: {} vs {}{}",
                first.source,
                shard.source,
                split.name,
                this.name,
                if this.selected != split.selected {
                    " (a different selection of rules)"
                } else {
                    ""
                }
            )));
        }
        if let Some(other) = by_shard.insert(this.partition.shard, shard) {
            return Err(MergeError(format!(
                "{} and {} are the same shard {}: shards overlap",
                other.source, shard.source, this.name
            )));
        }
    }
    Ok(by_shard)
}

/// What must be equal for reports to be shards of one run: [`identity`], then the options
/// every shard was run with (as the words of their Re-run lines that differ), then the
/// invocation they were run in.
fn run_of(shard: &Shard) -> Vec<(&'static str, String)> {
    let mut run = identity(&shard.report).to_vec();
    if let Some(this) = &shard.report.partition {
        run.push(("options", this.options_sha256.clone()));
        run.push((
            "invocation",
            if this.invocation.is_empty() {
                "(none: written before shards carried one)".into()
            } else {
                this.invocation.clone()
            },
        ));
    }
    run
}

/// The shard whose run the most shards are of; `None` when no run has more than another.
fn usual_run(shards: &[Shard]) -> Option<&Shard> {
    let runs: Vec<Vec<(&str, String)>> = shards.iter().map(run_of).collect();
    let count = |run: &Vec<(&str, String)>| runs.iter().filter(|other| *other == run).count();
    let most = runs.iter().map(count).max()?;
    let holders = runs.iter().filter(|run| count(run) == most).count();
    (holders == most)
        .then(|| runs.iter().position(|run| count(run) == most))
        .flatten()
        .map(|at| &shards[at])
}

/// The tail of a refusal: which shard is the odd one when the others agree, and how the options
/// differ or what ties shards to one invocation.
fn odd_one(shards: &[Shard], odd: &Shard, what: &str) -> String {
    let others = shards.len() - 1;
    let mut tail = String::new();
    if others >= 2 {
        tail.push_str(&format!(
            "; {} is the odd one, the other {others} agree",
            odd.source
        ));
    }
    match what {
        "options" => {
            let words = |shard: &Shard| option_words(&without_partition(&shard.report.rerun));
            let theirs = words(odd);
            let ours = shards
                .iter()
                .find(|s| !std::ptr::eq(*s, odd))
                .map(words)
                .unwrap_or_default();
            let only = |a: &[String], b: &[String]| {
                let differ: Vec<&str> = a
                    .iter()
                    .filter(|w| !b.contains(w))
                    .map(String::as_str)
                    .collect();
                if differ.is_empty() {
                    "(none)".to_string()
                } else {
                    differ.join(" ")
                }
            };
            tail.push_str(&format!(
                " (its Re-run line has {}, the others' {})",
                only(&theirs, &ours),
                only(&ours, &theirs)
            ));
        }
        "invocation" => tail.push_str(
            " (a shard of an earlier run? every shard of one run is given one --invocation, see docs/src/ci.md)",
        ),
        _ => {}
    }
    tail
}

/// A Re-run line as its options, each flag with its value (`--timeout 30s`).
fn option_words(line: &str) -> Vec<String> {
    let mut options: Vec<String> = Vec::new();
    for word in line.split(' ').skip_while(|word| *word != "run").skip(1) {
        match options.last_mut() {
            Some(last)
                if !word.starts_with("--") && last.starts_with("--") && !last.contains(' ') =>
            {
                last.push(' ');
                last.push_str(word);
            }
            _ => options.push(word.to_string()),
        }
    }
    options
}

/// Each selected rule's report, in the split's order: a dealt rule's from the shard that ran
/// it, a response oracle's joined over every shard, a missing shard's rule skipped (and named
/// in the second list).
fn merged_rules(
    split: &ShardRecord,
    by_shard: &BTreeMap<u32, &Shard>,
    missing: &[u32],
    catalogue: Option<&Catalogue>,
) -> Result<(Vec<RuleReport>, Vec<String>), MergeError> {
    // Every rule of every shard, by id, in shard order.
    let mut reported: BTreeMap<&str, Vec<&RuleReport>> = BTreeMap::new();
    for shard in by_shard.values() {
        for rule in &shard.report.rules {
            reported.entry(rule.id.as_str()).or_default().push(rule);
        }
    }
    let dealt: BTreeMap<String, u32> = split.deal().into_iter().collect();
    let mut rules = Vec::new();
    let mut not_run = Vec::new();
    for id in &split.selected {
        match reported.get(id.as_str()) {
            Some(reports) if split.every_shard.contains(id) => rules.push(joined(reports)),
            Some(reports) => rules.push(reports[0].clone()),
            None => {
                let shard = dealt.get(id).copied().unwrap_or(0);
                if !missing.contains(&shard) && !split.every_shard.contains(id) {
                    return Err(MergeError(format!(
                        "rule {id}: shard {} holds no verdict for it",
                        split.partition.with_shard(shard)
                    )));
                }
                not_run.push(id.clone());
                let reason = format!(
                    "shard {} missing: not run",
                    split.partition.with_shard(shard)
                );
                if let Some(rule) = catalogue.and_then(|c| c.rules.iter().find(|r| &r.id == id)) {
                    let verdict = Verdict::skipped(reason);
                    rules.push(RuleReport::new(rule, &verdict, false, 0, 0, ""));
                }
            }
        }
    }
    Ok((rules, not_run))
}

/// The whole run's times and counts from its shards': they run side by side, so the run
/// takes as long as the longest; throttling, connections and created pets add up.
fn add_up(merged: &mut Report, reports: &[&Report]) {
    merged.started_at = reports
        .iter()
        .map(|r| r.started_at.clone())
        .min()
        .unwrap_or_default();
    merged.finished_at = reports
        .iter()
        .map(|r| r.finished_at.clone())
        .max()
        .unwrap_or_default();
    merged.duration_ms = reports.iter().map(|r| r.duration_ms).max().unwrap_or(0);
    merged.interrupted = reports.iter().any(|r| r.interrupted);
    merged.target.stopped_answering = reports
        .iter()
        .find_map(|r| r.target.stopped_answering.clone());
    merged.throttling = Default::default();
    merged.connections = Default::default();
    merged.created_pets.count = 0;
    for report in reports {
        let (t, c) = (&report.throttling, &report.connections);
        merged.throttling.waits += t.waits;
        merged.throttling.waited_ms += t.waited_ms;
        merged.throttling.gave_up += t.gave_up;
        let m = &mut merged.connections;
        m.opened += c.opened;
        m.most_open += c.most_open;
        m.backoffs += c.backoffs;
        m.resent += c.resent;
        m.concurrency_ceiling = m.concurrency_ceiling.max(c.concurrency_ceiling);
        m.concurrency_reached = m.concurrency_reached.max(c.concurrency_reached);
        m.concurrency_final = m.concurrency_final.max(c.concurrency_final);
        merged.created_pets.count += report.created_pets.count;
        if report.created_pets.file.is_some() {
            merged.created_pets.file = report.created_pets.file.clone();
        }
    }
}

/// A response oracle's verdicts, one per shard, as one: over all the run's responses a
/// statement is broken when any shard saw it broken, and kept only when every shard's
/// responses kept it, so the first verdict by [`RuleReport::rank`] any shard reached (one
/// shard not run, or undecided, leaves the whole undecided).
fn joined(reports: &[&RuleReport]) -> RuleReport {
    let mut joined = reports
        .iter()
        .min_by_key(|rule| rule.rank())
        .map(|rule| (*rule).clone())
        .unwrap_or_else(|| reports[0].clone());
    joined.cases_run = reports.iter().map(|r| r.cases_run).sum();
    joined.transport_cuts = reports.iter().map(|r| r.transport_cuts).sum();
    joined.round_trips = reports.iter().map(|r| r.round_trips).max().unwrap_or(0);
    joined.duration_ms = reports.iter().map(|r| r.duration_ms).max().unwrap_or(0);
    joined
}

/// A shard's re-run line without its `--partition`: the whole run's.
pub fn without_partition(rerun: &str) -> String {
    let mut words = rerun.split(' ').peekable();
    let mut kept = Vec::new();
    while let Some(word) = words.next() {
        if word == "--partition" {
            words.next();
            continue;
        }
        kept.push(word);
    }
    kept.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::VerdictKind;

    fn oracle(verdict: VerdictKind, gated: bool, cases_run: u32) -> RuleReport {
        let catalogue = Catalogue::built_in().unwrap();
        let mut rule = RuleReport::new(&catalogue.rules[0], &Verdict::Passed, false, 0, 0, "");
        rule.verdict = verdict;
        rule.gated = gated;
        rule.cases_run = cases_run;
        rule
    }

    #[test]
    fn an_oracle_over_the_shards_is_the_first_verdict_any_reached() {
        let verdict = |parts: &[RuleReport]| {
            let parts: Vec<&RuleReport> = parts.iter().collect();
            let joined = joined(&parts);
            (joined.verdict, joined.gated, joined.cases_run)
        };
        let passed = oracle(VerdictKind::Passed, false, 2);
        let skipped = oracle(VerdictKind::Skipped, false, 0);
        let failed = oracle(VerdictKind::Failed, false, 1);
        let gated = oracle(VerdictKind::Failed, true, 1);
        assert_eq!(
            verdict(&[passed.clone(), passed.clone()]),
            (VerdictKind::Passed, false, 4)
        );
        // A shard that did not run the oracle leaves its responses unjudged: no pass.
        assert_eq!(
            verdict(&[passed.clone(), skipped]),
            (VerdictKind::Skipped, false, 2)
        );
        assert_eq!(
            verdict(&[passed, failed, gated]),
            (VerdictKind::Failed, true, 4)
        );
    }
}
