//! The run engine: what every check of a run shares and stands on, below the checks
//! (`rules/`) and above the one client (`execution/`). The run's state and the recorder every
//! exchange passes (`run.rs`), when each rule runs and where its requests stand in line
//! (`schedule.rs`), the worker threads of a property rule (`workers.rs`), the property runner
//! with shrinking (`property.rs`), the store a run needs before it can judge (`store_setup/`),
//! and the assertions that turn an answer into a verdict (`expect.rs`).

pub mod coverage;
pub mod ctx;
pub mod expect;
pub mod oracles;
pub mod property;
pub mod run;
pub mod schedule;
pub mod slots;
pub mod store_setup;
pub mod workers;
