//! The command line: its arguments (`args`), the profiles of `petstore-conformance.toml`
//! (`profiles`), what it accepts as clap declares it (`definition`), `--list` and `--version`
//! (`listings`), `run` (`run_command`), the evidence options and
//! `verify-report` (`evidence`), and the other sub-commands (`commands`). `main` parses and
//! dispatches; every error passes through the key's redactor before it is printed.

mod args;
mod commands;
mod definition;
mod evidence;
mod listings;
mod profiles;
mod run_command;
mod shell;

use std::process::ExitCode;

use commands::{compare_reports, merge, replay, serve};
use definition::{Cli, Command, STDERR_COLOR};
use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::runner::RunError;
use petstore_conformance::runner::progress;
use run_command::run;

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
