//! Writing the report directory: every format rendered, redacted, written under this run's
//! own names and renamed into place, the directory held by the run; never through a link.

use std::path::{Path, PathBuf};

use super::attestation;
use super::model::Report;
use super::{html, json_report, junit, markdown};
use crate::execution::Redactor;
use crate::execution::files;

/// Every string of `value` with its control characters (but newline and tab) written as
/// `\u{..}`, as the terminal shows them.
fn controls_escaped(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) if text.chars().any(is_escaped) => Value::String(
            text.chars()
                .map(|c| match is_escaped(c) {
                    true => format!("\\u{{{:x}}}", c as u32),
                    false => c.to_string(),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(controls_escaped).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(name, value)| (name, controls_escaped(value)))
                .collect(),
        ),
        other => other,
    }
}

fn is_escaped(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Names of the files a run renders into the report directory.
pub const REPORT_FILES: [&str; 4] = ["report.json", "junit.xml", "summary.md", "report.html"];

/// The file every pet a run creates is streamed to, one JSON line each.
pub const CREATED_PETS_FILE: &str = "created-pets.jsonl";

#[derive(Debug, thiserror::Error)]
#[error("report directory {dir}: {reason}")]
pub struct ReportWriteError {
    pub dir: PathBuf,
    pub reason: String,
}

/// The report directory of one run, held by it from before anything is written until it ends
/// (the directory's `.lock`, naming the run's pid and start): a second run into the same
/// directory is refused, naming the first, instead of overwriting its reports and its
/// `created-pets.jsonl` (the only list of the pets it left) when it finishes. Files are written
/// under names of this run's own (`.NAME.<pid>-<nonce>.partial`), then renamed into place
/// together.
pub struct ReportDir {
    dir: PathBuf,
    token: String,
    _lock: files::DirLock,
}

/// The directory's lock file.
const LOCK_FILE: &str = ".lock";

impl ReportDir {
    /// Checks that `dir` can hold the reports before the run starts, so that a run never ends
    /// with nowhere to write.
    pub fn prepare(dir: &Path) -> Result<ReportDir, ReportWriteError> {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let fail = |reason: String| ReportWriteError {
            dir: dir.to_path_buf(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create it: {e}")))?;
        let holder = format!(
            "pid {}, started {}",
            std::process::id(),
            humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        );
        let lock = files::DirLock::take(&dir.join(LOCK_FILE), &holder).map_err(|e| match e {
            files::LockError::Held(holder) => fail(format!(
                "another run ({holder}) is writing its reports there: two runs into one directory would overwrite each other's reports and {CREATED_PETS_FILE} (wait for it to end)"
            )),
            files::LockError::Io(e) => fail(format!("{LOCK_FILE}: {e}")),
        })?;
        let report_dir = ReportDir {
            dir: dir.to_path_buf(),
            token: format!("{}-{nonce:x}", std::process::id()),
            _lock: lock,
        };
        let probe = report_dir.partial(".write-probe");
        files::create_new(&probe)
            .map_err(|e| report_dir.fail(format!("cannot write in it: {e}")))?;
        let _ = std::fs::remove_file(probe);
        Ok(report_dir)
    }

    fn fail(&self, reason: String) -> ReportWriteError {
        ReportWriteError {
            dir: self.dir.clone(),
            reason,
        }
    }

    /// This run's temporary name for `name`.
    fn partial(&self, name: &str) -> PathBuf {
        self.dir.join(format!(".{name}.{}.partial", self.token))
    }

    /// A file the run fills as it goes (created pets), renamed into place by [`Self::commit`].
    pub fn stage(&self, name: &str) -> Result<std::fs::File, ReportWriteError> {
        files::create_new(&self.partial(name)).map_err(|e| self.fail(format!("{name}: {e}")))
    }

    /// Renders every format, writes each under this run's temporary name, then renames them
    /// and the `staged` files into place under the directory's lock. Everything rendered
    /// passes through the redactor. With `signing`, `attestation.intoto.json` covers every
    /// file as written, and each of `beside` (the request log, the HAR: written where the
    /// user named them) that is in this directory; without, an earlier run's attestation is
    /// taken away.
    pub fn commit(
        &self,
        report: &Report,
        redactor: &Redactor,
        staged: &[&str],
        beside: &[&Path],
        signing: Option<(&attestation::SigningKey, &attestation::Configuration)>,
    ) -> Result<Vec<PathBuf>, ReportWriteError> {
        // Digested before the borrowed names below: a file of this directory the run wrote in
        // place is evidence the attestation must cover, or `verify-report` would find it
        // uncovered.
        let beside: Vec<(String, String, u64)> = match signing {
            Some(_) => beside
                .iter()
                .filter(|path| self.holds(path))
                .filter_map(|path| {
                    let name = path.file_name()?.to_str()?.to_string();
                    let (digest, size) = sha256_of_file(path, u64::MAX).ok()?;
                    Some((name, digest, size))
                })
                .collect(),
            None => Vec::new(),
        };
        // The model redacted before any format renders it: a renderer's own escaping (`&` as
        // `&amp;` in HTML and XML, `\` as `\\` in JSON) would otherwise hide a target's
        // spelling of the key from the pass over the file, and report.json's digest is then of
        // what the file holds.
        let redacted = serde_json::to_value(report)
            .ok()
            .and_then(|value| serde_json::from_value::<Report>(redactor.redact_json(&value)).ok());
        let report = redacted.as_ref().unwrap_or(report);
        // What a person reads (summary.md and report.html `cat` or opened, junit.xml in a CI
        // log) shows a target's control bytes as escapes: ESC, BEL, a bare CR would act on a
        // terminal, and XML has no place for most of them (a writer would drop them unseen).
        // report.json keeps the text as it came: JSON escapes every control character.
        let shown = serde_json::to_value(report)
            .ok()
            .and_then(|value| serde_json::from_value::<Report>(controls_escaped(value)).ok());
        let shown = shown.as_ref().unwrap_or(report);
        let rendered = [
            (REPORT_FILES[0], json_report::render(report)),
            (REPORT_FILES[1], junit::render(shown)),
            (REPORT_FILES[2], markdown::render(shown)),
            (REPORT_FILES[3], html::render(shown)),
        ];
        let mut names = Vec::new();
        // Each file's SHA-256 and length, for the attestation.
        let mut digests: Vec<(&str, String, u64)> = Vec::new();
        for (name, text) in rendered {
            let text = redactor.redact(&text).into_bytes();
            self.write_partial(name, &text)?;
            names.push(name);
            if signing.is_some() {
                digests.push((name, crate::contract::sha256_hex(&text), text.len() as u64));
            }
        }
        for name in staged.iter().copied() {
            // Digested as a stream, and only to be signed: after a long budget the created
            // pets are megabytes, and reading them whole was the run's peak (67 MB against
            // 42 MB over a 60 s run).
            if signing.is_none() {
                if self.partial(name).exists() {
                    names.push(name);
                }
            } else if let Ok((digest, size)) = sha256_of_file(&self.partial(name), u64::MAX) {
                names.push(name);
                digests.push((name, digest, size));
            }
        }
        for (name, digest, size) in &beside {
            digests.push((name.as_str(), digest.clone(), *size));
        }
        if let Some((key, configuration)) = signing {
            let statement = attestation::statement(report, &digests, configuration);
            // Names, digests, rule ids and the base URL already redacted: nothing to redact here
            // (redacting a digest would break it).
            let envelope = key.envelope(&statement);
            self.write_partial(attestation::ATTESTATION_FILE, envelope.as_bytes())?;
            names.push(attestation::ATTESTATION_FILE);
        }
        // The directory's lock is this run's from `prepare`: no other run renames into it.
        if signing.is_none() {
            let _ = std::fs::remove_file(self.dir.join(attestation::ATTESTATION_FILE));
        }
        let mut written = Vec::new();
        for name in names {
            let path = self.dir.join(name);
            std::fs::rename(self.partial(name), &path)
                .map_err(|e| self.fail(format!("{name}: {e}")))?;
            written.push(path);
        }
        Ok(written)
    }
}

impl ReportDir {
    /// Whether `path` names a file of this directory (by where it is, not how it is spelled),
    /// and a file, not a link.
    fn holds(&self, path: &Path) -> bool {
        if !std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file()) {
            return false;
        }
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        match (
            std::fs::canonicalize(parent),
            std::fs::canonicalize(&self.dir),
        ) {
            (Ok(parent), Ok(dir)) => parent == dir,
            _ => false,
        }
    }

    fn write_partial(&self, name: &str, bytes: &[u8]) -> Result<(), ReportWriteError> {
        use std::io::Write;
        files::create_new(&self.partial(name))
            .and_then(|mut file| file.write_all(bytes))
            .map_err(|e| self.fail(format!("{name}: {e}")))
    }
}

impl Drop for ReportDir {
    /// What a run that ends early leaves: no half-written report; a list of created pets only
    /// when it holds any (they must be findable).
    fn drop(&mut self) {
        let names = [CREATED_PETS_FILE, attestation::ATTESTATION_FILE];
        for name in REPORT_FILES.into_iter().chain(names) {
            let partial = self.partial(name);
            let keep =
                name == CREATED_PETS_FILE && std::fs::metadata(&partial).is_ok_and(|m| m.len() > 0);
            if !keep {
                let _ = std::fs::remove_file(partial);
            }
        }
    }
}

/// Removes the reports of an earlier run from `dir` (not the list of pets it created: those
/// must stay findable): a run that quits before writing its own leaves no report that could
/// be taken for its.
pub fn withdraw(dir: &Path) {
    for name in REPORT_FILES
        .into_iter()
        .chain([attestation::ATTESTATION_FILE])
    {
        let _ = std::fs::remove_file(dir.join(name));
    }
}

/// Writes every format of `report` into `dir` (see [`ReportDir::commit`]).
pub fn write_all(
    report: &Report,
    dir: &Path,
    redactor: &Redactor,
) -> Result<Vec<PathBuf>, ReportWriteError> {
    ReportDir::prepare(dir)?.commit(report, redactor, &[], &[], None)
}

/// Lowercase hex SHA-256 of the regular file at `path` and its length, read 64 KiB at a time
/// (a FIFO or a device planted where a report file belongs is refused, not read for ever); a
/// file of more than `cap` bytes, or that reads past them (a `/proc` file says it holds none),
/// is refused before or as soon as it shows it.
pub(super) fn sha256_of_file(path: &Path, cap: u64) -> Result<(String, u64), files::ReadError> {
    use std::io::Read;
    let file = files::open_regular(path)?;
    let size = file.metadata()?.len();
    if size > cap {
        return Err(files::ReadError::TooLarge { size, cap });
    }
    let mut file = file.take(cap.saturating_add(1));
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buffer = vec![0u8; 64 << 10];
    let mut read_in_all = 0u64;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        read_in_all += read as u64;
        if read_in_all > cap {
            return Err(files::ReadError::TooLarge {
                size: read_in_all,
                cap,
            });
        }
        context.update(&buffer[..read]);
    }
    let digest = context
        .finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok((digest, read_in_all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_digested_as_a_stream_has_the_digest_of_its_bytes() {
        let dir = std::env::temp_dir().join(format!("pc-writing-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("created-pets.jsonl");
        // Past one read, and not a multiple of it.
        let bytes: Vec<u8> = (0..200_003u32).map(|n| (n % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(
            sha256_of_file(&path, u64::MAX).unwrap(),
            (crate::contract::sha256_hex(&bytes), bytes.len() as u64)
        );
        // One byte fewer allowed than it holds: refused, before any is read.
        assert!(matches!(
            sha256_of_file(&path, bytes.len() as u64 - 1),
            Err(files::ReadError::TooLarge { .. })
        ));
        // A /proc file says it holds nothing and reads on: refused past the cap (or at the
        // read the cap makes uneven, which pagemap refuses), never read to its end.
        assert!(sha256_of_file(Path::new("/proc/self/pagemap"), 1 << 20).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
