//! Only evidence is judged: an answer the transport cut mid-body is never judged (an idempotent
//! request is sent once more; otherwise its case is inconclusive and the report names the rule),
//! and a request outside the contract's operations is judged only for robustness.
//!
//! The cut comes from a small proxy in front of the conforming reference (`serve-reference`):
//! it passes every exchange through whole, but one, whose answer it ends after half its body.
//! The same proxy, altering one answer instead, shows a failure that does not happen again: a
//! failure all the same, marked intermittent, since the answer was complete.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::common;

use common::servers;

const KEY: &str = "evidence-test-key-77c1";

/// Which request's answer to spoil: from its head and body.
type Choose = fn(&str, &[u8]) -> bool;

/// What the proxy does to the one answer it spoils.
#[derive(Clone, Copy)]
enum Spoil {
    /// Half the body, then the connection is reset.
    Cut,
    /// The first pet of a listing gets status "sold": a wrong answer, once.
    FirstPetSold,
}

/// A proxy to `upstream` that spoils the answer to the first request `choose` picks; every
/// other exchange passes whole. Whether it has spoiled one yet.
fn spoiling_proxy(upstream: String, choose: Choose, spoil: Spoil) -> (String, Arc<AtomicBool>) {
    let upstream_addr = servers::authority(&upstream);
    let spoiled = Arc::new(AtomicBool::new(false));
    let done = Arc::clone(&spoiled);
    let url = servers::raw(move |request, _, client| {
        let Some(answer) = servers::forward(&upstream_addr, request) else {
            return false;
        };
        let spoil_this = answer.body.len() >= 3
            && choose(&request.head, &request.body)
            && !done.swap(true, Ordering::SeqCst);
        match spoil {
            Spoil::Cut if spoil_this => {
                let _ = client.write_all(answer.head.as_bytes());
                let _ = client.write_all(&answer.body[..answer.body.len() / 2]);
                let _ = client.flush();
                client.reset_on_close();
                false
            }
            Spoil::FirstPetSold if spoil_this => {
                let mut pets: Value = serde_json::from_slice(&answer.body).unwrap();
                pets[0]["status"] = Value::from("sold");
                let altered = serde_json::to_vec(&pets).unwrap();
                let head: String = answer
                    .head
                    .lines()
                    .filter(|line| {
                        !line.to_ascii_lowercase().starts_with("content-length:")
                            && !line.is_empty()
                    })
                    .map(|line| format!("{line}\r\n"))
                    .collect();
                let head = format!("{head}content-length: {}\r\n\r\n", altered.len());
                client.write_all(head.as_bytes()).is_ok() && client.write_all(&altered).is_ok()
            }
            _ => {
                client.write_all(answer.head.as_bytes()).is_ok()
                    && client.write_all(&answer.body).is_ok()
            }
        }
    });
    (url, spoiled)
}

/// Runs the suite through a proxy that cuts one answer; returns the exit code and report.
fn run_with_one_cut(name: &str, choose: Choose) -> (Option<i32>, Value) {
    let (code, report, _) = run_with_one_spoiled(name, choose, Spoil::Cut);
    (code, report)
}

/// The exit code, report.json and summary.md of a run with one answer spoiled.
fn run_with_one_spoiled(name: &str, choose: Choose, spoil: Spoil) -> (Option<i32>, Value, String) {
    let (_server, upstream) = common::serve_reference(KEY, &[]);
    let (base_url, cut) = spoiling_proxy(upstream, choose, spoil);
    let dir = common::temp_dir("evidence", name);
    let output = common::bin()
        .args([
            "run",
            "--base-url",
            &base_url,
            "--no-regressions",
            "--seed",
            "5",
        ])
        .arg("--report-dir")
        .arg(&dir)
        .env("PETSTORE_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(cut.load(Ordering::SeqCst), "{name}: no answer was spoiled");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    common::assert_valid_report(&report);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    (output.status.code(), report, summary)
}

fn rules(report: &Value) -> &Vec<Value> {
    report["rules"].as_array().unwrap()
}

/// The rules whose report says the transport cut one of their answers.
fn cut_rules(report: &Value) -> Vec<&Value> {
    rules(report)
        .iter()
        .filter(|rule| rule["transport_cuts"].as_u64().unwrap_or(0) > 0)
        .collect()
}

#[test]
fn a_cut_answer_to_a_read_is_sent_again_and_judged_whole() {
    // A listing by status: a GET, so it may be repeated.
    let (code, report) = run_with_one_cut("cut-get", |head, _| {
        head.starts_with("GET /v1/pets?") && head.lines().next().unwrap().contains("status=sold")
    });
    judged_whole_after_one_cut(code, &report);
}

/// The run conforms, and the one rule whose answer the transport cut was judged on the
/// answer sent again: which rule it was.
fn judged_whole_after_one_cut(code: Option<i32>, report: &Value) -> &Value {
    let not_passed = common::not_passed(report);
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    assert_eq!(report["conformance"], "conforms");
    assert_eq!(code, Some(0));
    let cut = cut_rules(report);
    assert_eq!(cut.len(), 1, "one rule had its answer cut: {cut:#?}");
    assert_eq!(cut[0]["transport_cuts"], 1);
    cut[0]
}

#[test]
fn a_cut_answer_to_a_create_the_contract_refuses_is_sent_again_and_judged_whole() {
    // create-pet/invalid/missing-category-id's body lacks a required member: the contract
    // requires it refused, so a store that conforms stores it neither time, and the answer
    // cut is no reason to leave the rule undecided.
    let (code, report) = run_with_one_cut("cut-refused-post", |head, body| {
        head.starts_with("POST /v1/pets ")
            && String::from_utf8_lossy(body).contains("-missing-category-id\"")
    });
    let rule = judged_whole_after_one_cut(code, &report);
    assert_eq!(rule["id"], "create-pet/invalid/missing-category-id");
    assert_eq!(rule["verdict"], "passed");
}

#[test]
fn a_cut_answer_to_a_create_is_not_judged_and_the_report_names_the_rule() {
    // A createPet of create-pet/valid/unique-ids: it may not be repeated.
    let (code, report, summary) = run_with_one_spoiled(
        "cut-post",
        |head, body| {
            head.starts_with("POST /v1/pets ")
                && String::from_utf8_lossy(body).contains("-unique-0\"")
        },
        Spoil::Cut,
    );
    let failed: Vec<String> = rules(&report)
        .iter()
        .filter(|rule| rule["verdict"] == "failed")
        .map(|rule| format!("{}: {}", rule["id"], rule["failure"]))
        .collect();
    assert!(failed.is_empty(), "a cut answer failed a rule: {failed:#?}");
    assert_ne!(code, Some(1), "a cut answer made the run fail");
    let cut = cut_rules(&report);
    assert_eq!(cut.len(), 1, "{cut:#?}");
    let rule = cut[0];
    assert!(
        summary.contains("Answers the transport cut mid-body")
            && summary.contains("`create-pet/valid/unique-ids` (1)"),
        "{summary}"
    );
    assert_eq!(rule["id"], "create-pet/valid/unique-ids");
    assert_eq!(rule["verdict"], "inconclusive");
    let reason = rule["reason"].as_str().unwrap();
    assert!(reason.contains("cut by the transport"), "{reason}");
    assert!(reason.contains("POST"), "{reason}");
    assert!(reason.contains("reset"), "{reason}");
    assert_eq!(report["conformance"], "undetermined");
}

#[test]
fn a_redirect_outside_the_operations_is_no_failure() {
    // Starlette's default: GET /pets/ (the empty petId) gets a body-less 307 to /pets.
    let dir = common::temp_dir("evidence", "redirect");
    let output = common::bin()
        .args([
            "run",
            "--reference-variant",
            "trailing-slash-redirect",
            "--no-regressions",
            "--gate",
            "all",
        ])
        .arg("--report-dir")
        .arg(&dir)
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let not_passed = common::not_passed(&report);
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn a_failure_that_does_not_show_again_stays_a_failure_marked_intermittent() {
    // A full page of pending pets, as list-pets/status/filter asks for each status: once, its
    // first pet is said to be sold. Sent again, the page is right; the spoiled answer was
    // complete and contradicts the contract all the same, so it is evidence.
    let (code, report, summary) = run_with_one_spoiled(
        "intermittent",
        |head, _| {
            let line = head.lines().next().unwrap();
            line.starts_with("GET /v1/pets?")
                && line.contains("status=pending")
                && line.contains("limit=100")
        },
        Spoil::FirstPetSold,
    );
    let failed: Vec<&Value> = rules(&report)
        .iter()
        .filter(|rule| rule["verdict"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    let rule = failed[0];
    assert_eq!(rule["id"], "list-pets/status/filter");
    let note = rule["failure"]["intermittent"].as_str().unwrap_or_default();
    assert!(note.contains("times it was sent again"), "{rule:#?}");
    assert!(
        rule["failure"]["observed"]
            .as_str()
            .is_some_and(|observed| observed.contains("\"status\":\"sold\"")),
        "the failure shows the exchange that contradicted the contract: {rule:#?}"
    );
    assert!(summary.contains("intermittent"), "{summary}");
    let flaky = rules(&report)
        .iter()
        .filter(|rule| rule["verdict"] == "inconclusive")
        .count();
    assert_eq!(flaky, 0, "{:#?}", rules(&report));
    assert_eq!(report["conformance"], "does-not-conform");
    assert_eq!(code, Some(1));
}
