//! The run engine: what every check of a run shares and stands on, below the checks
//! (`rules/`) and above the one client (`execution/`). The run's state and the recorder every
//! exchange passes (`run.rs`) and the event stream it tells (`events.rs`), when it stops
//! sending (`stops.rs`), what a check is handed (`ctx.rs`), when each rule runs, where its
//! requests stand in line and where the run stands between its rules (`scheduler.rs`), the helper threads of a property rule
//! (`slots.rs`, `workers.rs`), the property runner with shrinking (`property/`), the store a
//! run needs before it can judge (`store_setup/`), the tallies the recorder and the coverage
//! pass keep for the oracles and the report (`oracles.rs`, `input_tally.rs`), and the assertions
//! that turn an answer into a verdict (`expect.rs`).

pub mod ctx;
pub mod events;
pub mod expect;
pub mod input_tally;
pub mod oracles;
pub mod property;
pub mod resending;
pub mod run;
pub mod scheduler;
pub mod slots;
pub mod stops;
pub mod store_setup;
pub mod workers;
