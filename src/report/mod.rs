//! One report model, rendered as JSON, JUnit XML and Markdown, each in its own module.

mod json;
mod junit;
mod markdown;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalogue::{Citation, Level, Rule};
use crate::contract::Operation;
use crate::execution::Redactor;
use crate::execution::client::{RecordedRequest, RecordedResponse};
use crate::execution::fixtures::CreatedPet;
use crate::rules::{Counterexample, Verdict};

pub use json::render as render_json;
pub use junit::render as render_junit;
pub use markdown::render as render_markdown;

/// Names of the files a run writes into the report directory.
pub const REPORT_FILES: [&str; 3] = ["report.json", "junit.xml", "summary.md"];

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub suite: Named,
    pub contract: ContractInfo,
    pub target: TargetInfo,
    pub seed: u64,
    pub cases_per_property: u32,
    pub gate: String,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: u64,
    pub conformance: Conformance,
    pub totals: Totals,
    /// Re-runs the same cases against the same target.
    pub rerun: String,
    pub rules: Vec<RuleReport>,
    /// Every pet the run created names start with this.
    pub run_prefix: String,
    pub created_pets: Vec<CreatedPet>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Named {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContractInfo {
    pub title: String,
    pub version: String,
    pub schemas: String,
    pub cases: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetInfo {
    pub base_url: String,
    /// "built-in reference server" or "external".
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    pub tls_verification: bool,
    /// The protocol the target answered the first request in.
    pub http_version: String,
}

/// The run's answer to "does the target conform?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Conformance {
    /// Every required rule ran and passed.
    Conforms,
    /// A gated rule failed.
    DoesNotConform,
    /// No gated rule failed, but a required rule was inconclusive, skipped or not selected.
    Undetermined,
}

impl Conformance {
    pub fn as_str(self) -> &'static str {
        match self {
            Conformance::Conforms => "conforms",
            Conformance::DoesNotConform => "does not conform",
            Conformance::Undetermined => "undetermined",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub rules: usize,
    pub passed: usize,
    pub failed_required: usize,
    pub failed_recommended: usize,
    pub inconclusive: usize,
    pub skipped: usize,
    /// Rules of the catalogue left out by a filter.
    pub not_selected: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleReport {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub operation: Operation,
    pub citation: Citation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub verdict: String,
    /// Whether this verdict fails the run under its gate.
    pub gated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub cases_run: u32,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailureReport {
    pub expected: String,
    pub observed: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<RecordedRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<RecordedResponse>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curl: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
}

impl RuleReport {
    pub fn new(
        rule: &Rule,
        verdict: &Verdict,
        gated: bool,
        cases_run: u32,
        duration_ms: u64,
        key_env: &str,
    ) -> RuleReport {
        let failure = match verdict {
            Verdict::Failed(failure) => Some(FailureReport {
                expected: failure.expected.clone(),
                observed: failure.observed.clone(),
                request: failure.exchange.as_ref().map(|e| e.request.clone()),
                response: failure
                    .exchange
                    .as_ref()
                    .and_then(|e| e.response.clone())
                    .map(excerpt),
                transport_error: failure
                    .exchange
                    .as_ref()
                    .and_then(|e| e.transport_error.clone()),
                curl: failure.exchange.as_ref().map(|e| e.curl(key_env)),
                counterexample: failure.counterexample.clone(),
            }),
            _ => None,
        };
        let reason = match verdict {
            Verdict::Inconclusive { reason } | Verdict::Skipped { reason } => Some(reason.clone()),
            _ => None,
        };
        RuleReport {
            id: rule.id.clone(),
            title: rule.title.clone(),
            level: rule.level,
            operation: rule.operation,
            citation: rule.citation.clone(),
            note: rule.note.clone(),
            verdict: verdict.name().to_string(),
            gated,
            reason,
            cases_run,
            duration_ms,
            failure,
        }
    }
}

/// Characters of a response body kept in a report; the rest is summarised.
pub const BODY_EXCERPT: usize = 4096;

fn excerpt(mut response: RecordedResponse) -> RecordedResponse {
    let total = response.body.chars().count();
    if total > BODY_EXCERPT {
        let mut kept: String = response.body.chars().take(BODY_EXCERPT).collect();
        kept.push_str(&format!(
            "… ({} more characters not shown)",
            total - BODY_EXCERPT
        ));
        response.body = kept;
    }
    response
}

#[derive(Debug, thiserror::Error)]
#[error("report directory {dir}: {reason}")]
pub struct ReportWriteError {
    pub dir: PathBuf,
    pub reason: String,
}

/// Checks that `dir` can hold the reports before the run starts, so that a run never ends
/// with nowhere to write.
pub fn prepare_dir(dir: &Path) -> Result<(), ReportWriteError> {
    let fail = |reason: String| ReportWriteError {
        dir: dir.to_path_buf(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create it: {e}")))?;
    let probe = dir.join(".write-probe");
    std::fs::write(&probe, b"").map_err(|e| fail(format!("cannot write in it: {e}")))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Renders every format and writes them; each file appears whole or not at all (write to a
/// temporary name, then rename). Everything written passes through the redactor.
pub fn write_all(
    report: &Report,
    dir: &Path,
    redactor: &Redactor,
) -> Result<Vec<PathBuf>, ReportWriteError> {
    prepare_dir(dir)?;
    let rendered = [
        (REPORT_FILES[0], render_json(report)),
        (REPORT_FILES[1], render_junit(report)),
        (REPORT_FILES[2], render_markdown(report)),
    ];
    let mut written = Vec::new();
    for (name, text) in rendered {
        let path = dir.join(name);
        let temporary = dir.join(format!(".{name}.partial"));
        let fail = |reason: String| ReportWriteError {
            dir: dir.to_path_buf(),
            reason: format!("{name}: {reason}"),
        };
        std::fs::write(&temporary, redactor.redact(&text)).map_err(|e| fail(e.to_string()))?;
        std::fs::rename(&temporary, &path).map_err(|e| fail(e.to_string()))?;
        written.push(path);
    }
    Ok(written)
}
