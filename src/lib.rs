//! Contract-conformance harness for the Pet Store HTTP/JSON interface.
//!
//! Data flows one way, floor by floor (docs/src/architecture.md, "Layout";
//! `tests/it/project/layers.rs` holds every import to it): [`seed`], [`contract`] and
//! [`catalogue`] -> [`outcome`] (exchanges and verdicts) -> [`generation`] (requests as data,
//! strategies) -> [`execution`] (the one client, the one redactor) -> [`engine`] (the run's
//! state and recorder, scheduling, the property runner, the store setup, the oracles' tally)
//! -> [`rules`] (the checks) -> [`report`] (one model, several renderings) -> [`runner`] (a
//! run's named stages, replay). [`reference`] is the built-in conforming server and its
//! faults, a program of its own.

// A function a newcomer can read: about 120 lines at most (clippy.toml holds the number);
// longer, it becomes steps with names.
#![warn(clippy::too_many_lines)]

pub mod catalogue;
pub mod contract;
pub mod engine;
pub mod execution;
pub mod generation;
pub mod json;
pub mod outcome;
pub mod reference;
pub mod report;
pub mod rules;
pub mod runner;
pub mod seed;

/// Name and version of this suite, as written into every report.
pub const SUITE_NAME: &str = env!("CARGO_PKG_NAME");
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");
