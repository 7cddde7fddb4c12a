//! `--request-log`: one JSON line per request (rule, method, path, headers, body), redacted.
//! The bench's raw ceiling writes the same lines, so that a run with a log and the ceiling it
//! is measured against pay the same for it.

use serde::Serialize;

use super::Redactor;
use crate::outcome::RecordedRequest;

/// A line's fields, borrowed from the exchange, in the order the line has always had them.
#[derive(Serialize)]
struct Line<'a> {
    body: &'a Option<String>,
    /// The body's bytes were not UTF-8: `body` writes them escaped (`outcome::escape_body`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    body_escaped: bool,
    headers: &'a [(String, String)],
    method: &'a str,
    path: &'a str,
    rule: &'a str,
}

/// The line (without its newline) for `request`, sent by `rule_id` to a target at `base_url`.
pub fn line(
    rule_id: &str,
    request: &RecordedRequest,
    base_url: &str,
    redactor: &Redactor,
) -> String {
    let line = Line {
        body: &request.body,
        body_escaped: request.body_escaped,
        headers: &request.headers,
        method: &request.method,
        path: request.url.strip_prefix(base_url).unwrap_or(&request.url),
        rule: rule_id,
    };
    // Every file the harness writes is redacted as a whole, whatever its parts were.
    redactor.redact(&serde_json::to_string(&line).unwrap_or_default())
}

/// Writes `line` and its newline, `more` spaces added at the end of its body (the first field):
/// a padded body's whole length is written without being held.
pub fn write_padded(out: &mut impl std::io::Write, line: &str, more: usize) -> std::io::Result<()> {
    let end = body_end(line).filter(|_| more > 0);
    let Some(end) = end else {
        return writeln!(out, "{line}");
    };
    out.write_all(&line.as_bytes()[..end])?;
    let spaces = [b' '; 8192];
    let mut left = more;
    while left > 0 {
        let block = left.min(spaces.len());
        out.write_all(&spaces[..block])?;
        left -= block;
    }
    out.write_all(&line.as_bytes()[end..])?;
    out.write_all(b"\n")
}

/// Where the body string of a line ends (its closing quote), when the line starts with one.
fn body_end(line: &str) -> Option<usize> {
    let start = "{\"body\":\"".len();
    if !line.starts_with("{\"body\":\"") {
        return None;
    }
    let bytes = line.as_bytes();
    let mut at = start;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => return Some(at),
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_rule_and_path_and_holds_no_key() {
        let key = "request-log-test-key";
        let request = RecordedRequest {
            method: "POST".into(),
            url: "http://127.0.0.1:9/v1/pets?echo=request-log-test-key".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Some(r#"{"name":"REQUEST-LOG-TEST-KEY"}"#.into()),
            body_length: None,
            key_channel: None,
            body_escaped: false,
        };
        let line = line(
            "create-pet/x",
            &request,
            "http://127.0.0.1:9/v1",
            &Redactor::new(key),
        );
        let value: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        assert_eq!(value["rule"], "create-pet/x");
        assert_eq!(value["method"], "POST");
        assert!(value["path"].as_str().unwrap().starts_with("/pets?echo="));
        assert!(!line.to_ascii_lowercase().contains(key), "{line}");
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["body", "headers", "method", "path", "rule"]);
        let mut written = Vec::new();
        write_padded(&mut written, &line, 5).unwrap();
        let padded: serde_json::Value = serde_json::from_slice(&written).expect("a JSON line");
        assert_eq!(
            padded["body"],
            format!("{}     ", value["body"].as_str().unwrap())
        );
        assert!(written.ends_with(b"}\n"));
    }
}
