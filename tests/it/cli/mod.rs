//! The binary as a user drives it.

mod exits;
mod shards;
mod terminal;
