//! Execution: the one HTTP client of a run, the redaction point, the fixtures a rule may need,
//! and the engine that turns catalogue rules into libtest-mimic trials and verdicts.

pub mod client;
pub mod engine;
pub mod fixtures;
pub mod redact;
pub mod regressions;
pub mod replay;

pub use client::{Body, Client, ClientSettings, Credential, Exchange, RequestSpec};
pub use engine::{Gate, RunConfig, RunOutcome, Target};
pub use redact::Redactor;
