//! JSON Schema -> proptest: a generic translation of the keywords the contract's schemas use
//! (`type`, `properties`, `required`, `enum`, `const`, integer `minimum`/`maximum` and `format:
//! int64`, string `minLength`/`maxLength`/`pattern`, `items`, `$ref`, `allOf`,
//! `additionalProperties`). Editing a schema changes what is generated, with no Rust change.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::{Map, Value, json};

use crate::contract::{Contract, SchemaName};

#[derive(Debug, thiserror::Error)]
#[error("schema {schema}: cannot generate: {reason}")]
pub struct GenerationError {
    pub schema: String,
    pub reason: String,
}

/// Longest string generated where a schema sets no `maxLength`.
pub const LONG_STRING: usize = 1000;

/// The most characters generation puts in one string, whatever a schema's `maxLength` says: a
/// schema may allow 2e9, and memory may not. A `maxLength` above it is generated up to it.
pub const MAX_GENERATED_LENGTH: usize = 65_536;

/// The most items generation puts in one array, whatever `maxItems` says.
pub const MAX_GENERATED_ITEMS: usize = 1_000;

/// Where a schema's bounds pass what generation builds: `Err` when a *minimum* does (nothing
/// valid could be generated), else notes on the maxima that are capped.
pub fn check_caps(schema: &Value, at: &str) -> Result<Vec<String>, GenerationError> {
    let mut notes = Vec::new();
    let limits = [
        ("minLength", "maxLength", MAX_GENERATED_LENGTH, "characters"),
        ("minItems", "maxItems", MAX_GENERATED_ITEMS, "items"),
    ];
    for (min_key, max_key, cap, unit) in limits {
        if let Some(min) = schema.get(min_key).and_then(Value::as_u64)
            && min > cap as u64
        {
            return Err(GenerationError {
                schema: at.to_string(),
                reason: format!(
                    "{min_key} {min} is past the most generation builds ({cap} {unit})"
                ),
            });
        }
        if let Some(max) = schema.get(max_key).and_then(Value::as_u64)
            && max > cap as u64
        {
            notes.push(format!(
                    "{at}: {max_key} {max} is past the most generation builds; generated up to {cap} {unit}"
                ));
        }
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            notes.extend(check_caps(property, &format!("{at}.{name}"))?);
        }
    }
    if let Some(items) = schema.get("items") {
        notes.extend(check_caps(items, &format!("{at}[]"))?);
    }
    Ok(notes)
}

/// The schemas of a contract, with `$ref` and `allOf` resolved away.
pub struct Schemas<'c> {
    documents: BTreeMap<String, &'c Value>,
}

impl<'c> Schemas<'c> {
    pub fn new(contract: &'c Contract) -> Schemas<'c> {
        Schemas {
            documents: contract.documents_by_id(),
        }
    }

    fn root(&self, contract: &Contract, name: SchemaName) -> (Value, String) {
        let document = contract.document(name);
        let base = document
            .get("$id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        (document.clone(), base.to_string())
    }

    /// The schema with every `$ref` and `allOf` merged into one plain schema.
    pub fn flatten(&self, contract: &Contract, name: SchemaName) -> Result<Value, GenerationError> {
        let (document, base) = self.root(contract, name);
        self.flatten_at(&document, &base, 0)
    }

    fn resolve(&self, reference: &str, base: &str) -> Result<(Value, String), GenerationError> {
        let error = |reason: String| GenerationError {
            schema: base.to_string(),
            reason,
        };
        let joined = reqwest::Url::parse(base)
            .and_then(|base| base.join(reference))
            .map_err(|e| error(format!("$ref {reference:?}: {e}")))?;
        let fragment = joined.fragment().unwrap_or("").to_string();
        let mut without = joined.clone();
        without.set_fragment(None);
        let document = self
            .documents
            .get(without.as_str())
            .ok_or_else(|| error(format!("$ref {reference:?}: no schema has $id {without}")))?;
        let target = if fragment.is_empty() {
            (*document).clone()
        } else {
            document
                .pointer(&fragment)
                .cloned()
                .ok_or_else(|| error(format!("$ref {reference:?}: no {fragment}")))?
        };
        Ok((target, without.to_string()))
    }

    fn flatten_at(
        &self,
        schema: &Value,
        base: &str,
        depth: usize,
    ) -> Result<Value, GenerationError> {
        if depth > 32 {
            return Err(GenerationError {
                schema: base.into(),
                reason: "$ref nesting deeper than 32".into(),
            });
        }
        let Some(object) = schema.as_object() else {
            return Ok(schema.clone()); // `true` / `false` schemas
        };
        let base = object
            .get("$id")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| base.to_string());
        let mut merged = Map::new();
        let mut parts: Vec<(Value, String)> = Vec::new();
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            parts.push(self.resolve(reference, &base)?);
        }
        for part in object
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            parts.push((part.clone(), base.clone()));
        }
        let own: Map<String, Value> = object
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "$ref" | "allOf" | "$id" | "$schema"))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        parts.push((Value::Object(own), base.clone()));
        for (part, part_base) in parts {
            let flat = if part.get("$ref").is_some() || part.get("allOf").is_some() {
                self.flatten_at(&part, &part_base, depth + 1)?
            } else {
                part
            };
            merge(&mut merged, flat.as_object().cloned().unwrap_or_default());
        }
        // Resolve inside properties and items too.
        if let Some(Value::Object(properties)) = merged.get("properties").cloned() {
            let mut resolved = Map::new();
            for (name, property) in properties {
                resolved.insert(name, self.flatten_at(&property, &base, depth + 1)?);
            }
            merged.insert("properties".into(), Value::Object(resolved));
        }
        if let Some(items) = merged.get("items").cloned() {
            merged.insert("items".into(), self.flatten_at(&items, &base, depth + 1)?);
        }
        Ok(Value::Object(merged))
    }
}

/// `allOf` semantics for the keywords generated from: properties and required are unioned,
/// the rest is taken from the first part that states it.
fn merge(into: &mut Map<String, Value>, part: Map<String, Value>) {
    for (key, value) in part {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(more)) => {
                existing.extend(more);
            }
            ("required", Some(Value::Array(existing)), Value::Array(more)) => {
                for name in more {
                    if !existing.contains(&name) {
                        existing.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}

fn schema_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str),
        None if schema.get("properties").is_some() => Some("object"),
        _ => None,
    }
}

/// The `properties` of an object schema (empty when none).
pub fn properties(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The names in an object schema's `required`.
pub fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The inclusive integer range of a schema: its bounds, within int64.
pub fn integer_range(schema: &Value) -> (i64, i64) {
    let bound =
        |key: &str, default: i64| schema.get(key).and_then(Value::as_i64).unwrap_or(default);
    (bound("minimum", i64::MIN), bound("maximum", i64::MAX))
}

/// A length bound of `schema`, cut at what generation builds.
fn capped(schema: &Value, key: &str, cap: usize) -> Option<usize> {
    let bound = schema.get(key).and_then(Value::as_u64)?;
    Some(usize::try_from(bound).unwrap_or(usize::MAX).min(cap))
}

fn string_lengths(schema: &Value) -> (usize, usize) {
    let min = capped(schema, "minLength", MAX_GENERATED_LENGTH).unwrap_or(0);
    let max = capped(schema, "maxLength", MAX_GENERATED_LENGTH).unwrap_or(LONG_STRING);
    (min, max.max(min))
}

/// A string of `length` characters drawn from `seed`: printable ASCII mostly, with JSON's
/// troublemakers (quotes, backslashes, control characters), other scripts and any Unicode
/// scalar value mixed in. Seed 0 is all 'a', the simplest string of that length.
pub fn text_from_seed(seed: u64, length: usize) -> String {
    const SPECIAL: [char; 12] = [
        '"', '\\', '\0', '\n', '\t', '\'', '/', '<', '&', '\u{7f}', '\u{202e}', '\u{feff}',
    ];
    if seed == 0 {
        return "a".repeat(length);
    }
    let mut state = seed;
    (0..length)
        .map(|_| {
            state = crate::seed::splitmix64(state);
            let pick = (state >> 32) as u32;
            match state % 16 {
                0 => SPECIAL[pick as usize % SPECIAL.len()],
                1..=3 => {
                    char::from_u32(pick % crate::json::LONE_SURROGATE_BASE).unwrap_or('\u{fffd}')
                }
                4..=5 => char::from_u32(0xA0 + pick % 0x2F00).unwrap_or('\u{e9}'),
                _ => char::from(b' ' + (pick % 95) as u8),
            }
        })
        .collect()
}

/// A strategy for values valid against a flattened schema.
pub fn strategy(schema: &Value) -> Result<BoxedStrategy<Value>, GenerationError> {
    let unsupported = |reason: String| GenerationError {
        schema: schema
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("(anonymous)")
            .into(),
        reason,
    };
    if let Some(value) = schema.get("const") {
        return Ok(Just(value.clone()).boxed());
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        if values.is_empty() {
            return Err(unsupported("empty enum".into()));
        }
        return Ok(proptest::sample::select(values.clone()).boxed());
    }
    Ok(match schema_type(schema) {
        Some("object") => {
            let properties = properties(schema);
            let required: Vec<String> = required(schema).into_iter().map(String::from).collect();
            let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
            for (name, property) in properties {
                let value = strategy(&property)?;
                let key = name.clone();
                let present = value.prop_map(move |v| Some((key.clone(), v)));
                fields.push(if required.contains(&name) {
                    present.boxed()
                } else {
                    prop_oneof![Just(None), present].boxed()
                });
            }
            fields
                .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
                .boxed()
        }
        Some("string") => {
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
                // A string that matches the whole pattern matches it anchored or not, and the
                // generator does not take anchors.
                let inner = pattern.strip_prefix('^').unwrap_or(pattern);
                let inner = match inner.strip_suffix('$') {
                    Some(stripped) if !stripped.ends_with('\\') => stripped,
                    _ => inner,
                };
                proptest::string::string_regex(inner)
                    .map_err(|e| unsupported(format!("pattern {pattern:?}: {e}")))?
                    .prop_map(Value::String)
                    .boxed()
            } else {
                let (min, max) = string_lengths(schema);
                // Mostly short strings, shrunk character by character to the one that matters;
                // sometimes long ones, shrunk by length first (binary search), then towards "aaa…".
                // Any character but the few that stand for lone surrogates where bodies are
                // read (crate::json): in the harness's own traffic that reading is exact.
                let character = any::<char>().prop_map(|c| {
                    if crate::json::lone_surrogate(c).is_some() {
                        '\u{10f7ff}'
                    } else {
                        c
                    }
                });
                let short = proptest::collection::vec(character, min..=max.min(min.max(24)))
                    .prop_map(|chars| Value::String(chars.into_iter().collect()));
                let long = (min..=max, any::<u64>())
                    .prop_map(|(length, seed)| Value::String(text_from_seed(seed, length)));
                prop_oneof![3 => short, 1 => long].boxed()
            }
        }
        Some("integer") => {
            let (min, max) = integer_range(schema);
            if min == i64::MIN && max == i64::MAX {
                // Shrinks towards 0, so a minimal counterexample is a small number.
                any::<i64>().prop_map(|n| json!(n)).boxed()
            } else {
                (min..=max).prop_map(|n| json!(n)).boxed()
            }
        }
        Some("number") => (-1.0e9f64..1.0e9).prop_map(|n| json!(n)).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        Some("null") => Just(Value::Null).boxed(),
        Some("array") => {
            let items = strategy(schema.get("items").unwrap_or(&json!({})))?;
            let min = capped(schema, "minItems", MAX_GENERATED_ITEMS).unwrap_or(0);
            let max = capped(schema, "maxItems", MAX_GENERATED_ITEMS).unwrap_or(min + 8);
            proptest::collection::vec(items, min..=max.max(min))
                .prop_map(Value::Array)
                .boxed()
        }
        other => return Err(unsupported(format!("type {other:?} is not generated"))),
    })
}

/// Values a careful tester would try by hand: each enum value, the ends of each integer range
/// (and the 32-bit edges inside int64), the empty and the longest string, optional properties
/// absent and present. For an object: one value per boundary of one property, the others at
/// their first boundary.
pub fn boundaries(schema: &Value) -> Vec<Value> {
    if let Some(value) = schema.get("const") {
        return vec![value.clone()];
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return values.clone();
    }
    match schema_type(schema) {
        Some("object") => {
            let properties = properties(schema);
            let required = required(schema);
            let options: Vec<(String, Vec<Option<Value>>)> = properties
                .iter()
                .map(|(name, property)| {
                    let mut values: Vec<Option<Value>> =
                        boundaries(property).into_iter().map(Some).collect();
                    if !required.contains(&name.as_str()) {
                        values.insert(0, None);
                    }
                    (name.clone(), values)
                })
                .collect();
            let base = |overrides: Option<(&str, &Option<Value>)>| {
                let mut object = Map::new();
                for (name, values) in &options {
                    let value = match overrides {
                        Some((which, value)) if which == name => value.clone(),
                        _ => values.first().cloned().flatten(),
                    };
                    if let Some(value) = value {
                        object.insert(name.clone(), value);
                    }
                }
                Value::Object(object)
            };
            let mut values = vec![base(None)];
            for (name, choices) in &options {
                for choice in choices.iter().skip(1) {
                    values.push(base(Some((name, choice))));
                }
            }
            values
        }
        Some("string") => {
            let (min, max) = string_lengths(schema);
            if schema.get("pattern").is_some() {
                return Vec::new();
            }
            let mut values = vec![
                json!("x".repeat(min)),
                json!("\"quoted\" \\ back\\slash"),
                json!("Ωmega 名前 🐕"),
            ];
            values.push(json!("x".repeat(max.min(255))));
            values
        }
        Some("integer") => {
            let (min, max) = integer_range(schema);
            let mut values = vec![min, max];
            for edge in [0, i64::from(i32::MAX) + 1, i64::from(i32::MIN) - 1] {
                if (min..=max).contains(&edge) {
                    values.push(edge);
                }
            }
            if min < max {
                values.insert(1, min + 1);
                values.push(max - 1);
            }
            values.dedup();
            values.into_iter().map(|n| json!(n)).collect()
        }
        Some("boolean") => vec![json!(false), json!(true)],
        Some("null") => vec![Value::Null],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::{Config, TestRunner};

    fn flat(name: SchemaName) -> (Contract, Value) {
        let contract = Contract::built_in().unwrap();
        let schema = Schemas::new(&contract).flatten(&contract, name).unwrap();
        (contract, schema)
    }

    /// Every generated value validates against the schema it was generated from, over many
    /// seeds (each case draws a fresh value).
    #[test]
    fn generated_values_are_valid_against_their_schema() {
        for name in SchemaName::ALL {
            let (contract, schema) = flat(name);
            let strategy = strategy(&schema).unwrap();
            let mut runner = TestRunner::new(Config {
                cases: 512,
                failure_persistence: None,
                ..Config::default()
            });
            runner
                .run(&strategy, |value| {
                    prop_assert!(contract.check(name, &value).is_ok(), "{name:?}: {value}");
                    Ok(())
                })
                .unwrap();
            for value in boundaries(&schema) {
                assert!(
                    contract.check(name, &value).is_ok(),
                    "{name:?} boundary {value}"
                );
            }
        }
    }

    #[test]
    fn new_pet_boundaries_cover_the_ends() {
        let (_, schema) = flat(SchemaName::NewPet);
        let values = boundaries(&schema);
        let category_ids: Vec<i64> = values
            .iter()
            .filter_map(|v| v["categoryId"].as_i64())
            .collect();
        assert!(category_ids.contains(&i64::MIN) && category_ids.contains(&i64::MAX));
        assert!(category_ids.contains(&(1 << 31)));
        let statuses: Vec<&str> = values.iter().filter_map(|v| v["status"].as_str()).collect();
        for status in crate::contract::PET_STATUSES {
            assert!(statuses.contains(&status), "{status}");
        }
        assert!(values.iter().any(|v| v.get("status").is_none()));
        assert!(values.iter().any(|v| v["name"] == ""));
    }

    #[test]
    fn editing_a_schema_changes_what_is_generated() {
        let schema = json!({"type": "object", "required": ["code"],
            "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}, "n": {"type": "integer", "minimum": 5, "maximum": 7}}});
        let strategy = strategy(&schema).unwrap();
        let mut runner = TestRunner::deterministic();
        for _ in 0..200 {
            let value = strategy.new_tree(&mut runner).unwrap().current();
            let code = value["code"].as_str().unwrap();
            assert!(
                code.len() == 3 && code.chars().all(|c| c.is_ascii_uppercase()),
                "{value}"
            );
            if let Some(n) = value.get("n") {
                assert!((5..=7).contains(&n.as_i64().unwrap()), "{value}");
            }
        }
    }
}
