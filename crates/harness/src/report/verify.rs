//! `verify-report DIR --public-key FILE`: checks the attestation's signature, every report
//! file's SHA-256 against it, that no file of the directory is left uncovered, and that the
//! contract, rule catalogue and schemas it names are this verifier's own; one line per failure. Without a signature, report.json's own digest
//! shows only that its content matches its digest: anyone who edits it can recompute that.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::attestation::{self, Configuration};
use super::json_report::canonical_digest;
use super::model::Report;
use super::writing::REPORT_FILES;
use crate::catalogue::Catalogue;
use crate::contract::{CONTRACT_SHA256, Contract};
use crate::execution::files;

/// What `verify-report` found.
#[derive(Debug)]
pub struct Verification {
    /// Every check held.
    pub holds: bool,
    /// One line per finding, failures first word `FAILED`.
    pub lines: Vec<String>,
}

/// The report directory and report.json of `path` (either of them).
fn locate(path: &Path) -> (PathBuf, PathBuf) {
    if path.is_dir() {
        (path.to_path_buf(), path.join(REPORT_FILES[0]))
    } else {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        (dir.to_path_buf(), path.to_path_buf())
    }
}

/// Checks `path` (a report directory, or a report.json in one) with `public_key` (PEM), against
/// the catalogue and contract this verifier carries.
pub fn verify(
    path: &Path,
    public_key: Option<&[u8]>,
    catalogue: &Catalogue,
    contract: &Contract,
) -> Result<Verification, String> {
    let (dir, report_path) = locate(path);
    let own = Configuration {
        contract_sha256: CONTRACT_SHA256.to_string(),
        catalogue_sha256: catalogue.sha256(),
        schemas_sha256: attestation::schemas_sha256(contract),
        tool_version: crate::SUITE_VERSION.to_string(),
    };
    let raw_key = match public_key {
        Some(pem) => {
            Some(attestation::public_key_from_pem(pem).map_err(|e| format!("--public-key: {e}"))?)
        }
        None => None,
    };
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    let bytes = files::read_capped(&report_path, files::EVIDENCE_CAP)
        .map_err(|e| format!("{}: {e}", report_path.display()))?;
    // A report.json that no longer reads is one more failure: the attestation is still checked.
    let report = match own_digest(&String::from_utf8_lossy(&bytes)) {
        Ok((report, digest_line)) => {
            match digest_line {
                Ok(line) => lines.push(line),
                Err(line) => failures.push(line),
            }
            Some(report)
        }
        Err(reason) => {
            failures.push(format!("FAILED report.json: {reason}"));
            None
        }
    };
    let envelope_path = dir.join(attestation::ATTESTATION_FILE);
    match (files::read_text(&envelope_path, files::EVIDENCE_CAP), &raw_key) {
        (Err(_), None) => lines.push(format!(
            "NOT SIGNED: no {} here; integrity is all this shows (the content matches its own digest, which anyone who edits it can recompute): it is not evidence that this tool wrote it",
            attestation::ATTESTATION_FILE
        )),
        (Err(e), Some(_)) => failures.push(format!(
            "FAILED signature: {}: {e}",
            attestation::ATTESTATION_FILE
        )),
        (Ok(envelope), key) => match attestation::open_envelope(&envelope, key.as_deref()) {
            Err(reason) => failures.push(format!(
                "FAILED signature: {}: {reason}",
                attestation::ATTESTATION_FILE
            )),
            Ok(statement) => {
                lines.push(match key {
                    Some(key) => format!(
                        "signature: {} is signed by this public key (keyid {})",
                        attestation::ATTESTATION_FILE,
                        attestation::key_id(key)
                    ),
                    None => format!(
                        "NOT CHECKED: {} is there, but without --public-key its signature is not checked; the digests below show integrity only",
                        attestation::ATTESTATION_FILE
                    ),
                });
                check_subjects(&dir, &statement, &mut lines, &mut failures);
                for difference in own.differences(&statement) {
                    failures.push(format!("FAILED configuration: {difference}"));
                }
            }
        },
    }
    let Some(report) = report else {
        return Ok(Verification {
            holds: false,
            lines: failures.into_iter().chain(lines).collect(),
        });
    };
    lines.push(format!(
        "suite: {} {} (this verifier: {} {})",
        report.suite.name,
        report.suite.version,
        crate::SUITE_NAME,
        crate::SUITE_VERSION
    ));
    for (what, theirs, ours) in [
        ("contract", &report.contract.sha256, &own.contract_sha256),
        (
            "rule catalogue",
            &report.contract.catalogue_sha256,
            &own.catalogue_sha256,
        ),
        (
            "schemas",
            &report.contract.schemas_sha256,
            &own.schemas_sha256,
        ),
    ] {
        if theirs == ours {
            lines.push(format!("{what}: SHA-256 {theirs} (this verifier's own)"));
        } else {
            failures.push(format!(
                "FAILED {what}: the report's SHA-256 {} is not this verifier's own {ours}",
                if theirs.is_empty() { "(none)" } else { theirs }
            ));
        }
    }
    lines.push(format!(
        "target: {} ({}), seed {}, {}",
        report.target.base_url,
        report.target.kind,
        report.seed,
        report.conformance.as_str()
    ));
    let holds = failures.is_empty();
    failures.extend(lines);
    Ok(Verification {
        holds,
        lines: failures,
    })
}

/// A report read for `compare` (its bytes `read` from `path`), checked against the attestation
/// beside it: the signature by `public_key` when one is given (and then the attestation must
/// be there), and always the report's SHA-256 against the one the attestation names. A report
/// whose verdicts were flipped and its own digest recomputed still matches that digest, not the
/// signed one. `Ok(None)`: no attestation and no key; `Ok(Some)`: what held.
pub fn attested(
    path: &Path,
    read: &[u8],
    public_key: Option<&[u8]>,
) -> Result<Option<String>, String> {
    let (dir, _) = locate(path);
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let envelope_path = dir.join(attestation::ATTESTATION_FILE);
    let envelope = match files::read_text(&envelope_path, files::EVIDENCE_CAP) {
        Ok(envelope) => envelope,
        Err(e) if e.not_found() && public_key.is_none() => return Ok(None),
        Err(e) if e.not_found() => {
            return Err(format!(
                "no {} beside it: it is not signed, and --public-key asks that it be",
                attestation::ATTESTATION_FILE
            ));
        }
        Err(e) => return Err(format!("{}: {e}", attestation::ATTESTATION_FILE)),
    };
    let statement = attestation::open_envelope(&envelope, public_key)
        .map_err(|reason| format!("{}: {reason}", attestation::ATTESTATION_FILE))?;
    let subjects = statement["subject"].as_array().cloned().unwrap_or_default();
    let Some(subject) = subjects
        .iter()
        .find(|subject| subject["name"] == name.as_str())
    else {
        return Err(format!(
            "the {} beside it does not cover {name}",
            attestation::ATTESTATION_FILE
        ));
    };
    let recorded = subject["digest"]["sha256"].as_str().unwrap_or_default();
    let digest = crate::contract::sha256_hex(read);
    if digest != recorded {
        return Err(format!(
            "its SHA-256 {digest} is not the {recorded} the {} beside it names: edited after it was signed",
            attestation::ATTESTATION_FILE
        ));
    }
    Ok(Some(match public_key {
        Some(key) => format!(
            "{name} is the file signed by this public key (keyid {})",
            attestation::key_id(key)
        ),
        None => format!(
            "{name} matches the {} beside it (its signature not checked without --public-key)",
            attestation::ATTESTATION_FILE
        ),
    }))
}

/// report.json read back to be compared: refused when its content does not match its own
/// digest (edited after the run, a verdict flipped) or it carries none.
pub fn intact(text: &str) -> Result<Report, String> {
    let (report, line) = own_digest(text)?;
    line.map(|_| report)
}

/// report.json parsed, and the line its own digest gives (`Err`: edited or none).
fn own_digest(text: &str) -> Result<(Report, Result<String, String>), String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let report: Report =
        serde_json::from_value(value.clone()).map_err(|e| format!("not a report: {e}"))?;
    let recorded = report.integrity.sha256.clone();
    let recomputed = canonical_digest(&value);
    let line = if recorded.is_empty() {
        Err("FAILED report.json: it carries no digest (integrity.sha256)".to_string())
    } else if recorded == recomputed {
        Ok(format!(
            "intact: report.json's content matches its SHA-256 {recorded}"
        ))
    } else {
        Err(format!(
            "EDITED: report.json's content has SHA-256 {recomputed}, it says {recorded}"
        ))
    };
    Ok((report, line))
}

/// The most bytes of a subject hashed when its attestation gives no length (one written before
/// they did): more than any report file holds, far less than a planted sparse file.
const UNSIZED_CAP: u64 = 1 << 30;

/// Every subject's digest against the file, and every report file present a subject.
fn check_subjects(
    dir: &Path,
    statement: &Value,
    lines: &mut Vec<String>,
    failures: &mut Vec<String>,
) {
    let subjects = statement["subject"].as_array().cloned().unwrap_or_default();
    let mut named = Vec::new();
    for subject in &subjects {
        let name = subject["name"].as_str().unwrap_or_default();
        let recorded = subject["digest"]["sha256"].as_str().unwrap_or_default();
        named.push(name.to_string());
        // A subject names a file of this directory, never a path elsewhere.
        if name.is_empty() || name.contains('/') || name.contains('\\') || name.starts_with('.') {
            failures.push(format!(
                "FAILED subject {name:?}: not a file name of this directory"
            ));
            continue;
        }
        // Its length, when the attestation gives it, is checked before a byte is read: a
        // 20 GB sparse file, or a link to a /proc file that reads on, is refused at once.
        let recorded_size = subject["annotations"][attestation::SIZE_ANNOTATION].as_u64();
        let path = dir.join(name);
        let size = std::fs::metadata(&path).map(|meta| meta.len());
        if let (Some(recorded_size), Ok(size)) = (recorded_size, &size)
            && *size != recorded_size
        {
            failures.push(format!(
                "FAILED digest: {name} holds {size} bytes, the attestation says {recorded_size}"
            ));
            continue;
        }
        match super::writing::sha256_of_file(&path, recorded_size.unwrap_or(UNSIZED_CAP)) {
            Ok((digest, _)) if digest == recorded => {
                lines.push(format!("digest: {name} matches the attestation"))
            }
            Ok((digest, _)) => failures.push(format!(
                "FAILED digest: {name} has SHA-256 {digest}, the attestation says {recorded}"
            )),
            Err(e) => failures.push(format!("FAILED digest: {name}: {e}")),
        }
    }
    // Every file of the directory is evidence the attestation covers, or is named as not: an
    // index.html announcing "certified", or a report-final.json with other verdicts, beside the
    // signed files would otherwise pass for part of the set.
    let mut present: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    present.sort();
    for name in present {
        if name == attestation::ATTESTATION_FILE || named.contains(&name) || is_lock(dir, &name) {
            continue;
        }
        failures.push(format!(
            "FAILED coverage: {name} is here but the attestation does not cover it"
        ));
    }
}

/// The report directory's lock: an empty file the writer takes, never evidence.
fn is_lock(dir: &Path, name: &str) -> bool {
    name == ".lock"
        && std::fs::symlink_metadata(dir.join(name))
            .is_ok_and(|meta| meta.is_file() && meta.len() == 0)
}
