//! Contract-conformance harness for the Pet Store HTTP/JSON interface.
//!
//! Data flows one way: [`contract`] (schemas, operations) and [`catalogue`] (rule metadata from
//! `cases/`) -> [`generation`] (proptest strategies) -> [`execution`] (one HTTP client, the
//! engine) -> [`rules`] (check logic, one module per contract area) -> [`report`] (one model,
//! several renderings). [`reference`] is the built-in conforming server and its faults.

pub mod catalogue;
pub mod contract;
pub mod execution;
pub mod generation;
pub mod reference;
pub mod report;
pub mod rules;

/// Name and version of this suite, as written into every report.
pub const SUITE_NAME: &str = env!("CARGO_PKG_NAME");
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");
