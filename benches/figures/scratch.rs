//! A scratch directory of the bench's own.

use std::path::PathBuf;

/// A fresh directory, emptied first, for one measurement's reports and logs.
pub(super) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pc-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    dir
}
