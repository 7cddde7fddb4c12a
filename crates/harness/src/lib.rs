//! Contract-conformance harness for the Pet Store HTTP/JSON interface, as a library.
//!
//! Data flows one way, floor by floor (docs/src/architecture.md, "Layout"). The floors below
//! the harness are a crate of their own, so the compiler holds them there: `petstore-vocabulary`
//! ([`seed`], [`json`], [`contract`], [`catalogue`], [`outcome`]: the words both sides share).
//! The built-in reference (`petstore-reference`) is not a dependency: the program that embeds
//! it hands the runner a way to start one ([`runner::ServeReference`]). Inside this crate (`tests/it/project/layers.rs` holds every
//! import to it): [`generation`] (requests as data, strategies) -> [`execution`] (the one
//! client, the one redactor) -> [`engine`] (the run's state and recorder, scheduling, the
//! property runner, the store setup, the oracles' tally) -> [`rules`] (the checks) ->
//! [`report`] (one model, several renderings) -> [`runner`] (a run's named stages, replay).

// A function a newcomer can read: about 120 lines at most (clippy.toml holds the number);
// longer, it becomes steps with names.
#![warn(clippy::too_many_lines)]
// What is printed goes through the macros below: `print!` and `eprintln!` panic when the
// stream is closed (`2>&1 | head -1`) or full (`> /dev/full`), and a panic is exit 101
// with no report.
#![warn(clippy::print_stdout, clippy::print_stderr)]

/// `print!` that a closed or full stdout cannot make panic: a line that cannot be written is
/// dropped, and the command goes on to its reports and its exit code.
#[macro_export]
macro_rules! stdout {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(::std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!`, as [`stdout!`]: never a panic.
#[macro_export]
macro_rules! stdoutln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprint!` that a closed or full stderr cannot make panic (see [`stdout!`]).
#[macro_export]
macro_rules! stderr {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(::std::io::stderr().lock(), $($arg)*);
    }};
}

/// `eprintln!`, as [`stderr!`]: never a panic.
#[macro_export]
macro_rules! stderrln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr().lock(), $($arg)*);
    }};
}

// The floors below, a crate of their own (the compiler keeps them below), under the names the
// harness has always used for them.
pub use petstore_vocabulary::{catalogue, contract, json, outcome, seed};

pub mod engine;
pub mod execution;
pub mod generation;
pub mod report;
pub mod rules;
pub mod runner;

/// Name and version of this suite, as written into every report.
pub const SUITE_NAME: &str = "petstore-conformance";
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");
