//! `run`'s and `serve-reference`'s arguments, and the ranges every numeric option is held to
//! (exit 2 and one line outside them).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::options;
use petstore_conformance::reference::{Fault, Variant};
use petstore_conformance::runner::Gate;
use petstore_conformance::runner::RunError;

#[derive(Args)]
pub(super) struct RunArgs {
    /// Configuration file of named profiles [default: ./petstore-conformance.toml when it exists].
    #[arg(long, env = "PETSTORE_CONFIG")]
    pub(super) config: Option<PathBuf>,
    /// The profile of the configuration file to apply ([profile.NAME]; default: [profile.default]).
    #[arg(long, env = "PETSTORE_PROFILE")]
    pub(super) profile: Option<String>,
    /// Print the merged options and where each came from (flag, environment, file, default),
    /// then stop.
    #[arg(long)]
    pub(super) print_config: bool,
    /// Known failures listed in the profile (not an option of its own).
    #[arg(skip)]
    pub(super) known_failures_listed: Vec<petstore_conformance::report::KnownFailure>,
    /// Base address of the target, including /v1. Without it, the built-in reference is used.
    #[arg(long, env = "PETSTORE_BASE_URL")]
    pub(super) base_url: Option<String>,
    /// Environment variable that holds the API key.
    #[arg(long, env = "PETSTORE_API_KEY_ENV", default_value = "PETSTORE_API_KEY")]
    pub(super) api_key_env: String,
    /// Accept a key shorter than 12 characters (the reports then say their evidence may be
    /// over-redacted: so short a key cannot be told apart from ordinary text).
    #[arg(long, env = "PETSTORE_ALLOW_SHORT_KEY")]
    pub(super) allow_short_key: bool,
    /// Sign the reports: an Ed25519 private key (PKCS#8 PEM, as `openssl genpkey -algorithm
    /// ed25519` writes it); attestation.intoto.json is written beside the reports.
    #[arg(long, env = "PETSTORE_SIGN_KEY_FILE")]
    pub(super) sign_key: Option<PathBuf>,
    /// File that holds the API key (instead of the environment variable).
    #[arg(long, env = "PETSTORE_API_KEY_FILE")]
    pub(super) api_key_file: Option<PathBuf>,
    /// PEM file of a private CA to trust, besides the system's roots.
    #[arg(long, env = "PETSTORE_CA_CERT")]
    pub(super) ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate. Explicit, and recorded in the report.
    #[arg(long, env = "PETSTORE_INSECURE")]
    pub(super) insecure: bool,
    /// Speak HTTP/2 to a cleartext target without negotiation (h2c).
    #[arg(long, env = "PETSTORE_HTTP2_PRIOR_KNOWLEDGE")]
    pub(super) http2_prior_knowledge: bool,
    /// Run only the rules that create nothing on the target (for production).
    #[arg(long, env = "PETSTORE_READ_ONLY")]
    pub(super) read_only: bool,
    /// Seed of the run (printed on every run; random when absent).
    #[arg(long, env = "PETSTORE_SEED")]
    pub(super) seed: Option<u64>,
    /// Generated cases per property rule [default: 32, or unbounded under --time-budget].
    #[arg(long, env = "PETSTORE_CASES")]
    pub(super) cases: Option<u32>,
    /// How long property rules generate new cases (for a nightly job): `20m`, `1h`, or seconds.
    #[arg(long, env = "PETSTORE_TIME_BUDGET", value_parser = options::seconds)]
    pub(super) time_budget: Option<u64>,
    /// Counterexamples found against an external target are saved here and replayed first next
    /// time [default: cases/regressions/counterexamples.json when ./cases exists].
    #[arg(long, env = "PETSTORE_REGRESSIONS")]
    pub(super) regressions: Option<PathBuf>,
    /// Neither replay nor save counterexamples.
    #[arg(long, env = "PETSTORE_NO_REGRESSIONS")]
    pub(super) no_regressions: bool,
    /// Write every request sent, one JSON line each (key redacted).
    #[arg(long, env = "PETSTORE_REQUEST_LOG")]
    pub(super) request_log: Option<PathBuf>,
    /// Write every exchange as HTTP Archive 1.2 (HAR, as browsers and Schemathesis write it),
    /// key and credential headers redacted.
    #[arg(long, env = "PETSTORE_HAR")]
    pub(super) har: Option<PathBuf>,
    /// Where report.json, junit.xml, summary.md and report.html are written.
    #[arg(long, env = "PETSTORE_REPORT_DIR", default_value = "reports")]
    pub(super) report_dir: PathBuf,
    /// Directory of the JSON Schemas (default: ./schemas, else the built-in copy).
    #[arg(long, env = "PETSTORE_SCHEMAS")]
    pub(super) schemas: Option<PathBuf>,
    /// Directory of the rule catalogue (default: ./cases, else the built-in copy).
    #[arg(long, env = "PETSTORE_CASES_DIR")]
    pub(super) cases_dir: Option<PathBuf>,
    /// Which failures fail the run: required rules only, or all; `certify`: required rules,
    /// every one decided (a required rule not decidable on this store is undetermined).
    #[arg(long, env = "PETSTORE_GATE", value_enum, default_value = "required")]
    pub(super) gate: Gate,
    /// How long one exchange may take, connect to last byte (1s to 1h; `30s`, or seconds).
    #[arg(long, env = "PETSTORE_TIMEOUT", default_value = "10", value_parser = options::seconds)]
    pub(super) timeout: u64,
    /// Bytes of a response body kept, the rest dropped and the body marked truncated (1 KiB to
    /// 1 GiB).
    #[arg(long, env = "PETSTORE_BODY_CAP", default_value_t = 1 << 20)]
    pub(super) body_cap: usize,
    /// Requests in flight at once, across the whole run (1 to 1024): overlaps round trips to
    /// a remote target; 1 with --test-threads 1 sends every request in a fixed order.
    #[arg(long, env = "PETSTORE_CONCURRENCY", default_value_t = petstore_conformance::execution::DEFAULT_CONCURRENCY)]
    pub(super) concurrency: usize,
    /// The category ids the target accepts (a store with referential integrity): valid pets
    /// use only these; the invalid-value rules still use others.
    #[arg(long, env = "PETSTORE_CATEGORY_IDS", value_delimiter = ',')]
    pub(super) category_ids: Vec<i64>,
    /// Requests per second across the whole run (a staging gateway's limit).
    #[arg(long, env = "PETSTORE_RATE")]
    pub(super) rate: Option<f64>,
    /// How long one request may wait out throttling (429, or 503 with Retry-After) in all
    /// (`1m`, or seconds); past it its rule is inconclusive ("target throttled").
    #[arg(long, env = "PETSTORE_MAX_THROTTLE_WAIT", default_value = "30", value_parser = options::seconds)]
    pub(super) max_throttle_wait: u64,
    /// Consecutive transport failures (no response at all) after which the run stops sending
    /// and the rules left are inconclusive.
    #[arg(long, env = "PETSTORE_MAX_TRANSPORT_FAILURES", default_value_t = petstore_conformance::engine::run::DEFAULT_MAX_TRANSPORT_FAILURES)]
    pub(super) max_transport_failures: u32,
    /// Break one statement of the contract in the built-in reference (see serve-reference --list-faults).
    #[arg(
        long = "reference-fault",
        env = "PETSTORE_REFERENCE_FAULTS",
        value_delimiter = ','
    )]
    pub(super) reference_faults: Vec<String>,
    /// Honour the contract in an unusual way in the built-in reference (see serve-reference --list-variants).
    #[arg(
        long = "reference-variant",
        env = "PETSTORE_REFERENCE_VARIANTS",
        value_delimiter = ','
    )]
    pub(super) reference_variants: Vec<String>,
    /// A TOML file of known failures: `known_failures = [{ rule = "ID", reason = "...",
    /// link = "URL", expires = "YYYY-MM-DD" }]`. They are reported, not gated, until they expire.
    #[arg(long, env = "PETSTORE_KNOWN_FAILURES")]
    pub(super) known_failures: Option<PathBuf>,
    /// The product under test, recorded in the report as given (for certification).
    #[arg(long, env = "PETSTORE_PRODUCT")]
    pub(super) product: Option<String>,
    /// The version of the product under test, recorded in the report as given.
    #[arg(long, env = "PETSTORE_PRODUCT_VERSION")]
    pub(super) product_version: Option<String>,
    /// No progress bar, even on a terminal: libtest's plain lines, as off a terminal.
    #[arg(long, env = "PETSTORE_NO_PROGRESS")]
    pub(super) no_progress: bool,
    /// Latency the built-in reference adds to every answer (e.g. 50ms), to see how the suite
    /// behaves against a remote target.
    #[arg(long, env = "PETSTORE_REFERENCE_LATENCY", value_parser = humantime::parse_duration)]
    pub(super) reference_latency: Option<Duration>,
    /// A header sent with every request, `'Name: value'` (repeatable; a tenant or gateway
    /// header). A value that looks like a credential is redacted everywhere, as the key is.
    #[arg(short = 'H', long = "header", env = "PETSTORE_HEADERS", value_delimiter = '\n', value_parser = options::header)]
    pub(super) headers: Vec<(String, String)>,
    /// PEM file of the client certificate (chain) to present to a target that asks for one
    /// (mTLS); with --client-key.
    #[arg(long, env = "PETSTORE_CLIENT_CERT", requires = "client_key")]
    pub(super) client_cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key.
    #[arg(long, env = "PETSTORE_CLIENT_KEY", requires = "client_cert")]
    pub(super) client_key: Option<PathBuf>,
    /// Send every request through this HTTP proxy (hosts in NO_PROXY excepted). Without it,
    /// HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply to a remote target; loopback goes direct.
    #[arg(long, env = "PETSTORE_PROXY")]
    pub(super) proxy: Option<String>,
    /// Run one shard of a split run: `hash:K/N` (rules dealt by a fixed hash of their id) or
    /// `slice:K/N` (round robin); `merge` joins the shards' reports.
    #[arg(long, env = "PETSTORE_PARTITION")]
    pub(super) partition: Option<petstore_conformance::catalogue::partition::Partition>,
    #[command(flatten)]
    pub(super) selection: options::Selection,
}

#[derive(Args)]
pub(super) struct ServeArgs {
    /// Port on 127.0.0.1 (0: an ephemeral port).
    #[arg(long, env = "PETSTORE_REFERENCE_PORT", default_value_t = 0)]
    pub(super) port: u16,
    /// The key the server accepts (random when absent).
    #[arg(long, env = "PETSTORE_REFERENCE_API_KEY")]
    pub(super) api_key: Option<String>,
    /// Break one statement of the contract (repeatable).
    #[arg(long = "fault")]
    pub(super) faults: Vec<String>,
    /// List the faults and the rules each one breaks.
    #[arg(long)]
    pub(super) list_faults: bool,
    /// Honour the contract in an unusual way (repeatable).
    #[arg(long = "variant")]
    pub(super) variants: Vec<String>,
    /// List the variants.
    #[arg(long)]
    pub(super) list_variants: bool,
    /// Latency added to every answer (e.g. 50ms), to see remote-target behaviour without a proxy.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub(super) latency: Option<Duration>,
    /// Serve a conforming store drawn from this seed: every choice the contract leaves open
    /// (escapes, ids, status codes, answers to each request-space class, ...) drawn from what
    /// it allows; the choices are printed first. Instead of --variant.
    #[arg(long, conflicts_with = "variants")]
    pub(super) conforming_seed: Option<u64>,
}

/// Names given on the command line, each parsed by `parse`; `what` names the kind of thing
/// and the command that lists them.
pub(super) fn parse_names<T: Ord>(
    names: &[String],
    parse: fn(&str) -> Option<T>,
    what: &str,
) -> Result<BTreeSet<T>, RunError> {
    names
        .iter()
        .filter(|name| !name.is_empty())
        .map(|name| {
            parse(name).ok_or_else(|| {
                RunError::Config(format!(
                    "unknown {what} {name:?}; `petstore-conformance serve-reference --list-{what}s` lists them"
                ))
            })
        })
        .collect()
}

pub(super) fn parse_faults(names: &[String]) -> Result<BTreeSet<Fault>, RunError> {
    parse_names(names, Fault::parse, "fault")
}

pub(super) fn parse_variants(names: &[String]) -> Result<BTreeSet<Variant>, RunError> {
    parse_names(names, Variant::parse, "variant")
}

/// A file of settings an option names (a certificate, a key), read with a bound.
pub(super) fn read_file(option: &str, file: &Path) -> Result<Vec<u8>, RunError> {
    use petstore_conformance::execution::files;
    files::read_capped(file, files::SETTINGS_CAP)
        .map_err(|e| RunError::Config(format!("{option} {}: {e}", file.display())))
}

/// Bounds of the numeric options: past them a run would panic, hang, or judge nothing.
pub(super) const TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 1..=3600;
pub(super) const BODY_CAP_BYTES: std::ops::RangeInclusive<usize> = 1024..=(1 << 30);
/// The most `--cases` may be: as many as a time budget allows (report.json writes both alike).
pub(super) const MAX_CASES: u32 = petstore_conformance::report::Cases::UNTIL_DEADLINE;
pub(super) const CONCURRENCY: std::ops::RangeInclusive<usize> = 1..=1024;
pub(super) const TEST_THREADS: std::ops::RangeInclusive<usize> = 1..=1024;
/// A week: a budget past that is a typo, and `start + budget` must fit a clock.
pub(super) const TIME_BUDGET_SECONDS: std::ops::RangeInclusive<u64> = 1..=604_800;
/// Requests per second: one a hundred seconds (slower is a typo) to far past what a run sends.
pub(super) const RATE: std::ops::RangeInclusive<f64> = 0.01..=100_000.0;
pub(super) const MAX_THROTTLE_WAIT_SECONDS: std::ops::RangeInclusive<u64> = 0..=3600;
pub(super) const MAX_TRANSPORT_FAILURES: std::ops::RangeInclusive<u32> = 1..=1_000_000;
/// The latency the built-in reference adds: up to a minute (a remote target, not a dead one).
pub(super) const REFERENCE_LATENCY: std::ops::RangeInclusive<Duration> =
    Duration::ZERO..=Duration::from_secs(60);
/// Seconds of the bench's long memory run: up to a day.
pub(super) const LONG_BUDGET_SECONDS: std::ops::RangeInclusive<u64> = 1..=86_400;

pub(super) fn check_latency(option: &str, latency: Option<Duration>) -> Result<(), RunError> {
    match latency {
        Some(latency) if !REFERENCE_LATENCY.contains(&latency) => Err(RunError::Config(format!(
            "{option} {}: must be within 0s..=60s",
            humantime::format_duration(latency)
        ))),
        _ => Ok(()),
    }
}

/// Every numeric option within its range, checked before anything starts: exit 2 and one line
/// naming the option, the value and the range.
pub(super) fn check_limits(args: &RunArgs, test_threads: Option<usize>) -> Result<(), RunError> {
    fn within<T: PartialOrd + std::fmt::Display>(
        option: &str,
        value: T,
        range: &std::ops::RangeInclusive<T>,
        unit: &str,
    ) -> Result<(), RunError> {
        if range.contains(&value) {
            return Ok(());
        }
        Err(RunError::Config(format!(
            "{option} {value}: must be within {}..={}{unit}",
            range.start(),
            range.end()
        )))
    }
    within("--timeout", args.timeout, &TIMEOUT_SECONDS, " seconds")?;
    within("--body-cap", args.body_cap, &BODY_CAP_BYTES, " bytes")?;
    if let Some(cases) = args.cases {
        within(
            "--cases",
            cases,
            &(0..=MAX_CASES),
            " (for longer runs, --time-budget)",
        )?;
    }
    if let Some(budget) = args.time_budget {
        within("--time-budget", budget, &TIME_BUDGET_SECONDS, " seconds")?;
    }
    if let Some(rate) = args.rate {
        // NaN is in no range: refused too.
        within("--rate", rate, &RATE, " requests per second")?;
    }
    within(
        "--max-throttle-wait",
        args.max_throttle_wait,
        &MAX_THROTTLE_WAIT_SECONDS,
        " seconds",
    )?;
    within(
        "--concurrency",
        args.concurrency,
        &CONCURRENCY,
        " requests in flight",
    )?;
    if let Some(threads) = test_threads {
        within("--test-threads", threads, &TEST_THREADS, " rules at once")?;
    }
    within(
        "--max-transport-failures",
        args.max_transport_failures,
        &MAX_TRANSPORT_FAILURES,
        "",
    )?;
    check_latency("--reference-latency", args.reference_latency)?;
    Ok(())
}
