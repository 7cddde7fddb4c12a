//! What the command line accepts, as clap declares it: the sub-commands and their options (the
//! source of `--help`, the completions and the man pages), and the colour stderr takes.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::args::{RunArgs, ServeArgs};
use super::listings;
use petstore_conformance::runner;
use petstore_conformance::runner::progress::ColorChoice;

#[derive(Parser)]
#[command(
    name = "petstore-conformance",
    version,
    about = "Contract-conformance harness for the Pet Store interface"
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
    /// When to colour what is printed: on a terminal (`auto`, unless NO_COLOR is set),
    /// `always`, or `never`.
    #[arg(
        long,
        global = true,
        value_enum,
        env = "PETSTORE_COLOR",
        default_value = "auto"
    )]
    pub(super) color: ColorChoice,
}

/// Colour on stderr for this process: decided once, from --color, NO_COLOR and the terminal.
pub(super) static STDERR_COLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Whether what goes to stderr is coloured.
pub(crate) fn stderr_color() -> bool {
    STDERR_COLOR.get().copied().unwrap_or(false)
}

#[derive(Subcommand)]
pub(super) enum Command {
    /// Run the suite against a target (the built-in reference server when no --base-url).
    #[command(after_help = runner::EXIT_CODES)]
    Run(Box<RunArgs>),
    /// Serve the built-in reference server on 127.0.0.1.
    ServeReference(ServeArgs),
    /// Re-send the request a report recorded for a failed rule and show the exchange, then
    /// judge the rule again on the target (the report's seed and cases) and print its verdict.
    /// The target, key, TLS, header and proxy options are `run`'s (a profile's too): the base
    /// URL comes from them, never from the report, which is not trusted with the key. Exit 0
    /// when the rule passes again, 1 when it fails, 3 when it reaches no verdict, 2 when it
    /// cannot be replayed.
    Replay {
        /// A report.json written by `run`.
        report: PathBuf,
        /// The rule whose failing request to re-send.
        rule: String,
        #[command(flatten)]
        run: Box<RunArgs>,
    },
    /// Check a report directory: the attestation's signature (--public-key), every file's
    /// SHA-256, and that its contract, catalogue and schemas are this verifier's own. Exit 0
    /// when all hold, 1 when one does not (one line each), 2 when nothing can be read.
    VerifyReport {
        /// The report directory (or a report.json in it) written by `run`.
        report: PathBuf,
        /// The Ed25519 public key (PEM, as `openssl pkey -pubout` writes it) the attestation
        /// must be signed with. Without it, only integrity is shown.
        #[arg(long, env = "PETSTORE_PUBLIC_KEY_FILE")]
        public_key: Option<PathBuf>,
        /// Directory of the JSON Schemas to compare with (default: ./schemas, else the
        /// built-in copy).
        #[arg(long, env = "PETSTORE_SCHEMAS")]
        schemas: Option<PathBuf>,
        /// Directory of the case files to compare the catalogue with (default: ./cases, else
        /// the built-in copy).
        #[arg(long, env = "PETSTORE_CASES_DIR")]
        cases_dir: Option<PathBuf>,
    },
    /// What changed between two runs: new failures, fixed, still failing, passed then
    /// inconclusive, inconclusive then failed, new and removed rules. Exit 0 when no gated rule
    /// newly fails (under the gate the later run used), 1 when one does (the nightly gate), 2
    /// when a report cannot be read, was edited after its run (its digest, the attestation
    /// beside it), or the runs are of different targets, contracts or catalogues.
    Compare {
        /// The earlier report.json.
        old: PathBuf,
        /// The later report.json.
        new: PathBuf,
        /// Also write the comparison as Markdown here.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Compare runs of different targets, contracts or catalogues all the same.
        #[arg(long)]
        allow_different: bool,
        /// The Ed25519 public key (PEM) each report's attestation must be signed with. Without
        /// it, a report with an attestation beside it must still match the digest it names.
        #[arg(long, env = "PETSTORE_PUBLIC_KEY_FILE")]
        public_key: Option<PathBuf>,
    },
    /// Merge the reports of the shards of one split run (`run --partition K/N`, one report
    /// directory each) into the report of the whole run, in every format. Exit codes as
    /// `run`'s; 2 when the shards are not of one run (seed, catalogue, contract, target) or
    /// overlap; a shard not given leaves the answer undetermined and is named.
    Merge {
        /// The shards' report directories (each holding a report.json).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged reports are written.
        #[arg(long, env = "PETSTORE_REPORT_DIR", default_value = "reports")]
        report_dir: PathBuf,
        /// Directory of the rule catalogue, naming the rules of a missing shard (default:
        /// ./cases, else the built-in copy).
        #[arg(long, env = "PETSTORE_CASES_DIR")]
        cases_dir: Option<PathBuf>,
        /// Environment variable of the API key, redacted again from what is written.
        #[arg(long, env = "PETSTORE_API_KEY_ENV", default_value = "PETSTORE_API_KEY")]
        api_key_env: String,
        /// Sign the merged reports as `run --sign-key` signs a run's: one attestation over
        /// every merged file (Ed25519, PKCS#8 PEM).
        #[arg(long, env = "PETSTORE_SIGN_KEY_FILE")]
        sign_key: Option<PathBuf>,
    },
    /// List the rules of the catalogue: id, level, operation, title.
    Rules {
        /// Directory of the case files (default: ./cases, else the built-in copy).
        #[arg(long, env = "PETSTORE_CASES_DIR")]
        cases_dir: Option<PathBuf>,
        /// `text`, one rule a line, or `json`, one array (as `run --list --format json`).
        #[arg(long, value_enum, default_value = "text")]
        format: listings::ListFormat,
    },
    /// Print a GitHub workflow-command annotation for each failed rule of a report (`::error`
    /// when gated, `::warning` when not), titled with the rule and carrying its contract
    /// citation; the GitHub Action runs this after the suite.
    Annotations {
        /// A report.json written by `run` or `merge` (or its directory).
        report: PathBuf,
    },
    /// Print the completion script for a shell: `source <(petstore-conformance completions bash)`,
    /// or save it where the shell loads completions from.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `petstore-conformance man | man -l -`. With --dir, write
    /// one page per sub-command there.
    Man {
        /// Write petstore-conformance.1 and one page per sub-command into this directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}
