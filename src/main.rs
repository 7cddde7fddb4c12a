//! `petstore-conformance`: run the suite, serve the reference server, list the rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

mod config;
#[path = "cli/evidence.rs"]
mod evidence;
mod options;

use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::execution::{ClientSettings, ProxySetting};
use petstore_conformance::reference::{
    FAULTS, Fault, ReferenceConfig, ReferenceServer, VARIANTS, Variant,
};
use petstore_conformance::report::Report;
use petstore_conformance::runner::engine::{self, DEFAULT_CASES, RunError, UNBOUNDED_CASES};
use petstore_conformance::runner::regressions;
use petstore_conformance::runner::{Gate, RunConfig, Target};
use petstore_conformance::seed::random_seed;

#[derive(Parser)]
#[command(
    name = "petstore-conformance",
    version,
    about = "Contract-conformance harness for the Pet Store interface"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the suite against a target (the built-in reference server when no --base-url).
    #[command(after_help = engine::EXIT_CODES)]
    Run(Box<RunArgs>),
    /// Serve the built-in reference server on 127.0.0.1.
    ServeReference(ServeArgs),
    /// Re-send the request a report recorded for a failed rule and show the exchange, then
    /// judge the rule again on the target (the report's seed and cases) and print its verdict.
    /// The target, key, TLS, header and proxy options are `run`'s (a profile's too): the base
    /// URL comes from them, never from the report, which is not trusted with the key.
    Replay {
        /// A report.json written by `run`.
        report: PathBuf,
        /// The rule whose failing request to re-send.
        rule: String,
        #[command(flatten)]
        run: Box<RunArgs>,
    },
    /// Check a report directory: the attestation's signature (--public-key), every file's
    /// SHA-256, and that its contract, catalogue and schemas are this verifier's own. Exit 0
    /// when all hold, 1 when one does not (one line each), 2 when nothing can be read.
    VerifyReport {
        /// The report directory (or a report.json in it) written by `run`.
        report: PathBuf,
        /// The Ed25519 public key (PEM, as `openssl pkey -pubout` writes it) the attestation
        /// must be signed with. Without it, only integrity is shown.
        #[arg(long, env = "PETSTORE_PUBLIC_KEY_FILE")]
        public_key: Option<PathBuf>,
        /// Directory of the JSON Schemas to compare with (default: ./schemas, else the
        /// built-in copy).
        #[arg(long, env = "PETSTORE_SCHEMAS")]
        schemas: Option<PathBuf>,
        /// Directory of the case files to compare the catalogue with (default: ./cases, else
        /// the built-in copy).
        #[arg(long, env = "PETSTORE_CASES_DIR")]
        cases_dir: Option<PathBuf>,
    },
    /// What changed between two runs: new failures, fixed, still failing, passed then
    /// inconclusive, inconclusive then failed, new and removed rules. Exit 0 when no gated rule
    /// newly fails (under the gate the later run used), 1 when one does (the nightly gate), 2
    /// when a report cannot be read or the runs are of different targets, contracts or
    /// catalogues.
    Compare {
        /// The earlier report.json.
        old: PathBuf,
        /// The later report.json.
        new: PathBuf,
        /// Also write the comparison as Markdown here.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Compare runs of different targets, contracts or catalogues all the same.
        #[arg(long)]
        allow_different: bool,
    },
    /// Measure: the default suite at 0, 10 and 50 ms of latency (in round trips), time-budget
    /// throughput against a raw ceiling, peak RSS of the default run and after a short and a
    /// long budget, three shards at once against the single run. Prints a table and writes it
    /// as JSON. Takes about a minute and a half.
    Bench {
        /// Where the figures are written as JSON.
        #[arg(long, default_value = "reports/bench.json")]
        output: PathBuf,
        /// Seconds of the long memory run.
        #[arg(long, default_value_t = 60)]
        long_budget: u64,
    },
    /// Merge the reports of the shards of one split run (`run --partition K/N`, one report
    /// directory each) into the report of the whole run, in every format. Exit codes as
    /// `run`'s; 2 when the shards are not of one run (seed, catalogue, contract, target) or
    /// overlap; a shard not given leaves the answer undetermined and is named.
    Merge {
        /// The shards' report directories (each holding a report.json).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged reports are written.
        #[arg(long, env = "PETSTORE_REPORT_DIR", default_value = "reports")]
        report_dir: PathBuf,
        /// Directory of the rule catalogue, naming the rules of a missing shard (default:
        /// ./cases, else the built-in copy).
        #[arg(long, env = "PETSTORE_CASES_DIR")]
        cases_dir: Option<PathBuf>,
        /// Environment variable of the API key, redacted again from what is written.
        #[arg(long, env = "PETSTORE_API_KEY_ENV", default_value = "PETSTORE_API_KEY")]
        api_key_env: String,
        /// Sign the merged reports as `run --sign-key` signs a run's: one attestation over
        /// every merged file (Ed25519, PKCS#8 PEM).
        #[arg(long, env = "PETSTORE_SIGN_KEY_FILE")]
        sign_key: Option<PathBuf>,
    },
    /// List the rules of the catalogue: id, level, operation, title.
    Rules {
        /// Directory of the case files (default: ./cases, else the built-in copy).
        #[arg(long, env = "PETSTORE_CASES_DIR")]
        cases_dir: Option<PathBuf>,
    },
}

#[derive(Args)]
struct RunArgs {
    /// Configuration file of named profiles [default: ./petstore-conformance.toml when it exists].
    #[arg(long, env = "PETSTORE_CONFIG")]
    config: Option<PathBuf>,
    /// The profile of the configuration file to apply ([profile.NAME]; default: [profile.default]).
    #[arg(long, env = "PETSTORE_PROFILE")]
    profile: Option<String>,
    /// Print the merged options and where each came from (flag, environment, file, default),
    /// then stop.
    #[arg(long)]
    print_config: bool,
    /// Known failures listed in the profile (not an option of its own).
    #[arg(skip)]
    known_failures_listed: Vec<petstore_conformance::report::KnownFailure>,
    /// Base address of the target, including /v1. Without it, the built-in reference is used.
    #[arg(long, env = "PETSTORE_BASE_URL")]
    base_url: Option<String>,
    /// Environment variable that holds the API key.
    #[arg(long, env = "PETSTORE_API_KEY_ENV", default_value = "PETSTORE_API_KEY")]
    api_key_env: String,
    /// Accept a key shorter than 12 characters (the reports then say their evidence may be
    /// over-redacted: so short a key cannot be told apart from ordinary text).
    #[arg(long, env = "PETSTORE_ALLOW_SHORT_KEY")]
    allow_short_key: bool,
    /// Sign the reports: an Ed25519 private key (PKCS#8 PEM, as `openssl genpkey -algorithm
    /// ed25519` writes it); attestation.intoto.json is written beside the reports.
    #[arg(long, env = "PETSTORE_SIGN_KEY_FILE")]
    sign_key: Option<PathBuf>,
    /// File that holds the API key (instead of the environment variable).
    #[arg(long, env = "PETSTORE_API_KEY_FILE")]
    api_key_file: Option<PathBuf>,
    /// PEM file of a private CA to trust, besides the system's roots.
    #[arg(long, env = "PETSTORE_CA_CERT")]
    ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate. Explicit, and recorded in the report.
    #[arg(long, env = "PETSTORE_INSECURE")]
    insecure: bool,
    /// Speak HTTP/2 to a cleartext target without negotiation (h2c).
    #[arg(long, env = "PETSTORE_HTTP2_PRIOR_KNOWLEDGE")]
    http2_prior_knowledge: bool,
    /// Run only the rules that create nothing on the target (for production).
    #[arg(long, env = "PETSTORE_READ_ONLY")]
    read_only: bool,
    /// Seed of the run (printed on every run; random when absent).
    #[arg(long, env = "PETSTORE_SEED")]
    seed: Option<u64>,
    /// Generated cases per property rule [default: 32, or unbounded under --time-budget].
    #[arg(long, env = "PETSTORE_CASES")]
    cases: Option<u32>,
    /// How long property rules generate new cases (for a nightly job): `20m`, `1h`, or seconds.
    #[arg(long, env = "PETSTORE_TIME_BUDGET", value_parser = options::seconds)]
    time_budget: Option<u64>,
    /// Counterexamples found against an external target are saved here and replayed first next
    /// time [default: cases/regressions/counterexamples.json when ./cases exists].
    #[arg(long, env = "PETSTORE_REGRESSIONS")]
    regressions: Option<PathBuf>,
    /// Neither replay nor save counterexamples.
    #[arg(long, env = "PETSTORE_NO_REGRESSIONS")]
    no_regressions: bool,
    /// Write every request sent, one JSON line each (key redacted).
    #[arg(long, env = "PETSTORE_REQUEST_LOG")]
    request_log: Option<PathBuf>,
    /// Write every exchange as HTTP Archive 1.2 (HAR, as browsers and Schemathesis write it),
    /// key and credential headers redacted.
    #[arg(long, env = "PETSTORE_HAR")]
    har: Option<PathBuf>,
    /// Where report.json, junit.xml, summary.md and report.html are written.
    #[arg(long, env = "PETSTORE_REPORT_DIR", default_value = "reports")]
    report_dir: PathBuf,
    /// Directory of the JSON Schemas (default: ./schemas, else the built-in copy).
    #[arg(long, env = "PETSTORE_SCHEMAS")]
    schemas: Option<PathBuf>,
    /// Directory of the rule catalogue (default: ./cases, else the built-in copy).
    #[arg(long, env = "PETSTORE_CASES_DIR")]
    cases_dir: Option<PathBuf>,
    /// Which failures fail the run: required rules only, or all; `certify`: required rules,
    /// every one decided (a required rule not decidable on this store is undetermined).
    #[arg(long, env = "PETSTORE_GATE", value_enum, default_value = "required")]
    gate: Gate,
    /// How long one exchange may take, connect to last byte (1s to 1h; `30s`, or seconds).
    #[arg(long, env = "PETSTORE_TIMEOUT", default_value = "10", value_parser = options::seconds)]
    timeout: u64,
    /// Bytes of a response body kept, the rest dropped and the body marked truncated (1 KiB to
    /// 1 GiB).
    #[arg(long, env = "PETSTORE_BODY_CAP", default_value_t = 1 << 20)]
    body_cap: usize,
    /// Requests in flight at once, across the whole run (1 to 1024): overlaps round trips to
    /// a remote target; 1 with --test-threads 1 sends every request in a fixed order.
    #[arg(long, env = "PETSTORE_CONCURRENCY", default_value_t = petstore_conformance::execution::DEFAULT_CONCURRENCY)]
    concurrency: usize,
    /// The category ids the target accepts (a store with referential integrity): valid pets
    /// use only these; the invalid-value rules still use others.
    #[arg(long, env = "PETSTORE_CATEGORY_IDS", value_delimiter = ',')]
    category_ids: Vec<i64>,
    /// Requests per second across the whole run (a staging gateway's limit).
    #[arg(long, env = "PETSTORE_RATE")]
    rate: Option<f64>,
    /// How long one request may wait out throttling (429, or 503 with Retry-After) in all
    /// (`1m`, or seconds); past it its rule is inconclusive ("target throttled").
    #[arg(long, env = "PETSTORE_MAX_THROTTLE_WAIT", default_value = "30", value_parser = options::seconds)]
    max_throttle_wait: u64,
    /// Consecutive transport failures (no response at all) after which the run stops sending
    /// and the rules left are inconclusive.
    #[arg(long, env = "PETSTORE_MAX_TRANSPORT_FAILURES", default_value_t = petstore_conformance::rules::run::DEFAULT_MAX_TRANSPORT_FAILURES)]
    max_transport_failures: u32,
    /// Break one statement of the contract in the built-in reference (see serve-reference --list-faults).
    #[arg(
        long = "reference-fault",
        env = "PETSTORE_REFERENCE_FAULTS",
        value_delimiter = ','
    )]
    reference_faults: Vec<String>,
    /// Honour the contract in an unusual way in the built-in reference (see serve-reference --list-variants).
    #[arg(
        long = "reference-variant",
        env = "PETSTORE_REFERENCE_VARIANTS",
        value_delimiter = ','
    )]
    reference_variants: Vec<String>,
    /// A TOML file of known failures: `known_failures = [{ rule = "ID", reason = "...",
    /// link = "URL", expires = "YYYY-MM-DD" }]`. They are reported, not gated, until they expire.
    #[arg(long, env = "PETSTORE_KNOWN_FAILURES")]
    known_failures: Option<PathBuf>,
    /// The product under test, recorded in the report as given (for certification).
    #[arg(long, env = "PETSTORE_PRODUCT")]
    product: Option<String>,
    /// The version of the product under test, recorded in the report as given.
    #[arg(long, env = "PETSTORE_PRODUCT_VERSION")]
    product_version: Option<String>,
    /// No progress bar, even on a terminal: libtest's plain lines, as off a terminal.
    #[arg(long, env = "PETSTORE_NO_PROGRESS")]
    no_progress: bool,
    /// Latency the built-in reference adds to every answer (e.g. 50ms), to see how the suite
    /// behaves against a remote target.
    #[arg(long, env = "PETSTORE_REFERENCE_LATENCY", value_parser = humantime::parse_duration)]
    reference_latency: Option<Duration>,
    /// A header sent with every request, `'Name: value'` (repeatable; a tenant or gateway
    /// header). A value that looks like a credential is redacted everywhere, as the key is.
    #[arg(short = 'H', long = "header", env = "PETSTORE_HEADERS", value_delimiter = '\n', value_parser = options::header)]
    headers: Vec<(String, String)>,
    /// PEM file of the client certificate (chain) to present to a target that asks for one
    /// (mTLS); with --client-key.
    #[arg(long, env = "PETSTORE_CLIENT_CERT", requires = "client_key")]
    client_cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key.
    #[arg(long, env = "PETSTORE_CLIENT_KEY", requires = "client_cert")]
    client_key: Option<PathBuf>,
    /// Send every request through this HTTP proxy (hosts in NO_PROXY excepted). Without it,
    /// HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply to a remote target; loopback goes direct.
    #[arg(long, env = "PETSTORE_PROXY")]
    proxy: Option<String>,
    /// Run one shard of a split run: `hash:K/N` (rules dealt by a fixed hash of their id) or
    /// `slice:K/N` (round robin); `merge` joins the shards' reports.
    #[arg(long, env = "PETSTORE_PARTITION")]
    partition: Option<petstore_conformance::catalogue::partition::Partition>,
    #[command(flatten)]
    selection: options::Selection,
}

#[derive(Args)]
struct ServeArgs {
    /// Port on 127.0.0.1 (0: an ephemeral port).
    #[arg(long, env = "PETSTORE_REFERENCE_PORT", default_value_t = 0)]
    port: u16,
    /// The key the server accepts (random when absent).
    #[arg(long, env = "PETSTORE_REFERENCE_API_KEY")]
    api_key: Option<String>,
    /// Break one statement of the contract (repeatable).
    #[arg(long = "fault")]
    faults: Vec<String>,
    /// List the faults and the rules each one breaks.
    #[arg(long)]
    list_faults: bool,
    /// Honour the contract in an unusual way (repeatable).
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// List the variants.
    #[arg(long)]
    list_variants: bool,
    /// Latency added to every answer (e.g. 50ms), to see remote-target behaviour without a proxy.
    #[arg(long, value_parser = humantime::parse_duration)]
    latency: Option<Duration>,
}

/// Names given on the command line, each parsed by `parse`; `what` names the kind of thing
/// and the command that lists them.
fn parse_names<T: Ord>(
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

fn parse_faults(names: &[String]) -> Result<BTreeSet<Fault>, RunError> {
    parse_names(names, Fault::parse, "fault")
}

fn parse_variants(names: &[String]) -> Result<BTreeSet<Variant>, RunError> {
    parse_names(names, Variant::parse, "variant")
}

/// Whether a base URL names this machine: such a target is never reached through a proxy of
/// the environment (the registry proxy of a CI runner), only through an explicit --proxy.
fn is_loopback(base_url: &str) -> bool {
    let host = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn read_file(option: &str, file: &Path) -> Result<Vec<u8>, RunError> {
    std::fs::read(file)
        .map_err(|e| RunError::Config(format!("{option} {}: cannot read: {e}", file.display())))
}

/// Bounds of the numeric options: past them a run would panic, hang, or judge nothing.
const TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 1..=3600;
const BODY_CAP_BYTES: std::ops::RangeInclusive<usize> = 1024..=(1 << 30);
const MAX_CASES: u32 = 1_000_000;
const CONCURRENCY: std::ops::RangeInclusive<usize> = 1..=1024;
const TEST_THREADS: std::ops::RangeInclusive<usize> = 1..=1024;
/// A week: a budget past that is a typo, and `start + budget` must fit a clock.
const TIME_BUDGET_SECONDS: std::ops::RangeInclusive<u64> = 1..=604_800;
/// Requests per second: one a hundred seconds (slower is a typo) to far past what a run sends.
const RATE: std::ops::RangeInclusive<f64> = 0.01..=100_000.0;
const MAX_THROTTLE_WAIT_SECONDS: std::ops::RangeInclusive<u64> = 0..=3600;
const MAX_TRANSPORT_FAILURES: std::ops::RangeInclusive<u32> = 1..=1_000_000;
/// The latency the built-in reference adds: up to a minute (a remote target, not a dead one).
const REFERENCE_LATENCY: std::ops::RangeInclusive<Duration> =
    Duration::ZERO..=Duration::from_secs(60);
/// Seconds of the bench's long memory run: up to a day.
const LONG_BUDGET_SECONDS: std::ops::RangeInclusive<u64> = 1..=86_400;

fn check_latency(option: &str, latency: Option<Duration>) -> Result<(), RunError> {
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
fn check_limits(args: &RunArgs, test_threads: Option<usize>) -> Result<(), RunError> {
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

/// What the options of `run` come to: a configuration to run, or a command already answered
/// (`--print-config`, `--list`).
enum Configured {
    Answered(u8),
    Run(Box<RunConfig>),
}

fn run(args: RunArgs, matches: &clap::ArgMatches) -> Result<u8, RunError> {
    let config = match configure(args, matches)? {
        Configured::Answered(code) => return Ok(code),
        Configured::Run(config) => *config,
    };
    execute_and_tell(config)
}

fn configure(mut args: RunArgs, matches: &clap::ArgMatches) -> Result<Configured, RunError> {
    let profile = config::load(args.config.as_deref(), args.profile.as_deref())?;
    let sources = config::apply(&mut args, matches, profile)?;
    if args.print_config {
        // Values pass the redaction of evidence: a URL's userinfo and query, a key given
        // where a variable's name belongs.
        let shown: config::Sources = sources
            .into_iter()
            .map(|(name, value, from)| {
                let value = value.map(|value| evidence::shown_config_value(&name, &value));
                (name, value, from)
            })
            .collect();
        print!("{}", config::render(&shown));
        return Ok(Configured::Answered(0));
    }
    if args.selection.list {
        options::quiet_on_closed_pipe();
        let catalogue = Catalogue::load(args.cases_dir.as_deref())?;
        print!("{}", args.selection.list(&catalogue));
        return Ok(Configured::Answered(0));
    }
    evidence::check_api_key_env(&args.api_key_env)?;
    let sign_key = evidence::load_sign_key(args.sign_key.as_deref())?;
    check_limits(&args, args.selection.test_threads)?;
    let faults = parse_faults(&args.reference_faults)?;
    let variants = parse_variants(&args.reference_variants)?;
    let mut api_key_source = None;
    let target = match args.base_url {
        Some(base_url) => {
            if !faults.is_empty() || !variants.is_empty() || args.reference_latency.is_some() {
                return Err(RunError::Config(
                    "--reference-fault, --reference-variant and --reference-latency apply to the built-in reference only".into(),
                ));
            }
            let api_key = match &args.api_key_file {
                Some(file) => std::fs::read_to_string(file)
                    .map_err(|e| {
                        RunError::Config(format!(
                            "--api-key-file {}: cannot read: {e}",
                            file.display()
                        ))
                    })?
                    .trim()
                    .to_string(),
                None => std::env::var(&args.api_key_env).unwrap_or_default(),
            };
            let source = match &args.api_key_file {
                Some(file) => format!("--api-key-file {}", file.display()),
                None => args.api_key_env.clone(),
            };
            engine::check_api_key(&api_key, &source)?;
            engine::check_key_length(&api_key, &source, args.allow_short_key)?;
            api_key_source = args
                .api_key_file
                .as_ref()
                .map(|file| format!("--api-key-file {}", file.display()));
            Target::External { base_url, api_key }
        }
        None => Target::Reference { faults, variants },
    };
    let seed = args.seed.unwrap_or_else(random_seed);
    let libtest = args.selection.to_libtest();
    let listing = libtest.list;
    let proxy = match (&args.proxy, &target) {
        (Some(url), _) => ProxySetting::Explicit(url.clone()),
        (None, Target::External { base_url, .. }) if !is_loopback(base_url) => {
            ProxySetting::Environment
        }
        _ => ProxySetting::Direct,
    };
    let client_identity = match (&args.client_cert, &args.client_key) {
        (Some(cert), Some(key)) => Some((
            read_file("--client-cert", cert)?,
            read_file("--client-key", key)?,
        )),
        _ => None,
    };
    if args.insecure {
        eprintln!(
            "petstore-conformance: --insecure: TLS certificates are NOT verified (recorded in the report)"
        );
    }
    let config = RunConfig {
        target,
        api_key_env: args.api_key_env,
        api_key_source,
        seed,
        cases: args.cases.unwrap_or(if args.time_budget.is_some() {
            UNBOUNDED_CASES
        } else {
            DEFAULT_CASES
        }),
        report_dir: Some(args.report_dir),
        schemas: args.schemas,
        cases_dir: args.cases_dir,
        gate: args.gate,
        client: ClientSettings {
            timeout: Duration::from_secs(args.timeout),
            body_cap: args.body_cap,
            ca_certificates: match &args.ca_cert {
                Some(file) => vec![std::fs::read(file).map_err(|e| {
                    RunError::Config(format!("--ca-cert {}: cannot read: {e}", file.display()))
                })?],
                None => Vec::new(),
            },
            insecure: args.insecure,
            http2_prior_knowledge: args.http2_prior_knowledge,
            rate: args.rate,
            max_throttle_wait: Duration::from_secs(args.max_throttle_wait),
            concurrency: args.concurrency,
            extra_headers: args.headers,
            client_identity,
            proxy,
            ..ClientSettings::default()
        },
        read_only: args.read_only,
        category_ids: args.category_ids,
        libtest,
        regressions: if args.no_regressions {
            None
        } else {
            args.regressions.or_else(|| {
                Path::new("cases")
                    .is_dir()
                    .then(|| PathBuf::from(regressions::DEFAULT_FILE))
            })
        },
        time_budget: args.time_budget.map(Duration::from_secs),
        request_log: args.request_log,
        har: args.har,
        max_transport_failures: args.max_transport_failures,
        announce: !listing,
        progress: !args.no_progress && {
            use std::io::IsTerminal;
            std::io::stderr().is_terminal() && std::io::stdout().is_terminal()
        },
        reference_latency: args.reference_latency.unwrap_or_default(),
        known_failures: args.known_failures,
        known_failures_listed: args.known_failures_listed,
        product: args.product,
        product_version: args.product_version,
        partition: args.partition,
        sign_key,
        short_key_allowed: args.allow_short_key,
    };
    Ok(Configured::Run(Box::new(config)))
}

fn execute_and_tell(config: RunConfig) -> Result<u8, RunError> {
    let outcome = engine::execute(config)?;
    if let Some(report) = &outcome.report {
        let t = &report.totals;
        eprintln!(
            "\n{}: {} against {} (seed {}): {} passed, {} failed required, {} failed recommended, {} known failures, {} inconclusive, {} skipped",
            report.suite.name,
            report.conformance.as_str().to_uppercase(),
            report.target.base_url,
            report.seed,
            t.passed,
            t.failed_required,
            t.failed_recommended,
            t.known_failures,
            t.inconclusive,
            t.skipped
        );
        eprintln!("  the answer: {}", report.answer_line());
        if report.interrupted {
            eprintln!("  interrupted: the rules not run are skipped");
        }
        if let Some(note) = report.partial_note() {
            eprintln!("  {note}");
        }
        if t.not_decidable > 0 {
            eprintln!(
                "  {} rules not decidable on this store (reported, not gated; --gate certify counts a required one as undetermined)",
                t.not_decidable
            );
        }
        if report.created_pets.count > 0 {
            eprintln!(
                "  created {} pets, named {}*",
                report.created_pets.count, report.run_prefix
            );
        }
        if let Some(reason) = &report.target.stopped_answering {
            eprintln!("  {reason}");
        }
        eprintln!("  {}", report.connections.describe());
        for path in &outcome.written {
            eprintln!("  wrote {}", path.display());
        }
        append_step_summary(&outcome.written);
    }
    Ok(outcome.exit_code)
}

/// In a GitHub Actions job, summary.md is appended to the step summary.
fn append_step_summary(written: &[PathBuf]) {
    let Some(target) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) else {
        return;
    };
    let Some(summary) = written.iter().find(|p| p.ends_with("summary.md")) else {
        return;
    };
    let appended = std::fs::read_to_string(summary).and_then(|text| {
        use std::io::Write;
        let mut file = petstore_conformance::execution::files::append(Path::new(&target))?;
        writeln!(file, "{text}")
    });
    if let Err(e) = appended {
        eprintln!("petstore-conformance: GITHUB_STEP_SUMMARY: cannot append summary.md: {e}");
    }
}

fn serve(args: ServeArgs) -> Result<u8, RunError> {
    if args.list_faults || args.list_variants {
        options::quiet_on_closed_pipe();
    }
    if args.list_faults {
        for info in FAULTS {
            println!("{:<34} {}", info.name, info.description);
            println!("{:<34} breaks: {}", "", info.breaks.join(", "));
        }
        return Ok(0);
    }
    if args.list_variants {
        for info in VARIANTS {
            println!("{:<26} {}", info.name, info.description);
        }
        return Ok(0);
    }
    check_latency("--latency", args.latency)?;
    let faults = parse_faults(&args.faults)?;
    let variants = parse_variants(&args.variants)?;
    let api_key = args
        .api_key
        .unwrap_or_else(|| format!("ref-{:016x}", random_seed()));
    let runtime = petstore_conformance::runner::runtime()?;
    runtime.block_on(async move {
        let server = ReferenceServer::start(
            ReferenceConfig {
                api_key: api_key.clone(),
                faults,
                variants,
                latency: args.latency.unwrap_or_default(),
            },
            args.port,
        )
        .await
        .map_err(|e| RunError::Config(format!("cannot listen on 127.0.0.1:{}: {e}", args.port)))?;
        println!(
            "Pet Store reference server listening on {}",
            server.base_url
        );
        println!("API key: {api_key}");
        std::future::pending::<()>().await;
        drop(server);
        Ok(0)
    })
}

fn replay(
    report_path: &Path,
    rule: &str,
    args: RunArgs,
    matches: &clap::ArgMatches,
) -> Result<u8, RunError> {
    use petstore_conformance::runner::replay::{self, ReplayTarget};
    let (_, report) = read_report(report_path)?;
    let mut config = match configure(args, matches)? {
        Configured::Answered(code) => return Ok(code),
        Configured::Run(config) => *config,
    };
    let base_url = match &config.target {
        Target::External { base_url, .. } => Some(base_url.clone()),
        // The key goes only where the configuration says: a report may name any host.
        Target::Reference { .. } if report.target.kind == "external" => {
            return Err(RunError::Config(format!(
                "the report's target is {}; the key is sent only to the target you configure: pass --base-url (or set PETSTORE_BASE_URL, or base_url in a profile) to replay there",
                report.target.base_url
            )));
        }
        Target::Reference { .. } => {
            // The report's reference, with its faults and variants (a fresh, empty store).
            config.target = Target::Reference {
                faults: report
                    .target
                    .faults
                    .iter()
                    .filter_map(|f| Fault::parse(f))
                    .collect(),
                variants: report
                    .target
                    .variants
                    .iter()
                    .filter_map(|v| Variant::parse(v))
                    .collect(),
            };
            None
        }
    };
    let api_key = match &config.target {
        Target::External { api_key, .. } => api_key.clone(),
        Target::Reference { .. } => String::new(),
    };
    let exchange = replay::replay(
        report_path,
        rule,
        ReplayTarget {
            base_url,
            api_key: api_key.clone(),
            settings: config.client.clone(),
        },
    )?;
    show_exchange(&exchange, &api_key);
    // Judged again: the rule alone, with the report's seed and cases, on the same target.
    config.seed = report.seed;
    config.cases = if report.cases_per_property >= UNBOUNDED_CASES {
        DEFAULT_CASES
    } else {
        report.cases_per_property
    };
    config.time_budget = None;
    config.libtest = libtest_mimic::Arguments {
        filter: Some(rule.to_string()),
        exact: true,
        ..libtest_mimic::Arguments::default()
    };
    config.report_dir = None;
    config.regressions = None;
    config.request_log = None;
    config.har = None;
    config.announce = false;
    config.progress = false;
    let outcome = engine::execute(config)?;
    let judged = outcome
        .report
        .as_ref()
        .and_then(|report| report.rules.iter().find(|r| r.id == rule));
    match judged {
        Some(judged) => {
            let detail = match (&judged.failure, &judged.reason) {
                (Some(failure), _) => format!(": {}", failure.message()),
                (None, Some(reason)) => format!(": {reason}"),
                (None, None) => String::new(),
            };
            println!(
                "\nverdict: {rule} {} ({}, judged again with seed {}){detail}",
                judged.verdict,
                judged.level.as_str(),
                report.seed
            );
        }
        None => println!("\nverdict: {rule} was not judged again (not in this catalogue)"),
    }
    Ok(0)
}

fn show_exchange(exchange: &petstore_conformance::outcome::Exchange, api_key: &str) {
    let request = &exchange.request;
    let mut shown = format!("> {} {}\n", request.method, request.url);
    for (name, value) in &request.headers {
        shown.push_str(&format!("> {name}: {value}\n"));
    }
    if let Some(body) = &request.body {
        shown.push_str(&format!(">\n> {body}\n"));
    }
    if let Some(response) = &exchange.response {
        shown.push_str(&format!("< {}\n", response.status));
        for (name, value) in &response.headers {
            shown.push_str(&format!("< {name}: {value}\n"));
        }
        let body: String = response.body.chars().take(4096).collect();
        shown.push_str(&format!("<\n{body}\n"));
    }
    if let Some(error) = &exchange.transport_error {
        shown.push_str(&format!("! {error}\n"));
    }
    // What the target sent back is shown as the reports show it: redacted.
    print!(
        "{}",
        petstore_conformance::execution::Redactor::new(api_key).redact(&shown)
    );
}

fn bench(output: &Path, long_budget: u64) -> Result<u8, RunError> {
    use petstore_conformance::runner::bench;
    if !LONG_BUDGET_SECONDS.contains(&long_budget) {
        return Err(RunError::Config(format!(
            "--long-budget {long_budget}: must be within 1..=86400 seconds"
        )));
    }
    let figures = bench::run_all(Duration::from_secs(long_budget)).map_err(RunError::Config)?;
    print!("{}", bench::render(&figures));
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let json = serde_json::to_string_pretty(&figures).unwrap_or_default();
    petstore_conformance::execution::files::replace(output, json.as_bytes())
        .map_err(|e| RunError::Config(format!("{}: {e}", output.display())))?;
    eprintln!("wrote {}", output.display());
    Ok(0)
}

fn read_report(path: &Path) -> Result<(String, Report), RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Config(format!("{}: cannot read: {e}", path.display())))?;
    let report = serde_json::from_str(&text)
        .map_err(|e| RunError::Config(format!("{}: not a report: {e}", path.display())))?;
    Ok((text, report))
}

fn compare_reports(
    old: &Path,
    new: &Path,
    markdown: Option<&Path>,
    allow_different: bool,
) -> Result<u8, RunError> {
    use petstore_conformance::report::compare;
    let (_, old) = read_report(old)?;
    let (_, new) = read_report(new)?;
    if let Some(why) = compare::mismatch(&old, &new) {
        if !allow_different {
            return Err(RunError::Config(format!(
                "compare: not two runs of the same thing: {why} (--allow-different compares them all the same)"
            )));
        }
        eprintln!("petstore-conformance: compare: {why} (--allow-different)");
    }
    let comparison = compare::compare(&old, &new);
    print!("{}", compare::render_text(&comparison, &old, &new));
    if let Some(path) = markdown {
        let markdown = compare::render_markdown(&comparison, &old, &new);
        petstore_conformance::execution::files::replace(path, markdown.as_bytes())
            .map_err(|e| RunError::Config(format!("--markdown {}: {e}", path.display())))?;
    }
    Ok(if comparison.regressed() { 1 } else { 0 })
}

fn merge(
    dirs: &[PathBuf],
    report_dir: &Path,
    cases_dir: Option<&Path>,
    api_key_env: &str,
    sign_key: Option<&Path>,
) -> Result<u8, RunError> {
    use petstore_conformance::runner::shards;
    let sign_key = evidence::load_sign_key(sign_key)?;
    let merged = shards::merge_dirs(
        dirs,
        report_dir,
        cases_dir,
        api_key_env,
        sign_key.as_deref(),
    )?;
    let report = &merged.report;
    if let Some(from) = &report.merged {
        let given: Vec<&str> = from.shards.iter().map(|s| s.shard.as_str()).collect();
        eprintln!("merged shards {} of {}", given.join(", "), from.split);
        if !from.missing.is_empty() {
            eprintln!(
                "  missing shards {}: their {} rules not run",
                from.missing.join(", "),
                from.not_run.len()
            );
        }
    }
    let t = &report.totals;
    eprintln!(
        "{}: {} (seed {}): {} passed, {} failed required, {} failed recommended, {} known failures, {} inconclusive, {} skipped",
        report.suite.name,
        report.conformance.as_str().to_uppercase(),
        report.seed,
        t.passed,
        t.failed_required,
        t.failed_recommended,
        t.known_failures,
        t.inconclusive,
        t.skipped
    );
    eprintln!("  the answer: {}", report.answer_line());
    for path in &merged.written {
        eprintln!("  wrote {}", path.display());
    }
    append_step_summary(&merged.written);
    Ok(report.conformance.exit_code())
}

fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    // First of all: a signal from here on ends in an interrupted report or none, never in
    // the previous run's report left looking current.
    petstore_conformance::runner::interrupts::install();
    // --version says which suite, contract and rule catalogue: what a report is judged by.
    let version: &'static str = Box::leak(options::version().into_boxed_str());
    let matches = Cli::command().version(version).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Every error passes through the key's redactor before it is printed.
    let redactor = evidence::error_redactor(&matches);
    let result = match cli.command {
        Command::Run(args) => match matches.subcommand_matches("run") {
            Some(run_matches) => run(*args, run_matches),
            None => Err(RunError::Config("run: no arguments".into())),
        },
        Command::ServeReference(args) => serve(args),
        Command::Replay { report, rule, run } => match matches.subcommand_matches("replay") {
            Some(replay_matches) => replay(&report, &rule, *run, replay_matches),
            None => Err(RunError::Config("replay: no arguments".into())),
        },
        Command::Bench {
            output,
            long_budget,
        } => bench(&output, long_budget),
        Command::VerifyReport {
            report,
            public_key,
            schemas,
            cases_dir,
        } => evidence::verify_report(
            &report,
            public_key.as_deref(),
            schemas.as_deref(),
            cases_dir.as_deref(),
        ),
        Command::Compare {
            old,
            new,
            markdown,
            allow_different,
        } => compare_reports(&old, &new, markdown.as_deref(), allow_different),
        Command::Merge {
            dirs,
            report_dir,
            cases_dir,
            api_key_env,
            sign_key,
        } => merge(
            &dirs,
            &report_dir,
            cases_dir.as_deref(),
            &api_key_env,
            sign_key.as_deref(),
        ),
        Command::Rules { cases_dir } => Catalogue::load(cases_dir.as_deref())
            .map_err(RunError::from)
            .map(|catalogue| {
                options::quiet_on_closed_pipe();
                let listing: String = catalogue.rules.iter().map(options::rule_line).collect();
                print!("{listing}");
                0
            }),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!(
                "petstore-conformance: {}",
                redactor.redact(&error.to_string())
            );
            ExitCode::from(error.exit_code())
        }
    }
}
