//! Every integration test but the proofs both ways (`tests/conformance.rs`), in one binary
//! grouped by concern: `cargo test --test it safety::` runs one group, `cargo test --test it
//! targets::hostile` one module. One binary links the crate once.
//!
//! - `cli`: the binary as a user drives it (exit codes, listings, replay, profiles, the
//!   terminal, shards).
//! - `key`: the API key in no byte written, whatever the target echoes or the user mistypes.
//! - `safety`: runs that are safe to start and to stop (refusals, bounds, signals, concurrent
//!   runs, memory).
//! - `targets`: what a target may do on the wire (hostile answers, caps, cuts, proxies, TLS).
//! - `reports`: the report files (JUnit, snapshots, the HTML page in a browser, signing).
//! - `delivery`: how the harness reaches users (the Action, CI recipes, the image, releases).
//! - `project`: the source's floors and the docs' figures.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod delivery;
mod key;
mod project;
mod reports;
mod safety;
mod targets;
