//! A split run, merged, is the whole run: three shards of a seeded run against the reference
//! (conforming, with faults, as variants), merged, give every rule the verdict the single run
//! gives it, and the same answer; `merge` refuses shards of different runs, overlapping shards
//! and whole runs, and a missing shard leaves the answer undetermined, named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::common;

use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::catalogue::partition::Partition;
use petstore_conformance::outcome::VerdictKind;
use petstore_conformance::reference::{Fault, Variant};
use petstore_conformance::report::merge::{Shard, merge};
use petstore_conformance::report::{Conformance, Report, render_json};
use petstore_conformance::runner::RunConfig;
use petstore_conformance::runner::stages;

const SEED: u64 = 0x5eed_0020;

fn config(seed: u64, faults: &[&str], variants: &[&str]) -> RunConfig {
    let mut config = petstore_conformance::embedded::reference_config(seed);
    config.libtest.test_threads = Some(8);
    config.libtest.logfile = Some(
        std::env::temp_dir()
            .join(format!(
                "pc-shards-{}-{}.log",
                std::process::id(),
                petstore_conformance::seed::random_seed()
            ))
            .display()
            .to_string(),
    );
    config.target = petstore_conformance::embedded::reference_target(
        faults.iter().map(|f| Fault::parse(f).unwrap()).collect(),
        variants
            .iter()
            .map(|v| Variant::parse(v).unwrap())
            .collect(),
    );
    config.options.cases_dir = Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases"));
    config.options.schemas = Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas"));
    config
}

/// One run, as merge reads it: report.json as written, read back.
fn run(config: RunConfig) -> Report {
    let log = config.libtest.logfile.clone();
    let outcome = stages::execute(config).expect("the run runs");
    if let Some(log) = log {
        let _ = std::fs::remove_file(log);
    }
    let written = render_json(&outcome.report.expect("a report"));
    let value: serde_json::Value = serde_json::from_str(&written).unwrap();
    common::assert_valid_report(&value);
    serde_json::from_value(value).unwrap()
}

fn shards(seed: u64, faults: &[&str], variants: &[&str], split: &str) -> Vec<Shard> {
    (1..=3)
        .map(|k| {
            let mut config = config(seed, faults, variants);
            config.options.partition = Some(format!("{split}:{k}/3").parse().unwrap());
            Shard {
                source: format!("{split}:{k}/3"),
                report: run(config),
            }
        })
        .collect()
}

fn verdicts(report: &Report) -> BTreeMap<String, VerdictKind> {
    report
        .rules
        .iter()
        .map(|rule| (rule.id.clone(), rule.verdict))
        .collect()
}

/// A rule that sees its fault through the pets other rules create beside it: under
/// duplicate-ids (every second pet gets the id before it), unique-ids' four pets, created one
/// after another, may each land between two of another rule's, and its check of the run's
/// record sees the twin only once that rule's batch is recorded. A shard holds fewer such
/// neighbours, so its verdict may differ from the single run's; distinct-ids, a burst of its
/// own, fails in both, and the answer stays the same (asserted below).
const SEEN_BESIDE_OTHERS: [(&str, &str); 1] = [("duplicate-ids", "create-pet/valid/unique-ids")];

/// The single run and its three shards merged agree on every rule and on the answer.
fn merged_equals_single(faults: &[&str], variants: &[&str]) {
    let single = run(config(SEED, faults, variants));
    let parts = shards(SEED, faults, variants, "hash");
    // Disjoint: no dealt rule is in two shards; every shard runs the oracles.
    let every = &parts[0].report.partition.as_ref().unwrap().every_shard;
    let mut seen = BTreeSet::new();
    for part in &parts {
        for rule in &part.report.rules {
            assert!(
                every.contains(&rule.id) || seen.insert(rule.id.clone()),
                "{} is in two shards",
                rule.id
            );
        }
    }
    let merged = merge(&parts, None).expect("the shards merge");
    let (want, got) = (verdicts(&single), verdicts(&merged));
    // A rule a fault may break depending on what the store holds when it reads (the fault's
    // `may_break`) may differ: a shard's store holds fewer of the other rules' pets.
    let may_differ: BTreeSet<&str> = faults
        .iter()
        .flat_map(|f| Fault::parse(f).unwrap().info().may_break.iter().copied())
        .chain(
            SEEN_BESIDE_OTHERS
                .iter()
                .filter(|(fault, _)| faults.contains(fault))
                .map(|(_, rule)| *rule),
        )
        .collect();
    let differing: Vec<String> = want
        .iter()
        .filter(|(id, verdict)| got.get(*id) != Some(verdict) && !may_differ.contains(id.as_str()))
        .map(|(id, verdict)| format!("{id}: single {verdict:?}, merged {:?}", got.get(id)))
        .collect();
    assert!(
        differing.is_empty() && want.len() == got.len(),
        "faults {faults:?} variants {variants:?}:\n{}",
        differing.join("\n")
    );
    assert_eq!(
        merged.conformance, single.conformance,
        "{faults:?} {variants:?}"
    );
    assert_eq!(merged.totals.rules, single.totals.rules);
    assert_eq!(merged.totals.not_selected, single.totals.not_selected);
    if may_differ.is_empty() {
        assert_eq!(merged.totals.failed_required, single.totals.failed_required);
        assert_eq!(merged.totals.passed, single.totals.passed);
    }
    // The merged report is a report: it validates and reads back.
    let written: serde_json::Value = serde_json::from_str(&render_json(&merged)).unwrap();
    common::assert_valid_report(&written);
    assert!(!merged.rerun.contains("--partition"), "{}", merged.rerun);
}

#[test]
fn conforming_reference() {
    merged_equals_single(&[], &[]);
}

#[test]
fn faults_of_dealt_rules() {
    merged_equals_single(&["limit-off-by-one", "auth-skipped-get-pet"], &[]);
    merged_equals_single(&["refused-create-still-stored"], &[]);
}

/// Faults the response oracles see in other rules' exchanges, and one no single rule owns.
#[test]
fn faults_seen_by_the_oracles() {
    merged_equals_single(&["error-text-plain"], &[]);
    merged_equals_single(
        &["create-malformed-json-500", "deprecation-on-list-pets"],
        &[],
    );
    merged_equals_single(&["duplicate-ids"], &[]);
}

#[test]
fn variants() {
    merged_equals_single(&[], &["random-ids", "extra-fields"]);
    merged_equals_single(&[], &["trailing-slash-redirect", "connection-close"]);
}

/// Slices (round robin) merge to the same verdicts as hashes.
#[test]
fn slices_merge_too() {
    let single = run(config(SEED, &["create-returns-200"], &[]));
    let merged = merge(&shards(SEED, &["create-returns-200"], &[], "slice"), None).unwrap();
    assert_eq!(verdicts(&merged), verdicts(&single));
    assert_eq!(merged.conformance, Conformance::DoesNotConform);
}

#[test]
fn a_missing_shard_is_undetermined_and_named() {
    let mut parts = shards(SEED, &[], &[], "hash");
    let gone = parts.remove(1);
    let catalogue = Catalogue::load(Some(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases"),
    ))
    .unwrap();
    let merged = merge(&parts, Some(&catalogue)).unwrap();
    assert_eq!(merged.conformance, Conformance::Undetermined);
    let from = merged.merged.as_ref().unwrap();
    assert_eq!(from.missing, ["hash:2/3"]);
    let oracles = &gone.report.partition.as_ref().unwrap().every_shard;
    let lost: Vec<&String> = gone
        .report
        .rules
        .iter()
        .map(|r| &r.id)
        .filter(|id| !oracles.contains(id))
        .collect();
    assert_eq!(from.not_run.iter().collect::<Vec<_>>(), lost);
    for id in lost {
        let rule = merged.rules.iter().find(|r| &r.id == id).unwrap();
        assert_eq!(rule.verdict, VerdictKind::Skipped);
        assert!(rule.reason.as_deref().unwrap().contains("hash:2/3 missing"));
    }
}

#[test]
fn mismatched_shards_are_refused() {
    let parts = shards(SEED, &[], &[], "hash");
    let mut other_seed = config(SEED + 1, &[], &[]);
    other_seed.options.partition = Some("hash:3/3".parse().unwrap());
    let refusals = [
        (
            vec![
                parts[0].report.clone(),
                parts[1].report.clone(),
                run(other_seed),
            ],
            "seed",
        ),
        (
            vec![parts[0].report.clone(), parts[0].report.clone()],
            "overlap",
        ),
        (
            vec![parts[0].report.clone(), run(config(SEED, &[], &[]))],
            "not a shard",
        ),
    ];
    for (reports, why) in refusals {
        let given: Vec<Shard> = reports
            .into_iter()
            .enumerate()
            .map(|(n, report)| Shard {
                source: format!("shard-{n}"),
                report,
            })
            .collect();
        let error = merge(&given, None).expect_err(why).to_string();
        assert!(error.contains(why), "{why}: {error}");
        assert!(!error.contains('\n'), "one line: {error}");
    }
    // Another target: a fault injected in one shard only.
    let mut faulty = config(SEED, &["limit-off-by-one"], &[]);
    faulty.options.partition = Some("hash:2/3".parse::<Partition>().unwrap());
    let given = [
        Shard {
            source: "a".into(),
            report: parts[0].report.clone(),
        },
        Shard {
            source: "b".into(),
            report: run(faulty),
        },
    ];
    assert!(
        merge(&given, None)
            .unwrap_err()
            .to_string()
            .contains("target")
    );
}

/// The command line: `run --partition` writes each shard's reports, `merge` writes the whole
/// run's in every format with `run`'s exit code and every option on its Re-run line, and
/// refuses a shard of another invocation, other options or another seed (exit 2, one line).
#[test]
fn run_partition_then_merge_on_the_command_line() {
    let dir = common::temp_dir("shards", "cli");
    let shard_dirs: Vec<PathBuf> = (1..=3).map(|k| dir.join(format!("shard-{k}"))).collect();
    for (k, shard_dir) in shard_dirs.iter().enumerate() {
        let status = common::bin()
            .args([
                "run",
                "--no-regressions",
                "--seed",
                "7",
                "--reference-fault",
                "limit-off-by-one",
                "--timeout",
                "30",
                "--category-ids",
                "1,2,3",
            ])
            .args(["--partition", &format!("hash:{}/3", k + 1), "--report-dir"])
            .arg(shard_dir)
            .output()
            .unwrap();
        assert!(
            matches!(status.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
    }
    let out = dir.join("merged");
    let merged = common::bin()
        .arg("merge")
        .args(&shard_dirs)
        .arg("--report-dir")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert_eq!(merged.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("DOES NOT CONFORM"), "{stderr}");
    for file in ["report.json", "junit.xml", "summary.md", "report.html"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let from = report.merged.unwrap();
    assert_eq!(from.shards.len(), 3);
    assert!(from.shards.iter().all(|s| s.report_sha256.len() == 64));
    let verified = common::bin()
        .arg("verify-report")
        .arg(out.join("report.json"))
        .output()
        .unwrap();
    assert_eq!(
        verified.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );

    // The merged Re-run line is the shards' own, every option kept, `--partition` left out.
    assert!(
        report.rerun.contains("--timeout 30s") && report.rerun.contains("--category-ids 1,2,3"),
        "{}",
        report.rerun
    );
    assert!(!report.rerun.contains("--partition"), "{}", report.rerun);

    // A shard of another invocation (yesterday's, same seed and target) or run with other
    // options: refused, exit 2, one line naming it as the odd one.
    let shard_with = |name: &str, extra: &[&str]| {
        let shard_dir = dir.join(name);
        let output = common::bin()
            .args(["run", "--no-regressions", "--seed", "7"])
            .args([
                "--reference-fault",
                "limit-off-by-one",
                "--partition",
                "hash:1/3",
            ])
            .args(extra)
            .arg("--report-dir")
            .arg(&shard_dir)
            .output()
            .unwrap();
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        shard_dir
    };
    let stale = shard_with(
        "stale",
        &[
            "--timeout",
            "30",
            "--category-ids",
            "1,2,3",
            "--invocation",
            "yesterday",
        ],
    );
    let other_options = shard_with("other-options", &["--category-ids", "1,2,3"]);
    for (odd, needles) in [
        (&stale, vec!["invocation", "yesterday", "--invocation"]),
        (&other_options, vec!["options", "--timeout 30s"]),
    ] {
        let refused = common::bin()
            .arg("merge")
            .args([odd, &shard_dirs[1], &shard_dirs[2]])
            .arg("--report-dir")
            .arg(dir.join("refused"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "{} is the odd one",
                odd.join("report.json").display()
            )),
            "{stderr}"
        );
        for needle in needles {
            assert!(stderr.contains(needle), "{needle}: {stderr}");
        }
    }

    // A shard of another seed: refused, one line, exit 2.
    let stranger = dir.join("stranger");
    common::bin()
        .args([
            "run",
            "--no-regressions",
            "--timeout",
            "30",
            "--category-ids",
            "1,2,3",
            "--seed",
            "8",
            "--partition",
            "hash:3/3",
            "--report-dir",
        ])
        .arg(&stranger)
        .output()
        .unwrap();
    let refused = common::bin()
        .arg("merge")
        .args([&shard_dirs[0], &shard_dirs[1], &stranger])
        .arg("--report-dir")
        .arg(dir.join("refused"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("seed 7 vs 8"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}
