//! The one HTML escaper of the report: every text of the model passes it on its way into
//! report.html.

use std::fmt::Write;

use crate::report::terminal::is_bidi_control;

/// `text` safe in HTML text and in a double- or single-quoted attribute value. Bidirectional
/// controls are written as their code point: a generated name or a target's body holding
/// U+202E would otherwise show the rest of its line reversed.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_bidi_control(c) => {
                let _ = write!(out, "[U+{:04X}]", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}
