//! A hostile or broken target: every misbehaviour ends in a verdict (exit 1, or 3 when nothing
//! answers), within the time budget, with no crash and no key sent anywhere but the target. A
//! target whose every answer the transport cuts mid-body gives no evidence at all: the run is
//! undetermined, never failed.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::common;

use common::servers::{self, Stream};
const KEY: &str = "hostile-test-key-5e1f";

#[derive(Clone, Copy, Debug)]
enum Behaviour {
    Slow,
    ResetMidBody,
    TruncatedBody,
    HugeBody,
    InvalidUtf8,
    NotJson,
    RedirectElsewhere,
    RedirectLoop,
    ServerError,
    Http10Close,
    /// Declares more body than it sends and keeps the connection open: every request waits
    /// for the timeout. Only the time budget bounds the run.
    Stalling,
}

fn respond(stream: &mut Stream, behaviour: Behaviour, elsewhere: u16) -> bool {
    let port = stream.tcp().local_addr().unwrap().port();
    let json = "Content-Type: application/json\r\n";
    let result = match behaviour {
        Behaviour::Slow => {
            std::thread::sleep(Duration::from_secs(4));
            stream.write_all(format!("HTTP/1.1 200 OK\r\n{json}Content-Length: 2\r\n\r\n[]").as_bytes())
        }
        Behaviour::ResetMidBody => unreachable!("handled before the request is read"),
        Behaviour::TruncatedBody => {
            let _ = stream.write_all(format!("HTTP/1.1 200 OK\r\n{json}Content-Length: 1000\r\n\r\n[{{\"id\":1").as_bytes());
            servers::close(stream);
            return false;
        }
        Behaviour::HugeBody => {
            let size = 40 << 20;
            let mut result = stream.write_all(format!("HTTP/1.1 200 OK\r\n{json}Content-Length: {size}\r\n\r\n[").as_bytes());
            let chunk = vec![b' '; 64 << 10];
            let mut sent = 1;
            while result.is_ok() && sent < size {
                result = stream.write_all(&chunk);
                sent += chunk.len();
            }
            return false;
        }
        Behaviour::InvalidUtf8 => stream
            .write_all(format!("HTTP/1.1 200 OK\r\n{json}Content-Length: 4\r\n\r\n").as_bytes())
            .and_then(|_| stream.write_all(&[0xff, 0xfe, 0x80, 0x22])),
        Behaviour::NotJson => stream.write_all(format!("HTTP/1.1 200 OK\r\n{json}Content-Length: 5\r\n\r\nhello").as_bytes()),
        Behaviour::RedirectElsewhere => stream.write_all(
            format!("HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.2:{elsewhere}/v1/pets\r\n{json}Content-Length: 2\r\n\r\n{{}}").as_bytes(),
        ),
        Behaviour::RedirectLoop => stream.write_all(
            format!("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{port}/v1/pets\r\n{json}Content-Length: 2\r\n\r\n{{}}").as_bytes(),
        ),
        Behaviour::ServerError => {
            let body = r#"{"code":"boom","message":"broken","status":500}"#;
            stream.write_all(
                format!("HTTP/1.1 500 Internal Server Error\r\n{json}Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes(),
            )
        }
        Behaviour::Stalling => stream.write_all(
            format!("HTTP/1.1 200 OK\r\n{json}Content-Length: 100\r\n\r\n[").as_bytes(),
        ),
        Behaviour::Http10Close => {
            let _ = stream.write_all(format!("HTTP/1.0 200 OK\r\n{json}\r\n[]").as_bytes());
            servers::close(stream);
            return false;
        }
    };
    result.is_ok()
}

fn serve(behaviour: Behaviour, elsewhere: u16) -> String {
    if matches!(behaviour, Behaviour::ResetMidBody) {
        // Half a response, then close with most of the request unread: the kernel answers
        // with a reset, mid-body.
        return servers::listen()
            .connections(|mut stream| {
                let mut start = [0u8; 8];
                let _ = stream.read(&mut start);
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{\"id\":";
                let _ = stream.write_all(head.as_bytes());
                std::thread::sleep(Duration::from_millis(20));
            })
            .base_url();
    }
    servers::raw(move |_, _, stream| respond(stream, behaviour, elsewhere))
}

fn run_against(behaviour: Behaviour) {
    // Anything connecting to the redirect's other host is counted: it must stay at zero.
    let other = servers::listen().host("127.0.0.2").connections(|_| {});
    let url = serve(behaviour, other.port());
    let dir = std::env::temp_dir().join(format!("pc-hostile-{behaviour:?}-{}", std::process::id()));
    let every_answer_cut = matches!(
        behaviour,
        Behaviour::ResetMidBody | Behaviour::TruncatedBody | Behaviour::Stalling
    );
    // Where every answer is cut (each after the 2 s timeout), the run's stop after 5 of them in
    // a row, and a 5 s budget, raced the rules' first verdicts: under load both came before any
    // rule had judged its cut answer. A longer budget ends it instead, so that the rules' own
    // words are what is read.
    let (failures, budget) = if every_answer_cut {
        ("1000", "9")
    } else {
        ("5", "5")
    };
    let started = Instant::now();
    let output = common::bin()
        .args([
            "run",
            "--base-url",
            &url,
            "--timeout",
            "2",
            "--no-regressions",
            "--max-transport-failures",
            failures,
        ])
        .args(["--time-budget", budget])
        .arg("--report-dir")
        .arg(&dir)
        .env("PETSTORE_API_KEY", KEY)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let code = output.status.code();
    if every_answer_cut {
        // No evidence, so no failure: undetermined.
        assert_eq!(code, Some(3), "{behaviour:?}\n{stderr}");
        assert_cuts_not_judged(behaviour, &dir.join("report.json"));
    } else {
        // 1: judged on the answers it gave; 3: some rule reached no verdict (a report says
        // which); 2: no answer to the preflight at all, so nothing could run (no report).
        assert!(
            matches!(code, Some(1..=3)),
            "{behaviour:?}: exit {code:?}\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("panicked") && !stdout.contains("panicked"),
        "{behaviour:?}: {stderr}"
    );
    // The budget (5 s), one timeout (2 s), start-up and the reports, on a loaded machine.
    assert!(
        elapsed < Duration::from_secs(20),
        "{behaviour:?} took {elapsed:?}"
    );
    assert_eq!(
        other.accepted(),
        0,
        "{behaviour:?}: something followed the redirect"
    );
    let mut written = format!("{stdout}{stderr}");
    if every_answer_cut {
        written.push_str(&std::fs::read_to_string(dir.join("report.json")).unwrap());
    } else if code == Some(1) {
        let report = std::fs::read_to_string(dir.join("report.json")).unwrap();
        assert!(
            report.len() < 8 << 20,
            "{behaviour:?}: report of {} bytes",
            report.len()
        );
        let parsed: serde_json::Value = serde_json::from_str(&report).unwrap();
        common::assert_valid_report(&parsed);
        // It reads back into the report model and writes out the same.
        let model: petstore_conformance::report::Report = serde_json::from_str(&report).unwrap();
        assert_eq!(
            serde_json::to_value(&model).unwrap(),
            parsed,
            "{behaviour:?}"
        );
        assert_eq!(parsed["conformance"], "does-not-conform", "{behaviour:?}");
        written.push_str(&report);
    } else if code == Some(3) {
        let report = std::fs::read_to_string(dir.join("report.json")).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&report).unwrap();
        assert_eq!(parsed["conformance"], "undetermined", "{behaviour:?}");
        written.push_str(&report);
    } else {
        assert!(
            stderr.contains("could not be reached"),
            "{behaviour:?}: {stderr}"
        );
    }
    assert!(!written.contains(KEY), "{behaviour:?}: the key leaked");
    let _ = std::fs::remove_dir_all(dir);
}

/// Every answer was cut: the report is undetermined, no rule failed, and the rules say the
/// transport cut their answers.
fn assert_cuts_not_judged(behaviour: Behaviour, path: &std::path::Path) {
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    common::assert_valid_report(&report);
    assert_eq!(report["conformance"], "undetermined", "{behaviour:?}");
    let rules = report["rules"].as_array().unwrap();
    let failed: Vec<&serde_json::Value> = rules
        .iter()
        .filter(|rule| rule["verdict"] == "failed")
        .collect();
    assert!(failed.is_empty(), "{behaviour:?}: {failed:#?}");
    let cut = rules
        .iter()
        .filter(|rule| rule["transport_cuts"].as_u64().unwrap_or(0) > 0)
        .count();
    assert!(cut > 0, "{behaviour:?}: no rule counts a cut answer");
    assert!(
        rules.iter().any(|rule| rule["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("cut by the transport"))),
        "{behaviour:?}: no rule says its answer was cut"
    );
}

#[test]
fn slow_target() {
    run_against(Behaviour::Slow);
}

#[test]
fn reset_mid_body() {
    run_against(Behaviour::ResetMidBody);
}

#[test]
fn truncated_body() {
    run_against(Behaviour::TruncatedBody);
}

#[test]
fn huge_body() {
    run_against(Behaviour::HugeBody);
}

#[test]
fn invalid_utf8() {
    run_against(Behaviour::InvalidUtf8);
}

#[test]
fn not_json_with_a_json_content_type() {
    run_against(Behaviour::NotJson);
}

#[test]
fn redirect_to_another_host() {
    run_against(Behaviour::RedirectElsewhere);
}

#[test]
fn redirect_loop() {
    run_against(Behaviour::RedirectLoop);
}

#[test]
fn server_error() {
    run_against(Behaviour::ServerError);
}

#[test]
fn stalling_body() {
    run_against(Behaviour::Stalling);
}

#[test]
fn http_1_0_closing_after_each_response() {
    run_against(Behaviour::Http10Close);
}
