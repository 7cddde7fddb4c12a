//! `run`: the profile applied over the command line, the run configured from both, executed,
//! and its answer told (stderr, the step summary of a GitHub job).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::args::{RunArgs, check_limits, parse_faults, parse_variants, read_file};
use super::evidence;
use super::listings;
use super::profiles;
use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::execution::files;
use petstore_conformance::reference::{Fault, Variant};
use petstore_conformance::report::Conformance;
use petstore_conformance::runner::options::RunOptions;
use petstore_conformance::runner::progress::{ColorChoice, Tone, paint, wants_color};
use petstore_conformance::runner::regressions;
use petstore_conformance::runner::{self, RunError};
use petstore_conformance::runner::{KeySource, RunConfig, Target};
use petstore_conformance::seed::random_seed;

/// What the options of `run` come to: a configuration to run, or a command already answered
/// (`--print-config`, `--list`).
pub(super) enum Configured {
    Answered(u8),
    Run(Box<RunConfig>),
}

pub(super) fn run(args: RunArgs, matches: &clap::ArgMatches) -> Result<u8, RunError> {
    let config = match configure(args, matches)? {
        Configured::Answered(code) => return Ok(code),
        Configured::Run(config) => *config,
    };
    execute_and_tell(config)
}

pub(super) fn configure(
    mut args: RunArgs,
    matches: &clap::ArgMatches,
) -> Result<Configured, RunError> {
    let profile = profiles::load(args.config.as_deref(), args.profile.as_deref())?;
    let sources = profiles::apply(&mut args.options, matches, profile);
    let mut options = args.options;
    if args.print_config {
        print_config(&options, sources);
        return Ok(Configured::Answered(0));
    }
    if args.list {
        let catalogue = Catalogue::load(options.cases_dir.as_deref())?;
        stdout!("{}", listings::list(&options, args.format, &catalogue));
        return Ok(Configured::Answered(0));
    }
    warn_cases_beside_budget(&options, &sources);
    evidence::check_api_key_env(&options.api_key_env)?;
    let sign_key = evidence::load_sign_key(options.sign_key.as_deref())?;
    check_limits(&options)?;
    let faults = parse_faults(&options.reference_faults)?;
    let variants = parse_variants(&options.reference_variants)?;
    let (target, key_source) = target(&options, faults, variants)?;
    options.seed = Some(options.seed.unwrap_or_else(random_seed));
    // libtest's own lines (stdout, off a terminal) follow --color and NO_COLOR too.
    let choice = matches
        .get_one::<ColorChoice>("color")
        .copied()
        .unwrap_or_default();
    let libtest = libtest_mimic::Arguments {
        color: Some(match choice {
            ColorChoice::Always => libtest_mimic::ColorSetting::Always,
            ColorChoice::Auto if wants_color(choice, true) => libtest_mimic::ColorSetting::Auto,
            _ => libtest_mimic::ColorSetting::Never,
        }),
        ..libtest_mimic::Arguments::default()
    };
    let client_identity = match (&options.client_cert, &options.client_key) {
        (Some(cert), Some(key)) => Some((
            read_file("--client-cert", cert)?,
            read_file("--client-key", key)?,
        )),
        _ => None,
    };
    let ca_certificates = match &options.ca_cert {
        Some(file) => vec![read_file("--ca-cert", file)?],
        None => Vec::new(),
    };
    if options.insecure {
        stderrln!(
            "petstore-conformance: --insecure: TLS certificates are NOT verified (recorded in the report)"
        );
    }
    let regressions = if options.no_regressions {
        None
    } else {
        options.regressions.clone().or_else(|| {
            Path::new("cases")
                .is_dir()
                .then(|| PathBuf::from(regressions::DEFAULT_FILE))
        })
    };
    let progress = !options.no_progress && {
        use std::io::IsTerminal;
        std::io::stderr().is_terminal() && std::io::stdout().is_terminal()
    };
    Ok(Configured::Run(Box::new(RunConfig {
        options,
        target,
        key_source,
        regressions,
        ca_certificates,
        client_identity,
        sign_key,
        libtest,
        announce: true,
        progress,
        color: super::definition::stderr_color(),
        shrink: true,
    })))
}

/// Both bound generation; the case count, set, is the one that ends it first unless the
/// target is slow: say so, and where each came from (a profile's `cases` is easy to forget
/// beside a budget given on the command line).
fn warn_cases_beside_budget(options: &RunOptions, sources: &profiles::Sources) {
    if let (Some(budget), Some(cases)) = (options.time_budget, options.cases) {
        let from = |name: &str| {
            sources
                .iter()
                .find(|(option, _, _)| option == name)
                .map(|(_, _, from)| from.clone())
                .unwrap_or_default()
        };
        stderrln!(
            "petstore-conformance: cases = {cases} ({}) bounds the run: each property rule stops at {cases} generated cases; --time-budget {} ({}) only cuts it short. Leave cases unset to let the budget bound it.",
            from("cases"),
            budget,
            from("time_budget"),
        );
    }
}

/// `--print-config`: the merged options and where each came from, every key redacted.
fn print_config(options: &RunOptions, sources: profiles::Sources) {
    // Values pass the redaction of evidence: a URL's userinfo and query, a key given
    // where a variable's name belongs.
    let shown: profiles::Sources = sources
        .into_iter()
        .map(|(name, value, from)| {
            let value = value.map(|value| evidence::shown_config_value(&name, &value));
            (name, value, from)
        })
        .collect();
    // And the key, wherever it was put (a header's value, a profile's header).
    let redactor = evidence::keys_redactor(
        &[options.api_key_env.clone(), "PETSTORE_API_KEY".into()],
        options.api_key_file.as_deref(),
        &[],
        options.allow_short_key,
    );
    stdout!("{}", redactor.redact(&profiles::render(&shown)));
}

/// The target of the run: the built-in reference with its faults and variants, or the base
/// URL given with the key from its variable or file (and where that key came from, for a
/// refusal to name).
fn target(
    options: &RunOptions,
    faults: BTreeSet<Fault>,
    variants: BTreeSet<Variant>,
) -> Result<(Target, KeySource), RunError> {
    let key_source = match &options.api_key_file {
        Some(file) => KeySource::File(file.clone()),
        None => KeySource::Variable(options.api_key_env.clone()),
    };
    let target = match options.base_url.clone() {
        Some(base_url) => {
            if !faults.is_empty() || !variants.is_empty() || options.reference_latency.is_some() {
                return Err(RunError::Config(
                    "--reference-fault, --reference-variant and --reference-latency apply to the built-in reference only".into(),
                ));
            }
            let api_key = match &options.api_key_file {
                Some(file) => files::read_text(file, files::SETTINGS_CAP)
                    .map_err(|e| {
                        RunError::Config(format!("--api-key-file {}: {e}", file.display()))
                    })?
                    .trim()
                    .to_string(),
                None => api_key_from_env(&options.api_key_env)?,
            };
            let source = key_source.to_string();
            runner::check_api_key(&api_key, &source)?;
            runner::check_key_length(&api_key, &source, options.allow_short_key)?;
            // Parsed once, here: every later reader has the checked address.
            let base_url = runner::check_base_url(&base_url)?;
            Target::External { base_url, api_key }
        }
        None => petstore_conformance::embedded::reference_target(faults, variants),
    };
    Ok((target, key_source))
}

/// The key from the variable `name`; a variable not set says so (not "0 characters").
fn api_key_from_env(name: &str) -> Result<String, RunError> {
    match std::env::var(name) {
        Ok(key) => Ok(key),
        Err(std::env::VarError::NotPresent) => Err(RunError::Config(format!(
            "{name}: not set; export the API key in it (or name another variable with --api-key-env, or a file with --api-key-file)"
        ))),
        Err(std::env::VarError::NotUnicode(_)) => Err(RunError::Config(format!(
            "{name}: the API key is not valid UTF-8; it cannot be sent in an Authorization header"
        ))),
    }
}

/// One closing line on stderr. On a terminal it is broken at its width, continued two columns
/// further in, so that no line wraps where the terminal would cut a word; in a log it is one line.
pub(super) fn tell(text: &str) {
    use std::io::IsTerminal;
    let width = std::io::stderr()
        .is_terminal()
        .then(petstore_conformance::runner::progress::terminal_width)
        .flatten();
    match width {
        Some(width) => {
            let indent = " ".repeat(text.len() - text.trim_start().len() + 2);
            stderrln!(
                "{}",
                petstore_conformance::report::terminal::wrap(text, width, &indent)
            );
        }
        None => stderrln!("{text}"),
    }
}

/// The run's answer and its counts, on stderr, as a run or a merge ends.
pub(super) fn tell_totals(report: &petstore_conformance::report::Report) {
    let t = &report.totals;
    let conformance = report.conformance;
    let tone = match conformance {
        Conformance::Conforms => Tone::Passed,
        Conformance::DoesNotConform => Tone::Failed,
        _ => Tone::Warning,
    };
    // A merged report's fields come from files: shown with no control character.
    use petstore_conformance::report::terminal::line;
    tell(&format!(
        "{}: {} against {} (seed {}): {}",
        line(&report.suite.name),
        paint(
            &conformance.as_str().to_uppercase(),
            tone,
            super::definition::stderr_color()
        ),
        target_named(report),
        report.seed,
        t.line()
    ));
}

/// The failures grouped by cause, under the answer: one line a cause, with its rules.
pub(super) fn tell_findings(report: &petstore_conformance::report::Report) {
    use petstore_conformance::report::finding::Finding;
    use petstore_conformance::report::terminal::line;
    if report.findings.is_empty() {
        return;
    }
    tell(&format!(
        "  {}, the failures by what the target did:",
        Finding::count(&report.findings)
    ));
    for finding in &report.findings {
        // A cause comes from what the target sent: shown with no control character.
        tell(&format!(
            "  - {}: {}",
            line(&finding.headline()),
            finding.rules_shown(4, |id| id.to_string())
        ));
    }
}

/// The target as the verdict line names it: the built-in reference said in words, so that a
/// run nobody pointed anywhere never reads as a verdict on a target.
fn target_named(report: &petstore_conformance::report::Report) -> String {
    use petstore_conformance::report::TargetKind;
    use petstore_conformance::report::terminal::line;
    match report.target.kind {
        TargetKind::Reference => format!(
            "the built-in reference server ({})",
            line(&report.target.base_url)
        ),
        TargetKind::External => line(&report.target.base_url),
    }
}

pub(super) fn execute_and_tell(config: RunConfig) -> Result<u8, RunError> {
    let outcome = runner::execute(config)?;
    if let Some(report) = &outcome.report {
        stderrln!();
        tell_totals(report);
        let t = &report.totals;
        tell(&format!("  the answer: {}", report.answer_line()));
        tell_findings(report);
        if report.interrupted {
            tell("  interrupted: the rules not run are skipped");
        }
        if let Some(note) = report.partial_note() {
            tell(&format!("  {note}"));
        }
        if t.not_decidable > 0 {
            tell(&format!(
                "  {} not decidable on this store (reported, not gated; --gate certify counts a required one as undetermined)",
                petstore_conformance::report::model::rules(t.not_decidable)
            ));
        }
        if report.created_pets.count > 0 {
            tell(&format!(
                "  created {}, named {}*",
                report.created_pets.counted(),
                report.run_prefix
            ));
        }
        if let Some(reason) = &report.target.stopped_answering {
            tell(&format!(
                "  {}",
                petstore_conformance::report::terminal::line(reason)
            ));
        }
        tell(&format!("  {}", report.connections.describe()));
        for path in &outcome.written {
            tell(&format!("  wrote {}", path.display()));
        }
        append_step_summary(&outcome.written);
    }
    Ok(outcome.exit_code)
}

/// In a GitHub Actions job, summary.md is appended to the step summary.
pub(super) fn append_step_summary(written: &[PathBuf]) {
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
        stderrln!("petstore-conformance: GITHUB_STEP_SUMMARY: cannot append summary.md: {e}");
    }
}
