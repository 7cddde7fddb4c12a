//! The one place where the API key is taken out of anything the harness shows or writes.
//!
//! A target's bytes are untrusted: it may echo the key inside a JSON string (escaped as it
//! likes: `\"`, `\/`, `\u0041`), with its letters' case changed, or with a character dropped at
//! either end (a near miss the harness itself sent). Every value taken from a response passes
//! through [`Redactor::redact_sent`] *before* it is formatted into a verdict or recorded, and
//! every file and line the harness writes passes through [`Redactor::redact`], matching the
//! spellings that JSON, XML, Markdown, HTML and URLs give the key, and those a web stack
//! gives it (hex, base32/64/85, percent-encoded once or twice, quoted-printable, `\x`, `\u`
//! and octal escapes), in the text as it is and in the text decoded ([`decoded`]: escapes
//! undone, what the eye does not see left out, fullwidth forms folded).
//!
//! Whose text it is decides how much of the key is searched for. The whole key (its near
//! misses, its reversal) in every spelling is taken out of every text: [`Redactor::redact`].
//! What the *target* sent (a body, a header value, a transport error, a verdict quoting them)
//! loses also any run of [`MIN_RUN`] of its characters: [`Redactor::redact_sent`]. Half a key
//! can only come from the target (the user never writes half a key; a target may echo half, or
//! split it across two header lines), while the harness's own text (a file path, an option,
//! the Re-run line, a message) keeps its ordinary words when the key is made of words
//! (`read-only-key` must not take `--read-only` out of the Re-run line). A caller names the
//! source: the client redacts what it records of an answer with `redact_sent`, a verdict is
//! redacted so, and every file is redacted as a whole with `redact` after its parts were.
//! Runs are matched as they are and in every spelling made character by character (escapes,
//! percent, hex). A spelling that mixes neighbouring bytes (base32/64/85) is made of the
//! whole key, its reversal and its near misses only (a run of 8 characters is 10 to 13
//! encoded ones at each alignment); the target's text loses any 13 characters of it too, at
//! every fourth place, as a decoding may read one character of a long base-N text otherwise
//! and leave the rest.

use std::ops::Range;

use serde_json::Value;

pub use crate::outcome::REDACTED;
use crate::outcome::Verdict;
use spellings::{MIN_NEAR_MISS, base_n_windows, spellings};

mod decoded;
mod finder;
mod spellings;

use finder::Finder;

/// The shortest key prefix that is redacted where a cut leaves it at the end of a text.
pub const MIN_EDGE_PREFIX: usize = 4;

/// Any run of this many consecutive characters of a secret is redacted from what the target
/// sent: shorter runs are too common a substring to take out of every text (and a key is at
/// least 12 characters, unless `--allow-short-key` says otherwise). No window is spared for
/// being plain (few distinct characters): once runs are looked for in the target's text only,
/// a plain window costs at worst a word of evidence, where sparing it would let a key made of
/// plain runs (`0000000042424242`) out by halves.
pub const MIN_RUN: usize = 8;

/// Whose text is redacted, which decides what of a secret is searched for (see the module's
/// note).
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// Anyone's, the harness's own included: every spelling of a whole secret.
    Anyone,
    /// The target's: any run of [`MIN_RUN`] of a secret's characters too.
    Target,
}

/// Replaces every spelling of the API key (and of every other credential) with [`REDACTED`].
#[derive(Clone)]
pub struct Redactor {
    /// Every spelling of a whole secret, ASCII-lowercased, longest first (a prefix of one left
    /// at the end of a cut text is taken out too).
    forms: Vec<String>,
    /// What is searched for in anyone's text: `forms`.
    whole: Finder,
    /// What is searched for in the target's text: `forms` and the spellings of every run of
    /// [`MIN_RUN`] characters of each secret.
    sent: Finder,
    /// The secrets themselves (each key, its near misses, the key reversed, and the other
    /// credentials): what [`Redactor::also`] builds on.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redactor([REDACTED])")
    }
}

/// `url` as an error or `--print-config` may show it: userinfo and every query value
/// replaced with [`REDACTED`] (a key may be there), whether the URL parses or not.
pub fn url_for_display(url: &str) -> String {
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (url, None),
    };
    let (address, query) = match rest.split_once('?') {
        Some((address, query)) => (address, Some(query)),
        None => (rest, None),
    };
    let mut shown = match address.split_once("://") {
        Some((scheme, after)) => {
            let authority_end = after.find('/').unwrap_or(after.len());
            match after[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://{REDACTED}@{}", &after[at + 1..]),
                None => address.to_string(),
            }
        }
        None => address.to_string(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={REDACTED}"),
                None if pair.is_empty() => String::new(),
                None => REDACTED.to_string(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
    }
    if fragment.is_some() {
        shown.push_str(&format!("#{REDACTED}"));
    }
    shown
}

/// The secrets of `url`'s userinfo (a proxy's): the password as written and percent-decoded,
/// and the userinfo whole. A user name alone is no secret (it may be a common word).
pub fn userinfo_secrets(url: &str) -> Vec<String> {
    let Some((_, after)) = url.split_once("://") else {
        return Vec::new();
    };
    let authority = &after[..after.find(['/', '?', '#']).unwrap_or(after.len())];
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return Vec::new();
    };
    match userinfo.split_once(':') {
        Some((_, password)) if !password.is_empty() => {
            let decoded = percent_encoding::percent_decode_str(password)
                .decode_utf8_lossy()
                .into_owned();
            vec![userinfo.to_string(), password.to_string(), decoded]
        }
        _ => Vec::new(),
    }
}

impl Redactor {
    pub fn new(key: &str) -> Redactor {
        Redactor::for_keys(&[key])
    }

    /// One redactor for several keys (the error path, before it is known which one a run
    /// uses): every spelling of each is taken out.
    pub fn for_keys(keys: &[&str]) -> Redactor {
        let mut secrets = Vec::new();
        for key in keys.iter().copied().filter(|key| !key.is_empty()) {
            secrets.extend(secrets_of(key));
            let chars: Vec<char> = key.chars().collect();
            if chars.len() > MIN_NEAR_MISS {
                secrets.push(chars[1..].iter().collect());
                secrets.push(chars[..chars.len() - 1].iter().collect());
            }
        }
        Redactor::of_secrets(secrets)
    }

    fn of_secrets(mut secrets: Vec<String>) -> Redactor {
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        let lower = |forms: Vec<String>| -> Vec<String> {
            let mut forms: Vec<String> = forms.iter().map(|f| f.to_ascii_lowercase()).collect();
            forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
            forms.dedup();
            forms
        };
        let forms = lower(
            secrets
                .iter()
                .flat_map(|secret| spellings(secret, true))
                .collect(),
        );
        let mut patterns = forms.clone();
        patterns.extend(
            secrets
                .iter()
                .flat_map(|secret| runs(secret))
                .flat_map(|run| spellings(&run, false)),
        );
        patterns.extend(secrets.iter().flat_map(|secret| base_n_windows(secret)));
        Redactor {
            whole: Finder::of(forms.clone()),
            sent: Finder::of(lower(patterns)),
            forms,
            secrets,
        }
    }

    /// The same redactor, which also takes out every spelling of `secret` (an extra header's
    /// value that looks like a credential, `-H 'X-Gateway-Token: ...'`).
    pub fn also(self, secret: &str) -> Redactor {
        if secret.trim().is_empty() {
            return self;
        }
        let mut secrets = self.secrets;
        secrets.extend(secrets_of(secret.trim()));
        Redactor::of_secrets(secrets)
    }

    fn finder(&self, source: Source) -> &Finder {
        match source {
            Source::Anyone => &self.whole,
            Source::Target => &self.sent,
        }
    }

    /// Where `text` spells a secret: as it is, and as each decoding shows it (the escapes and
    /// what the eye does not see that spell it), overlapping matches joined.
    fn found(&self, text: &str, source: Source) -> Vec<Range<usize>> {
        let finder = self.finder(source);
        let mut found = finder.matches(text);
        if decoded::has_escapes(text) {
            let view = decoded::decode_deep(text);
            for depth in 1..=view.depth() {
                found.extend(
                    finder
                        .matches_near(view.text(depth), view.changed(depth))
                        .into_iter()
                        .map(|range| view.original(depth, range)),
                );
            }
        }
        found.sort_by_key(|range| range.start);
        let mut joined: Vec<Range<usize>> = Vec::with_capacity(found.len());
        for range in found {
            match joined.last_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => joined.push(range),
            }
        }
        joined
    }

    /// `text` with every spelling of every whole secret replaced, ASCII case ignored: for any
    /// text, the harness's own included.
    pub fn redact(&self, text: &str) -> String {
        self.redacted(text, Source::Anyone)
    }

    /// `text`, which the target sent, with every spelling of every whole secret and of every
    /// run of [`MIN_RUN`] of its characters replaced.
    pub fn redact_sent(&self, text: &str) -> String {
        self.redacted(text, Source::Target)
    }

    fn redacted(&self, text: &str, source: Source) -> String {
        if self.forms.is_empty() {
            return text.to_string();
        }
        let text = if text.contains('\\') {
            self.redact_json_literals(text, source)
        } else {
            text.to_string()
        };
        let found = self.found(&text, source);
        if found.is_empty() {
            return text;
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for range in found {
            out.push_str(&text[last..range.start]);
            out.push_str(REDACTED);
            last = range.end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// Like [`Redactor::redact`], for a text that was cut short (a body at its cap, a message
    /// at its length): a prefix of the key of [`MIN_EDGE_PREFIX`] or more characters left at
    /// the end is taken out too.
    pub fn redact_cut(&self, text: &str) -> String {
        self.redacted_cut(text, Source::Anyone)
    }

    /// [`Redactor::redact_sent`] for a text the target sent that was cut short.
    pub fn redact_sent_cut(&self, text: &str) -> String {
        self.redacted_cut(text, Source::Target)
    }

    fn redacted_cut(&self, text: &str, source: Source) -> String {
        let mut text = self.redacted(text, source);
        if let Some(cut) = self.redact_unclosed_literal(&text, true, source) {
            text = cut;
        }
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
    /// the target sent (so runs of the key are taken out too), and the target may have echoed
    /// the key in any spelling. A skip's reason is the harness's own (`--read-only`).
    pub fn redact_verdict(&self, verdict: Verdict) -> Verdict {
        match verdict {
            Verdict::Passed => Verdict::Passed,
            Verdict::Failed(mut failure) => {
                self.redact_failure(&mut failure);
                Verdict::Failed(failure)
            }
            Verdict::Inconclusive { reason } => Verdict::inconclusive(self.redact_sent(&reason)),
            Verdict::Skipped { reason } => Verdict::skipped(self.redact(&reason)),
            Verdict::NotDecidable { reason } => Verdict::not_decidable(self.redact_sent(&reason)),
        }
    }

    /// An exchange's answer as the target sent it, redacted where it is shown or written: the
    /// header values (kept as received for the rules that judge them) and a transport error
    /// (the body was redacted when it was read).
    pub fn redact_answer(&self, exchange: &mut crate::outcome::Exchange) {
        if let Some(response) = &mut exchange.response {
            for (_, value) in &mut response.headers {
                *value = self.redact_sent(value);
            }
        }
        if let Some(error) = &mut exchange.transport_error {
            error.detail = self.redact_sent(&error.detail);
        }
    }

    /// The last JSON string literal of `text` when it is never closed, decoded and redacted
    /// (with a key prefix at its end taken out too when `cut`), re-escaped and left unclosed;
    /// `None` when there is no such literal, or nothing in it to redact.
    fn redact_unclosed_literal(&self, text: &str, cut: bool, source: Source) -> Option<String> {
        let start = last_open_quote(text)?;
        let literal = &text[start..];
        if !literal.contains('\\') {
            return None;
        }
        // An escape the end cuts in two is dropped: it spells no whole character.
        let mut whole = literal;
        if let Some(at) = whole.rfind('\\') {
            let escape = &whole[at..];
            let complete = match escape.as_bytes().get(1) {
                Some(b'u') => escape.len() >= 6,
                Some(_) => true,
                None => false,
            };
            if !complete {
                whole = &whole[..at];
            }
        }
        let decoded = serde_json::from_str::<String>(&format!("{whole}\""))
            .or_else(|_| {
                serde_json::from_str::<String>(&format!("{}\"", whole.trim_end_matches('\\')))
            })
            .ok()?;
        let redacted = if cut {
            self.redacted_cut(&decoded, source)
        } else {
            self.redacted(&decoded, source)
        };
        if redacted == decoded {
            return None;
        }
        let quoted = serde_json::to_string(&redacted).ok()?;
        let unclosed = quoted.strip_suffix('"').unwrap_or(&quoted);
        Some(format!("{}{unclosed}", &text[..start]))
    }

    /// A failure's texts, and those of the distinct failures it carries.
    fn redact_failure(&self, failure: &mut crate::outcome::Failure) {
        failure.expected = self.redact_sent(&failure.expected);
        failure.observed = self.redact_sent(&failure.observed);
        failure.class = failure
            .class
            .as_deref()
            .map(|class| self.redact_sent(class));
        if let Some(exchange) = &mut failure.exchange {
            self.redact_answer(exchange);
        }
        if let Some(example) = &mut failure.counterexample {
            example.original = self.redact(&example.original);
            example.minimal = self.redact(&example.minimal);
            example.minimal_value = self.redact_json(&example.minimal_value);
        }
        for step in &mut failure.steps {
            step.what = self.redact_sent(&step.what);
            self.redact_answer(&mut step.exchange);
        }
        for more in &mut failure.more {
            self.redact_failure(more);
        }
    }

    /// Redacts inside every JSON string literal of `text` (valid JSON or not) whose decoded
    /// value holds the key, whatever escapes spell it (`\/`, `\u0041`, ...).
    fn redact_json_literals(&self, text: &str, source: Source) -> String {
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
                // A string never closed (a body cut short, or a target's broken JSON).
                if let Some(redacted) = self.redact_unclosed_literal(&text[start..], false, source)
                {
                    out.push_str(&text[last..start]);
                    out.push_str(&redacted);
                    last = text.len();
                }
                break;
            }
            let literal = &text[start..=end];
            if literal.contains('\\')
                && let Ok(decoded) = serde_json::from_str::<String>(literal)
                && (self.finder(source).is_match(&decoded)
                    || self.redacted(&decoded, source) != decoded)
            {
                out.push_str(&text[last..start]);
                let redacted = self.redacted(&decoded, source);
                out.push_str(&serde_json::to_string(&redacted).unwrap_or_default());
                last = end + 1;
            }
            i = end + 1;
        }
        out.push_str(&text[last..]);
        out
    }
}

/// What a key puts in the text to redact: itself, and itself reversed (a target that echoes
/// it backwards still shows it).
fn secrets_of(key: &str) -> [String; 2] {
    [key.to_string(), key.chars().rev().collect()]
}

/// Every run of [`MIN_RUN`] consecutive characters of `secret` (none when it is no longer).
fn runs(secret: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    if chars.len() <= MIN_RUN {
        return Vec::new();
    }
    chars
        .windows(MIN_RUN)
        .map(|run| run.iter().collect())
        .collect()
}

/// Where the last string literal of `text` opens when it is never closed.
fn last_open_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut open = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if open.is_some() => i += 1,
            b'"' => open = if open.is_some() { None } else { Some(i) },
            _ => {}
        }
        i += 1;
    }
    open
}

#[cfg(test)]
mod tests;
