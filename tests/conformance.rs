//! Proves the rules both ways: the reference server passes every rule, and each fault fails
//! exactly the rules it declares it breaks. One libtest-mimic trial per seed and per fault, so
//! `cargo test --test conformance fault::limit` selects the limit faults.

use std::collections::BTreeSet;
use std::path::PathBuf;

use libtest_mimic::{Arguments, Failed, Trial};
use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::execution::engine;
use petstore_conformance::execution::{RunConfig, Target};
use petstore_conformance::reference::{FAULTS, Fault};
use petstore_conformance::report::Report;

fn quiet_args() -> Arguments {
    let log = std::env::temp_dir().join(format!(
        "pc-test-{}-{}.log",
        std::process::id(),
        rand_suffix()
    ));
    Arguments {
        logfile: Some(log.display().to_string()),
        test_threads: Some(8),
        ..Arguments::default()
    }
}

fn rand_suffix() -> u64 {
    engine::random_seed()
}

fn run_reference(seed: u64, faults: BTreeSet<Fault>) -> Result<Report, Failed> {
    let mut config = RunConfig::reference(seed);
    config.target = Target::Reference { faults };
    config.libtest = quiet_args();
    config.cases_dir = Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases"));
    config.schemas = Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schemas"));
    let log = config.libtest.logfile.clone();
    let outcome = engine::execute(config).map_err(|e| Failed::from(e.to_string()))?;
    if let Some(log) = log {
        let _ = std::fs::remove_file(log);
    }
    outcome.report.ok_or_else(|| "no report".into())
}

fn describe(report: &Report, ids: &BTreeSet<String>) -> String {
    report
        .rules
        .iter()
        .filter(|rule| ids.contains(&rule.id))
        .map(|rule| {
            let detail = rule
                .failure
                .as_ref()
                .map(|f| format!("expected {}; observed {}", f.expected, f.observed))
                .or_else(|| rule.reason.clone())
                .unwrap_or_default();
            format!("  {} [{}]: {detail}", rule.id, rule.verdict)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn reference_passes(seed: u64) -> Result<(), Failed> {
    let report = run_reference(seed, BTreeSet::new())?;
    let not_passed: BTreeSet<String> = report
        .rules
        .iter()
        .filter(|rule| rule.verdict != "passed")
        .map(|rule| rule.id.clone())
        .collect();
    if !not_passed.is_empty() {
        return Err(format!(
            "seed {seed}: the reference does not pass:\n{}",
            describe(&report, &not_passed)
        )
        .into());
    }
    if report.totals.rules
        != Catalogue::built_in()
            .map_err(|e| e.to_string())?
            .rules
            .len()
    {
        return Err("not every rule ran".into());
    }
    Ok(())
}

fn fault_breaks_exactly(fault: Fault, seed: u64) -> Result<(), Failed> {
    let report = run_reference(seed, BTreeSet::from([fault]))?;
    let failed: BTreeSet<String> = report
        .rules
        .iter()
        .filter(|rule| rule.verdict == "failed")
        .map(|rule| rule.id.clone())
        .collect();
    let undecided: BTreeSet<String> = report
        .rules
        .iter()
        // A skipped rule did not apply (no Sunset header to read the date of): not a verdict.
        .filter(|rule| rule.verdict == "inconclusive")
        .map(|rule| rule.id.clone())
        .collect();
    let expected: BTreeSet<String> = fault.info().breaks.iter().map(|s| s.to_string()).collect();
    let missed: BTreeSet<String> = expected.difference(&failed).cloned().collect();
    let extra: BTreeSet<String> = failed.difference(&expected).cloned().collect();
    if missed.is_empty() && extra.is_empty() && undecided.is_empty() {
        return Ok(());
    }
    Err(format!(
        "fault {} (seed {seed}):\n not failed though declared:\n{}\n failed though not declared:\n{}\n undecided:\n{}",
        fault.name(),
        describe(&report, &missed),
        describe(&report, &extra),
        describe(&report, &undecided)
    )
    .into())
}

fn every_rule_has_a_fault() -> Result<(), Failed> {
    let catalogue = Catalogue::built_in().map_err(|e| e.to_string())?;
    let ids: BTreeSet<&str> = catalogue
        .rules
        .iter()
        .map(|rule| rule.id.as_str())
        .collect();
    let broken: BTreeSet<&str> = FAULTS
        .iter()
        .flat_map(|info| info.breaks.iter().copied())
        .collect();
    let unknown: Vec<&&str> = broken.difference(&ids).collect();
    let unproven: Vec<&&str> = ids.difference(&broken).collect();
    if !unknown.is_empty() || !unproven.is_empty() {
        return Err(format!(
            "faults name unknown rules {unknown:?}; rules no fault breaks {unproven:?}"
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![Trial::test(
        "coverage::every-rule-has-a-fault",
        every_rule_has_a_fault,
    )];
    for seed in [1u64, 2, 3, 0xDEAD_BEEF, u64::MAX] {
        trials.push(Trial::test(
            format!("reference::passes-every-rule::seed-{seed}"),
            move || reference_passes(seed),
        ));
    }
    for info in FAULTS {
        let fault = info.fault;
        trials.push(Trial::test(format!("fault::{}", info.name), move || {
            fault_breaks_exactly(fault, 7)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
