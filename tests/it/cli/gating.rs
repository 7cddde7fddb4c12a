//! Reports judged after the run: verify-report, compare, known failures that expire, and the
//! product recorded.

use std::path::Path;

use crate::common;

use super::{run, stderr, temp_dir};

#[test]
fn verify_report_detects_an_edit_and_compare_gates_on_new_failures() {
    let before = temp_dir("compare-before");
    let after = temp_dir("compare-after");
    assert_eq!(run(&["--seed", "4"], None, &before).status.code(), Some(0));
    let output = run(
        &["--seed", "4", "--reference-fault", "duplicate-ids"],
        None,
        &after,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = before.join("report.json");
    let verify = |path: &Path| {
        common::bin()
            .arg("verify-report")
            .arg(path)
            .output()
            .unwrap()
    };
    let intact = verify(&report);
    let said = String::from_utf8_lossy(&intact.stdout).into_owned();
    assert_eq!(intact.status.code(), Some(0), "{said}");
    assert!(said.starts_with("intact"), "{said}");
    assert!(said.contains("contract: SHA-256"), "{said}");
    assert!(said.contains("this verifier's own"), "{said}");
    assert!(said.contains("integrity is all this shows"), "{said}");
    // One verdict changed by hand: the digest no longer matches.
    let text = std::fs::read_to_string(&report).unwrap();
    let edited = before.join("edited.json");
    std::fs::write(
        &edited,
        text.replacen("\"failed_required\": 0", "\"failed_required\": 1", 1),
    )
    .unwrap();
    let output = verify(&edited);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("EDITED"));
    // The nightly gate: a rule that newly fails is exit 1; the other way round, exit 0.
    let markdown = after.join("compare.md");
    let output = common::bin()
        .arg("compare")
        .arg(&report)
        .arg(after.join("report.json"))
        .arg("--markdown")
        .arg(&markdown)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("new failures (gated): ")
            && !said.contains("new failures (gated): 0")
            && said.contains("create-pet/concurrent/distinct-ids"),
        "{said}"
    );
    let markdown = std::fs::read_to_string(markdown).unwrap();
    assert!(markdown.contains("a gated rule newly fails"), "{markdown}");
    let output = common::bin()
        .arg("compare")
        .arg(after.join("report.json"))
        .arg(&report)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("fixed: ") && !said.contains("fixed: 0"),
        "{said}"
    );
    // Another target is not last night's run of this one: exit 2, unless asked for.
    let elsewhere = after.join("elsewhere.json");
    let text = std::fs::read_to_string(after.join("report.json")).unwrap();
    let mut moved: serde_json::Value = serde_json::from_str(&text).unwrap();
    moved["target"]["kind"] = "external".into();
    moved["target"]["base_url"] = "https://elsewhere.example/v1".into();
    std::fs::write(&elsewhere, with_own_digest(moved)).unwrap();
    let compare = |extra: &[&str]| {
        common::bin()
            .arg("compare")
            .arg(&report)
            .arg(&elsewhere)
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = compare(&[]);
    let said = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("targets differ"), "{said}");
    assert!(said.contains("--allow-different"), "{said}");
    let allowed = compare(&["--allow-different"]);
    assert_eq!(allowed.status.code(), Some(1), "{}", stderr(&allowed));
    // A report edited after its run is refused, whichever side it is on: a new failure
    // flipped to passed (the gate would go green), or a passed rule flipped to failed.
    let tonight: serde_json::Value = serde_json::from_str(&text).unwrap();
    let failed = tonight["rules"]
        .as_array()
        .unwrap()
        .iter()
        .position(|rule| rule["verdict"] == "failed" && rule["level"] == "required")
        .expect("a required rule failed under duplicate-ids");
    let mut flipped = tonight.clone();
    flipped["rules"][failed]["verdict"] = "passed".into();
    let tampered = after.join("tampered.json");
    std::fs::write(&tampered, flipped.to_string()).unwrap();
    for (old, new) in [(&report, &tampered), (&tampered, &report)] {
        let output = common::bin()
            .arg("compare")
            .arg(old)
            .arg(new)
            .output()
            .unwrap();
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{said}");
        assert!(
            said.contains("tampered.json") && said.contains("edited"),
            "{said}"
        );
    }
    // Marked not gated, its digest recomputed: the gate is judged again from the gate the run
    // recorded and the rule's level in the catalogue, not from the field.
    let mut ungated = tonight.clone();
    for rule in ungated["rules"].as_array_mut().unwrap() {
        rule["gated"] = false.into();
    }
    std::fs::write(&tampered, with_own_digest(ungated)).unwrap();
    let output = common::bin()
        .arg("compare")
        .arg(&report)
        .arg(&tampered)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{said}{}", stderr(&output));
    assert!(!said.contains("new failures (gated): 0"), "{said}");
    // Text from a report reaches the terminal with its control characters escaped: a rule id
    // holding an escape sequence or a bidirectional override, a target address too.
    let mut hostile = tonight.clone();
    hostile["rules"][0]["id"] = "auth/\u{1b}[2J\u{1b}]0;pwned\u{7}x\u{202e}gnp.exe".into();
    hostile["target"]["base_url"] = "http://127.0.0.1:1/\u{1b}[31mv1".into();
    std::fs::write(&tampered, with_own_digest(hostile)).unwrap();
    let compared = common::bin()
        .arg("compare")
        .arg(&report)
        .arg(&tampered)
        .output()
        .unwrap();
    let verified = verify(&tampered);
    for output in [compared, verified] {
        let said = String::from_utf8_lossy(&output.stdout).into_owned() + &stderr(&output);
        assert!(
            !said.contains('\u{1b}') && !said.contains('\u{7}') && !said.contains('\u{202e}'),
            "{said:?}"
        );
        assert!(said.contains("\\u{1b}"), "{said}");
    }
}

/// `report` as JSON text carrying its own digest again, as whoever edits a report can write it.
fn with_own_digest(mut report: serde_json::Value) -> String {
    report["integrity"]["sha256"] = petstore_conformance::report::canonical_digest(&report).into();
    report.to_string()
}

#[test]
fn known_failures_are_reported_not_gated_until_they_expire() {
    let dir = temp_dir("known-failures");
    let list = dir.join("known.toml");
    let write = |text: &str| std::fs::write(&list, text).unwrap();
    let run_with = |faults: &[&str]| {
        let mut args = vec!["--seed", "4", "--known-failures", list.to_str().unwrap()];
        for fault in faults {
            args.extend(["--reference-fault", fault]);
        }
        let report_dir = dir.join("reports");
        let output = run(&args, None, &report_dir);
        let report: serde_json::Value = std::fs::read(report_dir.join("report.json"))
            .map(|bytes| serde_json::from_slice(&bytes).unwrap())
            .unwrap_or_default();
        (output, report)
    };
    let rule = |report: &serde_json::Value, id: &str| {
        report["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|rule| rule["id"] == id)
            .cloned()
            .unwrap()
    };
    // Known: the only failure is on the list, so the gate passes and the answer says why.
    write(
        r#"known_failures = [
  { rule = "create-pet/invalid/category-id-wrong-type", reason = "PET-9", link = "https://tracker.example/PET-9", expires = "2099-12-31" },
]"#,
    );
    let (output, report) = run_with(&["create-category-id-coerced"]);
    let failed: Vec<&str> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "failed")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let known = rule(&report, "create-pet/invalid/category-id-wrong-type");
    assert_eq!(known["verdict"], "known-failure", "{known}");
    assert_eq!(known["gated"], false);
    assert_eq!(
        known["known_failure"]["link"],
        "https://tracker.example/PET-9"
    );
    // The fault also fails rules that are not on the list: those still gate.
    assert_eq!(
        output.status.code(),
        Some(if failed.is_empty() { 0 } else { 1 }),
        "{failed:?}"
    );
    assert_eq!(report["totals"]["known_failures"], 1);
    // Fixed: the listed rule passes, and says it can come off the list.
    let (output, report) = run_with(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let fixed = rule(&report, "create-pet/invalid/category-id-wrong-type");
    assert_eq!(fixed["verdict"], "passed");
    assert_eq!(fixed["reason"], "fixed: remove it from the known failures");
    // Expired: the entry no longer excuses the failure.
    write(
        r#"known_failures = [{ rule = "create-pet/invalid/category-id-wrong-type", reason = "PET-9", expires = "2020-01-01" }]"#,
    );
    let (output, report) = run_with(&["create-category-id-coerced"]);
    assert_eq!(output.status.code(), Some(1));
    let expired = rule(&report, "create-pet/invalid/category-id-wrong-type");
    assert_eq!(expired["verdict"], "failed");
    assert_eq!(expired["gated"], true);
    assert!(
        expired["reason"]
            .as_str()
            .unwrap()
            .contains("expired on 2020-01-01")
    );
    // Not a plain FAILED anywhere it is shown: the terminal, summary.md and JUnit say the
    // entry ran out.
    let note = "known failure expired on 2020-01-01 (PET-9): gated again";
    let terminal = String::from_utf8_lossy(&output.stdout).into_owned() + &stderr(&output);
    assert!(
        terminal.contains(&format!(
            "---- create-pet/invalid/category-id-wrong-type ----\n{note}: expected"
        )),
        "{terminal}"
    );
    let summary = std::fs::read_to_string(dir.join("reports/summary.md")).unwrap();
    assert!(
        summary.lines().any(|line| line.contains("| FAILED |")
            && line.contains("category-id-wrong-type")
            && line.contains(note)),
        "{summary}"
    );
    let junit = std::fs::read_to_string(dir.join("reports/junit.xml")).unwrap();
    assert!(
        junit.contains(&format!(
            "message=\"{note}: create-pet/invalid/category-id-wrong-type"
        )),
        "{junit}"
    );
    // A rule that does not exist, or a key that is not known: exit 2 naming the file.
    for (text, needle) in [
        (
            r#"known_failures = [{ rule = "no/such-rule", reason = "x" }]"#,
            "no/such-rule",
        ),
        (
            r#"known_failures = [{ rule = "auth/missing-key/list-pets", reson = "x" }]"#,
            "reson",
        ),
        (
            r#"known_failures = [{ rule = "auth/missing-key/list-pets", reason = "x", expires = "soon" }]"#,
            "YYYY-MM-DD",
        ),
        // The shape of a date, not a day: it would sort after every real one and never expire.
        (
            r#"known_failures = [{ rule = "auth/missing-key/list-pets", reason = "x", expires = "2027-13-45" }]"#,
            "2027-13-45",
        ),
    ] {
        write(text);
        let (output, _) = run_with(&[]);
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{said}");
        assert!(
            said.contains("known.toml") && said.contains(needle),
            "{said}"
        );
        assert_eq!(said.lines().count(), 1, "{said}");
    }
}

#[test]
fn the_product_is_recorded_and_the_summary_goes_to_github() {
    let dir = temp_dir("product");
    let step_summary = dir.join("step-summary.md");
    let output = common::bin()
        .args(["run", "--seed", "6", "--no-regressions"])
        .args(["--product", "Acme Pets", "--product-version", "2.3.1"])
        .arg("--report-dir")
        .arg(dir.join("reports"))
        .env("GITHUB_STEP_SUMMARY", &step_summary)
        .env_remove("PETSTORE_API_KEY")
        .env_remove("PETSTORE_BASE_URL")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("reports/report.json")).unwrap()).unwrap();
    assert_eq!(report["target"]["product"], "Acme Pets");
    assert_eq!(report["target"]["product_version"], "2.3.1");
    let summary = std::fs::read_to_string(&step_summary).unwrap();
    assert!(summary.starts_with("# petstore-conformance"), "{summary}");
    assert!(summary.contains("**Acme Pets** 2.3.1"), "{summary}");
}

/// `--gate certify` on a store whose every status already holds pets (a vendor's second run on
/// the same instance, here the reference's crowded store) cannot succeed: it stops before the
/// run creates anything, exit 2, naming the rule, why, and the store to certify on; and the
/// verdict line of a run with no base URL says it judged the built-in reference.
#[test]
fn certify_stops_before_the_run_on_a_store_it_cannot_certify() {
    let dir = temp_dir("certify-crowded");
    let output = run(
        &["--reference-variant", "crowded-store", "--gate", "certify"],
        None,
        &dir,
    );
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    for part in [
        "--gate certify: this store cannot be certified",
        "list-pets/status/empty-is-array: every status filter already matches pets on this store (available ",
        "Certify on a fresh instance",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
    assert!(!dir.join("report.json").exists(), "the run went on");
    assert!(
        !dir.join("created-pets.jsonl").exists(),
        "the run created pets"
    );
    // The same store under the default gate: the rule is reported not decidable, the run
    // goes on, and its verdict names the built-in reference it ran against.
    let output = run(
        &[
            "--reference-variant",
            "crowded-store",
            "--exact",
            "list-pets/status/empty-is-array",
        ],
        None,
        &dir,
    );
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("CONFORMS against the built-in reference server (http://127.0.0.1:"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
