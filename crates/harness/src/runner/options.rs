//! Every option of `run`, declared once, in [`RunOptions`]: a field's doc comment is its help,
//! its `#[arg]` its flag, environment variable and default, its name its key in a profile and
//! its line in `--print-config`, and its class whether the Re-run line repeats it. Flags and
//! variables are clap's; a profile is the same struct read by serde, laid under them
//! (cli/profiles.rs); `--print-config` and the Re-run line walk [`RunOptions::fields`]. Adding
//! an option is its field here and its use.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser};
use serde::Deserialize;

pub use super::option_values::{Header, ProxyUrl, Seconds, Setting, shell_word};
use super::option_values::{duration_from_text, from_text};
use crate::catalogue::Gate;
use crate::catalogue::partition::Partition;
use crate::report::KnownFailure;

/// Pets a run under a time budget creates at most, unless `--max-pets` says.
pub const DEFAULT_MAX_PETS: u64 = 1_000;

/// Whether the Re-run line repeats an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnRerun {
    /// It changes what is sent or how an answer is judged: on the line unless it is the
    /// default.
    Repeated,
    /// It changes only where files go, how fast requests overlap, or what the report calls
    /// the product: not on the line.
    Left,
    /// It names what the run resolved it to (the target, the regressions file): the line
    /// spells it from the resolved value (`rerun.rs`).
    Resolved,
}

/// One option: its name (the flag's id, the profile's key), whether the Re-run line repeats
/// it, and its value.
pub struct Field<'o> {
    pub name: &'static str,
    pub on_rerun: OnRerun,
    pub value: &'o dyn Setting,
}

/// Declares [`RunOptions`] and what walks it, from one list of fields, each with its class.
macro_rules! run_options {
    (
        $(#[$meta:meta])*
        pub struct RunOptions {
            $(
                $(#[$field_meta:meta])*
                [$class:ident] $field:ident: $ty:ty,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Args, Deserialize, Debug, Clone)]
        #[serde(deny_unknown_fields, default)]
        pub struct RunOptions {
            $(
                $(#[$field_meta])*
                pub $field: $ty,
            )*
        }

        impl RunOptions {
            /// Every option, in the order declared (the order `--help`, `--print-config` and
            /// the Re-run line give them).
            pub fn fields(&self) -> Vec<Field<'_>> {
                vec![$(
                    Field {
                        name: stringify!($field),
                        on_rerun: OnRerun::$class,
                        value: &self.$field,
                    },
                )*]
            }

            /// Takes `from`'s value of the option `name` (a profile's, where the command line
            /// and the environment gave none); false when there is no such option.
            pub fn take(&mut self, name: &str, from: &RunOptions) -> bool {
                match name {
                    $(stringify!($field) => {
                        self.$field = from.$field.clone();
                        true
                    })*
                    _ => false,
                }
            }
        }
    };
}

run_options! {
    /// The options of `run` (and of `replay`, which runs a rule again).
    pub struct RunOptions {
        /// Break one statement of the contract in the built-in reference (see serve-reference --list-faults).
        #[arg(
            long = "reference-fault",
            env = "PETSTORE_REFERENCE_FAULTS",
            value_delimiter = ','
        )]
        [Resolved] reference_faults: Vec<String>,
        /// Honour the contract in an unusual way in the built-in reference (see serve-reference --list-variants).
        #[arg(
            long = "reference-variant",
            env = "PETSTORE_REFERENCE_VARIANTS",
            value_delimiter = ','
        )]
        [Resolved] reference_variants: Vec<String>,
        /// Latency the built-in reference adds to every answer (e.g. 50ms), to see how the suite
        /// behaves against a remote target.
        #[arg(long, env = "PETSTORE_REFERENCE_LATENCY", value_parser = humantime::parse_duration)]
        #[serde(deserialize_with = "duration_from_text")]
        [Repeated] reference_latency: Option<Duration>,
        /// Base address of the target, including /v1. Without it, the built-in reference is used.
        #[arg(long, env = "PETSTORE_BASE_URL")]
        [Resolved] base_url: Option<String>,
        /// Environment variable that holds the API key.
        #[arg(long, env = "PETSTORE_API_KEY_ENV", default_value = "PETSTORE_API_KEY")]
        [Repeated] api_key_env: String,
        /// File that holds the API key (instead of the environment variable).
        #[arg(long, env = "PETSTORE_API_KEY_FILE")]
        [Repeated] api_key_file: Option<PathBuf>,
        /// Accept a key shorter than 12 characters (the reports then say their evidence may be
        /// over-redacted: so short a key cannot be told apart from ordinary text).
        #[arg(long, env = "PETSTORE_ALLOW_SHORT_KEY", value_parser = clap::builder::BoolishValueParser::new())]
        [Left] allow_short_key: bool,
        /// Sign the reports: an Ed25519 private key (PKCS#8 PEM, as `openssl genpkey -algorithm
        /// ed25519` writes it); attestation.intoto.json is written beside the reports.
        #[arg(long, env = "PETSTORE_SIGN_KEY_FILE")]
        [Left] sign_key: Option<PathBuf>,
        /// Seed of the run (printed on every run; random when absent).
        #[arg(long, env = "PETSTORE_SEED")]
        [Repeated] seed: Option<u64>,
        /// Generated cases per property rule [default: 32, or unbounded under --time-budget].
        #[arg(long, env = "PETSTORE_CASES")]
        [Repeated] cases: Option<u32>,
        /// How long property rules generate new cases (for a nightly job): `20m`, `1h`, or seconds.
        #[arg(long, env = "PETSTORE_TIME_BUDGET")]
        [Repeated] time_budget: Option<Seconds>,
        /// Pets a run under --time-budget creates at most (a shared store keeps them: the
        /// contract has no delete); past them it spends the rest of its time on requests that
        /// create nothing.
        #[arg(long, env = "PETSTORE_MAX_PETS", default_value_t = DEFAULT_MAX_PETS)]
        [Repeated] max_pets: u64,
        /// Which failures fail the run: required rules only, or all; `certify`: required rules,
        /// every one decided (a required rule not decidable on this store is undetermined).
        #[arg(long, env = "PETSTORE_GATE", value_enum, default_value = "required")]
        [Repeated] gate: Gate,
        /// Fill the store past common row limits before list-pets/crowded/pets-array: the run
        /// creates pets (named with its prefix) until it has made PETS, listing at 1,000,
        /// 1,001 and 32,768 on the way; a shared store keeps them (the contract has no delete),
        /// so the rule is skipped without it. Under --time-budget, --max-pets bounds it too.
        #[arg(long, env = "PETSTORE_FILL_STORE", value_name = "PETS", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        [Repeated] fill_store: Option<u64>,
        /// Run only the rules that create nothing on the target (for production).
        #[arg(long, env = "PETSTORE_READ_ONLY", value_parser = clap::builder::BoolishValueParser::new())]
        [Repeated] read_only: bool,
        /// The category ids the target accepts (a store with referential integrity): valid pets
        /// use only these; the invalid-value rules still use others.
        #[arg(long, env = "PETSTORE_CATEGORY_IDS", value_delimiter = ',')]
        [Repeated] category_ids: Vec<i64>,
        /// A TOML file of known failures: `known_failures = [{ rule = "ID", reason = "...",
        /// link = "URL", expires = "YYYY-MM-DD" }]`. They are reported, not gated, until they expire.
        #[arg(long = "known-failures", env = "PETSTORE_KNOWN_FAILURES")]
        [Repeated] known_failures_file: Option<PathBuf>,
        /// Known failures listed in a profile itself (`known_failures = [...]`): no flag.
        #[arg(skip)]
        [Repeated] known_failures: Vec<KnownFailure>,
        /// Counterexamples found against an external target are saved here and replayed first next
        /// time [default: cases/regressions/counterexamples.json when ./cases exists].
        #[arg(long, env = "PETSTORE_REGRESSIONS")]
        [Resolved] regressions: Option<PathBuf>,
        /// Neither replay nor save counterexamples.
        #[arg(long, env = "PETSTORE_NO_REGRESSIONS", value_parser = clap::builder::BoolishValueParser::new())]
        [Resolved] no_regressions: bool,
        /// Directory of the JSON Schemas (default: ./schemas, else the built-in copy).
        #[arg(long, env = "PETSTORE_SCHEMAS")]
        [Repeated] schemas: Option<PathBuf>,
        /// Directory of the rule catalogue (default: ./cases, else the built-in copy).
        #[arg(long, env = "PETSTORE_CASES_DIR")]
        [Repeated] cases_dir: Option<PathBuf>,
        /// Consecutive transport failures (no response at all) after which the run stops sending
        /// and the rules left are inconclusive.
        #[arg(long, env = "PETSTORE_MAX_TRANSPORT_FAILURES", default_value_t = crate::engine::stops::DEFAULT_MAX_TRANSPORT_FAILURES)]
        [Repeated] max_transport_failures: u32,
        /// Run one shard of a split run: `hash:K/N` (rules dealt by a fixed hash of their id) or
        /// `slice:K/N` (round robin); `merge` joins the shards' reports.
        #[arg(long, env = "PETSTORE_PARTITION")]
        #[serde(deserialize_with = "from_text")]
        [Repeated] partition: Option<Partition>,
        /// The run a shard is part of, the same in every shard (a CI sets it from its pipeline's
        /// id); `merge` refuses shards of different ones [default: the CI's run id, else the
        /// process that started this one].
        #[arg(long, env = "PETSTORE_INVOCATION")]
        [Left] invocation: Option<String>,
        /// How long one exchange may take, connect to last byte (1s to 1h; `30s`, or seconds).
        #[arg(long, env = "PETSTORE_TIMEOUT", default_value = "10")]
        [Repeated] timeout: Seconds,
        /// How long opening a connection may take (1s to 1m; `5s`, or seconds): a target slow
        /// to accept, behind a gateway that queues connections, may need more.
        #[arg(long, env = "PETSTORE_CONNECT_TIMEOUT", default_value = "5")]
        [Repeated] connect_timeout: Seconds,
        /// Bytes of a response body kept, the rest dropped and the body marked truncated (1 KiB to
        /// 1 GiB).
        #[arg(long, env = "PETSTORE_BODY_CAP", default_value_t = 1 << 20)]
        [Repeated] body_cap: usize,
        /// Accept any TLS certificate. Explicit, and recorded in the report.
        #[arg(long, env = "PETSTORE_INSECURE", value_parser = clap::builder::BoolishValueParser::new())]
        [Repeated] insecure: bool,
        /// Speak HTTP/2 to a cleartext target without negotiation (h2c).
        #[arg(long, env = "PETSTORE_HTTP2_PRIOR_KNOWLEDGE", value_parser = clap::builder::BoolishValueParser::new())]
        [Repeated] http2_prior_knowledge: bool,
        /// Requests per second across the whole run (a staging gateway's limit).
        #[arg(long, env = "PETSTORE_RATE")]
        [Repeated] rate: Option<f64>,
        /// How long one request may wait out throttling (429, or 503 with Retry-After) in all
        /// (`1m`, or seconds); past it its rule is inconclusive ("target throttled").
        #[arg(long, env = "PETSTORE_MAX_THROTTLE_WAIT", default_value = "30")]
        [Repeated] max_throttle_wait: Seconds,
        /// A header sent with every request, `'Name: value'` (repeatable; a tenant or gateway
        /// header). A value that looks like a credential is redacted everywhere, as the key is.
        #[arg(short = 'H', long = "header", env = "PETSTORE_HEADERS", value_delimiter = '\n')]
        [Repeated] headers: Vec<Header>,
        /// Send every request through this HTTP proxy (hosts in NO_PROXY excepted). Without it,
        /// HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply to a remote target; loopback goes direct.
        #[arg(long, env = "PETSTORE_PROXY")]
        [Repeated] proxy: Option<ProxyUrl>,
        /// PEM file of a private CA to trust, besides the system's roots.
        #[arg(long, env = "PETSTORE_CA_CERT")]
        [Left] ca_cert: Option<PathBuf>,
        /// PEM file of the client certificate (chain) to present to a target that asks for one
        /// (mTLS); with --client-key.
        #[arg(long, env = "PETSTORE_CLIENT_CERT", requires = "client_key")]
        [Left] client_cert: Option<PathBuf>,
        /// PEM file of the client certificate's private key.
        #[arg(long, env = "PETSTORE_CLIENT_KEY", requires = "client_cert")]
        [Left] client_key: Option<PathBuf>,
        /// Requests in flight at once, across the whole run (1 to 1024): overlaps round trips to
        /// a remote target; 1 with --test-threads 1 sends every request in a fixed order.
        #[arg(long, env = "PETSTORE_CONCURRENCY", default_value_t = crate::execution::DEFAULT_CONCURRENCY)]
        [Left] concurrency: usize,
        /// Where report.json, junit.xml, summary.md and report.html are written.
        #[arg(long, env = "PETSTORE_REPORT_DIR", default_value = "reports")]
        [Left] report_dir: Option<PathBuf>,
        /// Write every request sent, one JSON line each (key redacted).
        #[arg(long, env = "PETSTORE_REQUEST_LOG")]
        [Left] request_log: Option<PathBuf>,
        /// Write every exchange as HTTP Archive 1.2 (HAR, as browsers and Schemathesis write it),
        /// key and credential headers redacted.
        #[arg(long, env = "PETSTORE_HAR")]
        [Left] har: Option<PathBuf>,
        /// The product under test, recorded in the report as given (for certification).
        #[arg(long, env = "PETSTORE_PRODUCT")]
        [Left] product: Option<String>,
        /// The version of the product under test, recorded in the report as given.
        #[arg(long, env = "PETSTORE_PRODUCT_VERSION")]
        [Left] product_version: Option<String>,
        /// No progress bar, even on a terminal: libtest's plain lines, as off a terminal.
        #[arg(long, env = "PETSTORE_NO_PROGRESS", value_parser = clap::builder::BoolishValueParser::new())]
        [Left] no_progress: bool,
        /// Leave out the rules whose id contains FILTER (repeatable, or comma-separated).
        #[arg(long, value_name = "FILTER", env = "PETSTORE_SKIP", value_delimiter = ',')]
        [Repeated] skip: Vec<String>,
        /// FILTER and --skip name whole rule ids, not parts of them.
        #[arg(long, env = "PETSTORE_EXACT", value_parser = clap::builder::BoolishValueParser::new())]
        [Repeated] exact: bool,
        /// Rules judged at once (1 to 1024) [default: 96].
        #[arg(long, env = "PETSTORE_TEST_THREADS")]
        [Left] test_threads: Option<usize>,
        /// Run only the rules whose id contains FILTER (`list-pets/limit`: the limit rules).
        #[arg(value_name = "FILTER", env = "PETSTORE_FILTER")]
        [Repeated] filter: Option<String>,
    }
}

/// The options alone, as a command line of their own: what their defaults are, and their flags.
#[derive(Parser)]
#[command(name = "run", no_binary_name = true)]
struct OptionsOnly {
    #[command(flatten)]
    options: RunOptions,
}

impl Default for RunOptions {
    /// The defaults the flags declare, whatever the environment holds.
    fn default() -> RunOptions {
        let command = OptionsOnly::command().mut_args(|arg| arg.env(None::<&'static str>));
        let matches = command
            .try_get_matches_from(Vec::<String>::new())
            .expect("an empty command line gives the options' defaults");
        RunOptions::from_arg_matches(&matches).expect("the options' defaults read back")
    }
}

impl RunOptions {
    /// Each option the command line has, by name, with its flag (`--seed`); the filter, a
    /// positional, has none. An option missing here is a profile's alone.
    pub fn flags() -> BTreeMap<&'static str, Option<String>> {
        let command = OptionsOnly::command();
        let mut flags = BTreeMap::new();
        for field in RunOptions::default().fields() {
            if let Some(arg) = command
                .get_arguments()
                .find(|arg| arg.get_id().as_str() == field.name)
            {
                flags.insert(field.name, arg.get_long().map(|long| format!("--{long}")));
            }
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_has_one_name_and_the_defaults_are_the_flags() {
        let options = RunOptions::default();
        assert_eq!(options.timeout, Seconds(10));
        assert_eq!(options.gate, Gate::Required);
        assert_eq!(options.max_pets, DEFAULT_MAX_PETS);
        assert_eq!(options.report_dir, Some(PathBuf::from("reports")));
        assert_eq!(options.api_key_env, "PETSTORE_API_KEY");
        let flags = RunOptions::flags();
        assert_eq!(flags["seed"].as_deref(), Some("--seed"));
        assert_eq!(
            flags["known_failures_file"].as_deref(),
            Some("--known-failures")
        );
        assert_eq!(flags["headers"].as_deref(), Some("--header"));
        assert_eq!(flags["filter"], None);
        assert!(!flags.contains_key("known_failures"), "a profile's alone");
        // Every field is an option with a flag, or a profile's own list; each name once.
        let names: Vec<&str> = options.fields().iter().map(|field| field.name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert_eq!(flags.len(), names.len() - 1);
    }

    #[test]
    fn a_profile_reads_into_the_same_options_and_refuses_what_is_not_one() {
        let read = |text: &str| toml::from_str::<RunOptions>(text);
        let options = read("seed = 9\ntimeout = \"30s\"\nheaders = [\"X-Tenant: acme\"]\npartition = \"hash:1/3\"\nreference_latency = \"50ms\"\n").unwrap();
        assert_eq!(options.seed, Some(9));
        assert_eq!(options.timeout, Seconds(30));
        assert_eq!(options.headers[0].name, "X-Tenant");
        assert_eq!(
            options.partition.map(|p| p.to_string()).as_deref(),
            Some("hash:1/3")
        );
        assert_eq!(options.reference_latency, Some(Duration::from_millis(50)));
        // What the profile leaves out is the default.
        assert_eq!(options.max_throttle_wait, Seconds(30));
        assert!(read("sede = 9\n").is_err(), "a misspelt key");
        assert!(read("gate = \"most\"\n").is_err());
        let mut taken = RunOptions::default();
        assert!(taken.take("seed", &options));
        assert_eq!(taken.seed, Some(9));
        assert!(!taken.take("no_such_option", &options));
    }
}
