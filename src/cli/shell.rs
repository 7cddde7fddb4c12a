//! `completions SHELL` and `man`: the shell's completion script and the manual pages, both
//! written from the clap definition that `--help` shows, so they follow every option.

use std::path::Path;

use clap::CommandFactory;

use super::definition::Cli;
use petstore_conformance::runner::RunError;

const NAME: &str = "petstore-conformance";

/// The completion script for `shell` on stdout (`source <(petstore-conformance completions bash)`).
pub(super) fn completions(shell: clap_complete::Shell) -> Result<u8, RunError> {
    let mut command = Cli::command();
    // Written whole, not by clap_complete to stdout: it panics on a write that fails (a full
    // disk), where a failed write ends the command quietly.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, NAME, &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if shell == clap_complete::Shell::Bash {
        // clap_complete's bash script names a sub-command's case by splitting the binary's
        // name at its hyphen (`petstore__subcmd__conformance__subcmd__run`) where the loop
        // that walks the words sets `petstore__conformance__subcmd__run`: no case matched,
        // and nothing completed past the sub-command. Named as the loop names them.
        script = script.replace("petstore__subcmd__conformance__", "petstore__conformance__");
    }
    if shell == clap_complete::Shell::Fish {
        script.push_str(&fish_positional_values(&command));
    }
    stdout!("{script}");
    Ok(0)
}

/// clap_complete's fish script completes an option's values but not a positional's: after
/// `completions` fish offered files. One line per sub-command positional with values offers
/// them (and no files), in the form the script uses for options.
fn fish_positional_values(command: &clap::Command) -> String {
    let function = format!("__fish_{}_using_subcommand", NAME.replace('-', "_"));
    let mut lines = String::new();
    for sub in command.get_subcommands() {
        for arg in sub.get_positionals() {
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|value| !value.is_hide_set())
                .map(|value| value.get_name().to_string())
                .collect();
            if !values.is_empty() {
                lines.push_str(&format!(
                    "complete -c {NAME} -n \"{function} {}\" -f -a \"{}\"\n",
                    sub.get_name(),
                    values.join(" ")
                ));
            }
        }
    }
    lines
}

/// The manual page of the command on stdout, or, with a directory, one page per sub-command
/// written there (petstore-conformance.1, petstore-conformance-run.1, ...).
pub(super) fn man(dir: Option<&Path>) -> Result<u8, RunError> {
    let command = Cli::command().version(petstore_conformance::SUITE_VERSION);
    let failed = |e: std::io::Error| RunError::Config(format!("man: cannot write: {e}"));
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(failed)?;
            clap_mangen::generate_to(command, dir).map_err(failed)?;
        }
        None => {
            // Rendered whole, then printed as every listing is: a full disk ends it quietly.
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .map_err(failed)?;
            stdout!("{}", String::from_utf8_lossy(&page));
        }
    }
    Ok(0)
}
