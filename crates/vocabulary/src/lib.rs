//! The words the Pet Store conformance harness and its reference share, the ground floor of
//! the workspace (docs/src/architecture.md, "Layout"): [`seed`], [`json`] and [`contract`]
//! (floor 1), then [`catalogue`] (the rules as `cases/` gives them, the checks they name) and
//! [`outcome`] (the exchange as recorded, the verdict a rule reaches) on floor 2. Nothing here
//! sends a request, runs a check or serves one.

// A function a newcomer can read: about 120 lines at most (clippy.toml holds the number).
#![warn(clippy::too_many_lines)]
// Nothing on this floor prints: what is printed goes through the harness's macros.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod catalogue;
pub mod contract;
pub mod json;
pub mod outcome;
pub mod seed;
