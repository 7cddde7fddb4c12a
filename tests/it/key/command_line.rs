//! The key on the command line's careless paths: a refused base URL, a misspelt profile
//! field, a known-failures file that does not parse, `--print-config` and usage errors, the key
//! given where its variable's name belongs, a missing key; keys too short to tell from text;
//! and a short key that must not change a verdict.

use std::process::Output;

use crate::common;

use common::serve_reference;

use super::{assert_absent_decoded, random_key, run, temp_dir};

const KEY: &str = "Leaky-Key-9c41e7b2";

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
        stdout.contains("= \"https://[REDACTED]@staging.example/v1?api_key=[REDACTED]\""),
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

#[test]
fn usage_errors_and_print_config_redact_the_key_wherever_it_was_typed() {
    let key = random_key();
    let dir = temp_dir("usage");
    let reports = dir.join("r");
    let unknown = format!("--{key}");
    for args in [
        vec!["-H", key.as_str()],
        vec!["--header", key.as_str()],
        vec!["--seed", key.as_str()],
        vec![unknown.as_str()],
        vec!["--time-budget", key.as_str()],
    ] {
        let output = run(&args, &key, &reports);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_no_key_of(&key, &format!("{args:?}"), &output);
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("[REDACTED]"),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // The key held by a variable the options read (PETSTORE_SEED here), not typed at all.
    let mut command = common::bin();
    command
        .args(["run", "--report-dir"])
        .arg(&reports)
        .env("PETSTORE_SEED", &key)
        .env("PETSTORE_API_KEY", &key);
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_no_key_of(&key, "PETSTORE_SEED", &output);
    // --help shows no variable's value: PETSTORE_HEADERS may hold a gateway token.
    let output = common::bin()
        .args(["run", "--help"])
        .env("PETSTORE_HEADERS", format!("X-Tenant: {key}"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("PETSTORE_HEADERS"));
    assert_no_key_of(&key, "run --help", &output);
    // --print-config: a header given on the command line, or in a profile, whose value is the
    // key (under a name that does not say it is a credential).
    let header = format!("X-Tenant: {key}");
    let output = run(&["-H", &header, "--print-config"], &key, &reports);
    assert_eq!(output.status.code(), Some(0));
    assert_no_key_of(&key, "-H --print-config", &output);
    let config = dir.join("petstore-conformance.toml");
    std::fs::write(
        &config,
        format!("[profile.default]\nheaders = [\"X-Tenant: {key}\"]\n"),
    )
    .unwrap();
    let output = run(
        &["--config", config.to_str().unwrap(), "--print-config"],
        &key,
        &reports,
    );
    assert_eq!(output.status.code(), Some(0));
    assert_no_key_of(&key, "profile headers --print-config", &output);
    assert!(String::from_utf8_lossy(&output.stdout).contains("X-Tenant: [REDACTED]"));
}

/// A usage error shows what the user typed, so the mistake is there to see; only the key is
/// redacted, held by whichever variable or file the command line names for it.
#[test]
fn usage_errors_show_what_was_typed_but_the_key() {
    let key = random_key();
    let dir = temp_dir("typed");
    let reports = dir.join("r");
    for (args, shown) in [
        (vec!["--time-budgit", "5"], "--time-budgit"),
        (vec!["--foo"], "--foo"),
        (vec!["--gate", "sometimes"], "sometimes"),
    ] {
        let output = run(&args, &key, &reports);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("'{shown}'")), "{args:?}: {stderr}");
        assert!(!stderr.contains("[REDACTED]"), "{args:?}: {stderr}");
    }
    // The key in a variable of the user's naming, then typed where a seed belongs; and in a
    // file, typed as an unknown option.
    let seeded = common::bin()
        .args(["run", "--api-key-env", "STAGING_TOKEN", "--seed", &key])
        .env_remove("PETSTORE_API_KEY")
        .env("STAGING_TOKEN", &key)
        .output()
        .unwrap();
    assert_eq!(seeded.status.code(), Some(2));
    assert_no_key_of(&key, "--api-key-env STAGING_TOKEN --seed KEY", &seeded);
    let file = dir.join("key.txt");
    std::fs::write(&file, format!("{key}\n")).unwrap();
    let unknown = format!("--{key}");
    let filed = common::bin()
        .args(["run", "--api-key-file", file.to_str().unwrap(), &unknown])
        .env_remove("PETSTORE_API_KEY")
        .output()
        .unwrap();
    assert_eq!(filed.status.code(), Some(2));
    assert_no_key_of(&key, "--api-key-file FILE --KEY", &filed);
    // Boolean variables take the spellings people write.
    for value in ["1", "yes", "true", "on", "0", "no", "false", "off"] {
        let output = common::bin()
            .args(["run", "--print-config"])
            .current_dir(&dir)
            .env("PETSTORE_NO_PROGRESS", value)
            .env("PETSTORE_API_KEY", &key)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "PETSTORE_NO_PROGRESS={value}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// `key` in no spelling in what `output` printed.
fn assert_no_key_of(key: &str, what: &str, output: &Output) {
    let written = [
        ("stdout".to_string(), output.stdout.clone()),
        ("stderr".to_string(), output.stderr.clone()),
    ];
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(!text.contains(key), "{what}: {text}");
    assert_absent_decoded(key, &written);
}

#[test]
fn a_missing_key_is_not_set_and_each_header_secret_has_its_own_variable() {
    let dir = temp_dir("variables");
    let mut command = common::bin();
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PETSTORE_") {
            command.env_remove(name);
        }
    }
    let output = command
        .args(["run", "--base-url", "http://127.0.0.1:1/v1", "--report-dir"])
        .arg(dir.join("r"))
        .output()
        .unwrap();
    let line = assert_exit_2_one_line("no key", &output);
    assert!(line.contains("PETSTORE_API_KEY: not set"), "{line}");
    assert!(!line.contains("characters"), "{line}");
    // A gateway token beside the key: every curl line reads it from a variable of its own,
    // never from the key's (copied, the line would send the key as the token).
    let key = random_key();
    let token = random_key();
    let (_server, url) = serve_reference(&key, &["long-name-500"]);
    let reports = dir.join("reports");
    let output = run(
        &[
            "--base-url",
            &url,
            "-H",
            &format!("X-Gateway-Token: {token}"),
            "--seed",
            "3",
            "create-pet/valid/created",
        ],
        &key,
        &reports,
    );
    assert_eq!(output.status.code(), Some(1));
    let report = std::fs::read_to_string(reports.join("report.json")).unwrap();
    assert!(!report.contains(&token) && !report.contains(&key));
    let value: serde_json::Value = serde_json::from_str(&report).unwrap();
    let curl = value["rules"][0]["failure"]["curl"].as_str().unwrap();
    assert!(
        curl.contains(r#"-H "X-Gateway-Token: ${PETSTORE_HEADER_X_GATEWAY_TOKEN}""#),
        "{curl}"
    );
    assert!(
        curl.contains(r#"-H "Authorization: Bearer ${PETSTORE_API_KEY}""#),
        "{curl}"
    );
    assert_eq!(curl.matches("PETSTORE_API_KEY").count(), 1, "{curl}");
    let rerun = value["rerun"].as_str().unwrap();
    assert!(
        rerun.contains(r#"--header "X-Gateway-Token: ${PETSTORE_HEADER_X_GATEWAY_TOKEN}""#),
        "{rerun}"
    );
}
