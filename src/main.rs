//! `petstore-conformance`: run the suite, serve the reference server, list the rules. The
//! command line lives in `cli/`; the harness in the library.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    // Before any thread: the allocator's settings hold from the start (see there why).
    petstore_conformance::execution::bodies::without_thread_caches();
    cli::main()
}
