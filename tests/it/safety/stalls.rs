//! A target that stops answering, or a budget already spent, ends the run within its bound
//! and fails no rule: silence is no evidence against a target.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::common;

use common::process::{run_command, run_to_end};
use common::{failed_rules, read_json, rules, servers};

use super::{LIMIT, temp_dir};

#[test]
fn a_target_that_stops_answering_gets_no_failed_verdict() {
    for resets in [false, true] {
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&requests);
        let answered = AtomicBool::new(false);
        let url = servers::raw(move |request, _, stream| {
            // One listing answered (an empty page, which any listing may be), then nothing:
            // the preflight's reads go at once, and `[]` to its getPet would break the contract.
            counter.fetch_add(1, Ordering::SeqCst);
            if is_listing(request) && !answered.swap(true, Ordering::SeqCst) {
                return servers::respond_json(stream, "200 OK", &[], "[]");
            }
            if !resets {
                // Holds the connection and never answers.
                std::thread::sleep(Duration::from_secs(60));
            }
            false
        });
        let dir = temp_dir(&format!("stops-answering-{resets}"));
        let finished = run_to_end(
            &mut run_command(
                &["--base-url", &url, "--timeout", "1", "--gate", "all"],
                Some("silent-key-1234"),
                &dir,
            ),
            Duration::from_secs(30),
        );
        finished.assert_no_panic();
        let what = if resets { "resets" } else { "silent" };
        assert_eq!(finished.code, Some(3), "{what}: {}", finished.stderr());
        let report = read_json(&dir.join("report.json"));
        assert!(
            failed_rules(&report).is_empty(),
            "{what}: failed without a response: {:?}",
            failed_rules(&report)
        );
        // Stopped by the count of failures after the pauses, or by the bound on its silence
        // (a loaded machine counts late; the bound does not wait for the count).
        let stopped = report["target"]["stopped_answering"].as_str().unwrap_or("");
        assert!(
            stopped.contains("consecutive transport failures")
                || stopped.contains("while requests went unanswered"),
            "{what}: {}",
            report["target"]
        );
        let all = rules(&report).len();
        let inconclusive = rules(&report)
            .iter()
            .filter(|rule| rule["verdict"] == "inconclusive")
            .count();
        assert!(
            inconclusive * 2 > all,
            "{what}: only {inconclusive} of {all} rules inconclusive"
        );
        // It stopped sending: a few requests past the first failures, not one per case (a
        // default run sends about 1,400). The preflight's 4, then the first wave at the level
        // it starts at, and a few more, sent in places that failures freed before they were
        // counted (a batch's exchanges are counted when the batch ends); each GET of them up
        // to three times, as a request whose connection closed before an answer is sent again
        // once something was answered (the preflight's first request was).
        let sent = requests.load(Ordering::SeqCst);
        eprintln!("{what}: {sent} requests, {:?}", finished.elapsed);
        let bound = 4 + 3 * (petstore_conformance::execution::lanes::START + 16);
        assert!(
            sent <= bound,
            "{what}: {sent} requests reached a dead target (at most {bound})"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_spent_budget_fails_nothing() {
    // The preflight alone takes longer than the budget: the budget is spent before any rule's
    // answer. Undetermined (exit 3) with reports, not "could not be reached".
    let dir = temp_dir("spent-budget");
    let finished = run_to_end(
        &mut run_command(
            &[
                "--time-budget",
                "1",
                "--reference-latency",
                "1500ms",
                "--gate",
                "all",
            ],
            None,
            &dir,
        ),
        LIMIT,
    );
    finished.assert_no_panic();
    assert_eq!(finished.code, Some(3), "{}", finished.stderr());
    assert!(
        !finished.stderr().contains("could not be reached"),
        "{}",
        finished.stderr()
    );
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["conformance"], "undetermined");
    assert!(
        failed_rules(&report).is_empty(),
        "{:?}",
        failed_rules(&report)
    );
    assert_eq!(report["created_pets"]["count"], 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_stalling_target_ends_within_the_budget() {
    // The preflight is answered, then every request is held for a minute: with a 60 s timeout,
    // only the budget ends the run, and it does, reports written, within budget + 2 s. The
    // rules it cut say so ("time budget"), not that the target stopped answering.
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&requests);
    let answered = AtomicBool::new(false);
    let url = servers::raw(move |request, _, stream| {
        counter.fetch_add(1, Ordering::SeqCst);
        if is_listing(request) && !answered.swap(true, Ordering::SeqCst) {
            return servers::respond_json(stream, "200 OK", &[], "[]");
        }
        std::thread::sleep(Duration::from_secs(60));
        false
    });
    let dir = temp_dir("stall-budget");
    let budget = 3;
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--timeout",
                "60",
                "--time-budget",
                &budget.to_string(),
            ],
            Some("stall-key-1234"),
            &dir,
        ),
        Duration::from_secs(30),
    );
    finished.assert_no_panic();
    assert!(
        finished.elapsed <= Duration::from_secs(budget + 2),
        "a {budget} s budget took {:?}",
        finished.elapsed
    );
    assert_eq!(finished.code, Some(3), "{}", finished.stderr());
    let report = read_json(&dir.join("report.json"));
    assert!(
        failed_rules(&report).is_empty(),
        "{:?}",
        failed_rules(&report)
    );
    assert!(
        report["target"]["stopped_answering"].is_null(),
        "{}",
        report["target"]
    );
    let reasons: Vec<&str> = rules(&report)
        .iter()
        .filter(|rule| rule["verdict"] == "inconclusive")
        .filter_map(|rule| rule["reason"].as_str())
        .collect();
    assert!(
        !reasons.is_empty() && reasons.iter().all(|reason| reason.contains("time budget")),
        "{reasons:?}"
    );
    assert!(
        !finished.stderr().contains("stopped answering"),
        "{}",
        finished.stderr()
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A listPets request (any status's listing too): the one read an empty page answers as the
/// contract says.
fn is_listing(request: &servers::Message) -> bool {
    request.first_line().starts_with("GET ") && request.path().ends_with("/pets")
}
