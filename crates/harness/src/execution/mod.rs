//! Execution: the one HTTP client of a run (timeouts, body cap, no redirects or retries,
//! cancellation on interrupt) and the one place that redacts the key.

pub mod base_url;
pub mod bodies;
pub mod client;
pub mod files;
pub mod har;
pub mod lanes;
pub mod redact;
pub mod request_log;

pub use base_url::BaseUrl;
pub use client::{
    Client, ClientSettings, DEFAULT_CONCURRENCY, Halt, ProxySetting, ThrottleBound,
    looks_like_credential,
};
pub use lanes::{ConnectionTally, Priority};
pub use redact::Redactor;
