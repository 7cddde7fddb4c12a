//! The key on the command line's careless paths: a refused base URL, a misspelt profile
//! field, a known-failures file that does not parse, `--print-config`, the key given where
//! its variable's name belongs; keys too short to tell from text; and a short key that must
//! not change a verdict.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;

use common::{BIN, serve_reference, servers};

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

/// A long key no test has seen: random, mixed case, with a `/` and a `-` (the characters
/// escapes treat apart).
fn random_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut parts = Vec::new();
    for n in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(n);
        parts.push(format!("{:016x}", hasher.finish()));
    }
    format!("Rk9/{}-Zq{}", parts[0], parts[1].to_uppercase())
}

/// `text` as any reader may decode it, as often as it likes: HTML character references
/// (decimal or hex, any number of leading zeros, with or without `;`) and `\u` escapes,
/// wherever they stand. Written here apart from the harness's own decoder.
fn decoded(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..3 {
        let mut out = String::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let rest: String = chars[i..chars.len().min(i + 12)].iter().collect();
            // (radix, characters before the digits, most digits, a reference: `;` may follow)
            let (radix, skip, most, reference) =
                if rest.starts_with("&#x") || rest.starts_with("&#X") {
                    (16, 3, 10, true)
                } else if rest.starts_with("&#") {
                    (10, 2, 10, true)
                } else if rest.starts_with("\\u") {
                    (16, 2, 4, false)
                } else {
                    out.push(chars[i]);
                    i += 1;
                    continue;
                };
            let digits: String = rest
                .chars()
                .skip(skip)
                .take_while(|c| c.is_digit(radix))
                .take(most)
                .collect();
            let complete = reference || digits.len() == 4;
            match u32::from_str_radix(&digits, radix)
                .ok()
                .and_then(char::from_u32)
            {
                Some(c) if !digits.is_empty() && complete => {
                    out.push(c);
                    i += skip + digits.len();
                    if reference && chars.get(i) == Some(&';') {
                        i += 1;
                    }
                }
                _ => {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        text = out.replace("&amp;", "&");
    }
    text
}

/// Each character of `key` written by `spell`.
fn spelled(key: &str, spell: impl Fn(usize, char) -> String) -> String {
    key.chars().enumerate().map(|(i, c)| spell(i, c)).collect()
}

/// Fails if `key`, or `key` reversed, is in any of `written` as it is or decoded.
fn assert_absent_decoded(key: &str, written: &[(String, Vec<u8>)]) {
    let reversed: String = key.chars().rev().collect();
    for (name, bytes) in written {
        let text = String::from_utf8_lossy(bytes);
        for view in [text.to_string(), decoded(&text)] {
            let view = view.to_ascii_lowercase();
            for (what, secret) in [("the key", key), ("the key reversed", &reversed)] {
                if let Some(at) = view.find(&secret.to_ascii_lowercase()) {
                    let start = view[..at]
                        .char_indices()
                        .rev()
                        .nth(60)
                        .map_or(0, |(i, _)| i);
                    panic!(
                        "{what} in {name}: ...{}...",
                        &view[start..(at + secret.len()).min(view.len())]
                    );
                }
            }
        }
    }
}

/// A target that answers every request 500, echoing the key it was sent in the spellings a
/// renderer of HTML or Markdown, or a reader of `\u` escapes, turns back into the key.
fn echoing_target() -> String {
    servers::raw(|request, n, stream| {
        let key = request
            .header("authorization")
            .and_then(|value| {
                let (scheme, key) = value.split_at_checked("bearer ".len())?;
                scheme
                    .eq_ignore_ascii_case("bearer ")
                    .then(|| key.trim().to_string())
            })
            .unwrap_or_default();
        let n = n - 1;
        let reversed: String = key.chars().rev().collect();
        let forms = [
            spelled(&key, |_, c| format!("&#{};", c as u32)),
            spelled(&key, |_, c| format!("&#x{:X};", c as u32)),
            spelled(&key, |_, c| format!("&#{:06}", c as u32)),
            spelled(&key, |_, c| format!("&#x{:06x};", c as u32)),
            spelled(&key, |i, c| match i % 3 {
                0 => format!("&#{};", c as u32),
                1 => format!("\\u{:04X}", c as u32),
                _ => c.to_string(),
            }),
            spelled(&key, |_, c| format!("\\u{:04x}", c as u32)),
            reversed.clone(),
            spelled(&reversed, |_, c| format!("&#x{:x};", c as u32)),
        ];
        let form = &forms[n % forms.len()];
        // In a JSON body (outside any string: no JSON parser decodes it, a reader does), in a
        // text body, and in a header.
        let (content_type, body) = if n.is_multiple_of(2) {
            (
                "application/json",
                format!("{{\"code\":500,\"seen\":1}} {form}"),
            )
        } else {
            ("text/plain", format!("seen: {form}"))
        };
        let header_form = forms[(n + 1) % forms.len()].replace(['\r', '\n'], "");
        let headers = [("Content-Type", content_type), ("X-Seen", header_form.as_str())];
        servers::respond(stream, "500 Internal Server Error", &headers, body.as_bytes())
    })
}

/// Every file under `dir`, with its name.
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_file() {
            files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    files
}

/// A whole run against `url` under `--gate all`, with a request log and a HAR in `dir`.
fn run_logged(url: &str, key: &str, dir: &Path, reports: &Path) -> Output {
    let log = dir.join("requests.jsonl");
    let har = dir.join("run.har");
    run(
        &[
            "--base-url",
            url,
            "--gate",
            "all",
            "--cases",
            "4",
            "--timeout",
            "5",
            "--request-log",
            log.to_str().unwrap(),
            "--har",
            har.to_str().unwrap(),
        ],
        key,
        reports,
    )
}

/// Every byte a run wrote: its output, and the files in `dir` and `reports`.
fn written_by(output: &Output, dir: &Path, reports: &Path) -> Vec<(String, Vec<u8>)> {
    let mut written = vec![
        ("stdout".to_string(), output.stdout.clone()),
        ("stderr".to_string(), output.stderr.clone()),
    ];
    written.extend(files_in(dir));
    written.extend(files_in(reports));
    written
}

#[test]
fn a_key_echoed_as_character_references_escapes_or_reversed_is_in_no_byte_written() {
    let key = random_key();
    let dir = temp_dir("decoded-spellings");
    let reports = dir.join("reports");
    let url = echoing_target();
    let output = run_logged(&url, &key, &dir, &reports);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = written_by(&output, &dir, &reports);
    assert!(
        written.len() >= 8,
        "{:?}",
        written.iter().map(|w| &w.0).collect::<Vec<_>>()
    );
    assert_absent_decoded(&key, &written);
    // The echoes reached the reports, redacted; report.json's digest is of what it holds.
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(summary.contains("[REDACTED]"), "{summary}");
    let verified = Command::new(BIN)
        .arg("verify-report")
        .arg(&reports)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verified.stdout);
    assert_eq!(verified.status.code(), Some(0), "{said}");
    assert!(said.starts_with("intact"), "{said}");
}

#[test]
fn usage_errors_and_print_config_redact_every_value_the_user_gave() {
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
    let mut command = Command::new(BIN);
    command
        .args(["run", "--report-dir"])
        .arg(&reports)
        .env("PETSTORE_SEED", &key)
        .env("PETSTORE_API_KEY", &key);
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_no_key_of(&key, "PETSTORE_SEED", &output);
    // --help shows no variable's value: PETSTORE_HEADERS may hold a gateway token.
    let output = Command::new(BIN)
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
    let mut command = Command::new(BIN);
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

/// A target that echoes every request's head (its request line with the query, every header,
/// every cookie) in an `X-Echo` header and, when it refuses, in its Error's message. It takes
/// the bearer key, and the key in `accepts` too (`query`, a header's name, or none): a
/// channel the contract refuses is then taken, so that rule's failure shows its request.
fn channel_echo_target(key: &str, accepts: &'static str) -> String {
    let key = key.to_string();
    let ids = std::sync::atomic::AtomicI64::new(1);
    servers::raw(move |request, _, stream| {
        let request_line = request.first_line();
        let taken = match accepts {
            "query" => request_line.contains(&format!("api_key={} ", form_encoded(&key))),
            "" => false,
            name => request
                .header(name)
                .is_some_and(|value| value.ends_with(key.as_str())),
        };
        let bearer = request.header("authorization") == Some(format!("Bearer {key}").as_str());
        let lines: Vec<&str> = request.head.trim_end().lines().collect();
        let echo = lines.join(" | ").replace(['\r', '\n'], "");
        let (status, body) = match (bearer || taken, request.method()) {
            (false, _) => (
                "401 Unauthorized",
                serde_json::json!({"code": "unauthorized", "message": format!("seen: {echo}"), "status": 401})
                    .to_string(),
            ),
            (true, "POST") => {
                let mut pet: serde_json::Value =
                    serde_json::from_slice(&request.body).unwrap_or_default();
                pet["id"] = ids.fetch_add(1, std::sync::atomic::Ordering::SeqCst).into();
                ("201 Created", pet.to_string())
            }
            (true, _) if request_line.starts_with("GET /v1/pets/") => (
                "404 Not Found",
                r#"{"code":"not-found","message":"no pet","status":404}"#.to_string(),
            ),
            (true, _) => ("200 OK", "[]".to_string()),
        };
        servers::respond_json(stream, status, &[("X-Echo", echo.as_str())], &body)
    })
}

/// The key as `form_urlencoded` writes it in a query.
fn form_encoded(key: &str) -> String {
    key.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                (b as char).to_string()
            }
            b' ' => "+".into(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every spelling the channels give the key: base64 of `KEY:` and `:KEY` (Basic), and the
/// query's encodings, besides the key itself.
fn channel_spellings(key: &str) -> Vec<String> {
    use base64::Engine;
    let base64 = base64::engine::general_purpose::STANDARD;
    vec![
        base64.encode(format!("{key}:")),
        base64.encode(format!(":{key}")),
        form_encoded(key),
        key.bytes().map(|b| format!("%{b:02X}")).collect(),
    ]
}

#[test]
fn the_key_sent_in_every_other_channel_and_echoed_is_in_no_byte_written() {
    let key = random_key();
    let dir = temp_dir("channels");
    let reports = dir.join("reports");
    let url = channel_echo_target(&key, "");
    let log = dir.join("requests.jsonl");
    let output = run_logged(&url, &key, &dir, &reports);
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 3)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = written_by(&output, &dir, &reports);
    assert_absent_decoded(&key, &written);
    for (name, bytes) in &written {
        let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
        for spelling in channel_spellings(&key) {
            assert!(
                !text.contains(&spelling.to_ascii_lowercase()),
                "{name}: the key's channel spelling {spelling:?}"
            );
        }
    }
    // Every channel was sent, and recorded with the key redacted.
    let log = std::fs::read_to_string(&log).unwrap();
    for recorded in [
        "\"api_key\",\"[REDACTED]\"",
        "\"X-API-Key\",\"[REDACTED]\"",
        "\"Cookie\",\"api_key=[REDACTED]\"",
        "api_key=[REDACTED]\"",
        "\"Basic base64([REDACTED]:)\"",
        "\"Basic base64(:[REDACTED])\"",
        "\"Bearer [REDACTED] junk\"",
    ] {
        assert!(log.contains(recorded), "{recorded} not in the request log");
    }
}

#[test]
fn a_channel_probes_curl_line_sends_the_key_there_from_the_variable() {
    let key = random_key();
    for (accepts, rule, sent) in [
        (
            "query",
            "inputs/list-pets/required",
            "GET /v1/pets?api_key=",
        ),
        ("x-api-key", "inputs/get-pet/required", "x-api-key: "),
        ("cookie", "inputs/list-pets/required", "cookie: api_key="),
    ] {
        let dir = temp_dir(&format!("curl-{accepts}"));
        let reports = dir.join("reports");
        let url = channel_echo_target(&key, accepts);
        let output = run(&["--base-url", &url, "--exact", rule], &key, &reports);
        assert_eq!(output.status.code(), Some(1), "{accepts}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(reports.join("report.json")).unwrap())
                .unwrap();
        let curl = report["rules"][0]["failure"]["curl"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            curl.contains("${PETSTORE_API_KEY}") && !curl.contains(&key),
            "{curl}"
        );
        // Run as written, with the key in its variable: the target sees the key there.
        let ran = Command::new("bash")
            .arg("-c")
            .arg(&curl)
            .env("PETSTORE_API_KEY", &key)
            .output()
            .unwrap();
        let answer = String::from_utf8_lossy(&ran.stdout).to_string();
        let echo = answer
            .lines()
            .find_map(|line| {
                line.strip_prefix("X-Echo: ")
                    .or(line.strip_prefix("x-echo: "))
            })
            .unwrap_or_else(|| panic!("{accepts}: no echo in {answer}"));
        let at = echo
            .to_ascii_lowercase()
            .find(&sent.to_ascii_lowercase())
            .unwrap_or_else(|| panic!("{accepts}: {sent} not in {echo}"));
        let value: String = echo[at + sent.len()..]
            .split([' ', '|', '&', ';'])
            .next()
            .unwrap()
            .to_string();
        let decoded = percent_decoded(&value);
        assert_eq!(decoded, key, "{accepts}: {curl}");
    }
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], text.get(i + 1..i + 3)) {
            (b'%', Some(hex)) if u8::from_str_radix(hex, 16).is_ok() => {
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_gateways_own_x_api_key_is_never_doubled_by_the_channel_probe() {
    let key = random_key();
    let token = random_key();
    let dir = temp_dir("gateway-x-api-key");
    let reports = dir.join("reports");
    let (_server, url) = serve_reference(&key, &[]);
    let output = run(
        &[
            "--base-url",
            &url,
            "-H",
            &format!("X-API-Key: {token}"),
            "--exact",
            "inputs/list-pets/required",
        ],
        &key,
        &reports,
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(reports.join("report.json")).unwrap();
    assert!(!report.contains(&token) && !report.contains(&key));
    let value: serde_json::Value = serde_json::from_str(&report).unwrap();
    let row = |input: &str| {
        value["request_coverage"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["operation"] == "listPets" && row["input"] == input)
            .unwrap_or_else(|| panic!("no {input} row"))
            .clone()
    };
    assert_eq!(row("header X-API-Key")["outcome"], "not-tried");
    assert!(
        row("header X-API-Key")["note"]
            .as_str()
            .unwrap()
            .contains("the run sends this header itself"),
        "{}",
        row("header X-API-Key")
    );
    assert_eq!(row("header api_key")["outcome"], "tried");
}
