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
mod settings;
pub mod shards;
mod tally;
mod target;
mod trials;

pub use engine::{Gate, RunConfig, RunOutcome, Target};
pub use error::RunError;

/// The one async runtime a command needs (the client and the reference run on it): two
/// workers, as the machine has cores to spare for the network, not for CPU.
pub fn runtime() -> Result<tokio::runtime::Runtime, RunError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RunError::Config(format!("cannot start the async runtime: {e}")))
}
