//! The rule catalogue: rule metadata read from `cases/*.json`, one file per area of the contract.
//!
//! A rule's id, title, citation, level and operation are data a reviewer can read without Rust;
//! `check` names the Rust check that implements it and `params` parameterise that check: a
//! [`Check`], one variant per check with its params typed (see [`check`]), so the catalogue
//! is checked whole when it loads.

pub mod check;
pub mod partition;
pub mod traits;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::check::{Check, Refusal};
use crate::contract::Operation;

/// The JSON Schema every case file is validated against (`cases/case-file.schema.json`).
pub const CASE_FILE_SCHEMA: &str = include_str!("../../../../cases/case-file.schema.json");

/// The case files, in the order their rules are run and reported.
pub const CASE_FILES: [&str; 8] = [
    "auth.json",
    "list-pets.json",
    "create-pet.json",
    "get-pet.json",
    "sequences.json",
    "deprecation.json",
    "inputs.json",
    "responses.json",
];

fn embedded(file: &str) -> &'static str {
    match file {
        "auth.json" => include_str!("../../../../cases/auth.json"),
        "list-pets.json" => include_str!("../../../../cases/list-pets.json"),
        "create-pet.json" => include_str!("../../../../cases/create-pet.json"),
        "get-pet.json" => include_str!("../../../../cases/get-pet.json"),
        "sequences.json" => include_str!("../../../../cases/sequences.json"),
        "deprecation.json" => include_str!("../../../../cases/deprecation.json"),
        "responses.json" => include_str!("../../../../cases/responses.json"),
        "inputs.json" => include_str!("../../../../cases/inputs.json"),
        _ => "",
    }
}

pub use crate::contract::Level;

/// Which failures fail a run: the one definition `run` gates by and `compare` reads back from
/// the gate a report recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    /// Only rules the contract states (the default).
    Required,
    /// Recommended rules too.
    All,
    /// Required rules, every one decided: a required rule not decidable on this store leaves
    /// the run undetermined (for certification on a store the vendor controls).
    Certify,
}

impl Gate {
    /// Whether a failure of a rule of `level` fails the run.
    pub fn gates(self, level: Level) -> bool {
        self == Gate::All || level == Level::Required
    }

    /// Whether a rule the store made undecidable leaves the run undetermined.
    pub fn needs_decided(self, level: Level) -> bool {
        self == Gate::Certify && level == Level::Required
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Required => "required",
            Gate::All => "all",
            Gate::Certify => "certify",
        }
    }

    /// The gate a report or a profile names.
    pub fn parse(name: &str) -> Option<Gate> {
        [Gate::Required, Gate::All, Gate::Certify]
            .into_iter()
            .find(|gate| gate.as_str() == name)
    }
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in the contract a rule's statement is, and the sentence it checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Citation {
    pub section: String,
    pub quote: String,
}

/// A rule as the case files write it, and as reports digest it: `check` and `params` side by
/// side (`params` is `{}` for a check that reads none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawRule")]
pub struct Rule {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub operation: Operation,
    pub citation: Citation,
    /// The Rust check that implements the rule, with its params.
    #[serde(flatten)]
    pub check: Check,
    /// Whether the rule creates pets on the target (false rules are safe on production).
    pub writes: bool,
    /// Why the level is what it is, in one line ([`check_ruling`]).
    pub ruling: String,
    /// What the rule sends and how it judges, where the title does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A rule as read, before its check and params become a [`Check`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    title: String,
    level: Level,
    operation: Operation,
    citation: Citation,
    check: String,
    #[serde(default)]
    params: Option<Value>,
    writes: bool,
    ruling: String,
    #[serde(default)]
    note: Option<String>,
}

impl TryFrom<RawRule> for Rule {
    type Error = String;

    fn try_from(raw: RawRule) -> Result<Rule, String> {
        let params = raw
            .params
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        Ok(Rule {
            check: Check::from_parts(&raw.check, params)?,
            id: raw.id,
            title: raw.title,
            level: raw.level,
            operation: raw.operation,
            citation: raw.citation,
            writes: raw.writes,
            ruling: raw.ruling,
            note: raw.note,
        })
    }
}

impl Rule {
    /// The note as a reader sees it: the params it names as `{name}` replaced with their
    /// values ("64 createPet requests ... for 3 rounds"), which follow the params when they
    /// change. The rule itself keeps the note as its case file writes it (the catalogue's
    /// digest is of that form).
    pub fn shown_note(&self) -> Option<String> {
        let params = serde_json::to_value(&self.check)
            .ok()
            .and_then(|check| check.get("params").cloned())
            .unwrap_or(Value::Null);
        self.note.as_deref().map(|note| fill_params(note, &params))
    }
}

fn fill_params(note: &str, params: &Value) -> String {
    let Some(params) = params.as_object() else {
        return note.to_string();
    };
    params.iter().fold(note.to_string(), |note, (name, value)| {
        let shown = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        note.replace(&format!("{{{name}}}"), &shown)
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    area: String,
    #[allow(dead_code)]
    description: String,
    /// Each rule is read on its own, so an error in one names it.
    rules: Vec<Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("case file {file}: cannot read: {reason}")]
    Unreadable { file: PathBuf, reason: String },
    #[error("case file {file}: {reason}")]
    Invalid { file: PathBuf, reason: String },
}

#[derive(Debug, Clone)]
pub struct Catalogue {
    pub rules: Vec<Rule>,
    pub source: String,
    /// The case file each rule was read from, by rule id.
    files: std::collections::BTreeMap<String, PathBuf>,
}

impl Catalogue {
    /// Loads from `dir`, or `./cases` when it exists, or else the built-in copies.
    pub fn load(dir: Option<&Path>) -> Result<Catalogue, CatalogueError> {
        match dir {
            Some(dir) => Self::load_dir(dir),
            None if Path::new("cases").join(CASE_FILES[0]).is_file() => {
                Self::load_dir(Path::new("cases"))
            }
            None => Self::built_in(),
        }
    }

    pub fn built_in() -> Result<Catalogue, CatalogueError> {
        let files = CASE_FILES.iter().map(|name| {
            (
                PathBuf::from("cases").join(name),
                embedded(name).to_string(),
            )
        });
        Self::from_texts(files, "built-in copy of cases/".into())
    }

    pub fn load_dir(dir: &Path) -> Result<Catalogue, CatalogueError> {
        let mut files = Vec::new();
        for name in CASE_FILES {
            let file = dir.join(name);
            let text = std::fs::read_to_string(&file).map_err(|e| CatalogueError::Unreadable {
                file: file.clone(),
                reason: e.to_string(),
            })?;
            files.push((file, text));
        }
        Self::from_texts(files, dir.display().to_string())
    }

    fn from_texts(
        files: impl IntoIterator<Item = (PathBuf, String)>,
        source: String,
    ) -> Result<Catalogue, CatalogueError> {
        let mut rules = Vec::new();
        let mut files_of = std::collections::BTreeMap::new();
        let mut seen = BTreeSet::new();
        let schema: Value =
            serde_json::from_str(CASE_FILE_SCHEMA).map_err(|e| CatalogueError::Invalid {
                file: PathBuf::from("cases/case-file.schema.json"),
                reason: e.to_string(),
            })?;
        let validator = jsonschema::options()
            .offline()
            .build(&schema)
            .map_err(|e| CatalogueError::Invalid {
                file: PathBuf::from("cases/case-file.schema.json"),
                reason: e.to_string(),
            })?;
        for (file, text) in files {
            // The file's shape first, against the case files' own schema: the error names the
            // place (`/rules/3/level`) as well as the file.
            if let Ok(json) = serde_json::from_str::<Value>(&text)
                && let Some(error) = validator.iter_errors(&json).next()
            {
                return Err(CatalogueError::Invalid {
                    file: file.clone(),
                    reason: format!("{}: {error}", error.instance_path()),
                });
            }
            let parsed: CaseFile =
                serde_json::from_str(&text).map_err(|e| CatalogueError::Invalid {
                    file: file.clone(),
                    reason: e.to_string(),
                })?;
            for (index, value) in ungroup(parsed.rules).into_iter().enumerate() {
                let id = match &value {
                    Ok(value) | Err((value, _)) => value.get("id").and_then(Value::as_str),
                }
                .map_or_else(|| format!("#{index}"), str::to_string);
                let invalid = |reason: String| CatalogueError::Invalid {
                    file: file.clone(),
                    reason: format!("rule {id:?}: {reason}"),
                };
                let value = value.map_err(|(_, reason)| invalid(reason))?;
                let rule: Rule =
                    serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
                if !is_path_like(&rule.id) {
                    return Err(invalid(
                        "id must be path-like: lowercase words joined by '-' and '/'".into(),
                    ));
                }
                if !rule.id.starts_with(&format!("{}/", parsed.area)) {
                    return Err(invalid(format!(
                        "id must start with the file's area \"{}/\"",
                        parsed.area
                    )));
                }
                if !seen.insert(rule.id.clone()) {
                    return Err(invalid("id is used twice".into()));
                }
                if rule.citation.quote.trim().is_empty() {
                    return Err(invalid("citation.quote is empty".into()));
                }
                // A rule that only walks the request space's classes quotes none itself: each
                // class carries its own ruling, checked as the request space loads.
                if !matches!(rule.check, Check::InputsWalk { .. }) {
                    check_ruling(rule.level, &rule.ruling).map_err(invalid)?;
                }
                files_of.insert(rule.id.clone(), file.clone());
                rules.push(rule);
            }
        }
        Ok(Catalogue {
            rules,
            source,
            files: files_of,
        })
    }

    /// The SHA-256 of the catalogue's canonical JSON: which rules, exactly, a report ran.
    pub fn sha256(&self) -> String {
        let canonical = serde_json::to_value(&self.rules)
            .map(|rules| rules.to_string())
            .unwrap_or_default();
        crate::contract::sha256_hex(canonical.as_bytes())
    }

    /// The case file a rule was read from, for errors that name it.
    pub fn file_of(&self, id: &str) -> String {
        self.files
            .get(id)
            .map_or_else(|| self.source.clone(), |file| file.display().to_string())
    }

    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.id == id)
    }
}

/// A level's one-line ruling holds up: a required one quotes the contract (a "double-quoted"
/// statement of it, as written), since a rule is required only where the contract's own words
/// leave no other reading; a recommended one says so. An RFC alone makes a recommendation.
pub fn check_ruling(level: Level, ruling: &str) -> Result<(), String> {
    match level {
        Level::Required if !ruling.starts_with("Required:") => {
            Err("ruling: a required rule's ruling starts \"Required:\"".into())
        }
        Level::Required if !crate::contract::quotes_contract(ruling) => Err(format!(
            "ruling: required, but it quotes no statement of the contract (an RFC alone makes a recommendation): {ruling}"
        )),
        Level::Recommended if !ruling.starts_with("Recommended:") => {
            Err("ruling: a recommended rule's ruling starts \"Recommended:\"".into())
        }
        _ => Ok(()),
    }
}

/// A case file's `rules`, each group flattened in place into its rules: a group (an entry with
/// `rules`) gives the fields its rules share, as the JSON-Schema-Test-Suite gives the schema its
/// tests share, and each of its rules the rest (at least `id` and `title`). A field is given by
/// the group or by the rule, never both; `params` may be split between them, key by key. A rule
/// the group cannot give (the same field twice) comes back as the error, with the rule as read.
fn ungroup(entries: Vec<Value>) -> Vec<Result<Value, (Value, String)>> {
    let mut rules = Vec::new();
    for entry in entries {
        let Value::Object(mut group) = entry else {
            rules.push(Ok(entry));
            continue;
        };
        let Some(members) = group.remove("rules") else {
            rules.push(Ok(Value::Object(group)));
            continue;
        };
        for member in members.as_array().cloned().unwrap_or_default() {
            rules.push(merge(&group, member));
        }
    }
    rules
}

/// One rule of a group: the group's fields and its own.
fn merge(group: &serde_json::Map<String, Value>, member: Value) -> Result<Value, (Value, String)> {
    let Value::Object(fields) = &member else {
        return Err((member, "a rule of a group must be an object".into()));
    };
    let mut rule = group.clone();
    for (key, value) in fields {
        match (rule.get_mut(key), value) {
            (None, _) => {
                rule.insert(key.clone(), value.clone());
            }
            (Some(Value::Object(shared)), Value::Object(own)) if key == "params" => {
                for (param, value) in own {
                    if shared.contains_key(param) {
                        let reason =
                            format!("params.{param}: given by both its group and the rule");
                        return Err((member.clone(), reason));
                    }
                    shared.insert(param.clone(), value.clone());
                }
            }
            (Some(_), _) => {
                let reason = format!("{key}: given by both its group and the rule");
                return Err((member.clone(), reason));
            }
        }
    }
    Ok(Value::Object(rule))
}

fn is_path_like(id: &str) -> bool {
    !id.is_empty()
        && id.split('/').all(|segment| {
            !segment.is_empty()
                && segment
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod citation_tests {
    use super::*;

    /// Every quote is the contract's own words (the repository's copy, `contract/`) (parts joined by " … "), so a reader can find
    /// the statement a rule checks.
    #[test]
    fn every_quote_is_verbatim_in_the_contract() {
        let text = crate::contract::CONTRACT_TEXT;
        for rule in Catalogue::built_in().unwrap().rules {
            for part in rule.citation.quote.split(" … ") {
                assert!(
                    text.contains(part),
                    "{}: {part:?} is not in the contract",
                    rule.id
                );
            }
        }
    }
}
