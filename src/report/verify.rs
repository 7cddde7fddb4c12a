//! `verify-report report.json`: recomputes a report's digests and says whether it is intact,
//! and which suite, contract text and rule catalogue it came from.

use serde_json::Value;

use super::{Report, canonical_digest};
use crate::catalogue::Catalogue;
use crate::contract::{CONTRACT_SHA256, CONTRACT_VERSION};

/// What `verify-report` found.
#[derive(Debug)]
pub struct Verification {
    /// The report's own digest matches its content.
    pub intact: bool,
    /// One line per finding, for the terminal.
    pub lines: Vec<String>,
}

/// Checks the report's digest, and names its suite, contract and catalogue against the ones
/// this binary carries (`catalogue`: the rules it would run).
pub fn verify(text: &str, catalogue: &Catalogue) -> Result<Verification, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let report: Report =
        serde_json::from_value(value.clone()).map_err(|e| format!("not a report: {e}"))?;
    let recorded = report.integrity.sha256.clone();
    let recomputed = canonical_digest(&value);
    let intact = !recorded.is_empty() && recorded == recomputed;
    let mut lines = vec![if intact {
        format!("intact: the content matches its SHA-256 {recorded}")
    } else if recorded.is_empty() {
        "NOT VERIFIABLE: the report carries no digest (integrity.sha256)".to_string()
    } else {
        format!("EDITED: the content's SHA-256 is {recomputed}, the report says {recorded}")
    }];
    lines.push(format!(
        "suite: {} {} (this binary: {} {})",
        report.suite.name,
        report.suite.version,
        crate::SUITE_NAME,
        crate::SUITE_VERSION
    ));
    lines.push(if report.contract.sha256 == CONTRACT_SHA256 {
        format!(
            "contract: {} {}, SHA-256 {} (the text this suite carries)",
            report.contract.title, report.contract.version, report.contract.sha256
        )
    } else {
        format!(
            "contract: {} {}, SHA-256 {}: NOT the text this suite carries ({CONTRACT_VERSION}, {CONTRACT_SHA256})",
            report.contract.title, report.contract.version, report.contract.sha256
        )
    });
    lines.push(if report.contract.catalogue_sha256 == catalogue.sha256() {
        format!(
            "rule catalogue: SHA-256 {} (the one this suite runs, from {})",
            report.contract.catalogue_sha256, catalogue.source
        )
    } else {
        format!(
            "rule catalogue: SHA-256 {}: not the one this suite runs ({})",
            report.contract.catalogue_sha256,
            catalogue.sha256()
        )
    });
    lines.push(format!(
        "target: {} ({}), seed {}, {}",
        report.target.base_url,
        report.target.kind,
        report.seed,
        report.conformance.as_str()
    ));
    Ok(Verification { intact, lines })
}
