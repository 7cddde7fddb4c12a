//! Which rules a shard of a split run (`run --partition`) runs, and what its report records
//! of the split (see `catalogue::partition`).

use std::path::{Path, PathBuf};

use libtest_mimic::Trial;

use super::error::RunError;
use super::settings::RunConfig;
use crate::catalogue::Catalogue;
use crate::catalogue::partition::{Partition, ShardRecord};
use crate::contract::sha256_hex;
use crate::engine::scheduler::{self, Phase};
use crate::execution::{Redactor, files};
use crate::report::merge::{self, Shard};
use crate::report::{CREATED_PETS_FILE, REPORT_FILES, Report, ReportDir};

/// The split as this shard sees it: the rules the user's filter selects (the whole run's),
/// the oracles every shard runs, and this shard's part of the rest; the run's invocation and
/// the digest of its options, which every shard of it shares.
pub fn record(
    config: &RunConfig,
    catalogue: &Catalogue,
    partition: Partition,
    invocation: String,
) -> ShardRecord {
    let args = config.libtest_args();
    let selected: Vec<&crate::catalogue::Rule> = catalogue
        .rules
        .iter()
        .filter(|rule| {
            // libtest's own filter, asked of a trial that only carries the name and kind.
            let probe = Trial::test(rule.id.clone(), || Ok(())).with_kind(rule.level.as_str());
            !args.is_filtered_out(&probe)
        })
        .collect();
    ShardRecord {
        partition,
        name: partition.to_string(),
        selected: selected.iter().map(|rule| rule.id.clone()).collect(),
        // They judge every response of the run: each shard judges its own.
        every_shard: selected
            .iter()
            .filter(|rule| scheduler::phase(&rule.check) == Phase::Oracles)
            .map(|rule| rule.id.clone())
            .collect(),
        invocation,
        options_sha256: sha256_hex(
            merge::without_partition(&super::rerun::command(config)).as_bytes(),
        ),
    }
}

/// Longest invocation id taken: a CI's run id and attempt, a UUID, a pipeline's name.
const MAX_INVOCATION: usize = 128;

/// The invocation a shard records: `given` (`--invocation`, `PETSTORE_INVOCATION`), else the
/// CI's id of the pipeline run (every shard job of one run reads the same one, and a re-run's
/// attempt is another invocation), else the process that started this one, with its start
/// time (a script or `xargs -P` starting every shard; a shard started apart needs the flag).
pub fn invocation(given: Option<&str>) -> Result<String, RunError> {
    if let Some(id) = given {
        let fits = !id.is_empty()
            && id.len() <= MAX_INVOCATION
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:-/+".contains(&b));
        return if fits {
            Ok(id.to_string())
        } else {
            Err(RunError::Config(format!(
                "--invocation: 1 to {MAX_INVOCATION} letters, digits and ._:-/+ (the CI's pipeline id)"
            )))
        };
    }
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if let Some(run) = var("GITHUB_RUN_ID") {
        let attempt = var("GITHUB_RUN_ATTEMPT").unwrap_or_else(|| "1".into());
        return Ok(format!("github:{run}-{attempt}"));
    }
    for (ci, name) in [
        ("gitlab", "CI_PIPELINE_ID"),
        ("buildkite", "BUILDKITE_BUILD_ID"),
        ("circleci", "CIRCLE_WORKFLOW_ID"),
        ("azure", "BUILD_BUILDID"),
        ("jenkins", "BUILD_TAG"),
    ] {
        if let Some(id) = var(name) {
            return Ok(format!("{ci}:{id}"));
        }
    }
    Ok(format!(
        "local:{}",
        &sha256_hex(parent_process().as_bytes())[..16]
    ))
}

/// The parent process as one string that a later process of the same id does not share: its
/// id, its start time and the machine's boot, where /proc has them.
fn parent_process() -> String {
    // SAFETY: getppid has no preconditions and cannot fail.
    let parent = unsafe { libc::getppid() };
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let stat = read(&format!("/proc/{parent}/stat"));
    // Field 22, counted after the command's closing parenthesis (a name may hold spaces).
    let started = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .unwrap_or_default()
        .to_string();
    format!(
        "{parent} {started} {}",
        read("/proc/sys/kernel/random/boot_id").trim()
    )
}

/// Whether the shard runs the rule `id`.
pub fn takes(record: &ShardRecord, id: &str) -> bool {
    record.every_shard.iter().any(|shared| shared == id)
        || record
            .deal()
            .iter()
            .any(|(dealt, shard)| dealt == id && *shard == record.partition.shard)
}

/// What `merge` wrote.
pub struct MergeOutcome {
    pub report: Report,
    pub written: Vec<PathBuf>,
}

/// `merge DIR… --report-dir OUT`: reads each shard's `report.json`, merges them (refusing
/// shards of different runs, exit 2), and writes the merged report in every format into
/// `out`, with the shards' lists of created pets joined into one. `api_key_env` names a key
/// to redact once more, as every file written passes the redactor.
pub fn merge_dirs(
    dirs: &[PathBuf],
    out: &Path,
    cases_dir: Option<&Path>,
    api_key_env: &str,
    sign_key: Option<&crate::report::attestation::SigningKey>,
) -> Result<MergeOutcome, RunError> {
    let mut shards = Vec::new();
    for dir in dirs {
        let path = dir.join(REPORT_FILES[0]);
        let text = files::read_text(&path, files::EVIDENCE_CAP)
            .map_err(|e| RunError::Config(format!("{}: {e}", path.display())))?;
        let report = serde_json::from_str(&text)
            .map_err(|e| RunError::Config(format!("{}: not a report: {e}", path.display())))?;
        shards.push(Shard {
            source: path.display().to_string(),
            report,
        });
    }
    // The catalogue names the rules of a missing shard; one that is not the shards' is not used.
    let catalogue = Catalogue::load(cases_dir).ok();
    let report = merge::merge(&shards, catalogue.as_ref()).map_err(|e| RunError::Config(e.0))?;
    let redactor = Redactor::new(&std::env::var(api_key_env).unwrap_or_default());
    let report_dir = ReportDir::prepare(out)
        .map_err(|e| RunError::Config(format!("{e}; choose another with --report-dir")))?;
    let mut staged = Vec::new();
    if report.created_pets.file.is_some() {
        let mut joined = report_dir.stage(CREATED_PETS_FILE)?;
        for dir in dirs {
            // A shard that created nothing may have left no list. Streamed, not read whole
            // (a long budget's list is large), and only from a regular file.
            let path = dir.join(CREATED_PETS_FILE);
            let mut file = match files::open_regular(&path) {
                Ok(file) => file,
                Err(e) if e.not_found() => continue,
                Err(e) => return Err(RunError::Config(format!("{}: {e}", path.display()))),
            };
            std::io::copy(&mut file, &mut joined)
                .map_err(|e| RunError::Config(format!("{}: {e}", path.display())))?;
        }
        staged.push(CREATED_PETS_FILE);
    }
    // One attestation over the merged files, as a single run's (each shard's report digest is
    // in `merged.shards`).
    let configuration = crate::report::attestation::Configuration {
        contract_sha256: report.contract.sha256.clone(),
        catalogue_sha256: report.contract.catalogue_sha256.clone(),
        schemas_sha256: report.contract.schemas_sha256.clone(),
        tool_version: crate::SUITE_VERSION.to_string(),
    };
    let signing = sign_key.map(|key| (key, &configuration));
    let written = report_dir.commit(&report, &redactor, &staged, &[], signing)?;
    Ok(MergeOutcome { report, written })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invocation_is_one_word_a_ci_gives_and_the_derived_one_is_the_same_each_time() {
        for id in ["1234567-1", "gitlab-998877", "nightly/2026-11-27", "a"] {
            assert_eq!(invocation(Some(id)).unwrap(), id);
        }
        let long = "x".repeat(MAX_INVOCATION + 1);
        for id in ["", "two words", "key=\"v\"", long.as_str()] {
            assert!(invocation(Some(id)).is_err(), "{id:?}");
        }
        // Every shard a process starts derives the same one.
        let derived = invocation(None).unwrap();
        assert!(!derived.is_empty() && derived.len() <= MAX_INVOCATION);
        assert_eq!(invocation(None).unwrap(), derived);
    }
}
