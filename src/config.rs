//! `petstore-conformance.toml`: named profiles of `run`'s options, the way nextest keeps its
//! profiles, so a CI file says `--profile staging` instead of re-typing flags. Flags and
//! environment variables override the file, which overrides the defaults; `--print-config`
//! shows the merged result and where each value came from. The key itself is never allowed
//! in the file: a profile names the variable or the file that holds it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::ArgMatches;
use clap::parser::ValueSource;
use serde::Deserialize;

use petstore_conformance::report::KnownFailure;
use petstore_conformance::runner::known::toml_error;
use petstore_conformance::runner::{Gate, RunError};

use crate::RunArgs;

/// The file looked for in the working directory when `--config` is not given.
pub const DEFAULT_FILE: &str = "petstore-conformance.toml";

/// One profile: every field optional, named as the long option it stands for.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    base_url: Option<String>,
    api_key_env: Option<String>,
    api_key_file: Option<PathBuf>,
    allow_short_key: Option<bool>,
    sign_key: Option<PathBuf>,
    ca_cert: Option<PathBuf>,
    insecure: Option<bool>,
    http2_prior_knowledge: Option<bool>,
    read_only: Option<bool>,
    seed: Option<u64>,
    cases: Option<u32>,
    time_budget: Option<u64>,
    regressions: Option<PathBuf>,
    no_regressions: Option<bool>,
    request_log: Option<PathBuf>,
    report_dir: Option<PathBuf>,
    gate: Option<String>,
    timeout: Option<u64>,
    body_cap: Option<usize>,
    rate: Option<f64>,
    concurrency: Option<usize>,
    category_ids: Option<Vec<i64>>,
    max_throttle_wait: Option<u64>,
    max_transport_failures: Option<u32>,
    test_threads: Option<usize>,
    product: Option<String>,
    product_version: Option<String>,
    known_failures: Option<Vec<KnownFailure>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    profile: BTreeMap<String, Profile>,
}

/// Where each option of a run got its value, for `--print-config`.
pub type Sources = Vec<(String, String, String)>;

fn fail(file: &Path, reason: impl std::fmt::Display) -> RunError {
    RunError::Config(format!("{}: {reason}", file.display()))
}

/// The profile to apply: `--profile NAME` from `--config FILE` or ./petstore-conformance.toml,
/// or `[profile.default]` when no name is given; `None` when there is no file and no name.
pub fn load(
    file: Option<&Path>,
    name: Option<&str>,
) -> Result<Option<(PathBuf, String, Profile)>, RunError> {
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
    let text =
        std::fs::read_to_string(&file).map_err(|e| fail(&file, format!("cannot read: {e}")))?;
    // The key is refused by name before anything else, with a message that says what to do.
    let raw: toml::Table = toml::from_str(&text).map_err(|e| fail(&file, toml_error(&text, &e)))?;
    if let Some(toml::Value::Table(profiles)) = raw.get("profile") {
        for (profile, fields) in profiles {
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
    let mut config: ConfigFile =
        toml::from_str(&text).map_err(|e| fail(&file, toml_error(&text, &e)))?;
    let chosen = name.unwrap_or("default");
    match config.profile.remove(chosen) {
        Some(profile) => Ok(Some((file, chosen.to_string(), profile))),
        None if name.is_none() => Ok(None),
        None => {
            let known: Vec<&String> = config.profile.keys().collect();
            Err(fail(
                &file,
                format!("no profile {chosen:?} (the file has: {known:?})"),
            ))
        }
    }
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

fn same<T>(value: T) -> Result<T, RunError> {
    Ok(value)
}

fn some<T>(value: T) -> Result<Option<T>, RunError> {
    Ok(Some(value))
}

/// Applies `profile` to `args` wherever the user gave no value; returns where each value of
/// interest came from.
pub fn apply(
    args: &mut RunArgs,
    matches: &ArgMatches,
    loaded: Option<(PathBuf, String, Profile)>,
) -> Result<Sources, RunError> {
    let mut sources = Sources::new();
    let (from_file, profile) = match loaded {
        Some((file, name, profile)) => (format!("{} [profile.{name}]", file.display()), profile),
        None => (String::new(), Profile::default()),
    };
    macro_rules! take {
        ($id:literal, $field:ident, $convert:expr) => {{
            let from = if !given(matches, $id) && profile.$field.is_some() {
                if let Some(value) = profile.$field.clone() {
                    args.$field = $convert(value)?;
                }
                from_file.clone()
            } else {
                source(matches, $id)
            };
            sources.push(($id.to_string(), format!("{:?}", args.$field), from));
        }};
    }
    take!("base_url", base_url, some);
    take!("api_key_env", api_key_env, same);
    take!("api_key_file", api_key_file, some);
    take!("allow_short_key", allow_short_key, same);
    take!("sign_key", sign_key, some);
    take!("ca_cert", ca_cert, some);
    take!("insecure", insecure, same);
    take!("http2_prior_knowledge", http2_prior_knowledge, same);
    take!("read_only", read_only, same);
    take!("seed", seed, some);
    take!("cases", cases, some);
    take!("time_budget", time_budget, some);
    take!("regressions", regressions, some);
    take!("no_regressions", no_regressions, same);
    take!("request_log", request_log, some);
    take!("report_dir", report_dir, same);
    let gate = |name: String| match name.as_str() {
        "required" => Ok(Gate::Required),
        "all" => Ok(Gate::All),
        "certify" => Ok(Gate::Certify),
        other => Err(RunError::Config(format!(
            "{from_file}: gate {other:?} is not \"required\", \"all\" or \"certify\""
        ))),
    };
    take!("gate", gate, gate);
    take!("timeout", timeout, same);
    take!("body_cap", body_cap, same);
    take!("rate", rate, some);
    take!("concurrency", concurrency, same);
    take!("category_ids", category_ids, same);
    take!("max_throttle_wait", max_throttle_wait, same);
    take!("max_transport_failures", max_transport_failures, same);
    take!("product", product, some);
    take!("product_version", product_version, some);
    if !given(matches, "test_threads")
        && let Some(threads) = profile.test_threads
    {
        args.libtest.test_threads = Some(threads);
        sources.push((
            "test_threads".into(),
            threads.to_string(),
            from_file.clone(),
        ));
    }
    if let Some(listed) = profile.known_failures {
        sources.push((
            "known_failures (listed)".into(),
            format!("{} entries", listed.len()),
            from_file.clone(),
        ));
        args.known_failures_listed = listed;
    }
    Ok(sources)
}
