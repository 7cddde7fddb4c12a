//! Loading the contract's JSON Schemas and compiling one validator per schema.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jsonschema::{Registry, Validator};

use serde_json::Value;

use super::names::SchemaName;
use super::openapi::OpenApi;

/// Where the schemas were read from; recorded in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaSource {
    /// A directory given by the user (or `./schemas` when it exists).
    Directory(PathBuf),
    /// The copies compiled into the binary, for a binary run outside the repository.
    BuiltIn,
}

impl std::fmt::Display for SchemaSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaSource::Directory(dir) => write!(f, "{}", dir.display()),
            SchemaSource::BuiltIn => f.write_str("built-in copy of schemas/"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("schema {file}: cannot read: {reason}")]
    Unreadable { file: PathBuf, reason: String },
    #[error("schema {file}: not valid JSON: {reason}")]
    Malformed { file: PathBuf, reason: String },
    #[error("schema {file}: {reason}")]
    Invalid { file: PathBuf, reason: String },
}

/// The compiled contract: one validator per schema, compiled once for the run.
pub struct Contract {
    source: SchemaSource,
    documents: BTreeMap<SchemaName, Value>,
    validators: BTreeMap<SchemaName, Validator>,
    /// The operations as `openapi.yaml` describes them.
    pub openapi: OpenApi,
}

impl std::fmt::Debug for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contract")
            .field("source", &self.source)
            .finish()
    }
}

impl Contract {
    /// Loads from `dir`, or from `./schemas` when it exists, or else from the built-in copies.
    pub fn load(dir: Option<&Path>) -> Result<Contract, SchemaError> {
        match dir {
            Some(dir) => Self::load_dir(dir),
            None if Path::new("schemas").join("Pet.json").is_file() => {
                Self::load_dir(Path::new("schemas"))
            }
            None => Self::built_in(),
        }
    }

    pub fn built_in() -> Result<Contract, SchemaError> {
        let mut documents = BTreeMap::new();
        for name in SchemaName::ALL {
            let file = PathBuf::from("schemas").join(name.file_name());
            documents.insert(name, parse(&file, name.embedded())?);
        }
        Self::compile(SchemaSource::BuiltIn, documents)?.with_openapi(None)
    }

    pub fn load_dir(dir: &Path) -> Result<Contract, SchemaError> {
        let mut documents = BTreeMap::new();
        for name in SchemaName::ALL {
            let file = dir.join(name.file_name());
            let text = std::fs::read_to_string(&file).map_err(|e| SchemaError::Unreadable {
                file: file.clone(),
                reason: e.to_string(),
            })?;
            documents.insert(name, parse(&file, &text)?);
        }
        Self::compile(SchemaSource::Directory(dir.to_path_buf()), documents)?
            .with_openapi(Some(dir))
    }

    fn compile(
        source: SchemaSource,
        documents: BTreeMap<SchemaName, Value>,
    ) -> Result<Contract, SchemaError> {
        let location = |name: SchemaName| match &source {
            SchemaSource::Directory(dir) => dir.join(name.file_name()),
            SchemaSource::BuiltIn => PathBuf::from("schemas").join(name.file_name()),
        };
        // Every document is registered under its own `$id`, so relative `$ref`s between the
        // files resolve offline, whatever base the files declare.
        let mut builder = Registry::new();
        for (name, document) in &documents {
            let id = document.get("$id").and_then(Value::as_str).ok_or_else(|| {
                SchemaError::Invalid {
                    file: location(*name),
                    reason: "has no \"$id\" string; each schema needs one so that the others \
                             can refer to it"
                        .into(),
                }
            })?;
            builder = builder
                .add(id, document)
                .map_err(|e| SchemaError::Invalid {
                    file: location(*name),
                    reason: format!("bad \"$id\" {id:?}: {e}"),
                })?;
        }
        let registry = builder.prepare().map_err(|e| SchemaError::Invalid {
            file: location(SchemaName::Pet),
            reason: format!("cannot resolve the schemas' references: {e}"),
        })?;
        let mut validators = BTreeMap::new();
        for (name, document) in &documents {
            let validator = jsonschema::options()
                .offline()
                .with_registry(&registry)
                .build(document)
                .map_err(|e| SchemaError::Invalid {
                    file: location(*name),
                    reason: e.to_string(),
                })?;
            validators.insert(*name, validator);
        }
        drop(registry);
        Ok(Contract {
            source,
            documents,
            validators,
            openapi: OpenApi::default(),
        })
    }

    /// Reads `openapi.yaml` beside the schemas (or the built-in copy), its `$ref`s to the
    /// schema files resolved to the documents loaded here.
    fn with_openapi(mut self, dir: Option<&Path>) -> Result<Contract, SchemaError> {
        self.openapi = OpenApi::load(dir, |name| self.documents[&name].clone()).map_err(|e| {
            SchemaError::Invalid {
                file: PathBuf::from(e.file),
                reason: e.reason,
            }
        })?;
        Ok(self)
    }

    pub fn source(&self) -> &SchemaSource {
        &self.source
    }

    /// The schema document as loaded, for the generators.
    pub fn document(&self, name: SchemaName) -> &Value {
        &self.documents[&name]
    }

    /// All loaded documents keyed by their `$id`, for resolving `$ref` while generating.
    pub fn documents_by_id(&self) -> BTreeMap<String, &Value> {
        self.documents
            .values()
            .filter_map(|doc| Some((doc.get("$id")?.as_str()?.to_string(), doc)))
            .collect()
    }

    pub fn is_valid(&self, name: SchemaName, instance: &Value) -> bool {
        self.validators[&name].is_valid(instance)
    }

    /// `Ok(())` when `instance` is valid, else the first [`MAX_REASONS`] reasons it is not, with
    /// their paths, and how many more there are. Memory stays bounded whatever the instance:
    /// the validator's `iter_errors` collects every error before it yields one (a 1 MiB array
    /// of `{}` is a million errors, gigabytes), so errors are only collected from small values;
    /// a Pets array is judged item by item, and a large value gives its first error alone.
    pub fn check(&self, name: SchemaName, instance: &Value) -> Result<(), String> {
        let validator = &self.validators[&name];
        // The verdict is the whole schema's; what follows only finds the words for it.
        let Err(first) = validator.validate(instance) else {
            return Ok(());
        };
        let mut reasons = Reasons::default();
        if let (SchemaName::Pets, Value::Array(items)) = (name, instance) {
            let pet = &self.validators[&SchemaName::Pet];
            for (index, item) in items.iter().enumerate() {
                if reasons.is_full() {
                    reasons.more_items += usize::from(!pet.is_valid(item));
                } else {
                    reasons.collect(pet, item, &format!("/{index}"));
                }
            }
        }
        if reasons.listed.is_empty() {
            if is_small(instance) {
                reasons.collect(validator, instance, "");
            } else {
                reasons.push("", &first);
                reasons.uncounted = true;
            }
        }
        Err(format!(
            "not a valid {}: {}",
            name.file_name().trim_end_matches(".json"),
            reasons.render()
        ))
    }
}

/// The most reasons a schema failure lists.
pub const MAX_REASONS: usize = 3;

/// The longest a reason is written: a validator's message quotes the value it judged, which
/// may be the whole body.
const MAX_REASON_CHARS: usize = 300;

/// Values of up to this many nodes have all their errors collected; errors grow with nodes
/// times keywords, so this bounds them to a few megabytes.
const SMALL_NODES: usize = 1_000;

/// The reasons a value is not valid: the first few, and how many more were seen.
#[derive(Default)]
struct Reasons {
    listed: Vec<String>,
    /// Errors beyond the listed ones, in the values that were fully checked.
    more_errors: usize,
    /// Items judged invalid (not collected) after the list was full.
    more_items: usize,
    /// A large value stopped at its first error: how many more is not known.
    uncounted: bool,
}

impl Reasons {
    fn is_full(&self) -> bool {
        self.listed.len() >= MAX_REASONS
    }

    fn push(&mut self, prefix: &str, error: &jsonschema::ValidationError<'_>) {
        if self.is_full() {
            self.more_errors += 1;
            return;
        }
        let path = format!("{prefix}{}", error.instance_path());
        let path = if path.is_empty() { "/".into() } else { path };
        self.listed.push(format!("at {path}: {}", capped(error)));
    }

    /// The errors of `instance` under `validator`, its paths under `prefix`: every one when
    /// the value is small, else the first.
    fn collect(&mut self, validator: &Validator, instance: &Value, prefix: &str) {
        if is_small(instance) {
            for error in validator.iter_errors(instance) {
                self.push(prefix, &error);
            }
        } else if let Err(error) = validator.validate(instance) {
            self.push(prefix, &error);
            self.uncounted = true;
        }
    }

    fn render(&self) -> String {
        let mut text = self.listed.join("; ");
        let mut more = Vec::new();
        if self.more_errors > 0 {
            more.push(format!("{} more errors", self.more_errors));
        }
        if self.more_items > 0 {
            more.push(format!("{} more invalid items", self.more_items));
        }
        if self.uncounted {
            more.push("possibly more (a large value stops at its first error)".into());
        }
        if !more.is_empty() {
            text.push_str(&format!("; and {}", more.join(", ")));
        }
        text
    }
}

/// Whether `value` has at most [`SMALL_NODES`] nodes; stops counting there.
fn is_small(value: &Value) -> bool {
    let mut budget = SMALL_NODES;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        let Some(left) = budget.checked_sub(1) else {
            return false;
        };
        budget = left;
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(fields) => stack.extend(fields.values()),
            _ => {}
        }
        if stack.len() > budget {
            return false;
        }
    }
    true
}

/// `error`'s message, written no further than [`MAX_REASON_CHARS`]: a writer that refuses
/// more stops the formatting, so a quoted 1 MiB value is never rendered whole.
fn capped(error: &impl std::fmt::Display) -> String {
    struct Capped(String);
    impl std::fmt::Write for Capped {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            let room = MAX_REASON_CHARS.saturating_sub(self.0.len());
            if text.len() <= room {
                self.0.push_str(text);
                return Ok(());
            }
            let mut end = room;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            self.0.push_str(&text[..end]);
            Err(std::fmt::Error)
        }
    }
    let mut out = Capped(String::new());
    if std::fmt::write(&mut out, format_args!("{error}")).is_err() {
        out.0.push('…');
    }
    out.0
}

fn parse(file: &Path, text: &str) -> Result<Value, SchemaError> {
    serde_json::from_str(text).map_err(|e| SchemaError::Malformed {
        file: file.to_path_buf(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn built_in_schemas_compile_and_discriminate() {
        let contract = Contract::built_in().expect("schemas compile");
        let pet = json!({"id": 1, "name": "Rex", "categoryId": 2, "status": "sold"});
        assert!(contract.is_valid(SchemaName::Pet, &pet));
        assert!(contract.is_valid(SchemaName::Pets, &json!([pet])));
        assert!(!contract.is_valid(SchemaName::Pet, &json!({"name": "Rex", "categoryId": 2})));
        assert!(contract.is_valid(SchemaName::NewPet, &json!({"name": "", "categoryId": 2})));
        let out_of_range = json!({"name": "x", "categoryId": 9223372036854775808u64});
        assert!(!contract.is_valid(SchemaName::NewPet, &out_of_range));
        let bad_status = json!({"name": "x", "categoryId": 1, "status": "lost"});
        let reason = contract.check(SchemaName::NewPet, &bad_status).unwrap_err();
        assert!(reason.contains("/status"), "{reason}");
        let error = json!({"code": "x", "message": "y", "status": 401});
        assert!(contract.is_valid(SchemaName::Error, &error));
    }

    #[test]
    fn a_huge_invalid_listing_gives_a_few_reasons_and_counts_the_rest() {
        let contract = Contract::built_in().expect("schemas compile");
        let items = vec![json!({}); 350_000];
        let reason = contract
            .check(SchemaName::Pets, &Value::Array(items))
            .unwrap_err();
        assert_eq!(reason.matches("at /").count(), MAX_REASONS, "{reason}");
        assert!(reason.starts_with("not a valid Pets: at /0: "), "{reason}");
        assert!(reason.ends_with("349999 more invalid items"), "{reason}");
        // A few errors read as before: every one listed, nothing about more.
        let pets = json!([{"id": 1, "name": "Rex", "categoryId": 2}, {"id": 2, "name": 3, "categoryId": 2}]);
        let reason = contract.check(SchemaName::Pets, &pets).unwrap_err();
        assert_eq!(
            reason,
            "not a valid Pets: at /1/name: 3 is not of type \"string\""
        );
    }

    #[test]
    fn a_large_value_gives_its_first_error_in_few_words() {
        let contract = Contract::built_in().expect("schemas compile");
        let huge = Value::Array(vec![json!({}); 100_000]);
        let reason = contract.check(SchemaName::Error, &huge).unwrap_err();
        assert!(
            reason.len() < 2 * MAX_REASON_CHARS,
            "{} bytes",
            reason.len()
        );
        assert!(
            reason.starts_with("not a valid Error: at /: [{},{}"),
            "{reason}"
        );
        assert!(reason.contains("possibly more"), "{reason}");
        // Schema errors of small values are all collected and counted.
        let pet = json!({"id": "x", "name": 1, "categoryId": "y", "status": 4});
        let reason = contract.check(SchemaName::Pet, &pet).unwrap_err();
        assert!(reason.ends_with("; and 2 more errors"), "{reason}");
    }

    #[test]
    fn missing_and_malformed_schema_files_are_named() {
        let dir = std::env::temp_dir().join(format!("pc-schemas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = Contract::load_dir(&dir).unwrap_err().to_string();
        assert!(
            err.contains("PetStatus.json") && err.contains("cannot read"),
            "{err}"
        );
        for name in SchemaName::ALL {
            std::fs::write(dir.join(name.file_name()), name.embedded()).unwrap();
        }
        std::fs::write(dir.join("Pet.json"), "{ not json").unwrap();
        let err = Contract::load_dir(&dir).unwrap_err().to_string();
        assert!(
            err.contains("Pet.json") && err.contains("not valid JSON"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
