//! The GitHub Action (action.yml) run as a runner runs a composite action, on this machine:
//! each `run` step in bash with its `env:` resolved from the inputs and earlier steps' outputs,
//! GITHUB_OUTPUT, GITHUB_PATH and GITHUB_STEP_SUMMARY as files, a step after a failed one run
//! only under `always()`. The release it installs is one `.github/release/package.sh` made of
//! the binary under test, fetched from a file:// URL; the target is the reference on loopback.
//! The one `uses` step (GitHub's upload-artifact) is not run here: its inputs are checked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use crate::common;

use common::BIN;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Yaml {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

fn version() -> String {
    let manifest: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    // The workspace's, which every crate of it takes.
    manifest["package"]["version"]
        .as_str()
        .or_else(|| manifest["workspace"]["package"]["version"].as_str())
        .unwrap()
        .to_string()
}

/// What one run of the action left: each step's stdout and stderr, the outputs of the steps
/// that have an id, the step summary, and whether the job failed (and at which step).
struct Job {
    log: String,
    annotations: String,
    outputs: HashMap<String, HashMap<String, String>>,
    summary: String,
    failed_at: Option<String>,
    skipped_uses: Vec<String>,
}

struct Runner {
    dir: PathBuf,
    inputs: HashMap<String, String>,
    outputs: HashMap<String, HashMap<String, String>>,
}

impl Runner {
    /// `${{ ... }}` as the action uses it: an input (or its default), the action's path, an
    /// earlier step's output. Anything else fails the test: a new form needs a look here.
    fn value(&self, expression: &str) -> String {
        let expression = expression.trim();
        if let Some(name) = expression.strip_prefix("inputs.") {
            if let Some(value) = self.inputs.get(name) {
                return value.clone();
            }
            let input = &action()["inputs"][name];
            assert!(!input.is_badvalue(), "no input {name}");
            return input["default"].as_str().unwrap_or_default().to_string();
        }
        if expression == "github.action_path" {
            return root().display().to_string();
        }
        if let Some(rest) = expression.strip_prefix("steps.") {
            let (id, name) = rest.split_once(".outputs.").expect("steps.ID.outputs.NAME");
            return self
                .outputs
                .get(id)
                .and_then(|outputs| outputs.get(name))
                .cloned()
                .unwrap_or_default();
        }
        panic!("action.yml: an expression this runner does not know: {expression}");
    }

    fn substitute(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("}}") + start;
            out.push_str(&self.value(&rest[start + 3..end]));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// An `if:` of terms joined by `&&`: always(), X != 'v', X == 'v'.
    fn condition(&self, condition: &str, failed: bool) -> bool {
        let mut always = false;
        let mut holds = true;
        for term in condition.split("&&").map(str::trim) {
            if term == "always()" {
                always = true;
            } else if let Some((left, right)) = term.split_once("!=") {
                holds &= self.value(left) != right.trim().trim_matches('\'');
            } else if let Some((left, right)) = term.split_once("==") {
                holds &= self.value(left) == right.trim().trim_matches('\'');
            } else {
                panic!("action.yml: a condition this runner does not know: {term}");
            }
        }
        holds && (always || !failed)
    }

    fn run(mut self, env: &[(&str, &str)]) -> Job {
        let files = |name: &str| self.dir.join(name);
        for name in ["output", "path", "summary"] {
            std::fs::write(files(name), "").unwrap();
        }
        let temp = files("runner-temp");
        std::fs::create_dir_all(&temp).unwrap();
        // The binary under test is not on PATH: only what the install step put there.
        let system_path = std::env::var("PATH").unwrap_or_default();
        let mut job = Job {
            log: String::new(),
            annotations: String::new(),
            outputs: HashMap::new(),
            summary: String::new(),
            failed_at: None,
            skipped_uses: Vec::new(),
        };
        let action = action();
        assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
        for step in action["runs"]["steps"].as_vec().unwrap() {
            let name = step["name"].as_str().unwrap_or("?").to_string();
            if let Some(condition) = step["if"].as_str() {
                if !self.condition(condition, job.failed_at.is_some()) {
                    continue;
                }
            } else if job.failed_at.is_some() {
                continue;
            }
            if let Some(uses) = step["uses"].as_str() {
                assert!(uses.contains('@'), "{uses} is not pinned");
                let path = self.substitute(step["with"]["path"].as_str().unwrap_or_default());
                assert_eq!(
                    path,
                    self.value("inputs.report-dir"),
                    "{name} uploads {path}"
                );
                job.skipped_uses.push(uses.to_string());
                continue;
            }
            assert_eq!(step["shell"].as_str(), Some("bash"), "{name}: shell");
            let script = step["run"].as_str().expect("a run step");
            assert!(
                !script.contains("${{"),
                "{name}: an expression pasted into the script"
            );
            std::fs::write(files("output"), "").unwrap();
            let added: Vec<String> = std::fs::read_to_string(files("path"))
                .unwrap()
                .lines()
                .rev()
                .map(str::to_string)
                .collect();
            let mut command = Command::new("bash");
            command
                .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
                .current_dir(&self.dir)
                .env_clear()
                .env("PATH", [added.join(":"), system_path.clone()].join(":"))
                .env("HOME", &self.dir)
                .env("GITHUB_OUTPUT", files("output"))
                .env("GITHUB_PATH", files("path"))
                .env("GITHUB_STEP_SUMMARY", files("summary"))
                .env("GITHUB_ACTIONS", "true")
                .env("RUNNER_TEMP", &temp)
                .envs(env.iter().copied());
            if let Some(vars) = step["env"].as_hash() {
                for (key, value) in vars {
                    let value = match value {
                        Yaml::String(text) => self.substitute(text),
                        other => panic!("{name}: env value {other:?}"),
                    };
                    command.env(key.as_str().unwrap(), value);
                }
            }
            let output = command.output().unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            job.log.push_str(&format!(
                "--- {name} ({})\n{stdout}{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
            if name.starts_with("Annotate") {
                job.annotations.push_str(&stdout);
            }
            if let Some(id) = step["id"].as_str() {
                let written = std::fs::read_to_string(files("output")).unwrap();
                let outputs = written
                    .lines()
                    .filter_map(|line| line.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                self.outputs.insert(id.to_string(), outputs);
            }
            if !output.status.success() && job.failed_at.is_none() {
                job.failed_at = Some(name);
            }
        }
        job.outputs = self.outputs;
        job.summary = std::fs::read_to_string(files("summary")).unwrap();
        job
    }
}

/// The release the action installs, packed from the binary under test; its file:// URL.
fn releases(dir: &Path) -> String {
    let releases = dir.join("releases");
    let out = releases.join(format!("v{}", version()));
    let output = Command::new("sh")
        .arg(root().join(".github/release/package.sh"))
        .args([&version(), "x86_64-unknown-linux-gnu", BIN])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    format!("file://{}", releases.display())
}

fn runner(dir: &Path, inputs: &[(&str, &str)]) -> Runner {
    Runner {
        dir: dir.to_path_buf(),
        inputs: inputs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        outputs: HashMap::new(),
    }
}

#[test]
fn the_action_gates_annotates_and_summarises_a_failing_target() {
    if cfg!(not(all(target_os = "linux", target_arch = "x86_64"))) {
        return;
    }
    let dir = common::temp_dir("action", "failing");
    let url = releases(&dir);
    let key = "action-test-key-0123456789";
    let (_server, base_url) = common::serve_reference(key, &["auth-one-char-short"]);
    let job = runner(&dir, &[("base-url", &base_url), ("api-key", key)]).run(&[
        ("PETSTORE_CONFORMANCE_RELEASES", &url),
        ("PETSTORE_CASES", "4"),
        ("PETSTORE_SEED", "11"),
    ]);
    let log = &job.log;
    assert_eq!(job.failed_at.as_deref(), Some("The verdict"), "{log}");
    assert_eq!(job.outputs["run"]["exit-code"], "1", "{log}");
    assert_eq!(
        job.outputs["run"]["conformance"], "does-not-conform",
        "{log}"
    );
    assert!(
        job.annotations.contains(
            "::error title=auth/near-miss/last-char-dropped [required] failed::expected 401"
        ),
        "{}",
        job.annotations
    );
    assert!(
        job.annotations.contains("%0AContract, Authentication: \""),
        "{}",
        job.annotations
    );
    assert_eq!(job.annotations.lines().count(), 1, "{}", job.annotations);
    assert!(job.summary.contains("does not conform"), "{}", job.summary);
    assert!(dir.join("reports/report.json").is_file());
    assert_eq!(job.skipped_uses, ["actions/upload-artifact@v4"]);
    for text in [log, &job.summary, &job.annotations] {
        assert!(!text.contains(key), "the key was printed");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_action_passes_a_conforming_target_and_fails_one_it_cannot_reach() {
    if cfg!(not(all(target_os = "linux", target_arch = "x86_64"))) {
        return;
    }
    let dir = common::temp_dir("action", "passing");
    let url = releases(&dir);
    let key = "action-test-key-0123456789";
    let (server, base_url) = common::serve_reference(key, &[]);
    let env = [
        ("PETSTORE_CONFORMANCE_RELEASES", url.as_str()),
        ("PETSTORE_CASES", "4"),
    ];
    let job = runner(&dir, &[("base-url", &base_url), ("api-key", key)]).run(&env);
    assert_eq!(job.failed_at, None, "{}", job.log);
    assert_eq!(job.outputs["run"]["exit-code"], "0");
    assert_eq!(job.outputs["run"]["conformance"], "conforms");
    assert!(!job.annotations.contains("::error"), "{}", job.annotations);
    drop(server);
    // The same target gone: exit 2, no annotations step (nothing was judged), the job fails.
    let job = runner(&dir, &[("base-url", &base_url), ("api-key", key)]).run(&env);
    assert_eq!(job.outputs["run"]["exit-code"], "2", "{}", job.log);
    assert_eq!(job.failed_at.as_deref(), Some("The verdict"), "{}", job.log);
    assert!(!job.log.contains("--- Annotate"), "{}", job.log);
    // No base URL (the input left empty, or misspelt so it never arrives): exit 2, one line
    // naming the input, and nothing judged, not the built-in reference in the target's place.
    let job = runner(&dir, &[("base-url", ""), ("api-key", key)]).run(&env);
    assert_eq!(job.outputs["run"]["exit-code"], "2", "{}", job.log);
    assert_eq!(job.failed_at.as_deref(), Some("The verdict"), "{}", job.log);
    assert!(
        job.log
            .contains("no base URL: set the input base-url to the target's address"),
        "{}",
        job.log
    );
    assert!(!job.log.contains("CONFORMS"), "{}", job.log);
    let _ = std::fs::remove_dir_all(&dir);
}
