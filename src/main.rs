//! `petstore-conformance`: run the suite, serve the reference server, list the rules. The
//! command line lives in `cli/`; the harness in the library.

// As in the library (lib.rs): no function over about 120 lines.
#![warn(clippy::too_many_lines)]
// As in the library: printed through its `stdout!` and `stderrln!`, which a closed or full
// stream cannot make panic.
#![warn(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
extern crate petstore_harness;

use std::process::ExitCode;

mod cli;

/// The program's memory policy, here and nowhere else: the library leaves the allocator to
/// whatever links it (its tests use the system's). jemalloc, with its settings built in below,
/// so that no setting depends on the environment the program starts in.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings, read from this symbol before the first allocation (its `malloc_conf`,
/// under the prefix the crate builds it with); `_RJEM_MALLOC_CONF` in the environment still
/// overrides them, for an experiment.
/// - `narenas:1`: each arena keeps what was freed in it, and the run's thirty-odd threads
///   wait on the network, not on the allocator's lock.
/// - `tcache:false`: a thread's cache would keep the small chunks it freed, for each of the
///   rule threads and helpers.
/// - `oversize_threshold:262144`: buffers from 256 KiB on (a body, a parsed array's items)
///   come from an arena of their own that gives their pages back as soon as they are freed,
///   as glibc's mmap threshold did (freed parses kept resident once took 437 MB against a
///   target answering 1 MiB to every request).
/// - `dirty_decay_ms:1000`: pages freed below that size are given back after a second, not
///   ten (a target answering 1 MiB to every request churns 64 KiB texts and parse nodes:
///   113 MB at the peak kept so, 80 MB given back after a second).
///
/// Peak RSS as glibc's malloc tuned from outside gave (within a megabyte, default run and 60 s
/// budget), for the same CPU per request; mimalloc, measured beside it, held 40 to 48 MB.
#[unsafe(export_name = "_rjem_malloc_conf")]
static MALLOC_CONF: &[u8; 69] =
    b"narenas:1,tcache:false,oversize_threshold:262144,dirty_decay_ms:1000\0";

fn main() -> ExitCode {
    cli::main()
}
