//! The key as a target echoes it back, in whatever channel it was sent (header, query, cookie,
//! form) and however it is escaped, is in no byte written; the channel probe's curl line sends
//! it from its variable, and a gateway's own X-API-Key is never doubled.

use std::process::Command;

use crate::common;

use common::{serve_reference, servers};

use super::{assert_absent_decoded, random_key, run, run_logged, spelled, temp_dir, written_by};

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
        let headers = [
            ("Content-Type", content_type),
            ("X-Seen", header_form.as_str()),
        ];
        servers::respond(
            stream,
            "500 Internal Server Error",
            &headers,
            body.as_bytes(),
        )
    })
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
    let verified = common::bin()
        .arg("verify-report")
        .arg(&reports)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verified.stdout);
    assert_eq!(verified.status.code(), Some(0), "{said}");
    assert!(said.starts_with("intact"), "{said}");
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
