//! junit.xml as CI dashboards read it: the suite's tests, failures, skipped, time and
//! timestamp agree with its testcases and with report.json; every <failure> has a type and
//! carries the request and the response that broke the rule.

use crate::common;

fn attribute<'a>(tag: &'a str, name: &str) -> &'a str {
    let start = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + name.len()
        + 3;
    let end = tag[start..].find('"').unwrap() + start;
    &tag[start..end]
}

#[test]
fn junit_counts_what_it_holds_and_a_failure_carries_its_exchange() {
    let dir = common::temp_dir("formats", "junit");
    // --read-only skips the rules that create pets; the fault breaks one rule that only reads.
    let output = common::bin()
        .args(["run", "--seed", "9", "--cases", "2", "--read-only"])
        .args(["--reference-fault", "deprecation-on-list-pets"])
        .arg("--report-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let suite = junit
        .lines()
        .find(|l| l.trim_start().starts_with("<testsuite "))
        .unwrap();
    let testcases = junit.matches("<testcase ").count();
    let failures = junit.matches("<failure ").count();
    let skipped = junit.matches("<skipped").count();
    assert!(skipped > 0 && failures > 0, "{suite}");
    assert_eq!(attribute(suite, "tests"), testcases.to_string());
    assert_eq!(attribute(suite, "failures"), failures.to_string());
    assert_eq!(attribute(suite, "skipped"), skipped.to_string());
    assert_eq!(
        attribute(suite, "timestamp"),
        report["started_at"].as_str().unwrap()
    );
    let seconds: f64 = attribute(suite, "time").parse().unwrap();
    let reported = report["duration_ms"].as_f64().unwrap() / 1000.0;
    assert!(
        (seconds - reported).abs() < 0.002,
        "{seconds} vs {reported}"
    );

    let at = junit.find("<failure ").unwrap();
    let failure = &junit[at..at + junit[at..].find("</failure>").unwrap()];
    let tag = &failure[..failure.find('>').unwrap()];
    assert!(attribute(tag, "type").starts_with("required: "), "{tag}");
    assert!(
        failure.contains("\nrequest:\nGET http://127.0.0.1:"),
        "{failure}"
    );
    assert!(
        failure.contains("Authorization: Bearer [REDACTED]"),
        "{failure}"
    );
    assert!(failure.contains("\nresponse:\nHTTP/1.1 200"), "{failure}");
    assert!(
        failure.to_ascii_lowercase().contains("\ndeprecation: "),
        "{failure}"
    );
    assert!(failure.contains("\nreproduce: curl "), "{failure}");
    let _ = std::fs::remove_dir_all(&dir);
}
