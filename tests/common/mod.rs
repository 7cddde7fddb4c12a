//! What the test binaries share: the binary under test, scratch directories, and the built-in
//! reference served as a separate process (an "external" target). Each test file uses part.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub mod peak;
pub mod process;
pub mod servers;

pub const BIN: &str = env!("CARGO_BIN_EXE_petstore-conformance");

/// The binary under test, with no PETSTORE_* variable inherited from whoever runs the tests,
/// and neither replaying nor saving counterexamples (PETSTORE_NO_REGRESSIONS): tests run it from
/// the repository, where ./cases makes cases/regressions/ the default file, so a finding on one
/// test's faulty target would be replayed by the next and committed with the tree. A test of that
/// file gives `--regressions` and removes the variable.
pub fn bin() -> Command {
    let mut command = Command::new(BIN);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PETSTORE_") {
            command.env_remove(name);
        }
    }
    command.env("PETSTORE_NO_REGRESSIONS", "1");
    command
}

/// A fresh scratch directory for one test: `suite` names the test file, `name` the test.
pub fn temp_dir(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pc-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `serve-reference` process, killed when dropped.
pub struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `serve-reference` with `key` and `faults`; returns it with its base URL.
pub fn serve_reference(key: &str, faults: &[&str]) -> (Server, String) {
    static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let port_file = std::env::temp_dir().join(format!(
        "pc-port-{}-{}",
        std::process::id(),
        STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&port_file);
    let mut command = bin();
    command.args([
        "serve-reference",
        "--port",
        "0",
        "--api-key",
        key,
        "--port-file",
    ]);
    command.arg(&port_file);
    for fault in faults {
        command.args(["--fault", fault]);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("server starts");
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let server = Server(child);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut key_line = String::new();
    reader.read_line(&mut key_line).unwrap();
    assert!(key_line.starts_with("API key: "), "{key_line}");
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"),
        "{line}"
    );
    // --port-file holds the port it listens on, written before the first line is.
    let port = std::fs::read_to_string(&port_file).expect("the port file is written");
    let _ = std::fs::remove_file(&port_file);
    assert!(
        port.ends_with('\n') && url == format!("http://127.0.0.1:{}/v1", port.trim()),
        "{port:?} {url}"
    );
    (server, url)
}

/// Asserts a report.json is valid against the published `reports/report.schema.json`
/// (compiled once per test binary).
pub fn assert_valid_report(report: &serde_json::Value) {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/report.schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        jsonschema::options()
            .offline()
            .build(&schema)
            .expect("the report schema compiles")
    });
    let errors: Vec<String> = validator
        .iter_errors(report)
        .take(5)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report.json against report.schema.json:\n{}",
        errors.join("\n")
    );
}

/// Reads a file written by a run; a report.json must also read back into the report model and
/// write out the same.
pub fn read_json(path: &Path) -> Value {
    if path.file_name().is_some_and(|name| name == "report.json") {
        let text = std::fs::read_to_string(path).unwrap();
        let report: petstore_conformance::report::Report =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let written: Value = serde_json::from_str(&text).unwrap();
        assert_valid_report(&written);
        assert_eq!(serde_json::to_value(&report).unwrap(), written);
    }
    read_json_value(path)
}

pub fn read_json_value(path: &Path) -> Value {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

pub fn rules(report: &Value) -> &Vec<Value> {
    report["rules"].as_array().expect("report.json has rules")
}

/// Each rule's id and verdict, in the report's order.
pub fn verdicts(report: &Value) -> Vec<(String, String)> {
    rules(report)
        .iter()
        .map(|rule| {
            (
                rule["id"].as_str().unwrap_or_default().to_string(),
                rule["verdict"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The rules neither passed nor left out by the run's options (`--read-only`, no
/// `--fill-store`), each with its verdict and its failure or reason: on a conforming target,
/// none.
pub fn not_passed(report: &Value) -> Vec<String> {
    rules(report)
        .iter()
        .filter(|rule| rule["verdict"] != "passed")
        .filter(|rule| !petstore_conformance::report::left_out_by_option(rule["reason"].as_str()))
        .map(|rule| {
            let why = match &rule["failure"] {
                Value::Null => &rule["reason"],
                failure => failure,
            };
            format!("{} [{}]: {why}", rule["id"], rule["verdict"])
        })
        .collect()
}

pub fn failed_rules(report: &Value) -> Vec<String> {
    rules(report)
        .iter()
        .filter(|rule| rule["verdict"] == "failed")
        .map(|rule| format!("{}: {}", rule["id"], rule["failure"]["observed"]))
        .collect()
}
