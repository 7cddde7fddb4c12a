//! `report.json`: the whole report model, for machines, with the digest of its own canonical
//! content (`integrity.sha256`) so that an edit shows.

use super::model::Report;
use crate::contract::sha256_hex;

/// The SHA-256 of a report's canonical JSON (object keys sorted, no spaces) with
/// `integrity.sha256` empty: what the JSON rendering writes there and `verify-report` checks.
pub fn canonical_digest(report: &serde_json::Value) -> String {
    let mut report = report.clone();
    if let Some(integrity) = report.get_mut("integrity") {
        integrity["sha256"] = serde_json::Value::String(String::new());
    }
    sha256_hex(report.to_string().as_bytes())
}

pub fn render(report: &Report) -> String {
    let mut value = match serde_json::to_value(report) {
        Ok(value) => value,
        Err(e) => return format!("{{\"error\": \"cannot serialize report: {e}\"}}\n"),
    };
    value["integrity"]["sha256"] = serde_json::Value::String(canonical_digest(&value));
    let mut text = serde_json::to_string_pretty(&value)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize report: {e}\"}}"));
    text.push('\n');
    text
}
