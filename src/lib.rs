//! `petstore-conformance`: the harness (`petstore-harness`) with the built-in reference
//! (`petstore-reference`) embedded, for the command line and the tests. The harness's modules
//! are re-exported under their names ([`runner`], [`report`], ...); [`reference`](mod@reference)
//! is the reference crate; [`embedded`] is how the runner starts it.

// As in the harness: no function over about 120 lines, nothing printed but through its macros.
#![warn(clippy::too_many_lines)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub use petstore_harness::*;
pub use petstore_reference as reference;

pub mod embedded;
