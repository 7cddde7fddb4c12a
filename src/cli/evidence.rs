//! The command line's part in evidence: the signing key, the key's variable name, the one
//! redactor every error passes through, and `verify-report`.

use std::path::Path;
use std::sync::Arc;

use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::contract::Contract;
use petstore_conformance::execution::{Redactor, files};
use petstore_conformance::report::attestation::SigningKey;
use petstore_conformance::runner;
use petstore_conformance::runner::RunError;

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
        // A TOML string: the URL inside its quotes is shown, in its quotes.
        "base_url" => match serde_json::from_str::<String>(value) {
            Ok(url) => serde_json::to_string(
                &petstore_conformance::execution::redact::url_for_display(&url),
            )
            .unwrap_or_default(),
            Err(_) => petstore_conformance::execution::redact::url_for_display(value),
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
    let sub = matches.subcommand().map(|(_, sub)| sub);
    let value = |id: &str| {
        sub.and_then(|sub| sub.try_get_one::<String>(id).ok().flatten())
            .cloned()
    };
    let mut given = Vec::new();
    let mut variables = vec!["PETSTORE_API_KEY".to_string()];
    if let Some(name) = value("api_key_env") {
        if !looks_like_a_variable(&name) {
            given.push(name.clone());
        }
        variables.push(name);
    }
    let file = sub.and_then(|sub| {
        sub.try_get_one::<std::path::PathBuf>("api_key_file")
            .ok()
            .flatten()
    });
    // A short key is refused (its refusal names no key) unless allowed: redacting it from
    // the refusal would only garble the sentence.
    let short_allowed = sub
        .and_then(|sub| sub.try_get_one::<bool>("allow_short_key").ok().flatten())
        .copied()
        .unwrap_or(false);
    keys_redactor(&variables, file.map(|f| f.as_path()), &given, short_allowed)
}

/// A redactor of every key a run could be holding: the values of `variables`, the content of
/// the key `file`, and `given` values that may be a key.
pub fn keys_redactor(
    variables: &[String],
    file: Option<&Path>,
    given: &[String],
    short_allowed: bool,
) -> Redactor {
    let mut keys: Vec<String> = given.to_vec();
    keys.extend(variables.iter().filter_map(|name| std::env::var(name).ok()));
    keys.extend(file.and_then(|file| files::read_text(file, files::SETTINGS_CAP).ok()));
    let keys: Vec<&str> = keys
        .iter()
        .map(|key| key.trim())
        .filter(|key| !key.is_empty())
        .filter(|key| short_allowed || key.chars().count() >= runner::MIN_KEY_LENGTH)
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
        // Names and values from the report and the directory, with no control character.
        let line = petstore_conformance::report::terminal::line(line);
        if writeln!(out, "{line}").is_err() {
            break;
        }
    }
    Ok(if verification.holds { 0 } else { 1 })
}

/// The command as parsed and as `--help` shows it: no option's environment value is printed
/// (`PETSTORE_HEADERS` may hold a gateway token, any variable may hold a key put there by
/// mistake); the variables' names still are.
pub fn without_env_values(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| arg.hide_env_values(true))
        .mut_subcommands(without_env_values)
}

/// The option that names the variable holding the key, and the one naming its file.
const KEY_ENV: &str = "--api-key-env";
const KEY_FILE: &str = "--api-key-file";

/// The largest key file read to redact a usage error.
const KEY_FILE_READ: u64 = 64 << 10;

/// What may be the key when the command line does not parse: the value of the variable that
/// holds it (`PETSTORE_API_KEY`, or the one `--api-key-env` or `PETSTORE_API_KEY_ENV` names),
/// what `--api-key-file` (or `PETSTORE_API_KEY_FILE`) holds, and the word given to
/// `--api-key-env` itself (the key typed where its variable's name belongs).
fn keys_given(args: &[String]) -> Vec<String> {
    let value_of = |option: &str| {
        args.iter().enumerate().find_map(|(at, arg)| {
            if arg == option {
                args.get(at + 1).cloned()
            } else {
                arg.strip_prefix(option)
                    .and_then(|rest| rest.strip_prefix('='))
                    .map(String::from)
            }
        })
    };
    let mut keys = Vec::new();
    let typed_name = value_of(KEY_ENV);
    keys.extend(typed_name.clone());
    let name = typed_name
        .or_else(|| std::env::var("PETSTORE_API_KEY_ENV").ok())
        .unwrap_or_else(|| "PETSTORE_API_KEY".into());
    for name in [name.as_str(), "PETSTORE_API_KEY"] {
        if !name.is_empty() && !name.contains(['=', '\0']) {
            keys.extend(std::env::var(name).ok());
        }
    }
    let file = value_of(KEY_FILE).or_else(|| std::env::var("PETSTORE_API_KEY_FILE").ok());
    if let Some(file) = file
        && let Ok(opened) = std::fs::File::open(file)
    {
        use std::io::Read;
        let mut text = String::new();
        if opened.take(KEY_FILE_READ).read_to_string(&mut text).is_ok() {
            keys.extend(text.lines().map(str::trim).map(String::from));
            keys.push(text.trim().to_string());
        }
    }
    keys.retain(|key| !key.trim().is_empty());
    keys
}

/// A usage error as it may be printed: what the user typed shows as typed (an unknown option,
/// a value clap could not take: the mistake is there to see), but the key, wherever it was
/// typed by mistake (`-H "$KEY"` with the name forgotten, `--seed "$KEY"`, an unknown
/// `--"$KEY"`), in every spelling the redactor knows. A key too short to tell from the text
/// around it is redacted only where clap quotes it whole.
pub fn usage_error_text(error: &clap::Error, args: &[String]) -> String {
    let text = error.render().to_string();
    let keys = keys_given(args);
    let (long, short): (Vec<&String>, Vec<&String>) = keys.iter().partition(|key| {
        key.chars().count() >= petstore_conformance::execution::redact::MIN_EDGE_PREFIX
    });
    let long: Vec<&str> = long.iter().map(|key| key.as_str()).collect();
    let mut text = Redactor::for_keys(&long).redact(&text);
    for key in short {
        text = text.replace(
            &format!("'{key}'"),
            &format!("'{}'", petstore_conformance::execution::redact::REDACTED),
        );
    }
    text
}
