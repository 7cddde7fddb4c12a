//! A closed or full stream is no crash: every sub-command, its stdout and stderr a pipe whose
//! reader has gone (`2>&1 | head -1`), or its stdout a full disk (`> /dev/full`), exits with
//! the code it gives when both are open, never 101 (a panic), and a run still writes its
//! reports.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// Where the command's streams go.
#[derive(Debug, Clone, Copy)]
enum Streams {
    /// Both read, as a terminal or a CI log would.
    Open,
    /// stdout and stderr one pipe whose reader is gone.
    Closed,
    /// stdout a device that is always full; stderr read.
    Full,
}

fn command(args: &[String], streams: Streams) -> Output {
    let mut command = crate::common::bin();
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PETSTORE_BASE_URL")
        .env("PETSTORE_API_KEY", "a-key-long-enough-for-a-run")
        .stdin(Stdio::null());
    match streams {
        Streams::Open => {
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Streams::Closed => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            command.stdout(writer.try_clone().unwrap()).stderr(writer);
        }
        Streams::Full => {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            command.stdout(full).stderr(Stdio::piped());
        }
    }
    command.output().unwrap()
}

/// Each case's arguments, `{dir}` replaced with a directory of its own per stream setting.
fn case(args: &[&str], dir: &Path) -> Vec<String> {
    args.iter()
        .map(|arg| arg.replace("{dir}", &dir.display().to_string()))
        .collect()
}

#[test]
fn a_closed_or_full_stream_changes_no_exit_code_and_panics_nothing() {
    let root = super::temp_dir("streams");
    // A shard of one (a report merge, replay, compare and annotations can read), with a failure.
    let shard = root.join("shard");
    let made = command(
        &case(
            &[
                "run",
                "--no-regressions",
                "--seed",
                "7",
                "--reference-fault",
                "limit-off-by-one",
                "--partition",
                "hash:1/1",
                "--report-dir",
                "{dir}",
                "list-pets/limit",
            ],
            &shard,
        ),
        Streams::Open,
    );
    assert_eq!(made.status.code(), Some(1), "{}", super::stderr(&made));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(shard.join("report.json")).unwrap()).unwrap();
    let failed = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|rule| rule["verdict"] == "failed")
        .and_then(|rule| rule["id"].as_str())
        .unwrap()
        .to_string();
    let report_json = shard.join("report.json").display().to_string();
    let shard = shard.display().to_string();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "run",
            vec![
                "run",
                "--no-regressions",
                "--seed",
                "7",
                "--report-dir",
                "{dir}",
                "list-pets/limit",
            ],
        ),
        (
            "run, the target unreachable",
            vec![
                "run",
                "--no-regressions",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--report-dir",
                "{dir}",
                "list-pets/limit",
            ],
        ),
        ("run --list", vec!["run", "--list"]),
        ("run --print-config", vec!["run", "--print-config"]),
        ("a usage error", vec!["run", "--no-such-option"]),
        ("rules", vec!["rules"]),
        (
            "serve-reference --list-faults",
            vec!["serve-reference", "--list-faults"],
        ),
        (
            "serve-reference --list-variants",
            vec!["serve-reference", "--list-variants"],
        ),
        (
            "replay",
            vec!["replay", &report_json, &failed, "--no-regressions"],
        ),
        ("verify-report", vec!["verify-report", &shard]),
        ("compare", vec!["compare", &report_json, &report_json]),
        ("merge", vec!["merge", &shard, "--report-dir", "{dir}"]),
        ("annotations", vec!["annotations", &shard]),
        ("completions", vec!["completions", "bash"]),
        ("man", vec!["man"]),
    ];
    for (name, args) in cases {
        let writes = args.contains(&"{dir}");
        let mut codes = Vec::new();
        for streams in [Streams::Open, Streams::Closed, Streams::Full] {
            let dir: PathBuf = root.join(format!("{}-{streams:?}", name.replace(' ', "-")));
            let output = command(&case(&args, &dir), streams);
            let said = super::stderr(&output);
            assert!(!said.contains("panicked"), "{name}, {streams:?}: {said}");
            assert_ne!(
                output.status.code(),
                Some(101),
                "{name}, {streams:?}: {said}"
            );
            if writes && name != "run, the target unreachable" {
                assert!(
                    dir.join("report.json").is_file(),
                    "{name}, {streams:?}: no report written: {said}"
                );
            }
            codes.push(output.status.code());
        }
        assert!(codes[0].is_some(), "{name}: {codes:?}");
        assert!(
            codes.iter().all(|code| *code == codes[0]),
            "{name}: exit codes open, closed, full: {codes:?}"
        );
    }
    let _ = std::fs::remove_dir_all(root);
}
