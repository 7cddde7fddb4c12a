//! The runner: turns the catalogue into libtest-mimic trials over one run, stage by stage
//! (load, target, interrupts, trials, tally, reports); replays recorded requests; keeps the
//! counterexamples found on real targets. The floor above the report: it uses every other.

pub mod bench;
pub mod engine;
pub mod error;
pub mod interrupts;
pub mod known;
pub mod progress;
pub mod regressions;
mod relay;
pub mod replay;
mod report;
pub mod rerun;
mod runtime;
mod settings;
pub mod shards;
mod tally;
mod target;
mod trials;

pub use engine::{Gate, RunConfig, RunOutcome, Target};
pub use error::RunError;
pub use runtime::runtime;
