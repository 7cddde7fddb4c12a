//! Failures grouped by cause: one deviation the target showed (the same answer where the
//! contract wants another, the same kind of answer the rules read as wrong) is one finding with
//! the rules it broke, so a store that answers 200 for 201 reads as one bug, not seven. Each
//! rule keeps its own verdict and evidence; a finding only groups them.
//!
//! How causes are matched, from each failed rule's first failure as the report records it
//! (the request and the answer that broke it):
//! - a server error (5xx) is its own cause, by status: "answered 500";
//! - an answer whose status is none of those the rule expected (the statuses its `expected`
//!   names, or their class: 4xx) is a cause by the status observed, and for a success (by its
//!   class) by the kind expected first (401, 403, 404, another refusal): "answered 200 or 201
//!   where 401 was expected", "answered 422 where 404 or 200 was expected";
//! - any other answer (the status was right, the body or a header was not) is a cause by its
//!   status's class, media type and the kind of body: "answered 400 or 401 with an empty body
//!   (text/plain) that breaks the contract";
//! - no answer at all is a cause of its own.
//!
//! The requests that got the answer are named with each finding (method and path, ids as
//! `{petId}`), without splitting it: the same wrong answer to several operations is one
//! habit of the store.

use super::finding::Finding;
use super::model::{FailureReport, RuleReport};
use crate::outcome::VerdictKind;

/// The findings of `rules` (a report's, in its order), the gated ones first, then by how many
/// rules each broke; `base_url` is the target's, whose path the requests are named without.
pub fn findings(rules: &[RuleReport], base_url: &str) -> Vec<Finding> {
    let base_path = path_of(base_url).trim_end_matches('/').to_string();
    // Each cause with its finding, and the statuses its rules observed and wanted first (for
    // its words, written once every rule is in).
    let mut found: Vec<(Cause, Finding, Vec<String>, Vec<String>)> = Vec::new();
    let mut ranked: Vec<&RuleReport> = rules
        .iter()
        .filter(|rule| rule.verdict == VerdictKind::Failed)
        .collect();
    ranked.sort_by_key(|rule| !rule.gated);
    for rule in ranked {
        let Some(failure) = &rule.failure else {
            continue;
        };
        let (cause, observed, wanted) = cause_of(failure);
        let request = failure
            .request
            .as_ref()
            .map(|request| format!("{} {}", request.method, template(&request.url, &base_path)))
            .unwrap_or_else(|| rule.operation.name().to_string());
        let at = match found.iter().position(|(c, ..)| *c == cause) {
            Some(at) => at,
            None => {
                let finding = Finding {
                    cause: String::new(),
                    requests: Vec::new(),
                    rules: Vec::new(),
                    gated: false,
                };
                found.push((cause, finding, Vec::new(), Vec::new()));
                found.len() - 1
            }
        };
        let (_, finding, seen, due) = &mut found[at];
        push_new(&mut finding.requests, request);
        push_new(seen, observed);
        if let Some(wanted) = wanted {
            push_new(due, wanted);
        }
        finding.rules.push(rule.id.clone());
        finding.gated |= rule.gated;
    }
    let mut findings: Vec<Finding> = found
        .into_iter()
        .map(|(cause, mut finding, seen, due)| {
            finding.cause = cause.words(&seen, &due);
            finding
        })
        .collect();
    findings.sort_by_key(|finding| (!finding.gated, std::cmp::Reverse(finding.rules.len())));
    findings
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// What a cause is matched by.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cause {
    NoAnswer,
    /// A 5xx, by its status.
    ServerError(u16),
    /// A status none of those expected: the status observed (a success by its class: 200 and
    /// 201 to two operations are one habit), and for a success the refusal that was due (the
    /// key refused, not found, another refusal).
    Status {
        observed: Kind,
        wanted: Option<Kind>,
    },
    /// An expected status whose answer the rules read as wrong, by the status's class (a
    /// header or a format wrong on 400 and 401 alike is one habit), media type and body.
    Content {
        class: u16,
        media: Option<String>,
        body: &'static str,
    },
}

/// A status as causes match it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Success,
    Exactly(u16),
    Refusal,
}

impl Kind {
    fn of(status: Expected) -> Kind {
        match status {
            Expected::Code(200..=299) | Expected::Class(2) => Kind::Success,
            Expected::Code(code @ (401 | 403 | 404)) => Kind::Exactly(code),
            Expected::Code(400..=499) | Expected::Class(4) => Kind::Refusal,
            Expected::Code(code) => Kind::Exactly(code),
            Expected::Class(class) => Kind::Exactly(class * 100),
        }
    }
}

impl Cause {
    /// The cause in words, with the statuses the findings' rules saw and wanted.
    fn words(&self, observed: &[String], wanted: &[String]) -> String {
        match self {
            Cause::NoAnswer => "no answer".into(),
            Cause::ServerError(status) => format!("answered {status} (a server error)"),
            Cause::Status { .. } => format!(
                "answered {} where {} was expected",
                observed.join(" or "),
                wanted.join(" or ")
            ),
            Cause::Content { media, body, .. } => format!(
                "answered {} with {body} ({}) that breaks the contract",
                observed.join(" or "),
                media.as_deref().unwrap_or("no Content-Type")
            ),
        }
    }
}

/// The cause of a failure, the status it observed and the status it wanted first.
fn cause_of(failure: &FailureReport) -> (Cause, String, Option<String>) {
    let Some(response) = &failure.response else {
        return (Cause::NoAnswer, "nothing".into(), None);
    };
    let status = response.status;
    if (500..600).contains(&status) {
        return (Cause::ServerError(status), status.to_string(), None);
    }
    let expected = statuses(&failure.expected);
    let allowed = expected.iter().any(|want| want.admits(status));
    if let (Some(first), false) = (expected.first(), allowed) {
        // A success where a refusal was due is told apart by the refusal due (the key, the
        // input); a refusal or another status, by itself (422 to any petId, whatever was due).
        let (observed, wanted) = match Kind::of(Expected::Code(status)) {
            Kind::Success => (Kind::Success, Some(Kind::of(*first))),
            _ => (Kind::Exactly(status), None),
        };
        return (
            Cause::Status { observed, wanted },
            status.to_string(),
            Some(first.to_string()),
        );
    }
    let media = response
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| {
            value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|media| !media.is_empty());
    (
        Cause::Content {
            class: status / 100,
            media,
            body: body_kind(&response.body),
        },
        status.to_string(),
        None,
    )
}

/// A status a rule expects: one code, or a class ("4xx").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expected {
    Code(u16),
    Class(u16),
}

impl Expected {
    fn admits(self, status: u16) -> bool {
        match self {
            Expected::Code(code) => code == status,
            Expected::Class(class) => status / 100 == class,
        }
    }
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expected::Code(code) => write!(f, "{code}"),
            Expected::Class(class) => write!(f, "{class}xx"),
        }
    }
}

/// The statuses an `expected` text names, in its order: its first words ("201 with the Pet",
/// "a 4xx with an Error body") and each after an "or" ("..., or 413 (past ...) or 400"). A
/// number elsewhere (a pet's id, a count of pets) is no status; "no 5xx" names none.
fn statuses(expected: &str) -> Vec<Expected> {
    let words: Vec<&str> = expected
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut found = Vec::new();
    // Where a status may stand: first, after "or", or after a status ("one of 200, 404").
    let mut open = true;
    for word in words {
        let article = matches!(
            word,
            "a" | "an" | "exactly" | "status" | "either" | "one" | "of"
        );
        if open && article {
            continue;
        }
        let status = if open { status_word(word) } else { None };
        if let Some(status) = status
            && !found.contains(&status)
        {
            found.push(status);
        }
        open = word == "or" || status.is_some();
    }
    found
}

/// "201" or "4xx" as a status; any other word is none.
fn status_word(word: &str) -> Option<Expected> {
    match word.as_bytes() {
        [d, b'x', b'x'] if (b'2'..=b'5').contains(d) => Some(Expected::Class(u16::from(d - b'0'))),
        [_, _, _] => word
            .parse::<u16>()
            .ok()
            .filter(|code| (200..600).contains(code))
            .map(Expected::Code),
        _ => None,
    }
}

/// What a body is, in a few words: "an empty body", "a JSON object", "a body that is not JSON".
fn body_kind(body: &str) -> &'static str {
    let text = body.trim();
    if text.is_empty() {
        return "an empty body";
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => "a JSON object",
        Ok(serde_json::Value::Array(_)) => "a JSON array",
        Ok(serde_json::Value::String(_)) => "a JSON string",
        Ok(serde_json::Value::Number(_)) => "a JSON number",
        Ok(serde_json::Value::Bool(_)) => "a JSON boolean",
        Ok(serde_json::Value::Null) => "JSON null",
        // A kept body may be cut: its start says which it was.
        Err(_) if text.starts_with('{') => "a JSON object",
        Err(_) if text.starts_with('[') => "a JSON array",
        Err(_) => "a body that is not JSON",
    }
}

/// The path of a URL ("/v1/pets/3"), without its query.
fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = rest.find('/').map_or("", |at| &rest[at..]);
    path.split(['?', '#']).next().unwrap_or_default()
}

/// A request's path relative to the base path, a pet's id written `{petId}`: "/pets/{petId}".
fn template(url: &str, base_path: &str) -> String {
    let path = path_of(url);
    let relative = path.strip_prefix(base_path).unwrap_or(path);
    let mut segments: Vec<String> = Vec::new();
    let mut after_pets = false;
    for segment in relative.split('/').skip(1) {
        if after_pets {
            segments.push("{petId}".into());
            after_pets = false;
        } else {
            after_pets = segment == "pets";
            segments.push(segment.to_string());
        }
    }
    format!("/{}", segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_read_from_the_expected_words() {
        assert_eq!(
            statuses("201 with the Pet, or 413 (past the body size) or 400"),
            vec![
                Expected::Code(201),
                Expected::Code(413),
                Expected::Code(400)
            ]
        );
        assert_eq!(
            statuses("a 4xx with an Error body (a refusal)"),
            vec![Expected::Class(4)]
        );
        assert!(statuses("no 5xx answer to any request of the suite").is_empty());
        assert!(statuses("at most 20 pets, ids of 1000 and 20000").is_empty());
        assert!(statuses("the pet 487 as created").is_empty());
        assert_eq!(
            statuses("one of 200, 404 (petId = 9223372036854775807 is allowed)"),
            vec![Expected::Code(200), Expected::Code(404)]
        );
        assert_eq!(
            statuses("401 (the key 123 is invalid)"),
            vec![Expected::Code(401)]
        );
    }

    #[test]
    fn paths_are_named_relative_to_the_base_with_ids_as_pet_id() {
        assert_eq!(
            template("http://127.0.0.1:8080/v1/pets/123?x=1", "/v1"),
            "/pets/{petId}"
        );
        assert_eq!(template("https://h/v1/pets?limit=3", "/v1"), "/pets");
        assert_eq!(template("https://h/store/orders", ""), "/store/orders");
    }
}
