//! A failure's exchange as text, the way HTTP writes it on the wire (request line, headers, a
//! blank line, the body): the HTML report shows it in its cards, junit.xml in the failure's
//! body. The key is already redacted in what the report holds.

use std::fmt::Write;

use crate::outcome::{RecordedRequest, RecordedResponse};

pub(super) fn request_text(request: &RecordedRequest) -> String {
    let mut text = format!("{} {}\n", request.method, request.url);
    for (name, value) in &request.headers {
        let _ = writeln!(text, "{name}: {value}");
    }
    if let Some(body) = &request.body {
        let _ = write!(text, "\n{body}");
    }
    if let Some(length) = request.body_length {
        let _ = write!(text, "\n[... {length} bytes in all]");
    }
    text.trim_end().to_string()
}

pub(super) fn response_text(response: &RecordedResponse) -> String {
    let mut text = format!("{} {}\n", response.version, response.status);
    for (name, value) in &response.headers {
        let _ = writeln!(text, "{name}: {value}");
    }
    let _ = write!(text, "\n{}", response.body);
    text.trim_end().to_string()
}
