//! Exit codes: 0 conforms, 1 does not, 2 could not run (bad input, an unreachable or refusing
//! target), with the report files each writes and the API key in none of them.

use std::path::{Path, PathBuf};

use crate::common;

use super::{run, stderr, temp_dir};

use common::serve_reference;

#[test]
fn default_run_passes_and_writes_three_reports() {
    let dir = temp_dir("default");
    let output = run(&["--seed", "42"], None, &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("seed 42"));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["suite"]["name"], "petstore-conformance");
    assert_eq!(report["contract"]["version"], "1.0.0");
    assert_eq!(report["seed"], 42);
    assert_eq!(report["conformance"], "conforms");
    let rules = report["rules"].as_array().unwrap();
    assert!(rules.len() > 60);
    for rule in rules {
        for field in [
            "id",
            "title",
            "level",
            "operation",
            "citation",
            "verdict",
            "cases_run",
        ] {
            assert!(rule.get(field).is_some(), "{field} missing in {rule}");
        }
    }
    let created = report["created_pets"]["count"].as_u64().unwrap();
    assert!(created > 0, "{}", report["created_pets"]);
    assert_eq!(report["created_pets"]["file"], "created-pets.jsonl");
    let listed = std::fs::read_to_string(dir.join("created-pets.jsonl")).unwrap();
    assert_eq!(listed.lines().count() as u64, created);
    let mut free = 0;
    for line in listed.lines() {
        let pet: serde_json::Value = serde_json::from_str(line).unwrap();
        let prefix = report["run_prefix"].as_str().unwrap();
        assert!(pet["id"].is_i64() && pet["rule"].is_string(), "{line}");
        // The free names of the request space (`""`, `null`, `7`) carry no prefix: their
        // ids find them again.
        if !pet["name"].as_str().unwrap().starts_with(prefix) {
            assert!(
                pet["rule"]
                    .as_str()
                    .unwrap()
                    .starts_with("inputs/create-pet/"),
                "{line}"
            );
            free += 1;
        }
    }
    assert!(free >= 12, "{free} pets without the prefix listed");
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), rules.len());
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.starts_with("# petstore-conformance"), "{summary}");
}

#[test]
fn a_required_failure_exits_1_and_a_recommended_one_only_under_gate_all() {
    let dir = temp_dir("gate");
    let output = run(&["--reference-fault", "default-limit-ignored"], None, &dir);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let failed = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|rule| rule["id"] == "list-pets/limit/default-at-most-20")
        .unwrap();
    assert_eq!(failed["verdict"], "failed");
    let curl = failed["failure"]["curl"].as_str().unwrap();
    assert!(
        curl.starts_with("curl ") && curl.contains("${PETSTORE_API_KEY}"),
        "{curl}"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("| FAILED | required | `list-pets/limit/default-at-most-20`"));

    let clean = temp_dir("gate-clean");
    assert_eq!(run(&["--seed", "5"], None, &clean).status.code(), Some(0));
    let output = run(
        &[
            "--seed",
            "5",
            "--reference-fault",
            "deprecation-legacy-true",
        ],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // JUnit: a recommended failure is counted as the terminal counts it, not failed: a
    // <skipped> of type warning whose message says it failed, with its evidence; never red.
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let case_of = |id: &str| {
        let start = junit
            .find(&format!("<testcase name=\"{id}\""))
            .unwrap_or_else(|| panic!("{id} not in {junit}"));
        let end = start + junit[start..].find("</testcase>").unwrap();
        junit[start..end].to_string()
    };
    let warned = junit
        .split("<testcase ")
        .filter(|case| case.contains("WARNING recommended rule failed"))
        .count();
    assert!(warned > 0, "{junit}");
    let recommended = case_of("deprecation/get-pet/deprecation-syntax");
    assert!(
        recommended.contains("<skipped ")
            && recommended.contains("type=\"warning\"")
            && !recommended.contains("<failure"),
        "{recommended}"
    );
    assert!(
        recommended.contains("request:") && recommended.contains("value=\"recommended\""),
        "{recommended}"
    );
    // compare follows the gate the run used: a recommended rule newly failing is listed, and
    // not a regression under --gate required.
    let output = common::bin()
        .arg("compare")
        .arg(clean.join("report.json"))
        .arg(dir.join("report.json"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{said}{}", stderr(&output));
    assert!(said.contains("new failures (gated): 0"), "{said}");
    assert!(
        !said.contains("new failures, not gated (recommended): 0"),
        "{said}"
    );
    let output = run(
        &[
            "--reference-fault",
            "deprecation-legacy-true",
            "--gate",
            "all",
        ],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
}

#[test]
fn configuration_errors_exit_2_with_one_line_naming_the_problem() {
    let dir = temp_dir("config");
    let cases: [(&[&str], Option<&str>, &str); 8] = [
        (
            &["--base-url", "staging.example/v1"],
            Some("cli-test-key-long"),
            "not a URL",
        ),
        (
            &["--base-url", "http://127.0.0.1:1/api"],
            Some("cli-test-key-long"),
            "/v1",
        ),
        (
            &["--base-url", "http://127.0.0.1:1/v1"],
            None,
            "PETSTORE_API_KEY",
        ),
        (
            &["--schemas", "/nonexistent-schemas"],
            None,
            "/nonexistent-schemas/PetStatus.json",
        ),
        (
            &["--cases-dir", "/nonexistent-cases"],
            None,
            "/nonexistent-cases/auth.json",
        ),
        (
            &["--reference-fault", "no-such-fault"],
            None,
            "no-such-fault",
        ),
        (
            &["list-pets/no-such-rule"],
            None,
            "no rule matches the filter \"list-pets/no-such-rule\"",
        ),
        (
            &["--time-budget", "5", "--fill-store", "1001"],
            None,
            "raise --max-pets to 1001 or more",
        ),
    ];
    for (args, key, needle) in cases {
        let output = run(args, key, &dir);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(needle),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let output = run(&[], None, Path::new("/proc/no-reports-here"));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("/proc/no-reports-here"));
}

#[test]
fn an_unreachable_target_exits_2() {
    let dir = temp_dir("unreachable");
    let url = common::servers::closed();
    let output = run(&["--base-url", &url], Some("cli-test-key-long"), &dir);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("could not be reached"));
    assert!(!dir.join("report.json").exists());
}

#[test]
fn the_api_key_appears_in_nothing_written() {
    let key = "sk-live-9f8e7d6c5b4a39281706";
    // Faults, so that failures with requests, responses and curl lines are written.
    let (_server, url) = serve_reference(
        key,
        &[
            "unauthorized-without-body",
            "sunset-wrong-date",
            "duplicate-ids",
        ],
    );
    let dir = temp_dir("secret");
    let output = run(&["--base-url", &url, "--gate", "all"], Some(key), &dir);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let mut written = vec![output.stdout.clone(), output.stderr.clone()];
    for entry in std::fs::read_dir(&dir).unwrap() {
        written.push(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let report = String::from_utf8_lossy(&written[2..].concat()).into_owned();
    assert!(report.contains("[REDACTED]") || report.contains("${PETSTORE_API_KEY}"));
    for bytes in written {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(key),
            "the key leaked"
        );
    }
}

/// A copy of `cases/` with one edit to `file`, in a directory of its own.
fn cases_with(name: &str, file: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let dir = temp_dir(name).join("cases");
    std::fs::create_dir_all(&dir).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    let path = dir.join(file);
    let mut cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut cases);
    std::fs::write(&path, cases.to_string()).unwrap();
    dir
}

#[test]
fn a_misspelt_check_or_param_is_exit_2_naming_file_rule_and_field() {
    let misspelt_check = cases_with("misspelt-check", "auth.json", |cases| {
        cases["rules"][0]["check"] = "auth-refuesd".into();
    });
    let misspelt_param = cases_with("misspelt-param", "auth.json", |cases| {
        let params = cases["rules"][0]["params"].as_object_mut().unwrap();
        let value = params.remove("credential").unwrap();
        params.insert("credentail".into(), value);
    });
    let wrong_kind = cases_with("wrong-kind", "create-pet.json", |cases| {
        let rule = cases["rules"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|rule| rule["id"] == "create-pet/valid/unique-ids")
            .unwrap();
        rule["params"]["count"] = "eight".into();
    });
    let expectations = [
        (
            &misspelt_check,
            "auth/missing-key/list-pets",
            "check: \"auth-refuesd\"",
        ),
        (
            &misspelt_param,
            "auth/missing-key/list-pets",
            "params.credentail",
        ),
        (
            &wrong_kind,
            "create-pet/valid/unique-ids",
            "params.count: must be a whole number",
        ),
    ];
    let dir = temp_dir("misspelt-reports");
    for (cases, rule, field) in expectations {
        let file = if rule.starts_with("auth") {
            "auth.json"
        } else {
            "create-pet.json"
        };
        for command in ["run", "rules"] {
            let mut args = vec!["--cases-dir", cases.to_str().unwrap()];
            let output = if command == "run" {
                run(&args, None, &dir)
            } else {
                args.insert(0, "rules");
                common::bin().args(&args).output().unwrap()
            };
            let text = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{command} {field}: {text}");
            assert_eq!(text.lines().count(), 1, "{command}: {text}");
            for needle in [file, rule, field] {
                assert!(text.contains(needle), "{command}: {needle:?} not in {text}");
            }
        }
    }
}

#[test]
fn a_bad_request_space_is_exit_2_naming_the_file_and_the_field() {
    let cases = cases_with("bad-space", "request-space.json", |space| {
        space["inputs"][1]["classes"][0]["expect"] = "refused".into();
    });
    let output = run(
        &["--cases-dir", cases.to_str().unwrap()],
        None,
        &temp_dir("bad-space-reports"),
    );
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    for needle in ["request-space.json", "/inputs/1/classes/0/expect"] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
}

#[test]
fn a_filtered_run_answers_for_its_rules_and_says_it_was_partial() {
    let dir = temp_dir("partial");
    let output = run(&["--seed", "6", "list-pets/limit"], None, &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["conformance"], "conforms");
    let not_selected = report["totals"]["not_selected"].as_u64().unwrap();
    assert!(not_selected > 50, "{}", report["totals"]);
    let note = format!("Partial run: {not_selected} rules not selected");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains(&note), "{summary}");
    assert!(stderr(&output).contains(&note), "{}", stderr(&output));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains(&note));
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(junit.contains(&note));
}

#[test]
fn run_help_states_the_exit_codes() {
    let output = common::bin().args(["run", "--help"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    for line in [
        "0    CONFORMS",
        "1    DOES NOT CONFORM",
        "2    could not run",
        "3    UNDETERMINED",
        "130  interrupted by SIGINT, 143 by SIGTERM",
    ] {
        assert!(help.contains(line), "{line:?} not in:\n{help}");
    }
}

#[test]
fn a_refused_key_exits_2_with_one_line_before_any_rule() {
    let (_server, url) = serve_reference("the-right-key-4242", &[]);
    let dir = temp_dir("key-refused");
    // A report of an earlier run must not be taken for this one's: none is written, and the
    // one line says so.
    let wrong = "the-wrong-key-1717";
    let output = run(&["--base-url", &url], Some(wrong), &dir);
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    let lines: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].contains("refused the key") && lines[0].contains("PETSTORE_API_KEY"),
        "{said}"
    );
    assert!(lines[0].contains("401"), "{said}");
    assert!(!said.contains(wrong), "the key leaked: {said}");
    assert!(!said.contains("DOES NOT CONFORM"), "{said}");
    assert!(!dir.join("report.json").exists());
    assert!(!dir.join("summary.md").exists());
    // From a file: the file is named, never the key.
    let file = dir.join("wrong-key.txt");
    std::fs::write(&file, format!("{wrong}\n")).unwrap();
    let output = run(
        &["--base-url", &url, "--api-key-file", file.to_str().unwrap()],
        None,
        &dir,
    );
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(
        said.contains("refused the key") && said.contains(file.to_str().unwrap()),
        "{said}"
    );
    assert!(!said.contains(wrong), "the key leaked: {said}");
    assert!(!dir.join("report.json").exists());
}

#[test]
fn a_wrong_base_path_is_could_not_run_not_does_not_conform() {
    let key = "the-right-key-4242";
    let (_server, url) = serve_reference(key, &[]);
    let dir = temp_dir("wrong-path");
    // `/api/v1` where the store is at `/v1`: every listing and the store orders answer 404.
    let wrong = url.replace("/v1", "/api/v1");
    let output = run(&["--base-url", &wrong], Some(key), &dir);
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    let lines: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].contains("no operation answered at this base URL; check the path"),
        "{said}"
    );
    assert!(!said.contains("DOES NOT CONFORM"), "{said}");
    assert!(!dir.join("report.json").exists());
    // At the right path the same store, whose getPet answers 404 for every id it lacks, is
    // judged: 404 there is the contract's answer, not a sign of a wrong path.
    let output = run(
        &["--base-url", &url, "get-pet/", "--seed", "3"],
        Some(key),
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert!(
        report["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|rule| rule["id"] == "get-pet/unknown/not-found" && rule["verdict"] == "passed"),
        "{report}"
    );
}

#[test]
fn side_files_that_cannot_be_written_are_warnings_and_the_reports_are_still_written() {
    let key = "side-file-key";
    let (_server, url) = serve_reference(key, &["category-id-truncated-32"]);
    let dir = temp_dir("side-files");
    // /proc holds no new directory: neither file can be created there.
    let output = run(
        &[
            "--base-url",
            &url,
            "--regressions",
            "/proc/no-such-dir/counterexamples.json",
            "--request-log",
            "/proc/no-such-dir/requests.jsonl",
            "--exact",
            "create-pet/valid/created",
            "--seed",
            "1",
        ],
        Some(key),
        &dir,
    );
    let said = stderr(&output);
    // The verdict's code: the fault fails the rule.
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("warning: --request-log /proc/no-such-dir/requests.jsonl"),
        "{said}"
    );
    assert!(
        said.contains("warning: counterexamples not saved") && said.contains("/proc/no-such-dir"),
        "{said}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["conformance"], "does-not-conform");
    assert_eq!(report["rules"][0]["verdict"], "failed");
    for name in ["junit.xml", "summary.md", "report.html"] {
        assert!(dir.join(name).exists(), "no {name}");
    }
}
