//! `report.json`: the whole report model, for machines.

use super::Report;

pub fn render(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize report: {e}\"}}"));
    text.push('\n');
    text
}
