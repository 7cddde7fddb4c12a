//! Runs that are safe to start and to stop.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common;

mod bounded;
mod concurrent;
mod interrupts;
mod memory;
mod refusals;
mod stalls;

/// The bound on a run that must end by itself (refused, or cut by its own bound).
const LIMIT: Duration = Duration::from_secs(30);

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("safety", name)
}

/// The `.partial` files left in `dir`: a report being written, or one a run left half done.
fn partial_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".partial"))
        .collect()
}
