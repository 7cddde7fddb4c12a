//! The contract as data: the JSON Schemas in `schemas/` and the model of operations.
//!
//! Schemas are read at run time (so a vendor can read and diff the very files we validate
//! against); each validator is compiled once per run.

mod asked_answers;
pub mod credential;
mod document;
mod names;
pub mod openapi;
mod operations;
mod schemas;

pub use asked_answers::{Expect, Level};
pub use document::{
    CONTRACT_DOCUMENT, CONTRACT_SHA256, CONTRACT_TEXT, quotes_contract, sha256_hex,
};

pub use names::SchemaName;
pub use operations::{
    CONTRACT_TITLE, CONTRACT_VERSION, DEPRECATED_SINCE_UNIX, Operation, PET_STATUSES,
    SUNSET_HTTP_DATE, SUNSET_UNIX, limit_parameter,
};
pub use schemas::{Contract, SchemaError, SchemaSource};
