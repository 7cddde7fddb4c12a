//! `petstore-conformance`: run the suite, serve the reference server, list the rules. The
//! command line lives in `cli/`; the harness in the library.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    cli::main()
}
