//! Regression files: counterexamples found by property rules, saved as JSON and replayed first
//! on the next run, so a nightly job keeps checking what once failed.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where counterexamples go when `./cases` exists and no `--regressions` is given.
pub const DEFAULT_FILE: &str = "cases/regressions/counterexamples.json";

/// One saved counterexample: the input a property rule failed on, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    pub rule: String,
    /// The generated input, as it was sent (a NewPet keeps the prefix of the run that found it).
    pub value: Value,
    pub description: String,
    pub found_at: String,
    pub seed: u64,
    pub target: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RegressionFile {
    #[serde(default)]
    description: String,
    regressions: Vec<Regression>,
}

const DESCRIPTION: &str = "Counterexamples found by petstore-conformance property rules; each is \
    replayed before the rule's generated cases. Delete an entry to stop replaying it.";

fn read(path: &Path) -> Result<RegressionFile, String> {
    use crate::execution::files;
    match files::read_text(path, files::EVIDENCE_CAP) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| format!("regression file {}: {e}", path.display())),
        Err(e) if e.not_found() => Ok(RegressionFile::default()),
        Err(e) => Err(format!("regression file {}: {e}", path.display())),
    }
}

/// The saved inputs of each rule. A missing file is an empty one.
pub fn load(path: &Path) -> Result<BTreeMap<String, Vec<Value>>, String> {
    let mut by_rule: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for regression in read(path)?.regressions {
        by_rule
            .entry(regression.rule)
            .or_default()
            .push(regression.value);
    }
    Ok(by_rule)
}

/// Adds the new counterexamples not already saved; returns how many were added. The file is
/// replaced whole (written to a temporary name, then renamed).
pub fn save(path: &Path, found: Vec<Regression>) -> Result<usize, String> {
    let mut file = read(path)?;
    let before = file.regressions.len();
    for regression in found {
        let known = file
            .regressions
            .iter()
            .any(|r| r.rule == regression.rule && r.value == regression.value);
        if !known {
            file.regressions.push(regression);
        }
    }
    let added = file.regressions.len() - before;
    if added == 0 {
        return Ok(0);
    }
    file.description = DESCRIPTION.into();
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())? + "\n";
    // A new temporary renamed into place: a link planted at either name is never followed.
    crate::execution::files::replace(path, text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn saves_new_counterexamples_once_and_loads_them_by_rule() {
        let dir = std::env::temp_dir().join(format!("pc-regressions-{}", std::process::id()));
        let path = dir.join("counterexamples.json");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(load(&path).unwrap().is_empty());
        let regression = Regression {
            rule: "create-pet/valid/created".into(),
            value: json!({"name": "a", "categoryId": 2147483648i64}),
            description: "x".into(),
            found_at: "2026-01-01T00:00:00Z".into(),
            seed: 1,
            target: "http://127.0.0.1:1/v1".into(),
        };
        assert_eq!(save(&path, vec![regression.clone()]).unwrap(), 1);
        assert_eq!(save(&path, vec![regression.clone()]).unwrap(), 0);
        let loaded = load(&path).unwrap();
        assert_eq!(loaded["create-pet/valid/created"], vec![regression.value]);
        std::fs::write(&path, "{").unwrap();
        assert!(load(&path).unwrap_err().contains("counterexamples.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
