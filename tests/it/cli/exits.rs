//! The binary as a user drives it: exit codes, report files, bad input, and the API key never
//! appearing in anything written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;

use common::{BIN, serve_reference};

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("cli", name)
}

fn run(args: &[&str], key: Option<&str>, report_dir: &Path) -> Output {
    let mut command = Command::new(BIN);
    command
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(report_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PETSTORE_API_KEY")
        .env_remove("PETSTORE_BASE_URL");
    // Tests never write counterexamples into the repository's cases/regressions/.
    if !args.contains(&"--regressions") && !args.contains(&"--no-regressions") {
        command.arg("--no-regressions");
    }
    if let Some(key) = key {
        command.env("PETSTORE_API_KEY", key);
    }
    let output = command.output().expect("binary runs");
    assert_report_round_trips(&report_dir.join("report.json"));
    output
}

/// A report written by a run reads back into the report model and writes out the same.
fn assert_report_round_trips(path: &Path) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return; // the run wrote none (a refusal)
    };
    let written: serde_json::Value = serde_json::from_str(&text).unwrap();
    common::assert_valid_report(&written);
    let report: petstore_conformance::report::Report =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        written,
        "{}",
        path.display()
    );
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

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
    // JUnit: a recommended failure is a passing testcase carrying a warning, never <skipped>
    // (which dashboards hide as "not run") and never red.
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
        !recommended.contains("<skipped") && !recommended.contains("<failure"),
        "{recommended}"
    );
    assert!(
        recommended.contains("<system-out>") && recommended.contains("value=\"recommended\""),
        "{recommended}"
    );
    // compare follows the gate the run used: a recommended rule newly failing is listed, and
    // not a regression under --gate required.
    let output = Command::new(BIN)
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
    let cases: [(&[&str], Option<&str>, &str); 7] = [
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
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = temp_dir("unreachable");
    let url = format!("http://127.0.0.1:{port}/v1");
    let output = run(&["--base-url", &url], Some("cli-test-key-long"), &dir);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("could not be reached"));
    assert!(!dir.join("report.json").exists());
}

#[test]
fn list_shows_every_rule_with_its_level() {
    let dir = temp_dir("list");
    let output = run(&["--list"], None, &dir);
    assert_eq!(output.status.code(), Some(0));
    let listing = String::from_utf8_lossy(&output.stdout);
    let line = |id: &str| {
        listing
            .lines()
            .find(|line| line.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} not in {listing}"))
            .to_string()
    };
    assert!(
        line("list-pets/limit/above-maximum").contains(" recommended "),
        "{listing}"
    );
    assert!(
        line("auth/missing-key/list-pets").contains(" required "),
        "{listing}"
    );
    assert!(!listing.contains(": test"), "{listing}");
    // --format json: one array, filtered as a run is.
    let output = run(
        &["--list", "--format", "json", "list-pets/limit"],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let listed = listed.as_array().unwrap();
    assert!(!listed.is_empty());
    for rule in listed {
        assert!(
            rule["id"].as_str().unwrap().contains("list-pets/limit"),
            "{rule}"
        );
        assert!(
            rule["level"].is_string() && rule["operation"].is_string(),
            "{rule}"
        );
    }
    // libtest's flags that would do nothing here are not offered.
    for flag in ["--bench", "--ignored", "--nocapture", "-Zunstable-options"] {
        let output = run(&[flag], None, &dir);
        assert_eq!(output.status.code(), Some(2), "{flag}: {}", stderr(&output));
    }
}

#[test]
fn listings_end_quietly_on_a_closed_pipe_and_version_names_what_judges() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(BIN)
        .arg("rules")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut errors = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut errors)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!errors.contains("panicked"), "{errors}");
    assert!(errors.is_empty(), "{errors} ({status:?})");
    let output = Command::new(BIN).arg("--version").output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains(env!("CARGO_PKG_VERSION")), "{said}");
    assert!(said.contains("contract 1.0.0"), "{said}");
    assert!(
        said.contains("catalogue ") && said.contains(" rules, sha256 "),
        "{said}"
    );
    // Every PETSTORE_* variable the command line reads is in a command's help.
    let help = |command: &str| {
        let output = Command::new(BIN)
            .args([command, "--help"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let helps: String = [
        "run",
        "serve-reference",
        "replay",
        "verify-report",
        "compare",
        "merge",
        "bench",
        "rules",
    ]
    .into_iter()
    .map(help)
    .collect();
    for file in [
        "src/cli/mod.rs",
        "src/cli/args.rs",
        "src/cli/options.rs",
        "src/cli/profiles.rs",
    ] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        for (at, _) in text.match_indices("env = \"PETSTORE_") {
            let name: String = text[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect();
            assert!(
                helps.contains(&format!("[env: {name}")),
                "{name} is not in any help"
            );
        }
    }
    // Durations as people write them, a bare number still seconds.
    let dir = temp_dir("durations");
    for budget in ["1s", "1"] {
        let output = run(
            &["--time-budget", budget, "--cases", "1", "list-pets/limit"],
            None,
            &dir,
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{budget}: {}",
            stderr(&output)
        );
    }
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

#[test]
fn replay_resends_the_minimal_counterexample() {
    let dir = temp_dir("replay");
    let output = run(
        &["--reference-fault", "long-name-500", "--seed", "3"],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let replay = Command::new(BIN)
        .args([
            "replay",
            dir.join("report.json").to_str().unwrap(),
            "create-pet/valid/created",
        ])
        .output()
        .unwrap();
    // Its verdict is its exit code: failed again, 1.
    assert_eq!(replay.status.code(), Some(1), "{}", stderr(&replay));
    let shown = String::from_utf8_lossy(&replay.stdout);
    assert!(
        shown.contains("> POST ") && shown.contains("< 500"),
        "{shown}"
    );
    assert!(shown.contains(&format!("{}\"", "a".repeat(100))), "{shown}");
    // Judged again against its rule, on the report's reference with its fault.
    assert!(
        shown.contains(
            "verdict: create-pet/valid/created failed (required, judged again with seed 3)"
        ),
        "{shown}"
    );
    // On a target that was fixed, the same replay passes: exit 0.
    let key = "replay-fixed-key-5150";
    let (_server, url) = serve_reference(key, &[]);
    let replay = Command::new(BIN)
        .args([
            "replay",
            dir.join("report.json").to_str().unwrap(),
            "create-pet/valid/created",
            "--base-url",
            &url,
            "--no-regressions",
        ])
        .env("PETSTORE_API_KEY", key)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&replay.stdout);
    assert_eq!(replay.status.code(), Some(0), "{shown}{}", stderr(&replay));
    assert!(
        shown.contains("verdict: create-pet/valid/created passed"),
        "{shown}"
    );
}

/// A body that is not UTF-8 is recorded with its real bytes (`\xFF`, not U+FFFD), its curl
/// line writes them with printf, and replay sends them again.
#[test]
fn bytes_that_are_not_utf_8_are_recorded_and_replayed_as_sent() {
    let dir = temp_dir("replay-bytes");
    let output = run(
        &[
            "inputs/create-pet/required",
            "--exact",
            "--reference-fault",
            "invalid-utf8-replaced",
        ],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let failure = &report["rules"][0]["failure"];
    assert_eq!(failure["request"]["body_escaped"], true, "{failure}");
    let body = failure["request"]["body"].as_str().unwrap();
    assert!(
        body.contains("\\xFF") && !body.contains('\u{fffd}'),
        "{body}"
    );
    let curl = failure["curl"].as_str().unwrap();
    assert!(
        curl.starts_with("printf '") && curl.ends_with("--data-binary @-"),
        "{curl}"
    );
    let replay = Command::new(BIN)
        .args([
            "replay",
            dir.join("report.json").to_str().unwrap(),
            "inputs/create-pet/required",
        ])
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(1), "{}", stderr(&replay));
    let shown = String::from_utf8_lossy(&replay.stdout);
    // Sent as the bytes, recorded escaped again (the text `\xFF` would show as `\\xFF`).
    assert!(
        shown.contains("\\xFF") && !shown.contains("\\\\xFF"),
        "{shown}"
    );
}

#[test]
fn counterexamples_are_saved_and_replayed_first() {
    let key = "regression-key";
    let (_server, url) = serve_reference(key, &["category-id-truncated-32"]);
    let dir = temp_dir("regressions");
    let file = dir.join("counterexamples.json");
    let file_arg = file.to_str().unwrap();
    let args = [
        "--base-url",
        &url,
        "--regressions",
        file_arg,
        "--exact",
        "create-pet/valid/created",
    ];
    let first = run(&[&args[..], &["--seed", "1"]].concat(), Some(key), &dir);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let entry = &saved["regressions"][0];
    assert_eq!(entry["rule"], "create-pet/valid/created");
    let category = entry["value"]["categoryId"].as_i64().unwrap();
    assert!(category == 1 << 31 || category == -(1 << 31) - 1, "{entry}");
    // With no generated cases at all, the saved counterexample alone fails the rule.
    let second = run(
        &[&args[..], &["--seed", "2", "--cases", "1"]].concat(),
        Some(key),
        &dir,
    );
    assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let phase = &report["rules"][0]["failure"]["counterexample"]["phase"];
    assert!(phase == "regression" || phase == "generated", "{phase}");
    let saved_again: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(!saved_again["regressions"].as_array().unwrap().is_empty());
}

#[test]
fn a_time_budget_ends_generation() {
    let dir = temp_dir("budget");
    let started = std::time::Instant::now();
    let output = run(
        &["--time-budget", "2", "list-pets/limit/within-bounds"],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let cases = report["rules"][0]["cases_run"].as_u64().unwrap();
    assert!(cases > 32, "only {cases} cases in the budget");
    assert!(started.elapsed().as_secs() < 30);
    assert!(
        !stderr(&output).contains("bounds the run"),
        "{}",
        stderr(&output)
    );
    // Beside a case count (a profile's, easily forgotten), the budget no longer decides: the
    // run says which one bounds it, and where each came from.
    let profile = dir.join("profile.toml");
    std::fs::write(&profile, "[profile.default]\ncases = 3\n").unwrap();
    let output = run(
        &[
            "--config",
            profile.to_str().unwrap(),
            "--time-budget",
            "2",
            "list-pets/limit/within-bounds",
        ],
        None,
        &dir,
    );
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("cases = 3 (")
            && said.contains("profile.toml [profile.default]) bounds the run"),
        "{said}"
    );
    assert!(
        said.contains("--time-budget 2s (command line) only cuts it short"),
        "{said}"
    );
}

/// The request log of a run with seed 77 and these options.
fn request_log_of(name: &str, options: &[&str]) -> String {
    let dir = temp_dir(name);
    let log = dir.join("requests.jsonl");
    let mut args = vec!["--seed", "77", "--request-log", log.to_str().unwrap()];
    args.extend_from_slice(options);
    let output = run(&args, None, &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::read_to_string(log).unwrap()
}

#[test]
fn the_same_seed_sends_the_same_requests() {
    // One rule and one request at a time: the same requests in the same order.
    let sequential = ["--test-threads", "1", "--concurrency", "1"];
    let logs = [
        request_log_of("same-seed-0", &sequential),
        request_log_of("same-seed-1", &sequential),
    ];
    assert!(
        logs[0].lines().count() > 300,
        "{} requests",
        logs[0].lines().count()
    );
    assert_eq!(logs[0], logs[1]);
    // Concurrently (the default): the same generated cases, in another order. (Which rule
    // builds a shared fixture, and the ids the store gives, depend on timing.)
    let generated = |log: &str| {
        let mut lines: Vec<String> = log
            .lines()
            .filter(|line| !line.contains("fixture-"))
            .filter(|line| {
                [
                    "create-pet/valid/created",
                    "create-pet/fields/type-confusion\"",
                    "create-pet/invalid/generated",
                    "list-pets/parameters/answered",
                    "get-pet/parameters/answered",
                ]
                .iter()
                .any(|rule| line.contains(&format!("\"rule\":\"{rule}")))
            })
            .map(String::from)
            .collect();
        lines.sort_unstable();
        lines
    };
    let concurrent = generated(&request_log_of("same-seed-2", &[]));
    assert!(
        concurrent.len() > 100,
        "{} generated requests",
        concurrent.len()
    );
    assert_eq!(concurrent, generated(&logs[0]));
}

#[test]
fn the_key_can_come_from_a_file() {
    let key = "file-key-31337";
    let (_server, url) = serve_reference(key, &[]);
    let dir = temp_dir("key-file");
    let file = dir.join("key.txt");
    std::fs::write(&file, format!("{key}\n")).unwrap();
    let output = run(
        &[
            "--base-url",
            &url,
            "--api-key-file",
            file.to_str().unwrap(),
            "--cases",
            "4",
            "--no-regressions",
        ],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = run(
        &["--base-url", &url, "--api-key-file", "/nonexistent/key"],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/nonexistent/key"));
}

#[test]
fn read_only_creates_nothing() {
    let key = "read-only-key";
    let (_server, url) = serve_reference(key, &[]);
    let dir = temp_dir("read-only");
    let output = run(
        &["--base-url", &url, "--read-only", "--no-regressions"],
        Some(key),
        &dir,
    );
    // The store is empty and the run may create no pet: the getPet rules that need one have
    // no evidence, so the answer is undetermined (3), never green. The rules skipped because
    // they create pets were left out by the user and do not count; the summary says so.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["created_pets"]["count"], 0);
    assert_eq!(report["conformance"], "undetermined");
    for rule in report["rules"].as_array().unwrap() {
        if rule["id"].as_str().unwrap().starts_with("create-pet/") {
            assert_eq!(rule["verdict"], "skipped", "{rule}");
        }
        if rule["verdict"] == "inconclusive" {
            let reason = rule["reason"].as_str().unwrap();
            assert!(reason.contains("the store lists no pet"), "{rule}");
        }
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("skipped (--read-only)") && summary.contains("(exit code 3)"),
        "{summary}"
    );
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
                Command::new(BIN).args(&args).output().unwrap()
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
fn a_throttling_target_is_waited_out_or_inconclusive_never_failed() {
    // Waits not allowed: every request the gateway throttles gives up, and its rule is
    // inconclusive; no rule fails and the 429s are not held against the oracles.
    let dir = temp_dir("throttled-give-up");
    let output = run(
        &[
            "--reference-variant",
            "throttled",
            "--max-throttle-wait",
            "0",
            "--seed",
            "5",
        ],
        None,
        &dir,
    );
    // Required rules left inconclusive: undetermined, never green.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert!(report["throttling"]["gave_up"].as_u64().unwrap() > 0);
    let rules = report["rules"].as_array().unwrap();
    assert!(rules.iter().all(|rule| rule["verdict"] != "failed"));
    assert!(rules.iter().any(|rule| {
        rule["verdict"] == "inconclusive"
            && rule["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("target throttled"))
    }));
    assert_eq!(report["conformance"], "undetermined");
    // Under the gateway's rate, nothing is throttled and the target conforms.
    let dir = temp_dir("throttled-rate");
    let output = run(
        &[
            "--reference-variant",
            "throttled",
            "--rate",
            "250",
            "--seed",
            "5",
        ],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["conformance"], "conforms");
}

#[test]
fn a_throttling_store_with_ten_categories_conforms_through_its_profile_and_says_why_without() {
    // A staging store behind a 40 req/s gateway whose categoryId must name one of ten
    // categories: its profile sets the rate and the categories, and the run conforms.
    let dir = temp_dir("staging-profile");
    let config = dir.join("petstore-conformance.toml");
    std::fs::write(
        &config,
        "[profile.staging]\nrate = 38.0\ncategory_ids = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\ncases = 1\n",
    )
    .unwrap();
    let variants = ["--reference-variant", "slow-gateway,known-categories"];
    let reports = dir.join("with-profile");
    let mut args = variants.to_vec();
    args.extend(["--config", config.to_str().unwrap(), "--profile", "staging"]);
    args.extend(["--seed", "5"]);
    let output = run(&args, None, &reports);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(reports.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["conformance"], "conforms", "{}", stderr(&output));
    // Without it, the report says why. Throttled past the wait allowed, rules are inconclusive
    // and none fails on a 429; whatever fails names the unknown category.
    let read = |dir: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
    };
    let observed = |rule: &serde_json::Value| {
        rule["failure"]["observed"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let reports = dir.join("without-profile");
    let mut args = variants.to_vec();
    args.extend(["--max-throttle-wait", "0", "--seed", "5", "--cases", "1"]);
    let output = run(&args, None, &reports);
    assert!(
        matches!(output.status.code(), Some(1 | 3)),
        "{}",
        stderr(&output)
    );
    let report = read(&reports);
    let rules = report["rules"].as_array().unwrap();
    assert!(
        rules.iter().any(|rule| rule["verdict"] == "inconclusive"
            && rule["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("target throttled"))),
        "no rule inconclusive for throttling"
    );
    for rule in rules.iter().filter(|rule| rule["verdict"] == "failed") {
        assert!(
            observed(rule).contains("unknown category"),
            "{} failed for another reason than the category: {}",
            rule["id"],
            observed(rule)
        );
    }
    // Under the gateway's rate but without the categories: the valid pets fail, naming it.
    let reports = dir.join("without-categories");
    let mut args = variants.to_vec();
    args.extend(["--rate", "38", "--seed", "5", "--cases", "1"]);
    args.push("create-pet/valid/created");
    let output = run(&args, None, &reports);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = read(&reports);
    let created = &report["rules"][0];
    assert_eq!(created["verdict"], "failed", "{created}");
    assert!(observed(created).contains("unknown category"), "{created}");
}

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
        Command::new(BIN)
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
    let output = Command::new(BIN)
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
    let output = Command::new(BIN)
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
        Command::new(BIN)
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
        let output = Command::new(BIN)
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
    let output = Command::new(BIN)
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
    let compared = Command::new(BIN)
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
    let output = Command::new(BIN)
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

#[test]
fn a_profile_sets_options_that_flags_override_and_bad_files_name_the_line() {
    let dir = temp_dir("profiles");
    let file = dir.join("petstore-conformance.toml");
    std::fs::write(
        &file,
        r#"
[profile.default]
seed = 9

[profile.nightly]
seed = 11
cases = 2
gate = "all"
known_failures = [{ rule = "auth/missing-key/list-pets", reason = "PET-1" }]
"#,
    )
    .unwrap();
    let config = file.to_str().unwrap();
    let print = |extra: &[&str]| {
        let output = Command::new(BIN)
            .args(["run", "--config", config, "--print-config"])
            .args(extra)
            .env_remove("PETSTORE_SEED")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let line = |printed: &str, name: &str| {
        printed
            .lines()
            .find(|l| l.starts_with(&format!("{name} = ")))
            .unwrap_or_else(|| panic!("{name} not in {printed}"))
            .to_string()
    };
    let default = print(&[]);
    assert!(
        line(&default, "seed").contains("= 9 ")
            && line(&default, "seed").contains("[profile.default]"),
        "{default}"
    );
    // TOML-like lines, not Rust's debug values.
    assert!(
        !default.contains("Some(") && !default.contains("None"),
        "{default}"
    );
    let nightly = print(&["--profile", "nightly"]);
    assert!(line(&nightly, "cases").contains("= 2 "), "{nightly}");
    assert!(line(&nightly, "gate").contains("= \"all\""), "{nightly}");
    assert!(
        line(&nightly, "known_failures").contains("1 entries"),
        "{nightly}"
    );
    // A flag wins over the file, and says so.
    let flagged = print(&["--profile", "nightly", "--seed", "3"]);
    assert!(
        line(&flagged, "seed").contains("= 3 ") && line(&flagged, "seed").contains("command line")
    );
    // The profile's values are used by the run itself.
    let reports = dir.join("reports");
    let output = run(
        &["--config", config, "--profile", "nightly"],
        None,
        &reports,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(reports.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["seed"], 11);
    assert_eq!(report["gate"], "all");
    // Errors name the file and the line or the key; the key itself is refused by name.
    for (text, needles) in [
        (
            "[profile.default]\nsed = 1\n",
            vec!["line 2", "unknown field `sed`"],
        ),
        (
            "[profile.default]\nseed = \"x\"\n",
            vec!["line 2", "expected u64"],
        ),
        (
            "[profile.default]\napi_key = \"x\"\n",
            vec!["profile.default.api_key", "never allowed"],
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let output = run(&["--config", config], None, &reports);
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{said}");
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains("petstore-conformance.toml"), "{said}");
        for needle in needles {
            assert!(said.contains(needle), "{needle:?} not in {said}");
        }
    }
    std::fs::write(&file, "[profile.default]\nseed = 1\n").unwrap();
    let output = run(&["--config", config, "--profile", "nope"], None, &reports);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no profile \"nope\""));
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
    let output = Command::new(BIN).args(["run", "--help"]).output().unwrap();
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
