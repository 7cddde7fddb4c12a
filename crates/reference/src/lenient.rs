//! How stores that are not strict read a body RFC 8259 does not take: each reading is a
//! fault's (faults/bodies.rs), so that every class of raw bodies in the request space has a
//! store it catches. Only ever used under those faults.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::*;

/// `text` in pieces, each inside a double-quoted JSON string (quotes included) or outside one.
fn pieces(text: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let (mut start, mut at) = (0, 0);
    while at < bytes.len() {
        if bytes[at] != b'"' {
            at += 1;
            continue;
        }
        if start < at {
            out.push((false, &text[start..at]));
        }
        let open = at;
        at += 1;
        while at < bytes.len() && bytes[at] != b'"' {
            at += if bytes[at] == b'\\' { 2 } else { 1 };
        }
        at = (at + 1).min(bytes.len());
        out.push((true, &text[open..at]));
        start = at;
    }
    if start < bytes.len() {
        out.push((false, &text[start..]));
    }
    out
}

/// `text` with `change` made to every piece outside a string.
fn outside_strings(text: &str, change: impl Fn(&str) -> String) -> String {
    pieces(text)
        .into_iter()
        .map(|(string, piece)| {
            if string {
                piece.to_string()
            } else {
                change(piece)
            }
        })
        .collect()
}

/// `/* */` and `//` comments removed (Ruby's parser, JSON5).
fn without_comments(text: &str) -> String {
    outside_strings(text, |piece| {
        let mut out = String::new();
        let mut rest = piece;
        while let Some(at) = rest.find('/') {
            out.push_str(&rest[..at]);
            rest = &rest[at..];
            if let Some(after) = rest.strip_prefix("/*") {
                rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            } else if let Some(after) = rest.strip_prefix("//") {
                rest = after.find('\n').map_or("", |end| &after[end..]);
            } else {
                out.push('/');
                rest = &rest[1..];
            }
        }
        out.push_str(rest);
        out
    })
}

/// Commas before a closing `}` or `]` removed (JSON5).
fn without_trailing_commas(text: &str) -> String {
    outside_strings(text, |piece| {
        piece
            .char_indices()
            .filter(|&(at, c)| {
                let next = piece[at + c.len_utf8()..].trim_start().chars().next();
                c != ',' || !matches!(next, Some('}' | ']'))
            })
            .map(|(_, c)| c)
            .collect()
    })
}

/// Numbers with leading zeros read as decimal (`007` as 7).
fn without_leading_zeros(text: &str) -> String {
    outside_strings(text, |piece| {
        let mut out = String::new();
        let mut previous = ' ';
        let mut chars = piece.chars().peekable();
        while let Some(c) = chars.next() {
            let starts_number = c == '0'
                && !previous.is_ascii_digit()
                && !matches!(previous, '.' | 'e' | 'E' | '+')
                && chars.peek().is_some_and(char::is_ascii_digit);
            if starts_number {
                while chars.peek() == Some(&'0') {
                    chars.next();
                }
                if !chars.peek().is_some_and(char::is_ascii_digit) {
                    out.push('0');
                }
                previous = '0';
                continue;
            }
            out.push(c);
            previous = c;
        }
        out
    })
}

/// NaN and Infinity read as Python's json module reads them: floats, here a fraction (which
/// a typed field refuses, and a member the store does not know keeps).
fn non_finite_as_fractions(text: &str) -> String {
    outside_strings(text, |piece| {
        piece
            .replace("-Infinity", "-1.5")
            .replace("Infinity", "1.5")
            .replace("NaN", "1.5")
    })
}

/// Single-quoted strings read as double-quoted ones (JSON5, Python literals).
fn single_quotes_doubled(text: &str) -> String {
    outside_strings(text, |piece| piece.replace('\'', "\""))
}

/// The body's first JSON value, and the bytes after it.
fn first_value(body: &[u8]) -> Option<(Value, &[u8])> {
    let mut values = serde_json::Deserializer::from_slice(body).into_iter::<Value>();
    let value = values.next()?.ok()?;
    Some((value, &body[values.byte_offset()..]))
}

/// Whether `rest` is one JSON value or more, back to back.
fn documents(rest: &[u8]) -> bool {
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
    values.next().is_some_and(|first| first.is_ok()) && values.all(|value| value.is_ok())
}

/// The media types of an HTML form: a body in either is no JSON text.
pub(super) const FORMS: [&str; 2] = ["application/x-www-form-urlencoded", "multipart/form-data"];

/// A URL-encoded form's fields as the JSON object a store that binds any input source into
/// its model reads (digits as a number, as Spring's and Laravel's binders convert them);
/// `None` for any other body.
pub(super) fn form_as_json(headers: &HeaderMap, body: &[u8]) -> Option<Vec<u8>> {
    let media = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = media.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case(FORMS[0]) {
        return None;
    }
    let fields: Map<String, Value> = form_urlencoded::parse(body)
        .map(|(name, value)| {
            let value = value
                .parse::<i64>()
                .map_or_else(|_| Value::String(value.to_string()), Value::from);
            (name.into_owned(), value)
        })
        .collect();
    serde_json::to_vec(&fields).ok()
}

/// The document of a body with data after it that is not another document (a prefix parser).
pub(super) fn before_trailing_data(body: &[u8]) -> Option<Value> {
    let (value, rest) = first_value(body)?;
    let more = !rest.iter().all(u8::is_ascii_whitespace);
    (more && !documents(rest)).then_some(value)
}

/// The body read as a lenient store reads what is not JSON, under the fault that makes it so.
pub(super) fn read(shared: &Shared, body: &[u8]) -> Option<Value> {
    let again = |text: String| {
        petstore_vocabulary::json::read(text.as_bytes())
            .ok()
            .map(|read| read.value)
    };
    let text = || String::from_utf8_lossy(body).into_owned();
    let utf8 = std::str::from_utf8(body).is_ok();
    shared
        .hooks()
        .filter_map(|hook| match hook {
            Hook::JsonReadLeniently(leniency) => Some(*leniency),
            _ => None,
        })
        .find_map(|leniency| match leniency {
            Leniency::TrailingDataIgnored => before_trailing_data(body),
            Leniency::FirstDocumentRead => {
                // Go's json.NewDecoder(r.Body).Decode reads one document.
                let (value, rest) = first_value(body)?;
                documents(rest).then_some(value)
            }
            Leniency::Comments if utf8 => again(without_comments(&text())),
            Leniency::TrailingCommas if utf8 => again(without_trailing_commas(&text())),
            Leniency::LeadingZeros if utf8 => again(without_leading_zeros(&text())),
            Leniency::NonFiniteNumbers if utf8 => again(non_finite_as_fractions(&text())),
            Leniency::SingleQuotes if utf8 => again(single_quotes_doubled(&text())),
            // U+FFFD where the bytes are not UTF-8 (Go, Hono).
            Leniency::InvalidUtf8Replaced if !utf8 => again(text()),
            _ => None,
        })
}

/// A top-level object whose member named twice keeps its first value.
struct FirstWins(Map<String, Value>);

impl<'de> Deserialize<'de> for FirstWins {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FirstWins, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = FirstWins;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FirstWins, A::Error> {
                let mut members = Map::new();
                while let Some((name, value)) = map.next_entry::<String, Value>()? {
                    members.entry(name).or_insert(value);
                }
                Ok(FirstWins(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// The body's object read with the first of each member named twice (a store's choice: RFC
/// 8259 leaves it open).
pub(super) fn first_wins(body: &[u8]) -> Option<Value> {
    serde_json::from_slice::<FirstWins>(body)
        .ok()
        .map(|first| Value::Object(first.0))
}

/// The literal the body spells `categoryId` with (`100`, `1e2`, `-0`), as written.
pub(super) fn category_literal(body: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(body).ok()?;
    let mut rest = text;
    while let Some(at) = rest.find("\"categoryId\"") {
        rest = &rest[at + "\"categoryId\"".len()..];
        let Some(after) = rest.trim_start().strip_prefix(':') else {
            continue;
        };
        let value = after.trim_start();
        let end = value
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
            .unwrap_or(value.len());
        return Some(&value[..end]);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reading_turns_its_class_into_json_and_leaves_strings_alone() {
        let read = |text: String| petstore_vocabulary::json::read(text.as_bytes()).map(|r| r.value);
        let comments = without_comments("/* c */ {\"a\": \"/* kept */\", // c\n \"b\": 1}");
        assert_eq!(read(comments).unwrap(), json!({"a": "/* kept */", "b": 1}));
        let commas = without_trailing_commas("{\"a\": [1, 2,], \"b\": \",}\",}");
        assert_eq!(read(commas).unwrap(), json!({"a": [1, 2], "b": ",}"}));
        let zeros = without_leading_zeros("{\"a\": 007, \"b\": 00, \"c\": 1.05, \"d\": \"007\"}");
        assert_eq!(
            read(zeros).unwrap(),
            json!({"a": 7, "b": 0, "c": 1.05, "d": "007"})
        );
        let nan = non_finite_as_fractions("{\"a\": NaN, \"b\": -Infinity, \"c\": \"NaN\"}");
        assert_eq!(read(nan).unwrap(), json!({"a": 1.5, "b": -1.5, "c": "NaN"}));
        let quotes = single_quotes_doubled("{'a': 'b', \"c\": \"it's\"}");
        assert_eq!(read(quotes).unwrap(), json!({"a": "b", "c": "it's"}));
    }

    #[test]
    fn trailing_data_and_a_second_document_are_told_apart() {
        assert!(before_trailing_data(b"{\"a\": 1}xyz").is_some());
        assert!(before_trailing_data(b"{\"a\": 1}}").is_some());
        assert!(before_trailing_data(b"{\"a\": 1}{\"a\": 2}").is_none());
        assert!(before_trailing_data(b"{\"a\": 1}\n").is_none());
        let (_, rest) = first_value(b"{\"a\": 1}\n{\"a\": 2}").unwrap();
        assert!(documents(rest));
    }

    #[test]
    fn first_wins_keeps_the_first_and_the_literal_is_as_written() {
        let body = br#"{"status": "available", "name": "x", "status": "sold"}"#;
        assert_eq!(first_wins(body).unwrap()["status"], "available");
        assert_eq!(
            category_literal(br#"{"name": "a", "categoryId" : -0}"#),
            Some("-0")
        );
        assert_eq!(
            category_literal(br#"{"categoryId":1e2,"x":1}"#),
            Some("1e2")
        );
        assert_eq!(category_literal(br#"{"name": "categoryId"}"#), None);
    }
}
