//! `run`'s and `serve-reference`'s arguments, and the ranges every numeric option is held to
//! (exit 2 and one line outside them).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::listings;
use petstore_conformance::reference::{Fault, Variant};
use petstore_conformance::runner::RunError;
use petstore_conformance::runner::options::RunOptions;

/// `run`'s command line: its options (one definition, `runner/options.rs`: flag, variable,
/// profile key, `--print-config`, the Re-run line), and what this command line does with them
/// (which profile, print them, list the rules).
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
    /// List the selected rules (id, level, operation, title) and stop; nothing is sent.
    #[arg(long)]
    pub(super) list: bool,
    /// How --list prints: `text`, one rule a line, or `json`, one array.
    #[arg(long, value_enum, default_value = "text", requires = "list")]
    pub(super) format: listings::ListFormat,
    #[command(flatten)]
    pub(super) options: RunOptions,
}

#[derive(Args)]
pub(super) struct ServeArgs {
    /// Port on 127.0.0.1 (0: an ephemeral port).
    #[arg(long, env = "PETSTORE_REFERENCE_PORT", default_value_t = 0)]
    pub(super) port: u16,
    /// Write the port listened on to FILE once the server listens (the whole number and a
    /// newline, the file replaced at once: a script waits for it, then reads it).
    #[arg(long, value_name = "FILE")]
    pub(super) port_file: Option<std::path::PathBuf>,
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
pub(super) const CONNECT_TIMEOUT_SECONDS: std::ops::RangeInclusive<u64> = 1..=60;
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
pub(super) fn check_limits(options: &RunOptions) -> Result<(), RunError> {
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
    within("--timeout", options.timeout.0, &TIMEOUT_SECONDS, " seconds")?;
    within(
        "--connect-timeout",
        options.connect_timeout.0,
        &CONNECT_TIMEOUT_SECONDS,
        " seconds",
    )?;
    within("--body-cap", options.body_cap, &BODY_CAP_BYTES, " bytes")?;
    if let Some(cases) = options.cases {
        within(
            "--cases",
            cases,
            &(0..=MAX_CASES),
            " (for longer runs, --time-budget)",
        )?;
    }
    if let Some(budget) = options.time_budget {
        within("--time-budget", budget.0, &TIME_BUDGET_SECONDS, " seconds")?;
    }
    if let Some(rate) = options.rate {
        // NaN is in no range: refused too.
        within("--rate", rate, &RATE, " requests per second")?;
    }
    within(
        "--max-throttle-wait",
        options.max_throttle_wait.0,
        &MAX_THROTTLE_WAIT_SECONDS,
        " seconds",
    )?;
    within(
        "--concurrency",
        options.concurrency,
        &CONCURRENCY,
        " requests in flight",
    )?;
    if let Some(threads) = options.test_threads {
        within("--test-threads", threads, &TEST_THREADS, " rules at once")?;
    }
    within(
        "--max-transport-failures",
        options.max_transport_failures,
        &MAX_TRANSPORT_FAILURES,
        "",
    )?;
    check_latency("--reference-latency", options.reference_latency)?;
    Ok(())
}
