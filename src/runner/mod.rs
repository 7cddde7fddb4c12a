//! The runner: turns the catalogue into libtest-mimic trials over one run, stage by stage
//! (load, target, interrupts, trials, tally, reports); replays recorded requests; keeps the
//! counterexamples found on real targets. The floor above the report: it uses every other.

pub mod bench;
pub mod engine;
pub mod known;
pub mod regressions;
pub mod replay;

pub use engine::{Gate, RunConfig, RunError, RunOutcome, Target};
