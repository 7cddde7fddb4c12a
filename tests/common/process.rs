//! The binary under test as a child process.

use std::process::Command;

/// Set in a process this binary starts to run one test of its own alone.
const ALONE: &str = "PC_TEST_ALONE";

/// Whether the test `name` of `module` (`module_path!()`) runs here. If this process runs
/// other tests too, runs it again in a fresh process of this binary, alone, fails if it fails
/// there, and says no. For a child's peak memory: its ru_maxrss counts its parent's memory up
/// to its exec, and a process running every other test holds hundreds of megabytes.
pub fn alone(module: &str, name: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let path = module.split_once("::").map_or("", |(_, path)| path);
    let test = format!("{path}::{name}");
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &test, "--nocapture", "--test-threads", "1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{test}, alone:\n{said}");
    assert!(
        said.contains("1 passed"),
        "{test} did not run alone:\n{said}"
    );
    false
}
