//! What stops a run before a verdict, and the exit codes every run ends with: below the
//! engine and the side files it reads (known failures, replays), so they share it.

use crate::report::Conformance;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A usage or configuration error: exit code 2.
    #[error("{0}")]
    Config(String),
    /// A schema or `openapi.yaml` that cannot be read or compiled: exit code 2.
    #[error(transparent)]
    Schema(#[from] crate::contract::SchemaError),
    /// A case file that cannot be read or is invalid: exit code 2.
    #[error(transparent)]
    Catalogue(#[from] crate::catalogue::CatalogueError),
    /// A schema generation cannot build from: exit code 2.
    #[error(transparent)]
    Generation(#[from] crate::generation::GenerationError),
    /// A client that cannot be built (base URL, CA certificate): exit code 2.
    #[error(transparent)]
    Client(#[from] crate::execution::client::ClientError),
    /// A report directory that cannot hold the reports: exit code 2.
    #[error(transparent)]
    Report(#[from] crate::report::ReportWriteError),
    /// The target could not be reached at all: exit code 2 (the run could not run).
    #[error("{0}")]
    Unreachable(String),
    /// The target refused the key on every authenticated request of the preflight: exit code
    /// 2, before any rule runs (a wrong or expired key is a setup error, not 13 failures).
    #[error("{0}")]
    KeyRefused(String),
    /// No operation of the contract answered at the base URL (404 to every listing): exit code
    /// 2, a wrong base path, before any rule runs.
    #[error("{0}")]
    NoOperation(String),
}

impl RunError {
    /// Every error before a verdict is "could not run"; see [`EXIT_CODES`].
    pub fn exit_code(&self) -> u8 {
        2
    }
}

/// The exit codes of `run`, as `run --help` and the README state them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    CONFORMS: every selected required rule passed (or is a known failure, not expired)
  1    DOES NOT CONFORM: a gated rule failed (required; recommended too under --gate all)
  2    could not run: usage or configuration error, target unreachable, the target
       refused the key, or no operation answered at the base URL (a wrong path; one line
       says which; no report is written)
  3    UNDETERMINED: no gated rule failed, but a selected required rule reached no verdict
       (inconclusive or skipped: time budget, throttling, a target that stopped answering)
  130  interrupted by SIGINT, 143 by SIGTERM (the report is written, marked interrupted)
A filtered run (`run list-pets/limit`, --skip, --exact) or a --read-only one answers for the
rules it ran: the report and the summary say how many rules were left out.";

/// The exit code of a finished run: the signal's when one stopped it, else the answer's.
pub fn exit_code(conformance: Conformance, signal: Option<u8>) -> u8 {
    if let Some(code) = signal {
        return code;
    }
    conformance.exit_code()
}
