//! `report.html`: the certification report a person opens in a browser, in one file that loads
//! nothing (inline style and script, a Content-Security-Policy that forbids any fetch): the
//! answer at the top, a table of the failed rules linking to their cards, then every rule:
//! the failed ones first, the rest grouped by operation, each failure with its evidence; and
//! filters by verdict and level. Long unbroken text (a generated name, a body) wraps: the page
//! never scrolls sideways.
//!
//! Everything the target sent (and every other text of the model) is HTML-escaped; no JSON is
//! embedded, the script only shows and hides what is already in the page.

use std::fmt::Write;

use super::model::{FailureReport, Report, RuleReport};
use crate::outcome::{CasePhase, VerdictKind};

mod assets;
mod escape;
mod header;
mod index;
mod tables;
use assets::{SCRIPT, STYLE};
use escape::escape;
use header::header;
use index::{anchor, failed_index, findings, is_failure};

/// The verdicts in the order the filters list them (the order rules are listed in).
const VERDICTS: [VerdictKind; 6] = VerdictKind::RANKED;

/// The CSP source that admits exactly `text` as an inline script or style.
fn csp_hash(text: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let mut base64 = String::new();
    for chunk in digest.as_ref().chunks(3) {
        let bytes = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]);
        for i in 0..4 {
            if i <= chunk.len() {
                base64.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                base64.push('=');
            }
        }
    }
    format!("'sha256-{base64}'")
}

fn phase(phase: CasePhase) -> &'static str {
    match phase {
        CasePhase::Regression => "a saved regression case",
        CasePhase::Boundary => "a boundary case",
        CasePhase::Generated => "generated, then shrunk",
    }
}

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let conformance = report.conformance.as_str();
    // The serialized name ("does-not-conform"), which the style and tests key on.
    let conformance_name = serde_json::to_value(report.conformance)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src {}; script-src {}\">\n\
         <link rel=\"icon\" href=\"data:,\">\n\
         <title>{} {}: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        csp_hash(STYLE),
        csp_hash(SCRIPT),
        escape(&report.suite.name),
        escape(&report.suite.version),
        escape(conformance),
    );
    header(&mut out, report, conformance, &conformance_name);
    findings(&mut out, report);
    failed_index(&mut out, report);
    filters(&mut out, report);
    let _ = writeln!(out, "<main id=\"rules\">");
    let (failed, rest): (Vec<&RuleReport>, Vec<&RuleReport>) = report
        .rules_failures_first()
        .into_iter()
        .partition(|rule| is_failure(rule));
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "<section class=\"group\" id=\"group-failed\">\n<h2>Failed rules</h2>"
        );
        for rule in failed {
            rule_section(&mut out, rule);
        }
        let _ = writeln!(out, "</section>");
    }
    // The rest by operation, in the order the contract's operations come in the catalogue.
    let mut operations: Vec<&str> = Vec::new();
    for rule in &rest {
        if !operations.contains(&rule.operation.name()) {
            operations.push(rule.operation.name());
        }
    }
    for operation in operations {
        let _ = writeln!(
            out,
            "<section class=\"group\" data-operation=\"{0}\">\n<h2>Operation <code>{0}</code></h2>",
            escape(operation)
        );
        for rule in rest
            .iter()
            .filter(|rule| rule.operation.name() == operation)
        {
            rule_section(&mut out, rule);
        }
        let _ = writeln!(out, "</section>");
    }
    let _ = writeln!(out, "</main>");
    out.push_str(&tables::statements_section(&report.statements));
    tables::coverage_section(&mut out, &report.request_coverage);
    if let Some(note) = &report.redaction {
        let _ = writeln!(out, "<p id=\"redaction\">Redaction: {}</p>", escape(note));
    }
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// One toggle per verdict and per level that the report holds, all on: hidden until the script
/// runs, since without it they could not work.
fn filters(out: &mut String, report: &Report) {
    let count =
        |keep: &dyn Fn(&RuleReport) -> bool| report.rules.iter().filter(|r| keep(r)).count();
    let _ = writeln!(
        out,
        "<nav id=\"filters\" aria-label=\"Filter the rules\" hidden>"
    );
    let _ = write!(
        out,
        "<div class=\"group\" role=\"group\" aria-label=\"Verdict\">Verdict:"
    );
    for verdict in VERDICTS {
        let n = count(&|rule| rule.verdict == verdict);
        if n > 0 {
            let _ = write!(
                out,
                " <button type=\"button\" data-filter-verdict=\"{0}\" aria-pressed=\"true\">{0} ({n})</button>",
                verdict.as_str()
            );
        }
    }
    let _ = writeln!(out, "</div>");
    let _ = write!(
        out,
        "<div class=\"group\" role=\"group\" aria-label=\"Level\">Level:"
    );
    for level in [
        crate::catalogue::Level::Required,
        crate::catalogue::Level::Recommended,
    ] {
        let n = count(&|rule| rule.level == level);
        if n > 0 {
            let _ = write!(
                out,
                " <button type=\"button\" data-filter-level=\"{0}\" aria-pressed=\"true\">{0} ({n})</button>",
                level.as_str()
            );
        }
    }
    let _ = writeln!(out, "</div>");
    let _ = writeln!(out, "<span id=\"shown\" aria-live=\"polite\"></span>");
    let _ = writeln!(out, "</nav>");
}

fn rule_section(out: &mut String, rule: &RuleReport) {
    let verdict = rule.verdict.as_str();
    let level = rule.level.as_str();
    let _ = writeln!(
        out,
        "<section class=\"rule\" id=\"{}\" data-rule=\"{}\" data-verdict=\"{verdict}\" data-level=\"{level}\" data-gated=\"{}\">",
        anchor(rule),
        escape(&rule.id),
        rule.gated
    );
    let _ = writeln!(
        out,
        "<h3><span class=\"badge\">{}</span> <code class=\"rule-id\">{}</code> {}</h3>",
        verdict.to_uppercase(),
        escape(&rule.id),
        escape(&rule.title)
    );
    let mut meta = vec![
        format!("<span class=\"level\">{level}</span>"),
        format!("operation <code>{}</code>", rule.operation.name()),
        format!("{} case(s)", rule.cases_run),
    ];
    if rule.round_trips > 0 {
        meta.push(format!("{} round trip(s)", rule.round_trips));
    }
    meta.push(format!("{} ms", rule.duration_ms));
    if rule.verdict != VerdictKind::Passed {
        meta.push(if rule.gated { "gated" } else { "not gated" }.into());
    }
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", meta.join(" · "));
    let _ = writeln!(
        out,
        "<blockquote class=\"citation\"><p>{}</p><footer>Contract, <cite>{}</cite></footer></blockquote>",
        escape(&super::citation::plain(&rule.citation.quote)),
        escape(&rule.citation.section)
    );
    if let Some(note) = &rule.note {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    if let Some(reason) = &rule.reason {
        let _ = writeln!(out, "<p class=\"reason\">{}</p>", escape(reason));
    }
    if let Some(known) = &rule.known_failure {
        let mut text = format!("On the list of known failures: {}", escape(&known.reason));
        if let Some(link) = &known.link {
            // Only a web address becomes a link: a `javascript:` one from the list must not.
            if link.starts_with("https://") || link.starts_with("http://") {
                let _ = write!(
                    text,
                    " (<a href=\"{0}\" rel=\"noreferrer\">{0}</a>)",
                    escape(link)
                );
            } else {
                let _ = write!(text, " ({})", escape(link));
            }
        }
        if let Some(expires) = &known.expires {
            let _ = write!(text, ", until {}", escape(expires));
        }
        let _ = writeln!(out, "<p class=\"known-failure\">{text}.</p>");
    }
    for (heading, failure) in super::distinct_failures::each(rule) {
        if let Some(heading) = heading {
            let _ = writeln!(out, "<h4 class=\"distinct\">{}</h4>", escape(&heading));
        }
        failure_details(out, failure);
    }
    let _ = writeln!(out, "</section>");
}

fn failure_details(out: &mut String, failure: &FailureReport) {
    let _ = writeln!(out, "<div class=\"failure\">");
    let _ = writeln!(
        out,
        "<p class=\"message\">{}</p>",
        escape(&failure.message())
    );
    if let Some(example) = &failure.counterexample {
        let _ = writeln!(
            out,
            "<h4>Counterexample</h4>\n<p>Minimal case ({}, {} shrink steps):</p>\n<pre class=\"minimal\">{}</pre>\n<p>First failing case:</p>\n<pre class=\"original\">{}</pre>",
            phase(example.phase),
            example.shrink_steps,
            escape(&example.minimal),
            escape(&example.original)
        );
    }
    if let Some(request) = &failure.request {
        let _ = writeln!(
            out,
            "<h4>Request</h4>\n<pre class=\"request\">{}</pre>",
            escape(&super::exchange::request_text(request))
        );
    }
    if let Some(response) = &failure.response {
        let _ = writeln!(
            out,
            "<h4>Response</h4>\n<pre class=\"response\">{}</pre>",
            escape(&super::exchange::response_text(response))
        );
        if response.body_truncated {
            let _ = writeln!(
                out,
                "<p class=\"meta\">The body exceeded the cap (--body-cap) and was cut.</p>"
            );
        }
    }
    if let Some(error) = &failure.transport_error {
        let _ = writeln!(
            out,
            "<h4>Response</h4>\n<p class=\"transport-error\">No response: {}</p>",
            escape(error)
        );
    }
    if let Some(throttled) = &failure.throttled {
        let _ = writeln!(
            out,
            "<p class=\"meta\">The target throttled this request: {} waits, {} ms{}.</p>",
            throttled.waits,
            throttled.waited_ms,
            if throttled.gave_up {
                ", then the client gave up"
            } else {
                ""
            }
        );
    }
    if failure.steps.is_empty() {
        if let Some(curl) = &failure.curl {
            let _ = writeln!(
                out,
                "<h4>Replay</h4>\n<pre class=\"curl\">{}</pre>",
                escape(curl)
            );
        }
    } else {
        let _ = writeln!(
            out,
            "<h4>The minimal sequence, step by step</h4>\n<ol class=\"steps\">"
        );
        for step in &failure.steps {
            let status = step.status.map_or("no answer".into(), |s| s.to_string());
            let what = super::citation::unnumbered(&step.what);
            let _ = writeln!(out, "<li>{} → {status}</li>", escape(what));
        }
        let lines: Vec<&str> = failure.steps.iter().map(|s| s.curl.as_str()).collect();
        let _ = writeln!(
            out,
            "</ol>\n<h4>Replay</h4>\n<pre class=\"curl\">{}</pre>",
            escape(&lines.join("\n"))
        );
    }
    let _ = writeln!(out, "</div>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_html_and_attributes_read() {
        assert_eq!(
            escape(r#"<script>"a" & 'b'</script>"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
        assert_eq!(escape("name\u{202e}txt.exe"), "name[U+202E]txt.exe");
    }

    #[test]
    fn the_csp_hash_is_base64_of_sha256() {
        // echo -n 'abc' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            csp_hash("abc"),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
        assert_eq!(csp_hash("").len(), "'sha256-'".len() + 44);
    }
}
