//! The top of report.html: the answer, the run's facts, and its notices.

use std::fmt::Write;

use super::escape::escape;
use crate::report::model::Report;

/// The top of the page: the answer, what was judged against what, and how the run went.
pub(super) fn header(out: &mut String, report: &Report, conformance: &str, conformance_name: &str) {
    let _ = writeln!(out, "<header>");
    let _ = writeln!(
        out,
        "<h1><span id=\"verdict\" class=\"conformance\" data-conformance=\"{}\">{}</span></h1>",
        escape(conformance_name),
        escape(&conformance.to_uppercase())
    );
    let _ = writeln!(
        out,
        "<p id=\"answer\">The answer: {}.</p>",
        escape(&report.answer_line())
    );
    if let Some(note) = report.partial_note() {
        let _ = writeln!(
            out,
            "<p class=\"notice\" id=\"partial\"><strong>{}</strong></p>",
            escape(&note)
        );
    }
    let _ = writeln!(
        out,
        "<p>{} {} against the {} {}</p>",
        escape(&report.suite.name),
        escape(&report.suite.version),
        escape(&report.contract.title),
        escape(&report.contract.version)
    );
    let rows = run_rows(report);
    let _ = writeln!(out, "<dl class=\"run\">");
    for (name, value) in rows {
        let _ = writeln!(out, "<dt>{name}</dt><dd>{value}</dd>");
    }
    let _ = writeln!(out, "</dl>");
    notices(out, report);
    let _ = writeln!(
        out,
        "<p id=\"totals\">{}</p>",
        escape(&report.totals.line())
    );
    if report.created_pets.count > 0 {
        let _ = writeln!(
            out,
            "<p>{} were created, named with the prefix <code>{}</code>; their ids are in {}.</p>",
            report.created_pets.counted(),
            escape(&report.run_prefix),
            escape(
                report
                    .created_pets
                    .file
                    .as_deref()
                    .unwrap_or("no file (no report directory)")
            )
        );
    }
    let _ = writeln!(out, "</header>");
}

/// The run as name and value: product, target, seed, gate, suite, contract, catalogue, times,
/// the Re-run line.
fn run_rows(report: &Report) -> Vec<(&'static str, String)> {
    let mut rows: Vec<(&'static str, String)> = Vec::new();
    let product = match (&report.target.product, &report.target.product_version) {
        (Some(product), Some(version)) => format!("{} {}", escape(product), escape(version)),
        (Some(product), None) => escape(product),
        (None, Some(version)) => format!("(unnamed) {}", escape(version)),
        (None, None) => "not named (<code>--product</code>, <code>--product-version</code>)".into(),
    };
    rows.push((
        "Product under test",
        format!("<span id=\"product\">{product}</span>"),
    ));
    let mut target = format!(
        "<code id=\"target\">{}</code> ({})",
        escape(&report.target.base_url),
        escape(report.target.kind.as_str())
    );
    if let Some(server) = &report.target.server {
        let _ = write!(target, ", <code>Server: {}</code>", escape(server));
    }
    let _ = write!(target, ", {}", escape(&report.target.http_version));
    if !report.target.tls_verification {
        target.push_str(", <strong>TLS certificate not verified (--insecure)</strong>");
    }
    rows.push(("Target", target));
    if !report.target.faults.is_empty() {
        rows.push((
            "Faults injected into the reference",
            escape(&report.target.faults.join(", ")),
        ));
    }
    if !report.target.variants.is_empty() {
        rows.push((
            "Reference variants",
            escape(&report.target.variants.join(", ")),
        ));
    }
    rows.push(("Seed", format!("<code id=\"seed\">{}</code>", report.seed)));
    rows.push((
        "Gate",
        format!(
            "<code>{}</code> · {}",
            escape(report.gate.as_str()),
            report.cases_per_property.per_property()
        ),
    ));
    rows.push((
        "Suite",
        format!(
            "{} {}",
            escape(&report.suite.name),
            escape(&report.suite.version)
        ),
    ));
    rows.push((
        "Contract",
        format!(
            "{} {}, <code>{}</code>, SHA-256 <code id=\"contract-sha256\">{}</code>",
            escape(&report.contract.title),
            escape(&report.contract.version),
            escape(&report.contract.document),
            escape(&report.contract.sha256)
        ),
    ));
    if !report.contract.catalogue_sha256.is_empty() {
        rows.push((
            "Rule catalogue",
            format!(
                "<code>{}</code>, SHA-256 <code>{}</code>",
                escape(&report.contract.cases),
                escape(&report.contract.catalogue_sha256)
            ),
        ));
    }
    rows.push((
        "Run",
        format!(
            "{} to {} ({} ms)",
            escape(&report.started_at),
            escape(&report.finished_at),
            report.duration_ms
        ),
    ));
    rows.push(("Re-run", format!("<code>{}</code>", escape(&report.rerun))));
    rows
}

/// What the run met on the way: an interrupt, a target that stopped answering, overload,
/// throttling.
fn notices(out: &mut String, report: &Report) {
    if report.interrupted {
        let _ = writeln!(
            out,
            "<p class=\"notice\"><strong>Interrupted</strong> (SIGINT or SIGTERM): the rules not run are skipped.</p>"
        );
    }
    if let Some(reason) = &report.target.stopped_answering {
        let _ = writeln!(
            out,
            "<p class=\"notice\"><strong>The target stopped answering</strong>: {}.</p>",
            escape(reason)
        );
    }
    if report.connections.backoffs > 0 {
        let _ = writeln!(
            out,
            "<p class=\"notice\">The target showed overload: {}.</p>",
            escape(&report.connections.describe())
        );
    }
    if report.throttling.waits > 0 || report.throttling.gave_up > 0 {
        let _ = writeln!(
            out,
            "<p class=\"notice\">The target throttled: {} waits ({} ms in all), {} requests given up on (their rules inconclusive).</p>",
            report.throttling.waits, report.throttling.waited_ms, report.throttling.gave_up
        );
    }
}
