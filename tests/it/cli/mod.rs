//! The binary as a user drives it. The modules' shared driver is here: a run of the binary
//! with `--report-dir`, whose report (when it writes one) must read back unchanged.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;

mod exits;
mod gating;
mod listings;
mod options;
mod replay;
mod shards;
mod streams;
mod terminal;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("cli", name)
}

fn run(args: &[&str], key: Option<&str>, report_dir: &Path) -> Output {
    let mut command = common::bin();
    command
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(report_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PETSTORE_API_KEY")
        .env_remove("PETSTORE_BASE_URL");
    // Tests never write counterexamples into the repository's cases/regressions/.
    // A test of the regressions file names it.
    if args.contains(&"--regressions") {
        command.env_remove("PETSTORE_NO_REGRESSIONS");
    }
    if let Some(key) = key {
        command.env("PETSTORE_API_KEY", key);
    }
    let output = command.output().expect("binary runs");
    assert_report_round_trips(&report_dir.join("report.json"));
    output
}

/// A report written by a run reads back into the report model and writes out the same.
fn assert_report_round_trips(path: &Path) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return; // the run wrote none (a refusal)
    };
    let written: serde_json::Value = serde_json::from_str(&text).unwrap();
    common::assert_valid_report(&written);
    let report: petstore_conformance::report::Report =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        written,
        "{}",
        path.display()
    );
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
