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

/// Every word of `command`'s own: its options' long and short names, its sub-commands'.
fn own_words(command: &clap::Command, words: &mut Vec<String>) {
    words.push(command.get_name().to_string());
    words.extend(command.get_all_aliases().map(String::from));
    for arg in command.get_arguments() {
        for long in arg.get_long_and_visible_aliases().unwrap_or_default() {
            words.push(format!("--{long}"));
        }
        for short in arg.get_short_and_visible_aliases().unwrap_or_default() {
            words.push(format!("-{short}"));
        }
    }
    for sub in command.get_subcommands() {
        own_words(sub, words);
    }
    words.extend(["--help", "-h", "--version", "-V"].map(String::from));
}

/// The values a user gave in `args` (the command line, less the program) and in the
/// `PETSTORE_*` variables: every word that is not one of `command`'s own, an unknown option's
/// name included (`--"$KEY"`), and the value of every `--name=value`.
fn given_values(command: &clap::Command, args: &[String]) -> Vec<String> {
    let mut own = Vec::new();
    own_words(command, &mut own);
    let mut values = Vec::new();
    for arg in args {
        let (word, value) = match arg.split_once('=') {
            Some((word, value)) if arg.starts_with("--") => (word, Some(value)),
            _ => (arg.as_str(), None),
        };
        if own.iter().any(|w| w == word) {
            values.extend(value.map(String::from));
            continue;
        }
        // `-Hvalue`: a known short option with its value joined on.
        if let Some(rest) = word.strip_prefix('-').filter(|w| !w.starts_with('-'))
            && let Some(short) = rest.chars().next()
            && own.iter().any(|w| *w == format!("-{short}"))
        {
            values.push(rest[short.len_utf8()..].to_string());
            continue;
        }
        values.push(word.trim_start_matches('-').to_string());
        values.extend(value.map(String::from));
        values.push(arg.clone());
    }
    for (name, value) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PETSTORE_") {
            let value = value.to_string_lossy();
            values.extend(value.lines().map(String::from));
            values.push(value.into_owned());
        }
    }
    // A value that spells part of an option's own name (`--cases-dir cases`) is no secret,
    // and redacting it would garble the option names clap quotes.
    values.retain(|value| {
        let lower = value.to_ascii_lowercase();
        !value.trim().is_empty()
            && !own
                .iter()
                .any(|word| word.to_ascii_lowercase().contains(&lower))
    });
    values
}

/// A usage error as it may be printed: clap quotes the value it could not take, which may be
/// the key typed where something else belongs (`-H "$KEY"` with the name forgotten, `--seed
/// "$KEY"`, an unknown `--"$KEY"`). Every value the user gave is redacted from clap's text
/// first; one too short to tell from the text around it only where clap quotes it whole.
pub fn usage_error_text(error: &clap::Error, command: &clap::Command, args: &[String]) -> String {
    let text = error.render().to_string();
    let values = given_values(command, args);
    let (long, short): (Vec<&String>, Vec<&String>) = values.iter().partition(|value| {
        value.chars().count() >= petstore_conformance::execution::redact::MIN_EDGE_PREFIX
    });
    let long: Vec<&str> = long.iter().map(|v| v.as_str()).collect();
    let mut text = Redactor::for_keys(&long).redact(&text);
    for value in short {
        text = text.replace(
            &format!("'{value}'"),
            &format!("'{}'", petstore_conformance::execution::redact::REDACTED),
        );
    }
    text
}
