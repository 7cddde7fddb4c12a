//! The key on the command line's careless paths: a refused base URL, a misspelt profile
//! field, a known-failures file that does not parse, `--print-config`, the key given where
//! its variable's name belongs; keys too short to tell from text; and a short key that must
//! not change a verdict.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::{BIN, serve_reference};

const KEY: &str = "Leaky-Key-9c41e7b2";

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("leaks", name)
}

/// `run ARGS` with KEY in PETSTORE_API_KEY, nothing else of PETSTORE_* inherited.
fn run(args: &[&str], key: &str, report_dir: &Path) -> Output {
    let mut command = Command::new(BIN);
    command.current_dir(report_dir.parent().unwrap_or(Path::new(".")));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PETSTORE_") {
            command.env_remove(name);
        }
    }
    command
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(report_dir)
        .arg("--no-regressions")
        .env("PETSTORE_API_KEY", key)
        .output()
        .unwrap()
}

/// Every spelling of the key a careless message could hold, compared ignoring case.
fn assert_no_key(what: &str, output: &Output) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
    .to_ascii_lowercase();
    let percent: String = KEY.bytes().map(|b| format!("%{b:02x}")).collect();
    for form in [KEY.to_ascii_lowercase(), percent] {
        assert!(!text.contains(&form), "{what}: the key is echoed: {text}");
    }
}

fn assert_exit_2_one_line(what: &str, output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{what}: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{what}: not one line: {stderr}");
    lines[0].to_string()
}

#[test]
fn a_refused_base_url_never_echoes_the_key() {
    let dir = temp_dir("base-url");
    for url in [
        format!("http://127.0.0.1:1/v1?api_key={KEY}"),
        format!("http://127.0.0.1:1/v1?x=1&api_key={KEY}#f"),
        format!("http://127.0.0.1:1/api?api_key={KEY}"),
        format!("ftp://user:{KEY}@127.0.0.1:1/v1"),
        format!("staging.example/v1?api_key={KEY}"),
    ] {
        let output = run(&["--base-url", &url], KEY, &dir.join("r"));
        let line = assert_exit_2_one_line(&url, &output);
        assert!(line.contains("--base-url"), "{url}: {line}");
        assert_no_key(&url, &output);
    }
}

#[test]
fn a_misspelt_profile_field_is_named_with_its_line_not_its_value() {
    let dir = temp_dir("profile");
    for field in [
        format!("api-key = \"{KEY}\""),
        format!("apikey = \"{KEY}\""),
        format!("token = \"{KEY}\""),
        format!("headers = {{ Authorization = \"Bearer {KEY}\" }}"),
        format!("seed = \"{KEY}\""),
        format!("base_url = \"{KEY}"),
    ] {
        let config = dir.join("petstore-conformance.toml");
        std::fs::write(
            &config,
            format!("[profile.default]\ngate = \"all\"\n{field}\n"),
        )
        .unwrap();
        let output = run(&["--config", config.to_str().unwrap()], KEY, &dir.join("r"));
        let line = assert_exit_2_one_line(&field, &output);
        assert!(line.contains("line 3"), "{field}: {line}");
        assert_no_key(&field, &output);
    }
}

#[test]
fn a_known_failures_file_that_does_not_parse_is_not_echoed() {
    let dir = temp_dir("known");
    for text in [
        format!("known_failures = [{{ rule = \"x\", reason = \"{KEY}\" ]\n"),
        format!("known_failures = [{{ rule = \"x\", token = \"{KEY}\" }}]\n"),
        format!("known_failures = [{{ rule = \"{KEY}\", reason = 1 }}]\n"),
        format!("{KEY}\n"),
    ] {
        let file = dir.join("known.toml");
        std::fs::write(&file, &text).unwrap();
        let output = run(
            &["--known-failures", file.to_str().unwrap()],
            KEY,
            &dir.join("r"),
        );
        let line = assert_exit_2_one_line(&text, &output);
        assert!(line.contains("line 1"), "{text}: {line}");
        assert_no_key(&text, &output);
    }
}

#[test]
fn print_config_shows_no_userinfo_no_query_value_and_no_key_as_a_name() {
    let dir = temp_dir("print-config");
    let url = format!("https://user:{KEY}@staging.example/v1?api_key={KEY}");
    let output = run(&["--base-url", &url, "--print-config"], KEY, &dir.join("r"));
    assert_eq!(output.status.code(), Some(0));
    assert_no_key("--print-config", &output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("https://[REDACTED]@staging.example/v1?api_key=[REDACTED]"),
        "{stdout}"
    );
    let output = run(
        &["--api-key-env", KEY, "--print-config"],
        KEY,
        &dir.join("r"),
    );
    assert_no_key("--api-key-env KEY --print-config", &output);
}

#[test]
fn the_key_given_where_its_variable_name_belongs_is_not_echoed() {
    let dir = temp_dir("api-key-env");
    let output = run(
        &["--base-url", "http://127.0.0.1:1/v1", "--api-key-env", KEY],
        KEY,
        &dir.join("r"),
    );
    let line = assert_exit_2_one_line("--api-key-env KEY", &output);
    assert!(line.contains("--api-key-env"), "{line}");
    assert_no_key("--api-key-env KEY", &output);
}

#[test]
fn a_short_key_is_refused_unless_allowed_and_never_changes_a_verdict() {
    let dir = temp_dir("short-key");
    for key in ["K", "json", "pets", "eleven-char"] {
        let output = run(
            &["--base-url", "http://127.0.0.1:1/v1"],
            key,
            &dir.join("r"),
        );
        let line = assert_exit_2_one_line(key, &output);
        assert!(
            line.contains("fewer than 12") && line.contains("--allow-short-key"),
            "{key}: {line}"
        );
    }
    // The key `K` spelled in generated names once made this rule fail on a conforming store.
    let (_server, url) = serve_reference("K", &[]);
    let reports = dir.join("allowed");
    let output = run(
        &[
            "--base-url",
            &url,
            "--allow-short-key",
            "--seed",
            "42",
            "--exact",
            "create-pet/valid/created",
        ],
        "K",
        &reports,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let report = std::fs::read_to_string(reports.join("report.json")).unwrap();
    assert!(report.contains("over-redacted"), "{report}");
}
