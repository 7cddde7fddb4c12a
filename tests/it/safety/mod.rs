//! Runs that are safe to start and to stop.

mod bounded;
mod memory;
