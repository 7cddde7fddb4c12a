//! The one place where the API key is taken out of anything the harness shows or writes.
//!
//! A target's bytes are untrusted: it may echo the key inside a JSON string (escaped as it
//! likes: `\"`, `\/`, `\u0041`), with its letters' case changed, or with a character dropped at
//! either end (a near miss the harness itself sent). Every value taken from a response passes
//! through [`Redactor::redact`] (or [`Redactor::redact_json`]) *before* it is formatted into a
//! verdict, and every file and line the harness writes passes through it again, matching the
//! spellings that JSON, XML, Markdown, HTML and URLs give the key.

use serde_json::Value;

pub use crate::outcome::REDACTED;
use crate::outcome::Verdict;

/// The shortest key prefix that is redacted where a cut leaves it at the end of a text.
pub const MIN_EDGE_PREFIX: usize = 4;

/// Near misses (the key less one character at either end) are redacted only from this length
/// on: shorter ones are too common a substring to take out of every text.
const MIN_NEAR_MISS: usize = 8;

/// Replaces every spelling of the API key with [`REDACTED`].
#[derive(Clone)]
pub struct Redactor {
    /// Every spelling to take out, ASCII-lowercased, longest first (so that a longer escaped
    /// form is replaced before a shorter one inside it).
    forms: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redactor([REDACTED])")
    }
}

/// The ways a renderer or a target may spell `secret`: as is, JSON-escaped (with or without
/// `/` escaped), XML-escaped, Markdown-table-escaped, HTML-escaped (as is or JSON-escaped, the
/// way report.html shows a body), percent-encoded.
fn spellings(secret: &str) -> Vec<String> {
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
    forms.retain(|form| !form.is_empty());
    forms
}

impl Redactor {
    pub fn new(key: &str) -> Redactor {
        let mut secrets = Vec::new();
        if !key.is_empty() {
            secrets.push(key.to_string());
            let chars: Vec<char> = key.chars().collect();
            if chars.len() > MIN_NEAR_MISS {
                secrets.push(chars[1..].iter().collect());
                secrets.push(chars[..chars.len() - 1].iter().collect());
            }
        }
        let mut forms: Vec<String> = secrets
            .iter()
            .flat_map(|secret| spellings(secret))
            .map(|form| form.to_ascii_lowercase())
            .collect();
        forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
        forms.dedup();
        Redactor { forms }
    }

    fn holds_secret(&self, text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        self.forms.iter().any(|form| lower.contains(form.as_str()))
    }

    /// `text` with every spelling of the key replaced, ASCII case ignored.
    pub fn redact(&self, text: &str) -> String {
        if self.forms.is_empty() {
            return text.to_string();
        }
        let text = if text.contains('\\') {
            self.redact_json_literals(text)
        } else {
            text.to_string()
        };
        let mut lower = text.to_ascii_lowercase();
        let mut text = text;
        for form in &self.forms {
            if !lower.contains(form.as_str()) {
                continue;
            }
            // ASCII lowercasing keeps byte offsets, so positions found in `lower` hold in `text`.
            let mut out = String::with_capacity(text.len());
            let mut last = 0;
            for (start, _) in lower.match_indices(form.as_str()) {
                if start < last {
                    continue;
                }
                out.push_str(&text[last..start]);
                out.push_str(REDACTED);
                last = start + form.len();
            }
            out.push_str(&text[last..]);
            text = out;
            lower = text.to_ascii_lowercase();
        }
        text
    }

    /// Like [`Redactor::redact`], for a text that was cut short (a body at its cap, a message
    /// at its length): a prefix of the key of [`MIN_EDGE_PREFIX`] or more characters left at
    /// the end is taken out too.
    pub fn redact_cut(&self, text: &str) -> String {
        let mut text = self.redact(text);
        let lower = text.to_ascii_lowercase();
        let longest = self
            .forms
            .iter()
            .flat_map(|form| {
                (MIN_EDGE_PREFIX..form.len())
                    .rev()
                    .filter(|n| form.is_char_boundary(*n))
                    .find(|n| lower.ends_with(&form[..*n]))
            })
            .max();
        if let Some(n) = longest {
            text.truncate(text.len() - n);
            text.push_str(REDACTED);
        }
        text
    }

    /// Every string (and object key) of a JSON value, redacted.
    pub fn redact_json(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.redact(text)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.redact_json(v)).collect())
            }
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(name, v)| (self.redact(name), self.redact_json(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The verdict with every text it carries passed through the redactor: checks quote what
    /// the target sent, and the target may have echoed the key in any spelling.
    pub fn redact_verdict(&self, verdict: Verdict) -> Verdict {
        match verdict {
            Verdict::Passed => Verdict::Passed,
            Verdict::Failed(mut failure) => {
                self.redact_failure(&mut failure);
                Verdict::Failed(failure)
            }
            Verdict::Inconclusive { reason } => Verdict::inconclusive(self.redact(&reason)),
            Verdict::Skipped { reason } => Verdict::skipped(self.redact(&reason)),
            Verdict::NotDecidable { reason } => Verdict::not_decidable(self.redact(&reason)),
        }
    }

    /// A failure's texts, and those of the distinct failures it carries.
    fn redact_failure(&self, failure: &mut crate::outcome::Failure) {
        failure.expected = self.redact(&failure.expected);
        failure.observed = self.redact(&failure.observed);
        failure.class = failure.class.as_deref().map(|class| self.redact(class));
        if let Some(example) = &mut failure.counterexample {
            example.original = self.redact(&example.original);
            example.minimal = self.redact(&example.minimal);
            example.minimal_value = self.redact_json(&example.minimal_value);
        }
        for step in &mut failure.steps {
            step.what = self.redact(&step.what);
        }
        for more in &mut failure.more {
            self.redact_failure(more);
        }
    }

    /// Redacts inside every JSON string literal of `text` (valid JSON or not) whose decoded
    /// value holds the key, whatever escapes spell it (`\/`, `\u0041`, ...).
    fn redact_json_literals(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'"' {
                i += 1;
                continue;
            }
            let start = i;
            let mut end = i + 1;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            if end >= bytes.len() {
                break;
            }
            let literal = &text[start..=end];
            if literal.contains('\\')
                && let Ok(decoded) = serde_json::from_str::<String>(literal)
                && self.holds_secret(&decoded)
            {
                out.push_str(&text[last..start]);
                let redacted = self.redact(&decoded);
                out.push_str(&serde_json::to_string(&redacted).unwrap_or_default());
                last = end + 1;
            }
            i = end + 1;
        }
        out.push_str(&text[last..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_every_occurrence() {
        let redactor = Redactor::new("s3cret");
        assert_eq!(
            redactor.redact("Bearer s3cret and s3cret"),
            "Bearer [REDACTED] and [REDACTED]"
        );
        assert_eq!(redactor.redact("nothing here"), "nothing here");
        assert!(!format!("{redactor:?}").contains("s3cret"));
    }

    const HARD_KEYS: [&str; 6] = [
        "k&y|with\"<all>\\of/them'",
        "plain-key-0123456789",
        "a/b/c/d/e/f/g/h",
        "pipe|pipe|pipe|pipe",
        "amp&amp&amp&amp",
        "quote\"quote\"quote",
    ];

    #[test]
    fn escaped_spellings_are_redacted() {
        for key in HARD_KEYS {
            let redactor = Redactor::new(key);
            let json_string = serde_json::to_string(key).unwrap();
            let slash_escaped = json_string.replace('/', "\\/");
            let unicode_escaped: String = format!(
                "\"{}\"",
                key.chars()
                    .map(|c| format!("\\u{:04x}", c as u32))
                    .collect::<String>()
            );
            let xml = key
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&apos;");
            let markdown = key.replace('|', "\\|");
            let nested = serde_json::to_string(&format!("message: {json_string}")).unwrap();
            for text in [
                format!("{{\"message\":{json_string}}}"),
                format!("{{\"message\":{slash_escaped}}}"),
                format!("{{\"message\":{unicode_escaped}}}"),
                format!("<failure message=\"{xml}\"/>"),
                format!("| {markdown} |"),
                nested,
                key.to_uppercase(),
                format!("x{key}x"),
            ] {
                let redacted = redactor.redact(&text);
                let decoded = serde_json::from_str::<Value>(&redacted)
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                for haystack in [&redacted, &decoded] {
                    assert!(
                        !haystack.to_lowercase().contains(&key.to_lowercase()),
                        "{key:?} survives in {haystack:?} (from {text:?})"
                    );
                }
                assert!(redacted.contains(REDACTED), "{text:?} -> {redacted:?}");
            }
        }
    }

    #[test]
    fn html_escaped_spellings_are_redacted() {
        for key in HARD_KEYS {
            let redactor = Redactor::new(key);
            let html = |text: &str| {
                text.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace('"', "&quot;")
                    .replace('\'', "&#39;")
            };
            let json_inner = serde_json::to_string(key).unwrap();
            let json_inner = &json_inner[1..json_inner.len() - 1];
            for spelled in [
                html(key),
                html(key).replace("&#39;", "&#x27;"),
                html(key).replace("&#39;", "&#X27;"),
                html(json_inner),
            ] {
                let text =
                    format!("<pre class=\"body\">{{&quot;m&quot;:&quot;{spelled}&quot;}}</pre>");
                let redacted = redactor.redact(&text);
                assert!(
                    !redacted.to_lowercase().contains(&spelled.to_lowercase()),
                    "{key:?}: {spelled:?} survives in {redacted:?}"
                );
                assert!(redacted.contains(REDACTED), "{text:?} -> {redacted:?}");
            }
        }
    }

    #[test]
    fn near_misses_of_a_long_key_are_redacted() {
        let key = "sk-live-9f8e7d6c5b4a";
        let redactor = Redactor::new(key);
        for near in [&key[1..], &key[..key.len() - 1], &key.to_uppercase()[..]] {
            assert_eq!(redactor.redact(&format!("got {near}!")), "got [REDACTED]!");
        }
        // A short key's near misses are not taken out of every text.
        assert_eq!(Redactor::new("abc").redact("ab bc"), "ab bc");
    }

    #[test]
    fn a_prefix_left_at_a_cut_is_redacted() {
        let key = "sk-live-9f8e7d6c5b4a";
        let redactor = Redactor::new(key);
        assert_eq!(redactor.redact_cut("body: sk-l"), "body: [REDACTED]");
        assert_eq!(redactor.redact_cut("body: sk-live-9f"), "body: [REDACTED]");
        assert_eq!(redactor.redact_cut("body: sk-"), "body: sk-");
        assert_eq!(redactor.redact_cut("body: ok"), "body: ok");
        let json_cut = "{\"m\":\"k&y|with\\\"<al";
        let redactor = Redactor::new(HARD_KEYS[0]);
        assert!(redactor.redact_cut(json_cut).ends_with(REDACTED));
    }

    #[test]
    fn json_values_are_redacted_in_strings_and_names() {
        let redactor = Redactor::new("s3cret-key");
        let value = serde_json::json!({"a": ["x s3cret-key"], "S3CRET-KEY": 1, "n": 2});
        let redacted = redactor.redact_json(&value).to_string();
        assert!(
            !redacted.to_lowercase().contains("s3cret-key"),
            "{redacted}"
        );
    }
}
