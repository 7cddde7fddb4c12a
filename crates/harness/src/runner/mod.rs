//! The runner: a run of the suite in named stages (`stages.rs`: configure, connect,
//! preflight, populate, judge, tally, report); replays recorded requests; keeps the
//! counterexamples found on real targets; splits and merges runs. The floor above
//! the report: it uses every other.

mod built_in;
mod certify;
pub mod error;
pub mod interrupts;
pub mod known;
mod option_values;
pub mod options;
pub mod progress;
pub mod regressions;
mod relay;
pub mod replay;
mod report;
pub mod rerun;
mod runtime;
mod settings;
pub mod shards;
mod side_files;
pub mod stages;
mod tally;
mod target;
mod trials;

pub use error::{EXIT_CODES, RunError, exit_code};
pub use runtime::runtime;
pub use settings::{
    BuiltIn, DEFAULT_CASES, DEFAULT_TEST_THREADS, Gate, KeySource, RunConfig, RunOutcome, Running,
    ServeReference, Target,
};
pub use stages::execute;
pub use target::{
    MIN_KEY_LENGTH, SHORT_KEY_NOTE, check_api_key, check_base_url, check_key_length,
    start_reference,
};
