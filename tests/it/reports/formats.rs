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

/// The number just before the first `word` in `text` ("97 passed" -> 97).
fn count_before(text: &str, word: &str) -> usize {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {text}"));
    text[..at]
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|digits| !digits.is_empty())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("no count before {word:?} in {text}"))
}

/// One model of the failures in every format: "failed" is what the gate counts, a failure it
/// does not count (a recommended rule's) is a warning, and libtest's "ignored" and junit.xml's
/// `skipped` are every rule neither passed nor failed.
#[test]
fn the_counts_agree_in_every_format() {
    for (gate, dir) in [("required", "counts-required"), ("all", "counts-all")] {
        let dir = common::temp_dir("formats", dir);
        // auth-one-char-short breaks a required rule; create-no-body-415 a recommended one.
        let output = common::bin()
            .args([
                "run",
                "--seed",
                "4",
                "--cases",
                "2",
                "--no-progress",
                "--gate",
                gate,
            ])
            .args([
                "--reference-fault",
                "auth-one-char-short,create-no-body-415",
            ])
            .arg("--report-dir")
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap())
                .unwrap();
        let rules = report["rules"].as_array().unwrap();
        let failed = rules
            .iter()
            .filter(|r| r["verdict"] == "failed" && r["gated"] == true)
            .count();
        let warned = rules
            .iter()
            .filter(|r| r["verdict"] == "failed" && r["gated"] == false)
            .count();
        let passed = rules.iter().filter(|r| r["verdict"] == "passed").count();
        let others = rules.len() - passed - failed;
        match gate {
            "required" => assert!(failed > 0 && warned > 0, "{stderr}"),
            _ => assert!(failed > 1 && warned == 0, "{stderr}"),
        }

        // libtest's last line.
        let result = stdout
            .lines()
            .find(|l| l.starts_with("test result: "))
            .unwrap_or_else(|| panic!("{stdout}"));
        assert_eq!(count_before(result, " passed"), passed, "{result}");
        assert_eq!(count_before(result, " failed"), failed, "{result}");
        assert_eq!(count_before(result, " ignored"), others, "{result}");

        // The verdict line, summary.md and the HTML say one line.
        let line = stderr
            .lines()
            .find(|l| l.contains("DOES NOT CONFORM"))
            .unwrap_or_else(|| panic!("{stderr}"));
        let totals = &line[line.find("rules: ").expect("counts") - 4..];
        let totals = &totals[totals.find(|c: char| c.is_ascii_digit()).unwrap()..];
        assert_eq!(count_before(totals, " passed"), passed, "{totals}");
        assert_eq!(count_before(totals, " failed"), failed, "{totals}");
        if warned > 0 {
            assert_eq!(
                count_before(totals, " failed not gated (recommended)"),
                warned,
                "{totals}"
            );
        } else {
            assert!(!totals.contains("not gated"), "{totals}");
        }
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(summary.contains(&format!("**{totals}**")), "{summary}");
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(
            html.contains(&format!("<p id=\"totals\">{totals}</p>")),
            "no {totals} in the HTML"
        );

        // junit.xml: failures are the red ones; a warning is a <skipped> that says it failed.
        let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        let suite = junit
            .lines()
            .find(|l| l.trim_start().starts_with("<testsuite "))
            .unwrap();
        assert_eq!(attribute(suite, "failures"), failed.to_string(), "{suite}");
        assert_eq!(attribute(suite, "skipped"), others.to_string(), "{suite}");
        let warnings = junit
            .match_indices("<skipped ")
            .filter(|(at, _)| {
                let tag = &junit[*at..*at + junit[*at..].find('>').unwrap()];
                tag.contains(" type=\"warning\"")
                    && attribute(tag, "message").contains("failed, not gated")
            })
            .count();
        assert_eq!(warnings, warned, "{junit}");
        assert!(junit.contains(&format!("value=\"{totals}\"")), "{suite}");
    }
}

/// One bug, one finding: a store answering 200 for 201 fails several rules, and the terminal,
/// summary.md, the HTML and report.json each say it once, with the rules it broke, above the
/// rules' own verdicts.
#[test]
fn a_single_fault_reads_as_one_finding_in_every_format() {
    let dir = common::temp_dir("formats", "findings");
    let output = common::bin()
        .args(["run", "--seed", "5", "--cases", "2", "--no-progress"])
        .args(["--reference-fault", "create-returns-200"])
        .arg("--report-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:?}");
    let finding = &findings[0];
    let cause = finding["cause"].as_str().unwrap();
    assert_eq!(cause, "answered 200 where 201 was expected");
    assert_eq!(finding["requests"], serde_json::json!(["POST /pets"]));
    let failed: Vec<&str> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|rule| rule["verdict"] == "failed")
        .map(|rule| rule["id"].as_str().unwrap())
        .collect();
    let grouped: Vec<&str> = finding["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert!(failed.len() > 3, "{failed:?}");
    let mut sorted = (failed.clone(), grouped.clone());
    sorted.0.sort();
    sorted.1.sort();
    assert_eq!(sorted.0, sorted.1, "every failed rule in the one finding");

    let told = stderr.find("1 finding, the failures by what the target did:");
    let answer = stderr.find("the answer:").unwrap();
    assert!(told.is_some_and(|at| at > answer), "{stderr}");
    assert_eq!(stderr.matches(cause).count(), 1, "{stderr}");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let section = summary.find("## 1 finding").expect("a findings section");
    assert!(
        section < summary.find("| rule").unwrap_or(usize::MAX),
        "{summary}"
    );
    assert_eq!(summary.matches(cause).count(), 1, "{summary}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let section = html
        .find("<section id=\"findings\"")
        .expect("a findings section");
    assert!(
        section < html.find("id=\"failed-index\"").unwrap(),
        "above the failed rules"
    );
    assert_eq!(html.matches(cause).count(), 1);
    for id in &grouped {
        assert!(html.contains(&format!("<a href=\"#rule-{id}\"><code>{id}</code></a>")));
    }
}
