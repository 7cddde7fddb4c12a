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

use super::args::RunArgs;

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
    client_cert: Option<PathBuf>,
    client_key: Option<PathBuf>,
    proxy: Option<String>,
    headers: Option<Vec<String>>,
    insecure: Option<bool>,
    http2_prior_knowledge: Option<bool>,
    read_only: Option<bool>,
    seed: Option<u64>,
    cases: Option<u32>,
    time_budget: Option<Seconds>,
    regressions: Option<PathBuf>,
    no_regressions: Option<bool>,
    request_log: Option<PathBuf>,
    report_dir: Option<PathBuf>,
    gate: Option<String>,
    timeout: Option<Seconds>,
    body_cap: Option<usize>,
    rate: Option<f64>,
    concurrency: Option<usize>,
    category_ids: Option<Vec<i64>>,
    max_throttle_wait: Option<Seconds>,
    max_transport_failures: Option<u32>,
    test_threads: Option<usize>,
    product: Option<String>,
    product_version: Option<String>,
    known_failures: Option<Vec<KnownFailure>>,
}

/// A duration in a profile: a number of seconds (`1800`) or as people write it (`"30m"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Seconds {
    Count(u64),
    Written(String),
}

impl Seconds {
    fn get(self) -> Result<u64, RunError> {
        match self {
            Seconds::Count(seconds) => Ok(seconds),
            Seconds::Written(text) => super::options::seconds(&text).map_err(RunError::Config),
        }
    }
}

/// A profile over `[profile.default]`: each key the profile leaves out is the default's, as
/// nextest's profiles inherit theirs.
macro_rules! inherit {
    ($chosen:expr, $default:expr, $($field:ident),* $(,)?) => {
        Profile { $($field: $chosen.$field.or($default.$field),)* }
    };
}

impl Profile {
    fn over(self, default: Profile) -> Profile {
        inherit!(
            self,
            default,
            base_url,
            api_key_env,
            api_key_file,
            ca_cert,
            client_cert,
            client_key,
            proxy,
            headers,
            insecure,
            http2_prior_knowledge,
            read_only,
            seed,
            cases,
            time_budget,
            regressions,
            no_regressions,
            request_log,
            report_dir,
            gate,
            timeout,
            body_cap,
            rate,
            concurrency,
            category_ids,
            max_throttle_wait,
            max_transport_failures,
            test_threads,
            product,
            product_version,
            known_failures,
            allow_short_key,
            sign_key,
        )
    }

    /// The keys this profile sets, for naming where a merged value came from.
    fn keys(text: &str, name: &str) -> Vec<String> {
        let raw: toml::Table = toml::from_str(text).unwrap_or_default();
        raw.get("profile")
            .and_then(|p| p.get(name))
            .and_then(|p| p.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// The profile applied: where it is, its name, the merged values and which keys the named
/// profile set itself (the rest came from `[profile.default]`).
pub struct Loaded {
    file: PathBuf,
    name: String,
    profile: Profile,
    own_keys: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    profile: BTreeMap<String, Profile>,
}

/// Where each option of a run got its value, for `--print-config`: name, value as TOML
/// (`None`: unset), source.
pub type Sources = Vec<(String, Option<String>, String)>;

/// A value as a profile would spell it, for `--print-config`; `None` when unset.
pub trait TomlLike {
    fn toml(&self) -> Option<String>;
}

macro_rules! toml_plain {
    ($($t:ty),*) => {$(
        impl TomlLike for $t {
            fn toml(&self) -> Option<String> {
                Some(self.to_string())
            }
        }
    )*};
}
toml_plain!(bool, u32, u64, usize, i64);

impl TomlLike for f64 {
    fn toml(&self) -> Option<String> {
        Some(format!("{self:?}"))
    }
}

impl TomlLike for String {
    fn toml(&self) -> Option<String> {
        // A JSON string is a TOML basic string (same escapes).
        serde_json::to_string(self).ok()
    }
}

impl TomlLike for PathBuf {
    fn toml(&self) -> Option<String> {
        self.display().to_string().toml()
    }
}

impl TomlLike for Gate {
    fn toml(&self) -> Option<String> {
        self.as_str().to_string().toml()
    }
}

impl TomlLike for (String, String) {
    fn toml(&self) -> Option<String> {
        let value = if petstore_conformance::execution::looks_like_credential(&self.0, &self.1) {
            petstore_conformance::execution::redact::REDACTED
        } else {
            &self.1
        };
        format!("{}: {value}", self.0).toml()
    }
}

impl<T: TomlLike> TomlLike for Option<T> {
    fn toml(&self) -> Option<String> {
        self.as_ref().and_then(T::toml)
    }
}

impl<T: TomlLike> TomlLike for Vec<T> {
    fn toml(&self) -> Option<String> {
        let items: Vec<String> = self.iter().filter_map(T::toml).collect();
        Some(format!("[{}]", items.join(", ")))
    }
}

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
    let default = config.profile.remove("default");
    let own_keys = Profile::keys(&text, chosen);
    let found = if chosen == "default" {
        default.map(|profile| profile.over(Profile::default()))
    } else {
        config
            .profile
            .remove(chosen)
            .map(|profile| profile.over(default.unwrap_or_default()))
    };
    match found {
        Some(profile) => Ok(Some(Loaded {
            file,
            name: chosen.to_string(),
            profile,
            own_keys,
        })),
        None if name.is_none() => Ok(None),
        None => {
            let mut known: Vec<&String> = config.profile.keys().collect();
            let default = "default".to_string();
            if !Profile::keys(&text, "default").is_empty() {
                known.push(&default);
            }
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
    loaded: Option<Loaded>,
) -> Result<Sources, RunError> {
    let mut sources = Sources::new();
    let (file, name, profile, own_keys) = match loaded {
        Some(Loaded {
            file,
            name,
            profile,
            own_keys,
        }) => (file.display().to_string(), name, profile, own_keys),
        None => (String::new(), String::new(), Profile::default(), Vec::new()),
    };
    let from_file = format!("{file} [profile.{name}]");
    let from_key = |key: &str| {
        if own_keys.iter().any(|k| k == key) || name == "default" {
            from_file.clone()
        } else {
            format!("{file} [profile.default]")
        }
    };
    macro_rules! take {
        ($id:literal, $field:ident, $convert:expr) => {{
            let from = if !given(matches, $id) && profile.$field.is_some() {
                if let Some(value) = profile.$field.clone() {
                    args.$field = $convert(value)?;
                }
                from_key($id)
            } else {
                source(matches, $id)
            };
            sources.push(($id.to_string(), args.$field.toml(), from));
        }};
    }
    let seconds = |value: Seconds| value.get();
    let some_seconds = |value: Seconds| value.get().map(Some);
    let headers = |lines: Vec<String>| {
        lines
            .iter()
            .map(|line| {
                super::options::header(line)
                    .map_err(|e| RunError::Config(format!("{from_file}: headers: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()
    };
    take!("base_url", base_url, some);
    take!("api_key_env", api_key_env, same);
    take!("api_key_file", api_key_file, some);
    take!("allow_short_key", allow_short_key, same);
    take!("sign_key", sign_key, some);
    take!("ca_cert", ca_cert, some);
    take!("client_cert", client_cert, some);
    take!("client_key", client_key, some);
    take!("proxy", proxy, some);
    take!("headers", headers, headers);
    take!("insecure", insecure, same);
    take!("http2_prior_knowledge", http2_prior_knowledge, same);
    take!("read_only", read_only, same);
    take!("seed", seed, some);
    take!("cases", cases, some);
    take!("time_budget", time_budget, some_seconds);
    take!("regressions", regressions, some);
    take!("no_regressions", no_regressions, same);
    take!("request_log", request_log, some);
    take!("report_dir", report_dir, same);
    let gate = |name: String| {
        Gate::parse(&name).ok_or_else(|| {
            RunError::Config(format!(
                "{from_file}: gate {name:?} is not \"required\", \"all\" or \"certify\""
            ))
        })
    };
    take!("gate", gate, gate);
    take!("timeout", timeout, seconds);
    take!("body_cap", body_cap, same);
    take!("rate", rate, some);
    take!("concurrency", concurrency, same);
    take!("category_ids", category_ids, same);
    take!("max_throttle_wait", max_throttle_wait, seconds);
    take!("max_transport_failures", max_transport_failures, same);
    take!("product", product, some);
    take!("product_version", product_version, some);
    if !given(matches, "test_threads")
        && let Some(threads) = profile.test_threads
    {
        args.selection.test_threads = Some(threads);
    }
    sources.push((
        "test_threads".into(),
        args.selection.test_threads.toml(),
        if given(matches, "test_threads") || profile.test_threads.is_none() {
            source(matches, "test_threads")
        } else {
            from_key("test_threads")
        },
    ));
    if let Some(listed) = profile.known_failures {
        sources.push((
            "known_failures".into(),
            Some(format!("[] # {} entries, not shown", listed.len())),
            from_key("known_failures"),
        ));
        args.known_failures_listed = listed;
    }
    Ok(sources)
}
