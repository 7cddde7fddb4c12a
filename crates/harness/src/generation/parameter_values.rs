//! The request space of a path or query parameter, from its schema: the values a server must
//! accept (every bound, every enum value, the same value percent-encoded), the near misses it
//! must refuse (one past each bound, past the integer's format, another type, another case,
//! separators), and the spellings the contract leaves open (leading zeros, a plus sign,
//! repeated parameters), which only the response oracles judge.

use proptest::prelude::*;
use serde_json::Value;

use super::operators::{Kind, Operator};
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
    /// The operator of `cases/operators.json` that spelt it; none for a value the schema
    /// allows at its edges, or a random one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
}

impl ParameterValue {
    fn new(text: &str, class: Class, what: impl Into<String>) -> ParameterValue {
        ParameterValue {
            wire: encode(text),
            repeat: None,
            class,
            what: what.into(),
            operator: None,
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

/// The values of a parameter a tester would try by hand, classified: the values the schema
/// allows at its edges, then every operator's parameter spellings
/// (`cases/operators.json`), each value once.
pub fn boundary_values(schema: &Value, operators: &[Operator]) -> Vec<ParameterValue> {
    let Some(baseline) = Baseline::of(schema) else {
        return Vec::new();
    };
    let mut values = baseline.allowed();
    values.extend(operator_values(schema, &baseline, operators));
    let mut seen = std::collections::BTreeSet::new();
    values.retain(|value| seen.insert((value.wire.clone(), value.repeat.clone())));
    values
}

/// A parameter's kind and the plain values the operators change.
struct Baseline {
    kind: Kind,
    /// An enum's values; an integer's allowed range.
    values: Vec<String>,
    range: (i128, i128),
    /// The value each operator changes: an enum's first value, a small allowed integer.
    text: String,
}

impl Baseline {
    fn of(schema: &Value) -> Option<Baseline> {
        if let Some(Value::Array(allowed)) = schema.get("enum") {
            let values: Vec<String> = allowed
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect();
            return Some(Baseline {
                kind: Kind::Enum,
                text: values.first()?.clone(),
                values,
                range: (0, 0),
            });
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("integer") => {
                let (min, max) = allowed_range(schema);
                let sample = [7, 2, 1]
                    .into_iter()
                    .find(|n| (min..=max).contains(n))
                    .unwrap_or(min);
                Some(Baseline {
                    kind: Kind::Integer,
                    values: Vec::new(),
                    range: (min, max),
                    text: sample.to_string(),
                })
            }
            _ => None,
        }
    }

    /// The values the schema allows that a tester tries first: each enum value; an integer's
    /// bounds and the values beside them.
    fn allowed(&self) -> Vec<ParameterValue> {
        if self.kind == Kind::Enum {
            return self
                .values
                .iter()
                .map(|value| ParameterValue::new(value, Class::Allowed, format!("{value:?}")))
                .collect();
        }
        let (min, max) = self.range;
        let mut allowed: Vec<i128> = vec![min, max, min + 1, max - 1, 0, 1, -1, (min + max) / 2];
        allowed.retain(|n| (min..=max).contains(n));
        allowed.sort_unstable();
        allowed.dedup();
        allowed
            .iter()
            .map(|n| ParameterValue::new(&n.to_string(), Class::Allowed, n.to_string()))
            .collect()
    }

    /// What a placeholder stands for at this parameter, as it goes on the wire; `None` where
    /// it means nothing for its kind (an integer has no letter case).
    fn placeholder(&self, name: &str) -> Option<String> {
        let (min, max) = self.range;
        let integer = self.kind == Kind::Integer;
        let text = &self.text;
        Some(match name {
            "text" => encode(text),
            "percent" => encode_all(text),
            "upper" if !integer => encode(&text.to_uppercase()),
            "capitalised" if !integer => {
                let mut capitalised = text.clone();
                if let Some(c) = capitalised.get_mut(0..1) {
                    c.make_ascii_uppercase();
                }
                encode(&capitalised)
            }
            "less-last" if !integer && text.len() > 1 => encode(&text[..text.len() - 1]),
            "values-joined" if integer => encode(&format!("{text},{text}")),
            "values-joined" if self.values.len() >= 2 => encode(&self.values.join(",")),
            "values-run-together" if self.values.len() >= 2 => encode(&self.values.join("")),
            "second" if integer => min.to_string(),
            "second" => encode(self.values.get(1)?),
            "below-min" if integer => (min - 1).to_string(),
            "above-max" if integer => (max + 1).to_string(),
            "below-int64" if integer => (i128::from(i64::MIN) - 1).to_string(),
            "above-int64" if integer => (i128::from(i64::MAX) + 1).to_string(),
            "digits-400" if integer => "9".repeat(400),
            _ => return None,
        })
    }
}

/// Every operator's parameter spellings at a parameter of `schema`, each classified by what
/// its decoded value is to the schema (`{text}&{second}` is the parameter given twice).
fn operator_values(
    schema: &Value,
    baseline: &Baseline,
    operators: &[Operator],
) -> Vec<ParameterValue> {
    let mut values = Vec::new();
    for operator in operators {
        if !operator.applies_to_parameter(baseline.kind) {
            continue;
        }
        for spelling in &operator.parameter_spellings {
            let Some(spelt) = fill(spelling, baseline) else {
                continue; // a placeholder this kind has no value for
            };
            let (wire, repeat) = match spelt.split_once('&') {
                Some((wire, repeat)) => (wire.to_string(), Some(repeat.to_string())),
                None => (spelt, None),
            };
            let class = classify_wire(schema, &wire, repeat.is_some());
            let what = match &repeat {
                Some(repeat) => {
                    format!("{wire} and then {repeat} (repeated: {})", operator.operator)
                }
                None => format!("{} ({})", shown(&wire), operator.operator),
            };
            values.push(ParameterValue {
                wire,
                repeat,
                class,
                what,
                operator: Some(operator.operator.clone()),
            });
        }
    }
    values
}

/// `spelling` with its placeholders filled, or `None` where one means nothing here.
fn fill(spelling: &str, baseline: &Baseline) -> Option<String> {
    let mut out = String::new();
    let mut rest = spelling;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        out.push_str(&rest[..open]);
        out.push_str(&baseline.placeholder(&rest[open + 1..close])?);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// A wire value in words: its decoded text where it decodes, shortened past 40 characters.
fn shown(wire: &str) -> String {
    match decode(wire) {
        Some(text) if text.len() > 40 => format!("{:?}…", &text[..20]),
        Some(text) => format!("{text:?}"),
        None => format!("{wire} (not text once decoded)"),
    }
}

/// A wire value percent-decoded (RFC 3986 section 2.1), if it decodes to UTF-8 text.
fn decode(wire: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(wire.len());
    let mut rest = wire.as_bytes();
    while let Some((&first, after)) = rest.split_first() {
        if first == b'%' {
            let hex = std::str::from_utf8(after.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &after[2..];
        } else {
            bytes.push(first);
            rest = after;
        }
    }
    String::from_utf8(bytes).ok()
}

/// What the schema says of a wire value: a repeat, and a raw `+` (a space to form decoding,
/// a plus to RFC 3986), are left open; a value that does not decode to text is none the
/// schema allows.
fn classify_wire(schema: &Value, wire: &str, repeated: bool) -> Class {
    if repeated || wire.contains('+') {
        return Class::Open;
    }
    match decode(wire) {
        Some(text) => classify(schema, &text),
        None => Class::Refused,
    }
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

    fn operators() -> Vec<Operator> {
        crate::generation::operators::Operators::built_in().operators
    }

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
        let values = boundary_values(&pet_id, &operators());
        assert!(values.iter().any(|v| v.wire == "%37"), "{values:?}");
        assert!(values.iter().any(|v| v.wire == "9223372036854775808"));
        for value in &values {
            assert!(
                value.wire.bytes().all(|b| b.is_ascii_graphic()),
                "{value:?}"
            );
        }
    }

    /// Every operator with parameter spellings reaches each parameter kind it applies to, and
    /// each value's class is what the schema makes of its decoded text.
    #[test]
    fn operators_apply_to_parameters_by_their_decoded_value() {
        let operators = operators();
        let limit = json!({"type": "integer", "format": "int32", "minimum": 1, "maximum": 100});
        let status = json!({"type": "string", "enum": ["available", "pending", "sold"]});
        for (schema, kind) in [(&limit, Kind::Integer), (&status, Kind::Enum)] {
            let values = boundary_values(schema, &operators);
            for operator in operators.iter().filter(|o| o.applies_to_parameter(kind)) {
                assert!(
                    values
                        .iter()
                        .any(|v| v.operator.as_deref() == Some(&operator.operator)),
                    "{kind:?} × {}",
                    operator.operator
                );
            }
        }
        let class_of = |schema: &Value, wire: &str| {
            boundary_values(schema, &operators)
                .into_iter()
                .find(|v| v.wire == wire && v.repeat.is_none())
                .map(|v| (v.class, v.operator))
        };
        let op = |name: &str| Some(name.to_string());
        assert_eq!(
            class_of(&limit, "%37"),
            Some((Class::Allowed, op("percent-encoding")))
        );
        assert_eq!(
            class_of(&limit, "-0"),
            Some((Class::Refused, op("integer-spellings")))
        );
        assert_eq!(
            class_of(&limit, "07"),
            Some((Class::Open, op("integer-spellings")))
        );
        assert_eq!(
            class_of(&limit, "+7"),
            Some((Class::Open, op("percent-encoding")))
        );
        assert_eq!(
            class_of(&limit, "7%zz"),
            Some((Class::Refused, op("percent-encoding")))
        );
        assert_eq!(
            class_of(&status, "available%FF"),
            Some((Class::Refused, op("invalid-utf-8")))
        );
        assert_eq!(
            class_of(&status, "available%09"),
            Some((Class::Refused, op("padding")))
        );
        assert_eq!(
            class_of(&status, "0"),
            Some((Class::Refused, op("enum-index")))
        );
        // A bound comes first: `1` is a value the schema allows, not another type.
        assert_eq!(class_of(&limit, "1"), Some((Class::Allowed, None)));
        let repeated = boundary_values(&status, &operators)
            .into_iter()
            .find(|v| v.repeat.is_some())
            .unwrap();
        assert_eq!(
            (repeated.wire.as_str(), repeated.repeat.as_deref()),
            ("available", Some("pending"))
        );
        assert_eq!(repeated.class, Class::Open);
    }

    #[test]
    fn enum_near_misses_are_refused() {
        let status = json!({"type": "string", "enum": ["available", "pending", "sold"]});
        let values = boundary_values(&status, &operators());
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
