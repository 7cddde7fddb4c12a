//! Replay and seeds: a counterexample is saved, replayed first and resent byte for byte, and
//! the same seed sends the same requests.

use crate::common;

use common::serve_reference;

use super::{run, stderr, temp_dir};

#[test]
fn replay_resends_the_minimal_counterexample() {
    let dir = temp_dir("replay");
    let output = run(
        &["--reference-fault", "long-name-500", "--seed", "3"],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let replay = common::bin()
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
    let replay = common::bin()
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
            "create-pet/poisoned/not-utf-8",
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
    let replay = common::bin()
        .args([
            "replay",
            dir.join("report.json").to_str().unwrap(),
            "create-pet/poisoned/not-utf-8",
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

/// The id the store gives a pet created now: how many pets it has stored, on a store that
/// numbers them one after another (the reference).
fn next_id(url: &str, key: &str) -> u64 {
    let output = std::process::Command::new("curl")
        .args(["-s", "-X", "POST", "-H", "Content-Type: application/json"])
        .args(["-H", &format!("Authorization: Bearer {key}")])
        .args(["-d", r#"{"name":"counter","categoryId":1}"#])
        .arg(format!("{url}/pets"))
        .output()
        .expect("curl runs");
    let pet: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a pet");
    pet["id"].as_u64().expect("an id")
}

/// Replay judges the rule again with the report's cases, and does not shrink its failure
/// again (the report holds the minimal case): it creates about the pets of its cases, where
/// shrinking a name one character at a time created a pet a step (188 for 32 cases).
#[test]
fn replay_creates_the_pets_of_its_cases_and_shrinks_nothing() {
    let key = "replay-pets-key-6161";
    let (_server, url) = serve_reference(key, &["create-returns-200"]);
    let dir = temp_dir("replay-pets");
    let args = [
        "--base-url",
        &url,
        "--cases",
        "8",
        "--exact",
        "create-pet/valid/created",
    ];
    let output = run(&args, Some(key), &dir);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let before = next_id(&url, key);
    let replay = common::bin()
        .args([
            "replay",
            dir.join("report.json").to_str().unwrap(),
            "create-pet/valid/created",
            "--base-url",
            &url,
        ])
        .env("PETSTORE_API_KEY", key)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(1), "{}", stderr(&replay));
    let created = next_id(&url, key) - before - 1;
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let shrunk = report["rules"][0]["failure"]["counterexample"]["shrink_steps"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        shrunk > 0,
        "the run shrank its failure: {}",
        report["rules"][0]
    );
    // The re-sent request, the cases and the boundary values, each confirmed once at most.
    assert!(created <= 40, "replay created {created} pets");
}

/// A property rule's cases go ahead of their judging, all at once: each case's request is sent
/// once (a case takes the exchange of the request equal to its own, and sends nothing more),
/// and the rule's chain is one round trip, however many cases it has.
#[test]
fn a_property_rules_cases_go_ahead_once_each_in_one_round_trip() {
    for rule in [
        "list-pets/parameters/answered",
        "create-pet/fields/type-confusion",
    ] {
        let dir = temp_dir(&format!("ahead-{}", rule.replace('/', "-")));
        let log = dir.join("requests.jsonl");
        let args = ["--request-log", log.to_str().unwrap(), "--exact", rule];
        let output = run(&args, None, &dir);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let requests = std::fs::read_to_string(&log).unwrap();
        let sent = requests
            .lines()
            .filter(|line| line.contains(&format!("\"rule\":\"{rule}\"")))
            .count();
        let report = common::read_json(&dir.join("report.json"));
        let judged = common::rules(&report)
            .iter()
            .find(|judged| judged["id"] == rule)
            .unwrap();
        let cases = judged["cases_run"].as_u64().unwrap();
        assert!(cases > 40, "{rule}: {cases} cases");
        // A case whose confusion leaves a valid NewPet sends nothing.
        assert!(
            sent as u64 <= cases && sent as u64 > cases / 2,
            "{rule}: {sent} requests for {cases} cases"
        );
        assert_eq!(judged["round_trips"], 1, "{rule}");
    }
}

/// A case's read back goes as soon as its create is answered, not once the batch's slowest
/// is: the walk sends the cases it reads back first, and behind a level that grows from a few
/// lanes (20 ms away), most of its read backs are answered before its last create.
#[test]
fn a_walks_read_backs_go_as_their_creates_are_answered() {
    let rule = "inputs/create-pet/required";
    let dir = temp_dir("read-backs-pipelined");
    let log = dir.join("requests.jsonl");
    let args = [
        "--request-log",
        log.to_str().unwrap(),
        "--reference-latency",
        "20ms",
        "--exact",
        rule,
    ];
    let output = run(&args, None, &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let requests = std::fs::read_to_string(&log).unwrap();
    let methods: Vec<&str> = requests
        .lines()
        .filter(|line| line.contains(&format!("\"rule\":\"{rule}\"")))
        .map(|line| {
            if line.contains("\"method\":\"POST\"") {
                "POST"
            } else {
                "GET"
            }
        })
        .collect();
    let last_create = methods
        .iter()
        .rposition(|method| *method == "POST")
        .unwrap();
    let read_backs = methods.iter().filter(|method| **method == "GET").count();
    let early = methods[..last_create]
        .iter()
        .filter(|method| **method == "GET")
        .count();
    assert!(read_backs > 10, "{read_backs} read backs");
    assert!(
        early * 2 > read_backs,
        "{early} of {read_backs} read backs answered before the last create"
    );
}
