//! The command line: its arguments (`args`), the profiles of `petstore-conformance.toml`
//! (`profiles`), the tool's own option words (`options`), `run` (`run`), the evidence options and
//! `verify-report` (`evidence`), and the other sub-commands (`commands`). `main` parses and
//! dispatches; every error passes through the key's redactor before it is printed.

mod args;
mod commands;
mod evidence;
mod listings;
mod profiles;
mod run_command;
mod shell;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use args::{RunArgs, ServeArgs};
use commands::{compare_reports, merge, replay, serve};
use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::runner::progress::{self, ColorChoice};
use petstore_conformance::runner::{self, RunError};
use run_command::run;

#[derive(Parser)]
#[command(
    name = "petstore-conformance",
    version,
    about = "Contract-conformance harness for the Pet Store interface"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour what is printed: on a terminal (`auto`, unless NO_COLOR is set),
    /// `always`, or `never`.
    #[arg(
        long,
        global = true,
        value_enum,
        env = "PETSTORE_COLOR",
        default_value = "auto"
    )]
    color: ColorChoice,
}

/// Colour on stderr for this process: decided once, from --color, NO_COLOR and the terminal.
static STDERR_COLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Whether what goes to stderr is coloured.
pub(crate) fn stderr_color() -> bool {
    STDERR_COLOR.get().copied().unwrap_or(false)
}

#[derive(Subcommand)]
enum Command {
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

pub fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    // First of all: a signal from here on ends in an interrupted report or none, never in
    // the previous run's report left looking current.
    petstore_conformance::runner::interrupts::install();
    // --version says which suite, contract and rule catalogue: what a report is judged by.
    let version: &'static str = Box::leak(listings::version().into_boxed_str());
    let command = evidence::without_env_values(Cli::command().version(version));
    // A usage error is printed as the user typed it, the key redacted wherever it was typed.
    let usage_error = |error: clap::Error| {
        if !error.use_stderr() {
            // --help and --version: no value of the user's in them.
            error.exit();
        }
        let args: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        stderr!("{}", evidence::usage_error_text(&error, &args));
        ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
    };
    let matches = match command.clone().try_get_matches() {
        Ok(matches) => matches,
        Err(error) => return usage_error(error),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    let _ = STDERR_COLOR.set(progress::wants_color(
        cli.color,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    ));
    // Every error passes through the key's redactor before it is printed.
    let redactor = evidence::error_redactor(&matches);
    // A command with no run of its own to stop ends on the first signal. A run stops and
    // still writes its reports, and a merge writing them finishes (a second signal quits).
    if !matches!(cli.command, Command::Run(_) | Command::Merge { .. }) {
        petstore_conformance::runner::interrupts::quit_on_first_signal();
    }
    let result = match cli.command {
        Command::Run(args) => match matches.subcommand_matches("run") {
            Some(run_matches) => run(*args, run_matches),
            None => Err(RunError::Config("run: no arguments".into())),
        },
        Command::ServeReference(args) => serve(args),
        Command::Replay { report, rule, run } => match matches.subcommand_matches("replay") {
            Some(replay_matches) => replay(&report, &rule, *run, replay_matches),
            None => Err(RunError::Config("replay: no arguments".into())),
        },
        Command::VerifyReport {
            report,
            public_key,
            schemas,
            cases_dir,
        } => evidence::verify_report(
            &report,
            public_key.as_deref(),
            schemas.as_deref(),
            cases_dir.as_deref(),
        ),
        Command::Compare {
            old,
            new,
            markdown,
            allow_different,
            public_key,
        } => compare_reports(
            &old,
            &new,
            markdown.as_deref(),
            allow_different,
            public_key.as_deref(),
        ),
        Command::Merge {
            dirs,
            report_dir,
            cases_dir,
            api_key_env,
            sign_key,
        } => merge(
            &dirs,
            &report_dir,
            cases_dir.as_deref(),
            &api_key_env,
            sign_key.as_deref(),
        ),
        Command::Rules { cases_dir, format } => Catalogue::load(cases_dir.as_deref())
            .map_err(RunError::from)
            .map(|catalogue| {
                stdout!("{}", listings::listing(catalogue.rules.iter(), format));
                0
            }),
        Command::Annotations { report } => commands::annotations(&report),
        Command::Completions { shell } => shell::completions(shell),
        Command::Man { dir } => shell::man(dir.as_deref()),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            stderrln!(
                "petstore-conformance: {}",
                redactor.redact(&error.to_string())
            );
            ExitCode::from(error.exit_code())
        }
    }
}
