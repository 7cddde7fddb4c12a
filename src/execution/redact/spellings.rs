//! The spellings of the key a renderer or a target may give it: escaped for JSON, XML,
//! Markdown and HTML, percent-encoded, base64.

use super::MIN_NEAR_MISS;

/// The ways a renderer or a target may spell `secret`: as is, JSON-escaped (with or without
/// `/` escaped), XML-escaped, Markdown-table-escaped, HTML-escaped (as is or JSON-escaped, the
/// way report.html shows a body), percent-encoded.
pub(super) fn spellings(secret: &str) -> Vec<String> {
    // A JSON string's contents: its encoding less the quotes.
    let inner = |text: &str| {
        let quoted = serde_json::to_string(text).unwrap_or_default();
        quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default()
            .to_string()
    };
    let json = inner(secret);
    let xml = secret
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;");
    let xml_numeric = secret.replace('"', "&#34;").replace('\'', "&#39;");
    // HTML has no `&apos;` of its own: renderers write `&#39;` (report.html) or `&#x27;`.
    let html = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    let mut forms = vec![
        secret.to_string(),
        json.replace('/', "\\/"),
        inner(&json),
        xml.clone(),
        xml_numeric,
        html(secret),
        html(secret).replace("&#39;", "&#x27;"),
        html(&json),
        json,
        xml.replace('|', "\\|"),
        secret.replace('|', "\\|"),
        form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
        form_urlencoded::byte_serialize(secret.as_bytes())
            .collect::<String>()
            .replace('+', "%20"),
    ];
    forms.extend(percent_encodings(secret));
    forms.extend(base64_spellings(secret));
    forms.retain(|form| !form.is_empty());
    forms
}

/// RFC 3986 percent-encodings a target may give the key besides the form one: every byte
/// encoded, or all but the unreserved characters (hex digits of either case are matched, as
/// matching ignores ASCII case).
fn percent_encodings(secret: &str) -> Vec<String> {
    let every: String = secret.bytes().map(|b| format!("%{b:02X}")).collect();
    let unreserved: String = secret
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    vec![every, unreserved]
}

/// The key base64-encoded (standard and URL-safe alphabets) at each of the three alignments
/// it can have inside a longer encoded text (`Basic base64(user:KEY)`): the characters
/// that depend on the key's bytes alone.
fn base64_spellings(secret: &str) -> Vec<String> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let mut forms = Vec::new();
    // A short key's few encoded characters are too common a substring to take out.
    if secret.len() < MIN_NEAR_MISS {
        return forms;
    }
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret.as_bytes());
        let first = (8 * offset).div_ceil(6);
        let last = 8 * bytes.len() / 6;
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&bytes);
            if let Some(part) = encoded.get(first..last) {
                forms.push(part.to_string());
            }
        }
    }
    forms
}
