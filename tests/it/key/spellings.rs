//! The key in every spelling a target or a renderer may give it (JSON, XML and HTML escapes,
//! percent-encoding, base64, a cut at the body cap) is in no byte a run writes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::common;

use common::process::{run_command, run_to_end};
use common::{failed_rules, read_json, rules, servers};
use petstore_conformance::report::{CREATED_PETS_FILE, REPORT_FILES};

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("safety", name)
}

/// A JSON string literal of `text`, quotes included.
fn json_literal(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A JSON string's contents, less the quotes.
fn json_inner(text: &str) -> String {
    let literal = json_literal(text);
    literal[1..literal.len() - 1].to_string()
}

/// A JSON string literal with every character that is not ASCII alphanumeric as `\uXXXX`.
fn unicode_literal(text: &str, upper_hex: bool) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if upper_hex {
            out.push_str(&format!("\\u{:04X}", c as u32));
        } else {
            out.push_str(&format!("\\u{:04x}", c as u32));
        }
    }
    out.push('"');
    out
}

fn xml_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// As report.html writes a text: `&#39;` for `'` (HTML has no `&apos;` of its own).
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Every spelling of `key` that must appear nowhere, named; compared ignoring ASCII case (so
/// the lowercase and uppercase forms are covered too).
fn spellings(key: &str) -> Vec<(&'static str, String)> {
    let json = json_inner(key);
    let unicode = unicode_literal(key, false);
    vec![
        ("raw", key.to_string()),
        ("JSON-escaped", json.clone()),
        ("JSON-escaped with \\/", json.replace('/', "\\/")),
        ("JSON-escaped twice", json_inner(&json)),
        ("\\u-escaped", unicode[1..unicode.len() - 1].to_string()),
        ("XML-escaped", xml_escaped(key)),
        ("XML-escaped JSON", xml_escaped(&json)),
        ("HTML-escaped", html_escaped(key)),
        (
            "HTML-escaped with &#x27;",
            html_escaped(key).replace("&#39;", "&#x27;"),
        ),
        ("HTML-escaped JSON", html_escaped(&json)),
        ("Markdown-escaped", key.replace('|', "\\|")),
        ("Markdown-escaped JSON", json.replace('|', "\\|")),
        ("percent-encoded", percent_encoded(key)),
    ]
}

/// Fails the test if any spelling of `secret` is in any of `written` (name, bytes).
fn assert_absent(secret: &str, written: &[(String, Vec<u8>)]) {
    for (form_name, form) in spellings(secret) {
        let form = form.to_ascii_lowercase();
        for (file, bytes) in written {
            let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
            if let Some(at) = text.find(&form) {
                let start = text[..at]
                    .char_indices()
                    .rev()
                    .nth(80)
                    .map_or(0, |(i, _)| i);
                let end = (at + form.len() + 80).min(text.len());
                let end = (end..=text.len())
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(text.len());
                panic!(
                    "the key {secret:?} leaked ({form_name} form) in {file}: ...{}...",
                    &text[start..end]
                );
            }
        }
    }
}

/// Every file under `dir` (hidden and temporary ones too), with its name.
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    files
}

/// A target that echoes the Authorization header back in every escaping it can think of.
fn echoing_target(key: &str) -> String {
    let key = key.to_string();
    let ids = AtomicUsize::new(1);
    servers::raw(move |request, n, stream| {
        let n = n - 1;
        let seen = request.header("authorization").unwrap_or("").to_string();
        let right = seen == format!("Bearer {key}");
        // Every other response escapes `/` as `\/`; the rest spell every non-alphanumeric
        // character as \uXXXX (lower or upper hex).
        let literal = |text: &str| match n % 4 {
            0 | 2 => json_literal(text).replace('/', "\\/"),
            1 => unicode_literal(text, false),
            _ => unicode_literal(text, true),
        };
        let echo = ("X-Seen-Authorization", seen.as_str());
        if !right {
            let body = format!(
                r#"{{"code":"unauthorized","message":{},"status":401}}"#,
                literal(&format!("bad credential: {seen}"))
            );
            let challenge = ("WWW-Authenticate", "Bearer");
            return servers::respond_json(stream, "401 Unauthorized", &[echo, challenge], &body);
        }
        match (request.method(), request.path()) {
            ("GET", "/v1/pets") => servers::respond_json(stream, "200 OK", &[echo], "[]"),
            ("POST", "/v1/pets") => {
                let parsed = serde_json::from_slice::<Value>(&request.body);
                let Ok(Value::Object(mut pet)) = parsed else {
                    let body = format!(
                        r#"{{"code":"bad-request","message":{},"status":400}}"#,
                        literal(&format!("not a pet, {key}"))
                    );
                    return servers::respond_json(stream, "400 Bad Request", &[echo], &body);
                };
                let id = ids.fetch_add(1, Ordering::SeqCst);
                pet.insert("id".into(), Value::from(id as i64));
                pet.insert("message".into(), Value::from(format!("created for {key}")));
                let mut body = serde_json::to_string(&Value::Object(pet)).unwrap();
                if n.is_multiple_of(2) {
                    body = body.replace('/', "\\/");
                }
                let location = format!("/v1/pets/{id}");
                let headers = [echo, ("Location", location.as_str())];
                servers::respond_json(stream, "201 Created", &headers, &body)
            }
            _ => {
                let body = format!(
                    r#"{{"code":"not-found","message":{},"status":404}}"#,
                    literal(&format!("nothing here for {key}"))
                );
                servers::respond_json(stream, "404 Not Found", &[echo], &body)
            }
        }
    })
}

#[test]
fn the_key_survives_no_escaping_target() {
    let keys = [
        r#"k&y|"<\>/'x-0123456789"#,
        r#"pipe|amp&lt<quote"back\slash/"#,
        "plainLongKeyQ7w3Z9x1-4f9a2c7e1b3d5f6a",
    ];
    // The three runs at once: each takes its whole time budget.
    let runs: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(n, key)| {
            let key = key.to_string();
            std::thread::spawn(move || {
                let url = echoing_target(&key);
                let dir = temp_dir(&format!("escaping-{n}"));
                let report_dir = dir.join("reports");
                let log = dir.join("requests.jsonl");
                let finished = run_to_end(
                    &mut run_command(
                        &[
                            "--base-url",
                            &url,
                            "--gate",
                            "all",
                            "--request-log",
                            log.to_str().unwrap(),
                            "--timeout",
                            "2",
                            "--time-budget",
                            "5",
                        ],
                        Some(&key),
                        &report_dir,
                    ),
                    Duration::from_secs(90),
                );
                (key, dir, report_dir, log, finished)
            })
        })
        .collect();
    for handle in runs {
        let (key, dir, report_dir, log, finished) = handle.join().unwrap();
        finished.assert_no_panic();
        assert!(
            matches!(finished.code, Some(0 | 1 | 3)),
            "{key:?}: exit {:?}\n{}",
            finished.code,
            finished.stderr()
        );
        let mut written = vec![
            ("stdout".to_string(), finished.stdout.clone()),
            ("stderr".to_string(), finished.stderr.clone()),
            (log.display().to_string(), std::fs::read(&log).unwrap()),
        ];
        let reports = files_in(&report_dir);
        for name in REPORT_FILES.into_iter().chain([CREATED_PETS_FILE]) {
            assert!(
                reports.iter().any(|(file, _)| file.ends_with(name)),
                "{key:?}: no {name} written"
            );
        }
        written.extend(reports);
        assert_absent(&key, &written);
        // The target's echoes reached the reports, redacted: the 401 bodies and the
        // X-Seen-Authorization header of failed rules' responses, the message of created pets.
        let report = read_json(&report_dir.join("report.json"));
        let responses: String = rules(&report)
            .iter()
            .filter_map(|rule| rule["failure"].get("response"))
            .map(Value::to_string)
            .collect();
        assert!(
            responses.contains("[REDACTED]"),
            "{key:?}: no failed rule shows a redacted echo of the key; failed: {:?}",
            failed_rules(&report)
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_key_straddling_the_body_cap_leaves_no_prefix() {
    let key = "zq9XkW-straddles-the-cap-7Hc2Lm";
    let prefix = &key[..6];
    // The key starts 6 bytes before byte 1024: a cap of 1024 bytes keeps `zq9XkW` only.
    let head = format!("{{\"pad\":\"{}\",\"echo\":\"", "a".repeat(1000));
    assert_eq!(head.len(), 1018);
    let body = format!("{head}{key}\",\"tail\":\"{}\"}}", "b".repeat(200));
    let url = servers::raw(move |_, _, stream| servers::respond_json(stream, "200 OK", &[], &body));
    let dir = temp_dir("body-cap");
    let report_dir = dir.join("reports");
    let log = dir.join("requests.jsonl");
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--gate",
                "all",
                "--body-cap",
                "1024",
                "--cases",
                "4",
                "--timeout",
                "2",
                "--request-log",
                log.to_str().unwrap(),
            ],
            Some(key),
            &report_dir,
        ),
        Duration::from_secs(60),
    );
    finished.assert_no_panic();
    // 200 where 401 is due: the auth rules fail, and show the cut body.
    assert_eq!(finished.code, Some(1), "{}", finished.stderr());
    let mut written = vec![
        ("stdout".to_string(), finished.stdout.clone()),
        ("stderr".to_string(), finished.stderr.clone()),
        (log.display().to_string(), std::fs::read(&log).unwrap()),
    ];
    written.extend(files_in(&report_dir));
    for (file, bytes) in &written {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text
                .to_ascii_lowercase()
                .contains(&prefix.to_ascii_lowercase()),
            "the key's first 6 characters {prefix:?} are in {file}"
        );
    }
    // The cut bodies are in the report, their end redacted.
    let report = read_json(&report_dir.join("report.json"));
    let cut: Vec<&str> = rules(&report)
        .iter()
        .filter_map(|rule| rule["failure"]["response"]["body"].as_str())
        .filter(|body| body.contains("\"echo\":\""))
        .collect();
    assert!(
        !cut.is_empty(),
        "no failed rule shows the cut body: {:?}",
        failed_rules(&report)
    );
    for body in cut {
        assert!(
            body.ends_with("\"echo\":\"[REDACTED]"),
            "{}",
            &body[body.len().saturating_sub(60)..]
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

// The key as a careless target echoes it: \u-escaped (either case) in a string never closed,
// nested as JSON inside a JSON string, \u-escaped across the body-cap cut, percent-encoded
// (either case), base64 (standard and URL-safe, at any alignment).

/// Every character of `text` as `\uXXXX`.
fn every_char_escaped(text: &str, upper_hex: bool) -> String {
    text.chars()
        .map(|c| {
            if upper_hex {
                format!("\\u{:04X}", c as u32)
            } else {
                format!("\\u{:04x}", c as u32)
            }
        })
        .collect()
}

/// Spellings that the renderers never give but a target may: each must be gone too.
fn echoed_spellings(key: &str) -> Vec<(&'static str, String)> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let every_byte: String = key.bytes().map(|b| format!("%{b:02x}")).collect();
    vec![
        (
            "\\u-escaped, every character",
            every_char_escaped(key, false),
        ),
        ("percent-encoded, every byte", every_byte),
        ("base64", STANDARD_NO_PAD.encode(key)),
        ("base64url", URL_SAFE_NO_PAD.encode(key)),
        // `user:` puts the key at the third alignment of base64's groups.
        (
            "base64 of user:KEY",
            STANDARD_NO_PAD.encode(format!("usr:{key}"))[8..].to_string(),
        ),
    ]
}

/// `text` with `\\` unescaped repeatedly and every `\uXXXX` decoded: what a reader of the
/// file, decoding as often as it likes, would see.
fn decoded_fully(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..4 {
        text = text.replace("\\\\", "\\");
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let hex = rest.get(at + 2..at + 6).unwrap_or("");
        match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            Some(c) if hex.len() == 4 => {
                out.push(c);
                rest = &rest[at + 6..];
            }
            _ => {
                out.push_str("\\u");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn a_target_echoing_the_key_in_any_encoding_leaks_nothing() {
    use base64::Engine;
    let key = "zq9XkW-echo/KEY|7Hc2Lm-e&x";
    let prefix = "zq9XkW";
    let bodies: Vec<String> = vec![
        // \u-escaped, lower and upper hex, in a string never closed.
        format!("{{\"message\":\"seen {}", every_char_escaped(key, false)),
        format!("{{\"message\":\"seen {}", every_char_escaped(key, true)),
        // Nested: a JSON text inside a JSON string, the key \u-escaped in the inner one.
        format!(
            "{{\"message\":{}}}",
            serde_json::to_string(&format!(
                "{{\"inner\":\"{}\"}}",
                every_char_escaped(key, true)
            ))
            .unwrap()
        ),
        // Percent-encoded, every byte, lower and upper hex.
        format!(
            "{{\"link\":\"/v1/pets?k={}\"}}",
            key.bytes().map(|b| format!("%{b:02x}")).collect::<String>()
        ),
        format!("{{\"link\":\"/v1/pets?k={}\"}}", percent_encoded(key)),
        // base64 and base64url, alone and after `usr:`.
        format!(
            "{{\"basic\":\"{}\",\"url\":\"{}\",\"b\":\"{}\"}}",
            base64::engine::general_purpose::STANDARD.encode(format!("usr:{key}")),
            base64::engine::general_purpose::URL_SAFE.encode(key),
            base64::engine::general_purpose::STANDARD.encode(format!("u:{key}")),
        ),
        // \u-escaped across the cut at 1024 bytes: the key's first 7 characters before it.
        {
            let head = format!("{{\"pad\":\"{}\",\"echo\":\"", "a".repeat(964));
            assert_eq!(head.len(), 1024 - 7 * 6);
            format!("{head}{}\"}}", every_char_escaped(key, false))
        },
    ];
    // 500 to everything: every rule fails and shows the body it got.
    let url = servers::raw(move |_, n, stream| {
        let body = &bodies[(n - 1) % bodies.len()];
        servers::respond_json(stream, "500 Internal Server Error", &[], body)
    });
    let dir = temp_dir("echoed-encodings");
    let report_dir = dir.join("reports");
    let log = dir.join("requests.jsonl");
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--gate",
                "all",
                "--body-cap",
                "1024",
                "--cases",
                "8",
                "--timeout",
                "2",
                "--request-log",
                log.to_str().unwrap(),
            ],
            Some(key),
            &report_dir,
        ),
        Duration::from_secs(90),
    );
    finished.assert_no_panic();
    assert!(
        matches!(finished.code, Some(1)),
        "exit {:?}: {}",
        finished.code,
        finished.stderr()
    );
    let mut written = vec![
        ("stdout".to_string(), finished.stdout.clone()),
        ("stderr".to_string(), finished.stderr.clone()),
    ];
    if let Ok(bytes) = std::fs::read(&log) {
        written.push((log.display().to_string(), bytes));
    }
    written.extend(files_in(&report_dir));
    assert_absent(key, &written);
    for (form_name, form) in echoed_spellings(key) {
        let form = form.to_ascii_lowercase();
        for (file, bytes) in &written {
            let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
            assert!(!text.contains(&form), "{form_name} of the key in {file}");
        }
    }
    for (file, bytes) in &written {
        let decoded = decoded_fully(&String::from_utf8_lossy(bytes));
        assert!(
            !decoded.contains(prefix),
            "the key's first characters, decoded, in {file}"
        );
    }
    // The echoes reached the reports, redacted.
    let report = std::fs::read_to_string(report_dir.join("report.json")).unwrap_or_default();
    assert!(
        report.contains("[REDACTED]"),
        "no redacted echo in report.json"
    );
    let _ = std::fs::remove_dir_all(dir);
}
