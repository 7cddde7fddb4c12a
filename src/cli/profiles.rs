//! `petstore-conformance.toml`: named profiles of `run`'s options, the way nextest keeps its
//! profiles, so a CI file says `--profile staging` instead of re-typing flags. A profile is
//! read into the options' own definition (`runner/options.rs`: every option is a key, named as
//! its field), and laid under the command line: flags and environment variables override the
//! file, which overrides the defaults. `--print-config` shows the merged result and where each
//! value came from. The key itself is never allowed in the file: a profile names the variable
//! or the file that holds it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::ArgMatches;
use clap::parser::ValueSource;
use serde::Deserialize;

use petstore_conformance::runner::RunError;
use petstore_conformance::runner::known::toml_error;
use petstore_conformance::runner::options::RunOptions;

/// The file looked for in the working directory when `--config` is not given.
pub const DEFAULT_FILE: &str = "petstore-conformance.toml";

/// The profile applied: where it is, its name, its options (over `[profile.default]`'s, as
/// nextest's profiles inherit theirs), the keys it holds, and which of them the named
/// profile set itself (the rest came from `[profile.default]`).
pub struct Loaded {
    file: PathBuf,
    name: String,
    options: RunOptions,
    keys: BTreeSet<String>,
    own_keys: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    profile: BTreeMap<String, RunOptions>,
}

/// The keys a profile of `text` sets, for naming where a merged value came from.
fn keys_of(text: &str, name: &str) -> Vec<String> {
    let raw: toml::Table = toml::from_str(text).unwrap_or_default();
    raw.get("profile")
        .and_then(|p| p.get(name))
        .and_then(|p| p.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

/// Where each option of a run got its value, for `--print-config`: name, value as TOML
/// (`None`: unset), source.
pub type Sources = Vec<(String, Option<String>, String)>;

/// `--print-config`: one `name = value  # source` line each, TOML a profile could hold; an
/// unset option is a comment. Header values that look like credentials are not printed.
pub fn render(sources: &Sources) -> String {
    let mut out = String::new();
    for (name, value, from) in sources {
        let line = match value {
            Some(value) => format!("{name} = {value}"),
            None => format!("# {name} (unset)"),
        };
        out.push_str(&format!("{line:<60} # {from}\n"));
    }
    out
}

fn fail(file: &Path, reason: impl std::fmt::Display) -> RunError {
    RunError::Config(format!("{}: {reason}", file.display()))
}

/// An unknown key's message with the key meant in place of the list of all of them
/// (`base-url`: did you mean `base_url`?), when one is near enough to be the one meant.
fn nearest_key(message: String, raw: &str) -> String {
    let Some((unknown, known)) = raw
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once("`, expected one of "))
    else {
        return message;
    };
    let spelt = |key: &str| key.to_ascii_lowercase().replace('-', "_");
    let nearest = known
        .split(", ")
        .map(|key| key.trim_matches('`'))
        .map(|key| {
            (
                strsim::damerau_levenshtein(&spelt(unknown), &spelt(key)),
                key,
            )
        })
        .min();
    let line = message
        .split_once(": ")
        .map(|(line, _)| line)
        .filter(|line| line.starts_with("line "))
        .map_or(String::new(), |line| format!("{line}: "));
    match nearest {
        Some((distance, key)) if distance <= 2.max(unknown.len() / 4) => format!(
            "{line}unknown key `{unknown}`; did you mean `{key}`? (the keys are the long options' names, `-` written `_`)"
        ),
        _ => message,
    }
}

/// The profile to apply: `--profile NAME` from `--config FILE` or ./petstore-conformance.toml,
/// or `[profile.default]` when no name is given; `None` when there is no file and no name.
pub fn load(file: Option<&Path>, name: Option<&str>) -> Result<Option<Loaded>, RunError> {
    let file = match file {
        Some(file) => file.to_path_buf(),
        None if Path::new(DEFAULT_FILE).is_file() => PathBuf::from(DEFAULT_FILE),
        None if name.is_some() => {
            return Err(RunError::Config(format!(
                "--profile {}: no configuration file (give --config FILE, or create {DEFAULT_FILE})",
                name.unwrap_or_default()
            )));
        }
        None => return Ok(None),
    };
    let text = petstore_conformance::execution::files::read_text(
        &file,
        petstore_conformance::execution::files::SETTINGS_CAP,
    )
    .map_err(|e| fail(&file, e))?;
    // The key is refused by name before anything else, with a message that says what to do.
    let raw: toml::Table = toml::from_str(&text).map_err(|e| fail(&file, toml_error(&text, &e)))?;
    if let Some(toml::Value::Table(profiles)) = raw.get("profile") {
        for (profile, fields) in profiles {
            // No category at all is no store a pet can be made for; the flag refuses an empty
            // list (`--category-ids ''`), and so does the file, rather than read it as any id.
            if fields
                .get("category_ids")
                .and_then(|ids| ids.as_array())
                .is_some_and(|ids| ids.is_empty())
            {
                return Err(fail(
                    &file,
                    format!(
                        "profile.{profile}.category_ids: an empty list; give the ids the target accepts, or leave the key out (any id)"
                    ),
                ));
            }
            if fields.as_table().is_some_and(|f| f.contains_key("api_key")) {
                return Err(fail(
                    &file,
                    format!(
                        "profile.{profile}.api_key: the key itself is never allowed in the file; name its variable (api_key_env) or a file that holds it (api_key_file)"
                    ),
                ));
            }
        }
    }
    let mut config: ConfigFile = toml::from_str(&text)
        .map_err(|e| fail(&file, nearest_key(toml_error(&text, &e), e.message())))?;
    let chosen = name.unwrap_or("default");
    let default = config.profile.remove("default");
    let default_keys = keys_of(&text, "default");
    let own_keys = keys_of(&text, chosen);
    let missing = |config: &ConfigFile| {
        let mut known: Vec<&String> = config.profile.keys().collect();
        let default = "default".to_string();
        if !keys_of(&text, "default").is_empty() {
            known.push(&default);
        }
        fail(
            &file,
            format!("no profile {chosen:?} (the file has: {known:?})"),
        )
    };
    let (options, keys) = if chosen == "default" {
        match default {
            Some(options) => (options, default_keys),
            None if name.is_none() => return Ok(None),
            None => return Err(missing(&config)),
        }
    } else {
        let Some(own) = config.profile.remove(chosen) else {
            return Err(missing(&config));
        };
        // Each key the profile leaves out is the default's.
        let mut options = default.unwrap_or_default();
        for key in &own_keys {
            options.take(key, &own);
        }
        let keys = default_keys.into_iter().chain(own_keys.clone()).collect();
        (options, keys)
    };
    Ok(Some(Loaded {
        file,
        name: chosen.to_string(),
        options,
        keys: keys.into_iter().collect(),
        own_keys,
    }))
}

/// Whether the user gave this option on the command line or in the environment.
fn given(matches: &ArgMatches, id: &str) -> bool {
    matches!(
        matches.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

fn source(matches: &ArgMatches, id: &str) -> String {
    match matches.value_source(id) {
        Some(ValueSource::CommandLine) => "command line".into(),
        Some(ValueSource::EnvVariable) => "environment".into(),
        _ => "default".into(),
    }
}

/// Lays `loaded`'s options under `options` (each one the command line and the environment did
/// not give); returns where each option's value came from.
pub fn apply(options: &mut RunOptions, matches: &ArgMatches, loaded: Option<Loaded>) -> Sources {
    let flags = RunOptions::flags();
    let names: Vec<&'static str> = options.fields().iter().map(|field| field.name).collect();
    let mut from: BTreeMap<&str, String> = BTreeMap::new();
    for name in names {
        // An option with no flag (a profile's own list) is given by the profile alone.
        let on_command_line = flags.contains_key(name);
        let came = match &loaded {
            Some(profile)
                if profile.keys.contains(name) && !(on_command_line && given(matches, name)) =>
            {
                options.take(name, &profile.options);
                let section =
                    if profile.own_keys.iter().any(|k| k == name) || profile.name == "default" {
                        profile.name.as_str()
                    } else {
                        "default"
                    };
                format!("{} [profile.{section}]", profile.file.display())
            }
            _ if on_command_line => source(matches, name),
            _ => "default".into(),
        };
        from.insert(name, came);
    }
    options
        .fields()
        .iter()
        .map(|field| {
            (
                field.name.to_string(),
                field.value.toml(),
                from.remove(field.name).unwrap_or_default(),
            )
        })
        .collect()
}
