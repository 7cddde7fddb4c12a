//! The request space of a path or query parameter, from its schema: the values a server must
//! accept (every bound, every enum value, the same value percent-encoded), the near misses it
//! must refuse (one past each bound, past the integer's format, another type, another case,
//! separators), and the spellings the contract leaves open (leading zeros, a plus sign,
//! repeated parameters), which only the response oracles judge.

use proptest::prelude::*;
use serde_json::Value;

use super::schema::integer_range;

/// What the contract says of a parameter value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// The schema allows it: the operation answers with one of its documented statuses.
    Allowed,
    /// The schema does not allow it: a 4xx with an Error is what HTTP practice expects.
    Refused,
    /// The contract does not say (leading zeros, a plus sign, a repeated parameter): only
    /// the oracles judge the answer (no 5xx, an Error on a 4xx, ...).
    Open,
}

/// One value of a parameter, as it goes on the wire.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ParameterValue {
    /// Percent-encoded where needed, ready for a path segment or a query string.
    pub wire: String,
    /// A second occurrence of the parameter (`?limit=1&limit=2`), when the value is a repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<String>,
    pub class: Class,
    /// What the value is, in words.
    pub what: String,
}

impl ParameterValue {
    fn new(text: &str, class: Class, what: impl Into<String>) -> ParameterValue {
        ParameterValue {
            wire: encode(text),
            repeat: None,
            class,
            what: what.into(),
        }
    }

    fn raw(wire: String, class: Class, what: impl Into<String>) -> ParameterValue {
        ParameterValue {
            wire,
            repeat: None,
            class,
            what: what.into(),
        }
    }
}

/// Percent-encodes everything but ASCII letters, digits and `-._~`: safe in a path segment
/// and in a query string alike.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Every byte percent-encoded: the same value, spelled as HTTP also allows.
fn encode_all(text: &str) -> String {
    text.bytes().map(|b| format!("%{b:02X}")).collect()
}

/// The integer range a schema allows, its `format` included.
fn allowed_range(schema: &Value) -> (i128, i128) {
    let (min, max) = integer_range(schema);
    let (format_min, format_max) = match schema.get("format").and_then(Value::as_str) {
        Some("int32") => (i128::from(i32::MIN), i128::from(i32::MAX)),
        _ => (i128::from(i64::MIN), i128::from(i64::MAX)),
    };
    (
        i128::from(min).max(format_min),
        i128::from(max).min(format_max),
    )
}

/// Whether `text` is a value the schema allows, read as a decimal integer or an enum value.
pub fn classify(schema: &Value, text: &str) -> Class {
    if let Some(Value::Array(values)) = schema.get("enum") {
        let allowed = values.iter().any(|v| v.as_str() == Some(text));
        return if allowed {
            Class::Allowed
        } else {
            Class::Refused
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => {
            let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
            let (min, max) = allowed_range(schema);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                // `7.0` and `7e0` are the integer 7 as JSON Schema reads a number: whether a
                // URL's integer may be spelled so, the contract does not say.
                let integral = crate::json::read(text.trim().as_bytes())
                    .ok()
                    .and_then(|read| crate::json::integer(&read.value))
                    .is_some_and(|n| (min..=max).contains(&n));
                return if integral {
                    Class::Open
                } else {
                    Class::Refused
                };
            }
            // A sign, leading zeros, minus zero: the contract does not say how an integer is
            // spelled in a URL, so only the oracles judge those.
            let canonical = !text.starts_with('+') && (!digits.starts_with('0') || text == "0");
            match text.parse::<i128>() {
                Ok(n) if (min..=max).contains(&n) && canonical => Class::Allowed,
                Ok(n) if (min..=max).contains(&n) => Class::Open,
                _ => Class::Refused,
            }
        }
        Some("string") | None => Class::Allowed,
        Some(_) => Class::Refused,
    }
}

/// The values of a parameter a tester would try by hand, classified.
pub fn boundary_values(schema: &Value) -> Vec<ParameterValue> {
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        let allowed: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        return enum_values(&allowed);
    }
    if schema.get("type").and_then(Value::as_str) != Some("integer") {
        return Vec::new();
    }
    integer_values(schema)
}

/// Of an enum: each value, the first percent-encoded, its near misses (another case, a letter
/// less or more, joined, empty), and two values given as a repeated parameter.
fn enum_values(allowed: &[&str]) -> Vec<ParameterValue> {
    use Class::{Allowed, Open, Refused};
    let mut values = Vec::new();
    for value in allowed {
        values.push(ParameterValue::new(value, Allowed, format!("{value:?}")));
    }
    if let Some(first) = allowed.first() {
        values.push(ParameterValue::raw(
            encode_all(first),
            Allowed,
            format!("{first:?} with every byte percent-encoded"),
        ));
        let mut capitalised = first.to_string();
        if let Some(c) = capitalised.get_mut(0..1) {
            c.make_ascii_uppercase();
        }
        let near_misses = [
            (first.to_uppercase(), "in upper case"),
            (capitalised, "capitalised"),
            (
                first[..first.len().saturating_sub(1)].to_string(),
                "less its last letter",
            ),
            (format!("{first}x"), "with a letter added"),
            (format!(" {first}"), "with a leading space"),
            (allowed.join(","), "every value joined by commas"),
            (allowed.join(""), "every value run together"),
            (String::new(), "empty"),
            ("1".to_string(), "a number"),
            ("null".to_string(), "the word null"),
        ];
        for (text, what) in near_misses {
            if !allowed.contains(&text.as_str()) {
                values.push(ParameterValue::new(
                    &text,
                    Refused,
                    format!("{text:?} ({what})"),
                ));
            }
        }
    }
    if allowed.len() >= 2 {
        values.push(ParameterValue {
            wire: encode(allowed[0]),
            repeat: Some(encode(allowed[1])),
            class: Open,
            what: format!("{:?} and then {:?} (repeated)", allowed[0], allowed[1]),
        });
    }
    values
}

/// Of an integer: the bounds and the values beside them, one value's spellings, what the
/// schema refuses (past the bounds, past int64, fractions, other types), and the spellings
/// the contract leaves open; each value once.
fn integer_values(schema: &Value) -> Vec<ParameterValue> {
    use Class::{Allowed, Open, Refused};
    let mut values = Vec::new();
    let (min, max) = allowed_range(schema);
    let mut allowed: Vec<i128> = vec![min, max, min + 1, max - 1, 0, 1, -1, (min + max) / 2];
    allowed.retain(|n| (min..=max).contains(n));
    allowed.sort_unstable();
    allowed.dedup();
    for n in &allowed {
        values.push(ParameterValue::new(&n.to_string(), Allowed, n.to_string()));
    }
    // A small value the schema allows, for the spellings of one value.
    let sample = [7, 2, 1]
        .into_iter()
        .find(|n| (min..=max).contains(n))
        .unwrap_or(min);
    values.push(ParameterValue::raw(
        encode_all(&sample.to_string()),
        Allowed,
        format!("{sample} with every digit percent-encoded"),
    ));
    let refused: Vec<(String, String)> = vec![
        ((min - 1).to_string(), "one below the minimum".into()),
        ((max + 1).to_string(), "one above the maximum".into()),
        (
            (i128::from(i64::MIN) - 1).to_string(),
            "one below int64".into(),
        ),
        (
            (i128::from(i64::MAX) + 1).to_string(),
            "one above int64".into(),
        ),
        (format!("1{}", "0".repeat(30)), "31 digits".into()),
        ("9".repeat(400), "400 digits".into()),
        (format!("{sample}.5"), "a fraction".into()),
        (format!("{sample}e0"), "an exponent".into()),
        ("abc".into(), "letters".into()),
        ("0x10".into(), "hexadecimal".into()),
        ("true".into(), "a boolean".into()),
        ("null".into(), "the word null".into()),
        (String::new(), "empty".into()),
        (
            format!("{sample},{sample}"),
            "two values joined by a comma".into(),
        ),
        (format!("[{sample}]"), "a JSON array".into()),
        (format!(" {sample}"), "a leading space".into()),
        // Sent as %2F: in the path, one segment that a server decoding before it routes
        // (Tomcat) splits in two.
        (format!("{sample}/{sample}"), "an encoded slash".into()),
    ];
    for (text, what) in refused {
        let class = classify(schema, &text);
        if class == Class::Refused {
            let shown = if text.len() > 40 {
                format!("{}… ({what})", &text[..20])
            } else {
                format!("{text:?} ({what})")
            };
            values.push(ParameterValue::new(&text, Refused, shown));
        }
    }
    let open = [
        (format!("0{sample}"), "a leading zero"),
        (format!("+{sample}"), "a plus sign"),
        ("-0".to_string(), "minus zero"),
        (format!("{sample}.0"), "a zero fraction"),
    ];
    for (text, what) in open {
        values.push(ParameterValue::new(
            &text,
            Open,
            format!("{text:?} ({what})"),
        ));
    }
    values.push(ParameterValue {
        wire: sample.to_string(),
        repeat: Some(min.to_string()),
        class: Open,
        what: format!("{sample} and then {min} (repeated)"),
    });
    let mut seen = std::collections::BTreeSet::new();
    values.retain(|value| seen.insert((value.wire.clone(), value.repeat.clone())));
    values
}

/// Generated values of a parameter: any value the schema allows, and any short text, each
/// classified by the schema.
pub fn strategy(schema: &Value) -> BoxedStrategy<ParameterValue> {
    let schema_for_text = schema.clone();
    let text = "[ -~]{0,12}".prop_map(move |text| {
        let class = classify(&schema_for_text, &text);
        ParameterValue::new(&text, class, format!("{text:?}"))
    });
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        let allowed: Vec<String> = allowed
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect();
        let pick = proptest::sample::select(allowed)
            .prop_map(|value| ParameterValue::new(&value, Class::Allowed, format!("{value:?}")));
        return prop_oneof![pick, text].boxed();
    }
    if schema.get("type").and_then(Value::as_str) == Some("integer") {
        let (min, max) = allowed_range(schema);
        let (min, max) = (min as i64, max as i64);
        let in_range = (min..=max)
            .prop_map(|n| ParameterValue::new(&n.to_string(), Class::Allowed, n.to_string()));
        let schema_for_any = schema.clone();
        let any_integer = any::<i64>().prop_map(move |n| {
            let text = n.to_string();
            let class = classify(&schema_for_any, &text);
            ParameterValue::new(&text, class, text.clone())
        });
        return prop_oneof![3 => in_range, 1 => any_integer, 1 => text].boxed();
    }
    text.boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_bounds_are_classified() {
        let limit = json!({"type": "integer", "format": "int32", "minimum": 1, "maximum": 100});
        assert_eq!(classify(&limit, "1"), Class::Allowed);
        assert_eq!(classify(&limit, "100"), Class::Allowed);
        assert_eq!(classify(&limit, "0"), Class::Refused);
        assert_eq!(classify(&limit, "101"), Class::Refused);
        assert_eq!(classify(&limit, "abc"), Class::Refused);
        assert_eq!(classify(&limit, ""), Class::Refused);
        assert_eq!(classify(&limit, "05"), Class::Open);
        assert_eq!(classify(&limit, "+5"), Class::Open);
        // Other spellings of an allowed integer are left open; a fraction, or past the bound, not.
        assert_eq!(classify(&limit, "7.0"), Class::Open);
        assert_eq!(classify(&limit, "1e1"), Class::Open);
        assert_eq!(classify(&limit, "7.5"), Class::Refused);
        assert_eq!(classify(&limit, "1e3"), Class::Refused);
        assert_eq!(classify(&limit, "Infinity"), Class::Refused);
        let pet_id = json!({"type": "integer", "format": "int64"});
        assert_eq!(classify(&pet_id, "9223372036854775807"), Class::Allowed);
        assert_eq!(classify(&pet_id, "9223372036854775808"), Class::Refused);
        assert_eq!(classify(&pet_id, "-9223372036854775808"), Class::Allowed);
        assert_eq!(classify(&pet_id, "-0"), Class::Open);
        let values = boundary_values(&pet_id);
        assert!(values.iter().any(|v| v.wire == "%37"), "{values:?}");
        assert!(values.iter().any(|v| v.wire == "9223372036854775808"));
        for value in &values {
            assert!(
                value.wire.bytes().all(|b| b.is_ascii_graphic()),
                "{value:?}"
            );
        }
    }

    #[test]
    fn enum_near_misses_are_refused() {
        let status = json!({"type": "string", "enum": ["available", "pending", "sold"]});
        let values = boundary_values(&status);
        let refused: Vec<&str> = values
            .iter()
            .filter(|v| v.class == Class::Refused)
            .map(|v| v.wire.as_str())
            .collect();
        assert!(refused.contains(&"AVAILABLE"), "{refused:?}");
        assert!(refused.contains(&"availabl"));
        assert!(refused.contains(&"available%2Cpending%2Csold"));
        assert!(values.iter().any(|v| v.repeat.is_some()));
    }
}
