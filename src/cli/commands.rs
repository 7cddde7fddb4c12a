//! The other sub-commands: serve the reference, replay a recorded request and judge it again,
//! compare two reports, merge shards.

use std::path::{Path, PathBuf};

use super::args::{RunArgs, ServeArgs, check_latency, parse_faults, parse_variants};
use super::evidence;
use super::run_command::{
    Configured, append_step_summary, configure, tell, tell_findings, tell_totals,
};
use petstore_conformance::outcome::VerdictKind;
use petstore_conformance::reference::{FAULTS, ReferenceConfig, ReferenceServer, VARIANTS};
use petstore_conformance::report::{Cases, Report, TargetKind, terminal};
use petstore_conformance::runner::Target;
use petstore_conformance::runner::{self, RunError};
use petstore_conformance::seed::random_seed;

pub(super) fn serve(args: ServeArgs) -> Result<u8, RunError> {
    if args.list_faults {
        for info in FAULTS.iter() {
            stdoutln!("{:<34} {}", info.name, info.description);
            stdoutln!("{:<34} breaks: {}", "", info.breaks.join(", "));
        }
        return Ok(0);
    }
    if args.list_variants {
        for info in VARIANTS {
            stdoutln!("{:<26} {}", info.name, info.description);
        }
        return Ok(0);
    }
    check_latency("--latency", args.latency)?;
    let faults = parse_faults(&args.faults)?;
    let variants = parse_variants(&args.variants)?;
    let api_key = args
        .api_key
        .unwrap_or_else(|| format!("ref-{:016x}", random_seed()));
    let config = ReferenceConfig {
        api_key: api_key.clone(),
        faults,
        variants,
        latency: args.latency.unwrap_or_default(),
        conforming: args.conforming_seed,
        wire: Default::default(),
    };
    // What the server says goes to stdout, whose reader may go away (a script that read the
    // first line): the server serves on whatever becomes of it.
    let say = |line: &str| {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    };
    let described = args.conforming_seed.map(|_| {
        let choices = config.choices();
        (choices.describe(), choices.may_fail().join(", "))
    });
    let runtime = petstore_conformance::runner::runtime()?;
    runtime.block_on(async move {
        let server = ReferenceServer::start(config, args.port)
            .await
            .map_err(|e| {
                RunError::Config(format!("cannot listen on 127.0.0.1:{}: {e}", args.port))
            })?;
        if let Some(file) = &args.port_file {
            let port = format!("{}\n", server.addr.port());
            petstore_conformance::execution::files::replace(file, port.as_bytes())
                .map_err(|e| RunError::Config(format!("--port-file {}: {e}", file.display())))?;
        }
        say(&format!(
            "Pet Store reference server listening on {}",
            server.base_url
        ));
        say(&format!("API key: {api_key}"));
        if let Some((choices, may_fail)) = &described {
            say("A conforming store, drawn from its seed:");
            for line in choices.lines() {
                say(&format!("  {line}"));
            }
            say(&format!("Recommended rules it may fail: {may_fail}"));
        }
        std::future::pending::<()>().await;
        drop(server);
        Ok(0)
    })
}

pub(super) fn replay(
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
        Target::Reference(_) if report.target.kind == TargetKind::External => {
            return Err(RunError::Config(format!(
                "the report's target is {}; the key is sent only to the target you configure: pass --base-url (or set PETSTORE_BASE_URL, or base_url in a profile) to replay there",
                report.target.base_url
            )));
        }
        Target::Reference(built_in) => {
            // The report's reference, with its faults and variants (a fresh, empty store).
            config.target = Target::Reference(
                built_in.with(report.target.faults.clone(), report.target.variants.clone()),
            );
            None
        }
    };
    let api_key = match &config.target {
        Target::External { api_key, .. } => api_key.clone(),
        Target::Reference(_) => String::new(),
    };
    let exchange = replay::replay(
        report_path,
        rule,
        ReplayTarget {
            base_url,
            api_key: api_key.clone(),
            settings: config.client_settings(),
            built_in: Some(petstore_conformance::embedded::built_in(
                &Default::default(),
                &Default::default(),
            )),
        },
    )?;
    show_exchange(&exchange, &api_key);
    // Judged again: the rule alone, with the report's seed and cases, on the same target.
    let options = &mut config.options;
    options.seed = Some(report.seed);
    options.cases = match report.cases_per_property {
        Cases::Count(count) => Some(count),
        // Not again until a deadline: no budget here.
        Cases::UntilDeadline => None,
    };
    options.time_budget = None;
    options.filter = Some(rule.to_string());
    options.exact = true;
    options.skip = Vec::new();
    options.test_threads = None;
    options.report_dir = None;
    options.request_log = None;
    options.har = None;
    config.libtest = libtest_mimic::Arguments::default();
    config.regressions = None;
    config.announce = false;
    config.progress = false;
    // The report holds the minimal case: judged again, a failure is not shrunk again (each
    // step of a rule that creates pets would create one more).
    config.shrink = false;
    let outcome = runner::execute(config)?;
    let judged = outcome
        .report
        .as_ref()
        .and_then(|report| report.rules.iter().find(|r| r.id == rule));
    let code = match judged.map(|judged| judged.verdict) {
        Some(VerdictKind::Passed) => 0,
        Some(VerdictKind::Failed | VerdictKind::KnownFailure) => 1,
        Some(VerdictKind::Inconclusive | VerdictKind::Skipped | VerdictKind::NotDecidable) => 3,
        None => 2,
    };
    match judged {
        Some(judged) => {
            let detail = match (&judged.failure, &judged.reason) {
                (Some(failure), _) => format!(": {}", failure.message()),
                (None, Some(reason)) => format!(": {reason}"),
                (None, None) => String::new(),
            };
            stdoutln!(
                "\nverdict: {} {} ({}, judged again with seed {}){}",
                terminal::line(rule),
                judged.verdict,
                judged.level.as_str(),
                report.seed,
                terminal::line(&detail)
            );
        }
        None => stdoutln!(
            "\nverdict: {} was not judged again (not in this catalogue)",
            terminal::line(rule)
        ),
    }
    Ok(code)
}

pub(super) fn show_exchange(exchange: &petstore_conformance::outcome::Exchange, api_key: &str) {
    let redactor = petstore_conformance::execution::Redactor::new(api_key);
    // The answer is the target's: its header values lose runs of the key too.
    let mut exchange = exchange.clone();
    redactor.redact_answer(&mut exchange);
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
    // What the target sent back is shown as the reports show it: redacted, and with no
    // control character that a terminal would act on.
    stdout!("{}", terminal::lines(&redactor.redact(&shown)));
}

pub(super) fn read_report(path: &Path) -> Result<(String, Report), RunError> {
    use petstore_conformance::execution::files;
    let text = files::read_text(path, files::EVIDENCE_CAP)
        .map_err(|e| RunError::Config(format!("{}: {e}", path.display())))?;
    let report = serde_json::from_str(&text)
        .map_err(|e| RunError::Config(format!("{}: not a report: {e}", path.display())))?;
    Ok((text, report))
}

pub(super) fn annotations(path: &Path) -> Result<u8, RunError> {
    let path = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_path_buf()
    };
    let (_, report) = read_report(&path)?;
    stdout!(
        "{}",
        petstore_conformance::report::annotations::render(&report)
    );
    Ok(0)
}

pub(super) fn compare_reports(
    old: &Path,
    new: &Path,
    markdown: Option<&Path>,
    allow_different: bool,
    public_key: Option<&Path>,
) -> Result<u8, RunError> {
    use petstore_conformance::report::{attestation, compare, verify};
    let public_key = match public_key {
        Some(file) => Some(
            attestation::public_key_from_pem(&super::args::read_file("--public-key", file)?)
                .map_err(|e| RunError::Config(format!("--public-key {}: {e}", file.display())))?,
        ),
        None => None,
    };
    // A report whose content is not what its digest says, or not what the attestation beside
    // it signed, was edited after its run: no gate is judged on it.
    let intact = |path: &Path| {
        let (text, _) = read_report(path)?;
        let refused = |reason: String| {
            RunError::Config(format!(
                "{}: {reason}; compare refuses a report edited after its run",
                path.display()
            ))
        };
        let report = verify::intact(&text).map_err(refused)?;
        verify::attested(path, text.as_bytes(), public_key.as_deref()).map_err(refused)?;
        Ok::<_, RunError>(report)
    };
    let (old, new) = (intact(old)?, intact(new)?);
    if let Some(why) = compare::mismatch(&old, &new) {
        if !allow_different {
            return Err(RunError::Config(format!(
                "compare: not two runs of the same thing: {why} (--allow-different compares them all the same)"
            )));
        }
        stderrln!("petstore-conformance: compare: {why} (--allow-different)");
    }
    // The levels of this tool's catalogue, when it is the one the run used (one that does
    // not load leaves the levels the report recorded, under its digest).
    let catalogue = petstore_conformance::catalogue::Catalogue::load(None).ok();
    let gated = compare::gating(&new, catalogue.as_ref());
    let comparison = compare::compare(&old, &new, gated);
    stdout!("{}", compare::render_text(&comparison, &old, &new));
    if let Some(path) = markdown {
        let markdown = compare::render_markdown(&comparison, &old, &new);
        petstore_conformance::execution::files::replace(path, markdown.as_bytes())
            .map_err(|e| RunError::Config(format!("--markdown {}: {e}", path.display())))?;
    }
    Ok(if comparison.regressed() { 1 } else { 0 })
}

pub(super) fn merge(
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
        stderrln!(
            "merged shards {} of {}",
            terminal::line(&given.join(", ")),
            terminal::line(&from.split.to_string())
        );
        if !from.missing.is_empty() {
            stderrln!(
                "  missing shards {}: their {} not run",
                terminal::line(&from.missing.join(", ")),
                petstore_conformance::report::model::rules(from.not_run.len())
            );
        }
    }
    tell_totals(report);
    tell(&format!("  the answer: {}", report.answer_line()));
    tell_findings(report);
    for path in &merged.written {
        stderrln!("  wrote {}", path.display());
    }
    append_step_summary(&merged.written);
    Ok(report.conformance.exit_code())
}
