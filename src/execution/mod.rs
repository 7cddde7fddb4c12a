//! Execution: the one HTTP client of a run (timeouts, body cap, no redirects or retries,
//! cancellation on interrupt) and the one place that redacts the key.

pub mod bodies;
pub mod client;
pub mod redact;

pub use client::{BUDGET_SPENT, Client, ClientSettings, DEFAULT_CONCURRENCY, Halt};
pub use redact::Redactor;
