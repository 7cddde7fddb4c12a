//! How the harness reaches its users.

mod action;
mod ci;
mod docker;
mod release;
