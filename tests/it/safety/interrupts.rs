//! SIGINT and SIGTERM, during the run or its preflight, leave this run's report marked
//! interrupted (or none), never a half-written one.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;

use common::process::{Running, run_command};
use common::{failed_rules, read_json, rules, servers};
use petstore_conformance::report::REPORT_FILES;

use super::{partial_files, temp_dir};

/// A target that answers the preflight at once and every later request after 3 s.
fn slow_target() -> String {
    servers::raw(|_, n, stream| {
        if n > 1 {
            std::thread::sleep(Duration::from_secs(3));
        }
        servers::respond_json(stream, "200 OK", &[], "[]")
    })
}

#[cfg(unix)]
fn interrupt_a_run(signal: &str) {
    for slow in [true, false] {
        let what = format!(
            "SIG{signal} {}",
            if slow { "slow target" } else { "reference" }
        );
        let dir = temp_dir(&format!("signal-{signal}-{slow}"));
        let report_dir = dir.join("reports");
        let log = dir.join("requests.jsonl");
        let log_arg = log.to_str().unwrap();
        let url = if slow { slow_target() } else { String::new() };
        let args: Vec<&str> = if slow {
            vec![
                "--base-url",
                &url,
                "--timeout",
                "30",
                "--request-log",
                log_arg,
            ]
        } else {
            vec![
                "--time-budget",
                "60",
                "--cases",
                "1000000",
                "--request-log",
                log_arg,
            ]
        };
        let mut run = Running::start(&mut run_command(
            &args,
            Some("signal-key-1234"),
            &report_dir,
        ));
        std::thread::sleep(Duration::from_millis(1500));
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &run.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "{what}: kill failed");
        let signalled = Instant::now();
        let finished = loop {
            if let Some(finished) = run.try_finish() {
                break finished;
            }
            assert!(
                signalled.elapsed() < Duration::from_secs(15),
                "{what}: still running 15 s after the signal"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        finished.assert_no_panic();
        let code = if signal == "TERM" { 143 } else { 130 };
        assert_eq!(finished.code, Some(code), "{what}: {}", finished.stderr());
        let report = read_json(&report_dir.join("report.json"));
        assert_eq!(report["interrupted"], true, "{what}");
        let interrupted = rules(&report)
            .iter()
            .filter(|rule| {
                rule["verdict"] == "skipped"
                    && rule["reason"]
                        .as_str()
                        .is_some_and(|r| r.starts_with("interrupted"))
            })
            .count();
        assert!(interrupted > 0, "{what}: no rule skipped as interrupted");
        assert!(
            failed_rules(&report).is_empty(),
            "{what}: {:?}",
            failed_rules(&report)
        );
        for name in REPORT_FILES {
            assert!(report_dir.join(name).exists(), "{what}: no {name}");
        }
        assert_eq!(partial_files(&report_dir), Vec::<String>::new(), "{what}");
        let logged = std::fs::read_to_string(&log).unwrap();
        if !slow {
            assert!(!logged.is_empty(), "{what}: nothing logged");
        }
        assert!(
            logged.is_empty() || logged.ends_with('\n'),
            "{what}: a cut line"
        );
        for line in logged.lines() {
            assert!(
                serde_json::from_str::<Value>(line).is_ok(),
                "{what}: not a whole JSON line: {line}"
            );
        }
        if let Ok(created) = std::fs::read_to_string(report_dir.join("created-pets.jsonl")) {
            assert_eq!(
                created.lines().count() as u64,
                report["created_pets"]["count"].as_u64().unwrap(),
                "{what}"
            );
            for line in created.lines() {
                assert!(
                    serde_json::from_str::<Value>(line).is_ok(),
                    "{what}: {line}"
                );
            }
        }
        eprintln!(
            "{what}: exit {code} {:?} after the signal, {interrupted} rules interrupted, {} requests logged",
            signalled.elapsed(),
            logged.lines().count()
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(unix)]
#[test]
fn sigint_writes_an_interrupted_report() {
    interrupt_a_run("INT");
}

#[cfg(unix)]
#[test]
fn sigterm_writes_an_interrupted_report() {
    interrupt_a_run("TERM");
}

/// A signal while the preflight waits on a target that accepted the connection and never
/// answers: this run's report, marked interrupted, with this run's seed, replaces the
/// previous run's; never the previous report left looking current.
#[cfg(unix)]
fn interrupt_the_preflight(signal: &str, code: i32, twice: bool) {
    // Reads the request and answers nothing, until the client lets go.
    let silent = servers::listen().connections(|mut stream| {
        let _ = std::io::copy(&mut stream, &mut std::io::sink());
    });
    let dir = temp_dir(&format!("preflight-signal-{signal}-{twice}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("report.json"),
        r#"{"seed": 1, "conformance": "conforms", "previous": true}"#,
    )
    .unwrap();
    std::fs::write(dir.join("summary.md"), "# previous run: conforms\n").unwrap();
    let url = silent.base_url();
    let mut run = Running::start(&mut run_command(
        &["--base-url", &url, "--timeout", "60", "--seed", "99"],
        Some("preflight-key-1234"),
        &dir,
    ));
    let waiting = Instant::now();
    while silent.accepted() == 0 {
        assert!(
            waiting.elapsed() < Duration::from_secs(20),
            "the preflight never connected"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..if twice { 2 } else { 1 } {
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &run.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "kill failed");
    }
    let signalled = Instant::now();
    let finished = loop {
        if let Some(finished) = run.try_finish() {
            break finished;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(10),
            "SIG{signal}: still running 10 s after the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    finished.assert_no_panic();
    assert_eq!(
        finished.code,
        Some(code),
        "SIG{signal}: {}",
        finished.stderr()
    );
    assert!(
        !finished.stderr().contains("could not be reached"),
        "SIG{signal}: {}",
        finished.stderr()
    );
    if twice && !dir.join("report.json").exists() {
        // Quit before this run's report was written: the previous one is withdrawn too.
        eprintln!("SIG{signal} twice: quit before writing; no report left");
        for name in REPORT_FILES {
            assert!(!dir.join(name).exists(), "SIG{signal} twice: {name} left");
        }
        return;
    }
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["interrupted"], true, "SIG{signal}");
    assert_eq!(
        report["seed"], 99,
        "SIG{signal}: the previous run's report is left"
    );
    assert!(failed_rules(&report).is_empty(), "SIG{signal}");
    assert!(
        rules(&report)
            .iter()
            .all(|rule| rule["verdict"] == "skipped"),
        "SIG{signal}: a rule ran after the signal"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("**Interrupted**"), "{summary}");
    assert_eq!(partial_files(&dir), Vec::<String>::new(), "SIG{signal}");
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn sigterm_during_the_preflight_writes_this_runs_interrupted_report() {
    interrupt_the_preflight("TERM", 143, false);
}

#[cfg(unix)]
#[test]
fn sigint_during_the_preflight_writes_this_runs_interrupted_report() {
    interrupt_the_preflight("INT", 130, false);
}

/// The second signal quits at once: this run's report, or none; never the previous one.
#[cfg(unix)]
#[test]
fn two_signals_during_the_preflight_leave_this_runs_report_or_none() {
    interrupt_the_preflight("TERM", 143, true);
}
