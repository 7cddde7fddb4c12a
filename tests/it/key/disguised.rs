//! The key as a hostile target spells it where escaping JSON and HTML is no help: a body in
//! UTF-16 (its charset declared or not), the key in hex, base32 or base85, encoded twice or as
//! quoted-printable, with what the eye does not see between its characters, in fullwidth
//! letters, half of it, split across two headers. No byte written holds it, nor any run of 8
//! of its characters, however a reader decodes what was written; the control bytes the
//! target sends are escapes in the text reports. And a proxy's password given on the command
//! line is in no byte written either.

use crate::common;

use common::servers;

use super::{decoded, random_key, run_logged, temp_dir, written_by};

/// Control bytes a terminal acts on: clear the screen, retitle it, ring.
const CONTROLS: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\0";

/// Each of `text`'s bytes as two hex digits.
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// RFC 4648 base32.
fn base32(text: &str) -> String {
    let bits: Vec<u8> = text
        .bytes()
        .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1))
        .collect();
    bits.chunks(5)
        .map(|chunk| {
            let value = (0..5).fold(0, |v, i| v << 1 | chunk.get(i).copied().unwrap_or(0));
            char::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[value as usize])
        })
        .collect()
}

/// Ascii85, as btoa and PDF write it.
fn base85(text: &str) -> String {
    let mut out = String::new();
    for group in text.as_bytes().chunks(4) {
        let mut word = [0u8; 4];
        word[..group.len()].copy_from_slice(group);
        let value = u32::from_be_bytes(word);
        let digits: Vec<char> = (0..5)
            .rev()
            .map(|p| char::from(33 + (value / 85u32.pow(p) % 85) as u8))
            .collect();
        out.extend(&digits[..group.len() + 1]);
    }
    out
}

/// A target that answers every request 500, echoing the key it was sent in one spelling per
/// answer, each answer with control bytes in its body.
fn hostile_target() -> String {
    servers::raw(|request, n, stream| {
        let key = request
            .header("authorization")
            .and_then(|value| value.strip_prefix("Bearer "))
            .unwrap_or_default()
            .to_string();
        let (head, tail) = key.split_at(key.len() / 2);
        let n = n - 1;
        let json = |seen: &str| {
            serde_json::json!({"code": "boom", "message": format!("seen {seen} {CONTROLS}")})
                .to_string()
        };
        let utf16le =
            |text: String| -> Vec<u8> { text.encode_utf16().flat_map(u16::to_le_bytes).collect() };
        let utf16be =
            |text: String| -> Vec<u8> { text.encode_utf16().flat_map(u16::to_be_bytes).collect() };
        let spelled = |spell: &dyn Fn(char) -> String| key.chars().map(spell).collect::<String>();
        let (content_type, body, extra): (&str, Vec<u8>, Vec<(&str, String)>) = match n % 12 {
            0 => (
                "application/json; charset=utf-16le",
                utf16le(json(&key)),
                vec![],
            ),
            1 => (
                "application/json; charset=utf-16be",
                utf16be(json(&key)),
                vec![],
            ),
            2 => ("application/json", utf16le(json(&key)), vec![]),
            3 => ("application/json", json(&hex(&key)).into_bytes(), vec![]),
            4 => (
                "application/json",
                json(&format!("half {head}")).into_bytes(),
                vec![
                    ("X-Part-One", head.to_string()),
                    ("X-Part-Two", tail.to_string()),
                ],
            ),
            5 => (
                "text/plain",
                format!("{} {CONTROLS}", spelled(&|c| format!("{c}\u{200b}"))).into_bytes(),
                vec![],
            ),
            6 => ("application/json", json(&base32(&key)).into_bytes(), vec![]),
            7 => (
                "text/plain",
                format!("<~{}~>", base85(&key)).into_bytes(),
                vec![],
            ),
            8 => (
                "application/json",
                json(
                    &key.bytes()
                        .map(|b| format!("%25{b:02X}"))
                        .collect::<String>(),
                )
                .into_bytes(),
                vec![],
            ),
            9 => {
                let qp: String = key
                    .bytes()
                    .enumerate()
                    .map(|(i, b)| match i % 9 {
                        8 => format!("={b:02X}=\r\n"),
                        _ => format!("={b:02X}"),
                    })
                    .collect();
                (
                    "text/plain",
                    format!("{qp}\r\n{CONTROLS}").into_bytes(),
                    vec![],
                )
            }
            10 => (
                "application/json",
                json(&spelled(&|c| match c {
                    '!'..='~' => char::from_u32(c as u32 + 0xfee0).unwrap().to_string(),
                    c => c.to_string(),
                }))
                .into_bytes(),
                vec![],
            ),
            _ => (
                "text/plain; charset=utf-16",
                [0xff, 0xfe]
                    .into_iter()
                    .chain(utf16le(format!("{key} {CONTROLS}")))
                    .collect(),
                vec![],
            ),
        };
        let mut headers = vec![("Content-Type", content_type)];
        headers.extend(extra.iter().map(|(name, value)| (*name, value.as_str())));
        servers::respond(stream, "500 Internal Server Error", &headers, &body)
    })
}

/// The ways a reader may look at `text`: as it is, with what shows nothing dropped and
/// fullwidth letters folded, and that decoded (character references, `\u`), percent-decoded
/// twice, and quoted-printable decoded.
fn views(text: &str) -> Vec<String> {
    let plain: String = text
        .chars()
        .filter(|c| !c.is_control() && !('\u{200b}'..='\u{206f}').contains(c) && *c != '\u{feff}')
        .map(|c| match c {
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap(),
            c => c,
        })
        .collect();
    let unescaped = |text: &str, mark: char| -> String {
        let mut out = Vec::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(byte) if bytes[i] == mark as u8 => {
                    out.push(byte);
                    i += 3;
                }
                _ => {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    let percent = unescaped(&unescaped(&plain, '%'), '%');
    let quoted = unescaped(&text.replace("=\r\n", ""), '=');
    vec![text.to_string(), decoded(&plain), plain, percent, quoted]
}

#[test]
fn a_key_in_another_charset_encoding_or_disguise_is_in_no_byte_written_nor_half_of_it() {
    let key = random_key();
    let dir = temp_dir("disguised");
    let reports = dir.join("reports");
    let output = run_logged(&hostile_target(), &key, &dir, &reports);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = written_by(&output, &dir, &reports);
    let chars: Vec<char> = key.chars().collect();
    let reversed: String = key.chars().rev().collect();
    let mut leaks: Vec<(String, String)> = chars
        .windows(8)
        .map(|run| ("a run of 8 of the key".to_string(), run.iter().collect()))
        .collect();
    for (what, form) in [
        ("the key reversed", reversed),
        ("hex", hex(&key)),
        ("base32", base32(&key)),
        ("base85", base85(&key)),
    ] {
        let form: Vec<char> = form.chars().collect();
        // 16 characters of an encoded form are 10 or more of the key.
        leaks.extend(
            form.windows(16)
                .map(|run| (what.to_string(), run.iter().collect())),
        );
    }
    for (name, bytes) in &written {
        for view in views(&String::from_utf8_lossy(bytes)) {
            let view = view.to_ascii_lowercase();
            for (what, leak) in &leaks {
                assert!(
                    !view.contains(&leak.to_ascii_lowercase()),
                    "{what} ({leak}) in {name}"
                );
            }
        }
    }
    // The bodies reached the reports, redacted, and their control bytes as escapes.
    for name in ["summary.md", "report.html", "junit.xml"] {
        let text = std::fs::read_to_string(reports.join(name)).unwrap();
        assert!(text.contains("[REDACTED]"), "{name}");
        for control in ['\u{1b}', '\u{7}', '\0'] {
            assert!(!text.contains(control), "{control:?} in {name}");
        }
        assert!(
            text.contains("\\u{1b}]0;pwned\\u{7}\\u{0}"),
            "{name} shows no escaped control bytes"
        );
    }
}

#[test]
fn a_proxys_password_is_in_no_byte_written_nor_printed() {
    let password = format!("pX7{}", &random_key()[4..24]);
    // The proxy answers every request itself, 500, echoing the credentials it was given.
    let proxy = servers::raw(|request, _, stream| {
        let seen = request.header("proxy-authorization").unwrap_or("none");
        let body = serde_json::json!({"code": "proxy", "message": format!("seen {seen}")});
        servers::respond_json(
            stream,
            "500 Internal Server Error",
            &[("X-Seen", seen)],
            &body.to_string(),
        )
    });
    let proxy = proxy.replace("http://", &format!("http://ops:{password}@"));
    let dir = temp_dir("proxy-password");
    let reports = dir.join("reports");
    let run = |extra: &[&str]| {
        let mut command = common::bin();
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy().to_ascii_lowercase();
            if name.starts_with("petstore_") || name.ends_with("_proxy") {
                command.env_remove(name.to_uppercase()).env_remove(&name);
            }
        }
        command
            .arg("run")
            .args(["--base-url", "http://127.0.0.1:9/v1", "--proxy", &proxy])
            .args(["--gate", "all", "--cases", "2", "--timeout", "5"])
            // Its failures are the proxy's: no counterexample into the repository's cases/.
            .arg("--no-regressions")
            .arg("--report-dir")
            .arg(&reports)
            .args(extra)
            .env("PETSTORE_API_KEY", random_key())
            .output()
            .unwrap()
    };
    let printed = run(&["--print-config"]);
    let said = String::from_utf8_lossy(&printed.stdout);
    assert_eq!(printed.status.code(), Some(0), "{said}");
    assert!(said.contains("http://[REDACTED]@127.0.0.1:"), "{said}");
    let output = run(&[]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut written = written_by(&output, &dir, &reports);
    written.push(("--print-config".into(), printed.stdout.clone()));
    written.push(("--print-config stderr".into(), printed.stderr.clone()));
    for (name, bytes) in &written {
        for view in views(&String::from_utf8_lossy(bytes)) {
            assert!(!view.contains(&password), "the proxy's password in {name}");
        }
    }
    // The Re-run line reads the userinfo from a variable of its own.
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(
        summary.contains("--proxy \"http://${PETSTORE_PROXY_USERINFO}@127.0.0.1:"),
        "{summary}"
    );
}
