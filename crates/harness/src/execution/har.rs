//! `--har FILE`: every exchange of a run as HTTP Archive 1.2, the format browsers, proxies and
//! Schemathesis write, for other tools to read. Entries are streamed to the file as they are
//! recorded (memory stays flat however long the run), each passed through the run's redactor
//! first, so the key and credential headers never reach the file.

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::Redactor;
use crate::outcome::Exchange;

/// The archive being written; `finish` closes it (a run that ends writes a whole file).
pub struct Har {
    out: Mutex<HarFile>,
}

struct HarFile {
    writer: std::io::BufWriter<std::fs::File>,
    entries: u64,
}

fn pairs(headers: &[(String, String)]) -> Vec<Value> {
    headers
        .iter()
        .map(|(name, value)| json!({ "name": name, "value": value }))
        .collect()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// One exchange as a HAR entry (with `_rule`, the rule that sent it, and `_error` when the
/// transport gave no answer: status 0, as browsers record a request that got none).
pub fn entry(rule: &str, exchange: &Exchange) -> Value {
    let started = SystemTime::now() - Duration::from_millis(exchange.elapsed_ms);
    let request = &exchange.request;
    let query: Vec<Value> = request
        .url
        .split_once('?')
        .map(|(_, query)| {
            form_urlencoded::parse(query.as_bytes())
                .map(|(name, value)| json!({ "name": name, "value": value }))
                .collect()
        })
        .unwrap_or_default();
    let mut har_request = json!({
        "method": request.method,
        "url": request.url,
        "httpVersion": exchange.response.as_ref().map_or("HTTP/1.1", |r| r.version.as_str()),
        "cookies": [],
        "headers": pairs(&request.headers),
        "queryString": query,
        "headersSize": -1,
        "bodySize": request.body.as_ref().map_or(0, |b| b.len() as i64),
    });
    if let Some(body) = &request.body {
        har_request["postData"] = json!({
            "mimeType": header(&request.headers, "content-type").unwrap_or(""),
            "text": body,
        });
    }
    let response = match &exchange.response {
        Some(response) => json!({
            "status": response.status,
            "statusText": http_reason(response.status),
            "httpVersion": response.version,
            "cookies": [],
            "headers": pairs(&response.headers),
            "content": {
                "size": response.body.len() + response.body_omitted,
                "mimeType": header(&response.headers, "content-type").unwrap_or(""),
                "text": response.body,
            },
            "redirectURL": header(&response.headers, "location").unwrap_or(""),
            "headersSize": -1,
            "bodySize": -1,
        }),
        None => json!({
            "status": 0,
            "statusText": "",
            "httpVersion": "",
            "cookies": [],
            "headers": [],
            "content": { "size": 0, "mimeType": "" },
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
            "_error": exchange.transport_error,
        }),
    };
    json!({
        "startedDateTime": humantime::format_rfc3339_millis(started).to_string(),
        "time": exchange.elapsed_ms,
        "request": har_request,
        "response": response,
        "cache": {},
        "timings": { "send": 0, "wait": exchange.elapsed_ms, "receive": 0 },
        "_rule": rule,
    })
}

fn http_reason(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

impl Har {
    /// Starts the archive at `path`; a symbolic link planted there is refused, not followed.
    pub fn create(path: &std::path::Path) -> std::io::Result<Har> {
        let mut writer = std::io::BufWriter::new(super::files::create(path)?);
        writeln!(
            writer,
            "{{\"log\":{{\"version\":\"1.2\",\"creator\":{{\"name\":\"petstore-conformance\",\"version\":\"{}\"}},\"entries\":[",
            env!("CARGO_PKG_VERSION")
        )?;
        Ok(Har {
            out: Mutex::new(HarFile { writer, entries: 0 }),
        })
    }

    /// Appends one exchange, redacted; one that never left is not an exchange.
    pub fn add(&self, rule: &str, exchange: &Exchange, redactor: &Redactor) {
        if !exchange.was_sent() {
            return;
        }
        // The answer is the target's: its header values lose runs of the key too.
        let mut exchange = exchange.clone();
        redactor.redact_answer(&mut exchange);
        let text = redactor.redact(&entry(rule, &exchange).to_string());
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let separator = if out.entries == 0 { "" } else { ",\n" };
        out.entries += 1;
        let _ = write!(out.writer, "{separator}{text}");
    }

    /// Closes the archive: after this the file is whole JSON.
    pub fn finish(&self) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out.writer, "\n]}}}}");
        let _ = out.writer.flush();
    }
}
