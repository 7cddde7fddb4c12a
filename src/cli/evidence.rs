//! The command line's part in evidence: the signing key, the key's variable name, the one
//! redactor every error passes through, and `verify-report`.

use std::path::Path;
use std::sync::Arc;

use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::contract::Contract;
use petstore_conformance::execution::{Redactor, files};
use petstore_conformance::report::attestation::SigningKey;
use petstore_conformance::runner::RunError;
use petstore_conformance::runner::engine;

/// `--sign-key FILE`, loaded before anything is sent: a key that cannot sign is exit 2 now,
/// not a run without an attestation. The file's content is never echoed.
pub fn load_sign_key(file: Option<&Path>) -> Result<Option<Arc<SigningKey>>, RunError> {
    let Some(file) = file else {
        return Ok(None);
    };
    let fail =
        |reason: String| RunError::Config(format!("--sign-key {}: {reason}", file.display()));
    let pem = super::args::read_file("--sign-key", file)?;
    SigningKey::from_pem(&pem)
        .map(|key| Some(Arc::new(key)))
        .map_err(|reason| {
            fail(format!(
                "{reason}; give an Ed25519 key as `openssl genpkey -algorithm ed25519` writes it"
            ))
        })
}

/// Whether `name` reads as an environment variable's name by convention (`PETSTORE_API_KEY`).
fn looks_like_a_variable(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `--api-key-env` names a variable: a value that is neither a set variable nor reads as a
/// name may be the key itself, given where its name belongs, and is never echoed.
pub fn check_api_key_env(name: &str) -> Result<(), RunError> {
    if std::env::var_os(name).is_some() || looks_like_a_variable(name) {
        return Ok(());
    }
    Err(RunError::Config(
        "--api-key-env: the value given is not the name of a set environment variable (not shown: it may be the key itself); give the variable's name, e.g. PETSTORE_API_KEY".into(),
    ))
}

/// A `--print-config` value as it may be shown: a URL without userinfo and query values, a
/// variable name that may be the key not at all.
pub fn shown_config_value(name: &str, value: &str) -> String {
    match name {
        "base_url" => match value
            .strip_prefix("Some(\"")
            .and_then(|v| v.strip_suffix("\")"))
        {
            Some(url) => format!(
                "Some({:?})",
                petstore_conformance::execution::redact::url_for_display(url)
            ),
            None => petstore_conformance::execution::redact::url_for_display(value),
        },
        "api_key_env" if !looks_like_a_variable(value.trim_matches('"')) => {
            "[REDACTED] (not a variable name)".into()
        }
        _ => value.to_string(),
    }
}

/// Every key the command line could be holding, redacted from any error before it is
/// printed: the variable the run names (or the default), the file it names, and a value given
/// where a variable's name belongs.
pub fn error_redactor(matches: &clap::ArgMatches) -> Redactor {
    let mut keys: Vec<String> = Vec::new();
    let mut add = |key: Option<String>| {
        if let Some(key) = key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty()) {
            keys.push(key);
        }
    };
    add(std::env::var("PETSTORE_API_KEY").ok());
    if let Some((_, sub)) = matches.subcommand() {
        let value = |id: &str| sub.try_get_one::<String>(id).ok().flatten().cloned();
        if let Some(name) = value("api_key_env") {
            add(std::env::var(&name).ok());
            if !looks_like_a_variable(&name) {
                add(Some(name));
            }
        }
        if let Ok(Some(file)) = sub.try_get_one::<std::path::PathBuf>("api_key_file") {
            add(files::read_text(file, files::SETTINGS_CAP).ok());
        }
    }
    // A short key is refused (its refusal names no key) unless allowed: redacting it from
    // the refusal would only garble the sentence.
    let short_allowed = matches
        .subcommand()
        .and_then(|(_, sub)| {
            sub.try_get_one::<bool>("allow_short_key")
                .ok()
                .flatten()
                .copied()
        })
        .unwrap_or(false);
    let keys: Vec<&str> = keys
        .iter()
        .map(String::as_str)
        .filter(|key| short_allowed || key.chars().count() >= engine::MIN_KEY_LENGTH)
        .collect();
    Redactor::for_keys(&keys)
}

/// `verify-report DIR [--public-key FILE]`: one line per check, exit 0 only when all hold.
pub fn verify_report(
    path: &Path,
    public_key: Option<&Path>,
    schemas: Option<&Path>,
    cases_dir: Option<&Path>,
) -> Result<u8, RunError> {
    let public_key = match public_key {
        Some(file) => Some(super::args::read_file("--public-key", file)?),
        None => None,
    };
    let catalogue = Catalogue::load(cases_dir)?;
    let contract = Contract::load(schemas)?;
    let verification = petstore_conformance::report::verify::verify(
        path,
        public_key.as_deref(),
        &catalogue,
        &contract,
    )
    .map_err(|e| RunError::Config(format!("{}: {e}", path.display())))?;
    // A closed pipe (`| head`) ends the listing, not the verdict.
    let mut out = std::io::stdout().lock();
    for line in &verification.lines {
        use std::io::Write;
        if writeln!(out, "{line}").is_err() {
            break;
        }
    }
    Ok(if verification.holds { 0 } else { 1 })
}
