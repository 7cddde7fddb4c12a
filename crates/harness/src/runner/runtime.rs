//! The async runtime the client and the reference run on.

use super::error::RunError;

/// The one async runtime a command needs (the client and the reference run on it): two
/// workers, as the machine has cores to spare for the network, not for CPU.
pub fn runtime() -> Result<tokio::runtime::Runtime, RunError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RunError::Config(format!("cannot start the async runtime: {e}")))
}
