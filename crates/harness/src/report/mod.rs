//! One report model (`model.rs`), rendered as JSON, JUnit XML, Markdown and HTML, each in its
//! own module; the report directory written whole or not at all (`writing.rs`); what else
//! reads reports: `compare`, `merge`, `verify`, the GitHub annotations and the attestation.

pub mod annotations;
pub mod attestation;
pub mod causes;
mod citation;
pub mod compare;
pub mod coverage;
mod distinct_failures;
mod exchange;
pub mod facts;
pub mod finding;
mod html;
mod json_report;
mod junit;
mod markdown;
pub mod merge;
pub mod model;
pub mod statements;
pub mod terminal;
mod totals;
pub mod verify;
mod writing;

pub use facts::*;
pub use html::render as render_html;
pub use json_report::{canonical_digest, render as render_json};
pub use junit::render as render_junit;
pub use markdown::render as render_markdown;
pub use model::*;
pub use writing::{
    CREATED_PETS_FILE, REPORT_FILES, ReportDir, ReportWriteError, withdraw, write_all,
};
