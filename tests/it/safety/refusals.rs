//! What cannot be run safely is refused with exit 2 and one line, before any request: a base
//! URL carrying credentials, a query or a fragment, a key with a newline, numbers out of range,
//! an absurd schema bound; and replay sends the key only to the target it is told.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common;

use common::process::{Finished, binary, run_command, run_to_end};
use common::{failed_rules, read_json, rules, serve_reference, servers};

use super::{LIMIT, temp_dir};

/// Asserts a refusal: exit 2, no panic, and one line naming the problem on stderr (not even
/// the seed banner before it); returns that line.
fn assert_refused(finished: &Finished, what: &str) -> String {
    finished.assert_no_panic();
    let stderr = finished.stderr();
    assert_eq!(finished.code, Some(2), "{what}: {stderr}");
    let problems: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(problems.len(), 1, "{what}: not one line:\n{stderr}");
    assert!(
        finished.stdout.is_empty(),
        "{what}: stdout: {}",
        finished.stdout()
    );
    problems[0].to_string()
}

#[test]
fn credentials_in_the_base_url_are_refused() {
    let dir = temp_dir("credentials");
    let counting = servers::counting();
    let port = counting.port();
    for url in [
        format!("http://user:s3cretpass@127.0.0.1:{port}/v1"),
        format!("http://s3cretuser@127.0.0.1:{port}/v1"),
        format!("http://user:s3cretpass@localhost:{port}/v1/"),
    ] {
        let finished = run_to_end(
            &mut run_command(&["--base-url", &url], Some("key-1234-long-enough"), &dir),
            LIMIT,
        );
        let line = assert_refused(&finished, &url);
        assert!(line.contains("credentials"), "{url}: {line}");
        assert!(
            !line.contains("s3cret"),
            "{url}: the credential is echoed: {line}"
        );
    }
    assert_eq!(counting.accepted(), 0, "a refused run connected");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_base_url_with_a_query_or_fragment_is_refused() {
    let dir = temp_dir("query");
    let counting = servers::counting();
    let port = counting.port();
    for suffix in ["?token=abc", "?", "#fragment", "#", "/?a=1"] {
        let url = format!("http://127.0.0.1:{port}/v1{suffix}");
        let finished = run_to_end(
            &mut run_command(&["--base-url", &url], Some("key-1234-long-enough"), &dir),
            LIMIT,
        );
        let line = assert_refused(&finished, &url);
        assert!(line.contains("query string or fragment"), "{url}: {line}");
    }
    assert_eq!(counting.accepted(), 0, "a refused run connected");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_key_with_a_newline_is_refused() {
    let dir = temp_dir("newline");
    let counting = servers::counting();
    let port = counting.port();
    let url = format!("http://127.0.0.1:{port}/v1");
    for key in [
        "first-half-AAAA\nsecond-half-BBBB",
        "first-half-AAAA\r\nX-Injected: yes",
        "first-half-AAAA\tsecond-half-BBBB",
        "first-half-AAAA\u{7f}second-half-BBBB",
    ] {
        let finished = run_to_end(
            &mut run_command(&["--base-url", &url], Some(key), &dir),
            LIMIT,
        );
        let line = assert_refused(&finished, &format!("{key:?}"));
        assert!(line.contains("PETSTORE_API_KEY"), "{key:?}: {line}");
        assert!(line.contains("control character"), "{key:?}: {line}");
        assert!(
            !line.contains("first-half") && !line.contains("second-half"),
            "{key:?}: the key is echoed: {line}"
        );
    }
    // Another variable, and a key file: the message names where the key came from.
    let finished = run_to_end(
        run_command(
            &["--base-url", &url, "--api-key-env", "MY_PETSTORE_KEY"],
            None,
            &dir,
        )
        .env("MY_PETSTORE_KEY", "first-half\nsecond-half"),
        LIMIT,
    );
    let line = assert_refused(&finished, "--api-key-env");
    assert!(line.contains("MY_PETSTORE_KEY"), "{line}");
    let key_file = dir.join("key.txt");
    std::fs::write(&key_file, "first-half\nsecond-half\n").unwrap();
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--api-key-file",
                key_file.to_str().unwrap(),
            ],
            None,
            &dir,
        ),
        LIMIT,
    );
    let line = assert_refused(&finished, "--api-key-file");
    assert!(line.contains("--api-key-file"), "{line}");
    assert_eq!(counting.accepted(), 0, "a refused run connected");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn numeric_options_at_their_ends_work_or_exit_2() {
    let dir = temp_dir("numeric");
    let refused: [(&[&str], &str); 26] = [
        (&["--timeout", "0"], "--timeout"),
        (&["--timeout", "3601"], "--timeout"),
        (&["--timeout", "18446744073709551615"], "--timeout"),
        (&["--body-cap", "0"], "--body-cap"),
        (&["--body-cap", "1023"], "--body-cap"),
        (&["--body-cap", "18446744073709551615"], "--body-cap"),
        (&["--cases", "4294967295"], "--cases"),
        (
            &["--max-transport-failures", "0"],
            "--max-transport-failures",
        ),
        (
            &["--max-transport-failures", "1000001"],
            "--max-transport-failures",
        ),
        (&["--test-threads", "0"], "--test-threads"),
        // Once a hang, then seven minutes deaf to SIGTERM.
        (&["--test-threads", "1025"], "--test-threads"),
        (&["--test-threads", "10000000"], "--test-threads"),
        // Once a panic (1e-300), or a run that never ends.
        (&["--rate", "1e-300"], "--rate"),
        (&["--rate", "0.009"], "--rate"),
        (&["--rate", "0"], "--rate"),
        (&["--rate=-1"], "--rate"),
        (&["--rate", "NaN"], "--rate"),
        (&["--rate", "inf"], "--rate"),
        (&["--rate", "100001"], "--rate"),
        (&["--concurrency", "0"], "--concurrency"),
        (&["--concurrency", "1025"], "--concurrency"),
        (&["--time-budget", "0"], "--time-budget"),
        (&["--time-budget", "604801"], "--time-budget"),
        (&["--time-budget", "18446744073709551615"], "--time-budget"),
        (&["--max-throttle-wait", "3601"], "--max-throttle-wait"),
        (&["--reference-latency", "61s"], "--reference-latency"),
    ];
    for (args, option) in refused {
        let finished = run_to_end(&mut run_command(args, None, &dir), LIMIT);
        let line = assert_refused(&finished, &format!("{args:?}"));
        assert!(line.contains(option), "{args:?}: {line}");
    }
    // Nothing was run, so nothing was written.
    assert!(!dir.join("report.json").exists());
    // A cap of 1 KiB cuts the longer lists: those rules are inconclusive (not failed), so
    // the run is undetermined (exit 3) rather than conforming.
    let accepted: [(&[&str], &str); 8] = [
        (&["--cases", "0"], "conforms"),
        (&["--time-budget", "604800", "--cases", "1"], "conforms"),
        (&["--rate", "100000", "--cases", "1"], "conforms"),
        (
            &[
                "--test-threads",
                "1024",
                "--concurrency",
                "1024",
                "--cases",
                "1",
            ],
            "conforms",
        ),
        (
            &["--test-threads", "1", "--concurrency", "1", "--cases", "1"],
            "conforms",
        ),
        (
            &["--timeout", "1", "--body-cap", "1024", "--cases", "1"],
            "undetermined",
        ),
        (
            &[
                "--timeout",
                "3600",
                "--body-cap",
                "1073741824",
                "--cases",
                "1",
            ],
            "conforms",
        ),
        (
            &["--max-transport-failures", "1000000", "--cases", "1"],
            "conforms",
        ),
    ];
    for (args, conformance) in accepted {
        let _ = std::fs::remove_file(dir.join("report.json"));
        let finished = run_to_end(&mut run_command(args, None, &dir), Duration::from_secs(60));
        finished.assert_no_panic();
        let code = if conformance == "undetermined" { 3 } else { 0 };
        assert_eq!(finished.code, Some(code), "{args:?}: {}", finished.stderr());
        let report = read_json(&dir.join("report.json"));
        assert_eq!(report["conformance"], conformance, "{args:?}");
        assert!(
            failed_rules(&report).is_empty(),
            "{args:?}: {:?}",
            failed_rules(&report)
        );
        if conformance == "undetermined" {
            for rule in rules(&report) {
                if rule["verdict"] == "inconclusive" {
                    let reason = rule["reason"].as_str().unwrap_or("");
                    assert!(reason.contains("--body-cap"), "{args:?}: {reason}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_absurd_schema_bound_is_capped_or_refused() {
    let dir = temp_dir("schema-bound");
    let schemas = dir.join("schemas");
    std::fs::create_dir_all(&schemas).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, schemas.join(path.file_name().unwrap())).unwrap();
    }
    let original = read_json(&schemas.join("NewPet.json"));
    let with_name_bound = |bound: &str| {
        let mut schema = original.clone();
        schema["properties"]["name"][bound] = Value::from(2_000_000_000u64);
        std::fs::write(
            schemas.join("NewPet.json"),
            serde_json::to_string_pretty(&schema).unwrap(),
        )
        .unwrap();
    };
    let report_dir = dir.join("reports");
    let schemas_arg = schemas.to_str().unwrap();

    with_name_bound("maxLength");
    let finished = run_to_end(
        &mut run_command(
            &["--schemas", schemas_arg, "--seed", "1"],
            None,
            &report_dir,
        ),
        Duration::from_secs(120),
    );
    finished.assert_no_panic();
    let stderr = finished.stderr();
    assert_eq!(finished.code, Some(0), "{stderr}");
    assert!(
        stderr.contains("maxLength 2000000000") && stderr.contains("65536"),
        "no note of the cap: {stderr}"
    );
    let report = read_json(&report_dir.join("report.json"));
    assert_eq!(report["conformance"], "conforms");
    assert!(
        std::fs::metadata(report_dir.join("report.json"))
            .unwrap()
            .len()
            < 1 << 20,
        "report.json of a capped run is over 1 MB"
    );

    with_name_bound("minLength");
    let _ = std::fs::remove_dir_all(&report_dir);
    let finished = run_to_end(
        &mut run_command(
            &["--schemas", schemas_arg, "--seed", "1"],
            None,
            &report_dir,
        ),
        Duration::from_secs(60),
    );
    let line = assert_refused(&finished, "minLength 2000000000");
    assert!(
        line.contains("NewPet") && line.contains("minLength"),
        "{line}"
    );
    assert!(!report_dir.join("report.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn replay_sends_the_key_only_to_the_configured_target() {
    let key = "replay-key-6d2a91";
    let (_server, url) = serve_reference(key, &["long-name-500"]);
    let dir = temp_dir("replay");
    let finished = run_to_end(
        &mut run_command(&["--base-url", &url, "--seed", "3"], Some(key), &dir),
        Duration::from_secs(60),
    );
    assert_eq!(finished.code, Some(1), "{}", finished.stderr());
    let report_path = dir.join("report.json");
    let report = read_json(&report_path);
    assert_eq!(report["target"]["kind"], "external");
    let replay = |base_url: Option<&str>| {
        let mut command = binary();
        command
            .args([
                "replay",
                report_path.to_str().unwrap(),
                "create-pet/valid/created",
            ])
            .env("PETSTORE_API_KEY", key);
        if let Some(base_url) = base_url {
            command.args(["--base-url", base_url]);
        }
        run_to_end(&mut command, LIMIT)
    };
    let refused = replay(None);
    let line = assert_refused(&refused, "replay without --base-url");
    assert!(line.contains("--base-url"), "{line}");
    let sent = replay(Some(&url));
    sent.assert_no_panic();
    // Failed again on the same target: exit 1.
    assert_eq!(sent.code, Some(1), "{}", sent.stderr());
    let shown = sent.stdout();
    assert!(
        shown.contains("> POST ") && shown.contains("< 500"),
        "{shown}"
    );
    assert!(
        !shown.contains(key) && !sent.stderr().contains(key),
        "{shown}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
