//! The CI recipes in ci/ work as written: every file there parses and passes the checks a CI
//! system would make (actionlint too, where it is installed), and the documented GitLab and
//! GitHub commands, run in a shell with the artifact step pointed at a local directory,
//! compare tonight with last night and end with the right exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

mod common;

use common::BIN;

fn ci_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ci")
}

fn ci_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(ci_dir())
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    files.sort();
    files
}

fn load(path: &Path) -> Yaml {
    let text = std::fs::read_to_string(path).unwrap();
    let mut docs = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
    assert_eq!(docs.len(), 1, "{}: one document", path.display());
    docs.remove(0)
}

fn key<'a>(yaml: &'a Yaml, name: &str) -> &'a Yaml {
    &yaml[name]
}

/// GitHub Actions: jobs with a runner and steps, each step one `run` or one pinned `uses`.
fn lint_github(path: &Path, doc: &Yaml) {
    let name = path.display();
    assert!(!key(doc, "on").is_badvalue(), "{name}: no `on`");
    let jobs = key(doc, "jobs")
        .as_hash()
        .unwrap_or_else(|| panic!("{name}: no jobs"));
    assert!(!jobs.is_empty(), "{name}: no jobs");
    for (job_name, job) in jobs {
        let job_name = job_name.as_str().unwrap_or("?");
        assert!(
            key(job, "runs-on").as_str().is_some() || key(job, "runs-on").as_vec().is_some(),
            "{name}: job {job_name} has no runs-on"
        );
        let steps = key(job, "steps")
            .as_vec()
            .unwrap_or_else(|| panic!("{name}: job {job_name} has no steps"));
        for step in steps {
            let run = key(step, "run").as_str();
            let uses = key(step, "uses").as_str();
            assert!(
                run.is_some() != uses.is_some(),
                "{name}: job {job_name}: a step is one `run` or one `uses`: {step:?}"
            );
            if let Some(uses) = uses {
                assert!(
                    uses.contains('@'),
                    "{name}: {uses} is not pinned to a version"
                );
            }
            if let Some(run) = run {
                // A secret goes through env:, never into the script text.
                assert!(
                    !run.contains("secrets."),
                    "{name}: a secret in a run script"
                );
            }
        }
    }
    if let Ok(output) = Command::new("actionlint").arg(path).output() {
        assert!(
            output.status.success(),
            "actionlint {name}:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

const GITLAB_KEYWORDS: [&str; 11] = [
    "variables",
    "include",
    "stages",
    "default",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
    "spec",
];

/// GitLab CI: every job has a script (its own or from the template it extends), lists of
/// strings; artifacts are kept whatever the exit code; an artifact fetch carries the job token.
fn lint_gitlab(path: &Path, doc: &Yaml) {
    let name = path.display();
    let top = doc
        .as_hash()
        .unwrap_or_else(|| panic!("{name}: not a mapping"));
    let mut jobs = 0;
    for (job_name, job) in top {
        let job_name = job_name.as_str().unwrap_or("?");
        if GITLAB_KEYWORDS.contains(&job_name) {
            continue;
        }
        let templates: Vec<&Yaml> = match key(job, "extends") {
            Yaml::String(parent) => vec![&doc[parent.as_str()]],
            Yaml::Array(parents) => parents
                .iter()
                .filter_map(|p| p.as_str())
                .map(|p| &doc[p])
                .collect(),
            _ => Vec::new(),
        };
        let field = |field: &str| {
            std::iter::once(job)
                .chain(templates.iter().copied())
                .map(|y| key(y, field))
                .find(|y| !y.is_badvalue())
        };
        for list in ["script", "before_script", "after_script"] {
            if let Some(lines) = key(job, list).as_vec() {
                for line in lines {
                    assert!(
                        line.as_str().is_some(),
                        "{name}: {job_name}.{list}: {line:?}"
                    );
                }
            }
        }
        if job_name.starts_with('.') {
            continue;
        }
        jobs += 1;
        assert!(
            field("script")
                .and_then(Yaml::as_vec)
                .is_some_and(|s| !s.is_empty()),
            "{name}: job {job_name} has no script"
        );
        if let Some(artifacts) = field("artifacts") {
            assert_eq!(
                key(artifacts, "when").as_str(),
                Some("always"),
                "{name}: {job_name}: a failing run's reports are the ones to keep"
            );
        }
    }
    assert!(jobs > 0, "{name}: no job");
}

#[test]
fn every_ci_file_passes_its_lint() {
    let files = ci_files();
    assert!(files.iter().any(|f| f.ends_with("github.yml")), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("gitlab.yml")), "{files:?}");
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.display();
        // Every exit code turned green is no gate at all.
        assert!(!text.contains("|| true"), "{name}: `|| true`");
        assert!(!text.contains("set +e"), "{name}: `set +e`");
        if text.contains("jobs/artifacts") {
            assert!(
                text.contains("JOB-TOKEN"),
                "{name}: fetches an artifact without the job token"
            );
        }
        for script in text.split_whitespace().filter(|w| w.starts_with("ci/")) {
            let script = script.trim_matches(|c: char| "\"';.,)".contains(c));
            if !script.ends_with(".sh") && !script.ends_with(".yml") {
                continue;
            }
            assert!(
                Path::new(env!("CARGO_MANIFEST_DIR")).join(script).is_file(),
                "{name}: names {script}, which is not in the repository"
            );
        }
        match path.extension().and_then(|e| e.to_str()) {
            Some("yml" | "yaml") => {
                let doc = load(path);
                if path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .contains("github")
                {
                    lint_github(path, &doc);
                } else {
                    lint_gitlab(path, &doc);
                }
            }
            Some("sh") => {
                let output = Command::new("sh").arg("-n").arg(path).output().unwrap();
                assert!(
                    output.status.success(),
                    "{name}: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            _ => {}
        }
    }
}

/// A project checkout as CI sees it: ci/ and a profile for the nightly job, the suite's binary
/// on PATH; the nightly target is the built-in reference.
fn checkout(name: &str) -> PathBuf {
    let dir = common::temp_dir("ci", name);
    std::fs::create_dir_all(dir.join("ci")).unwrap();
    std::fs::copy(ci_dir().join("gate.sh"), dir.join("ci/gate.sh")).unwrap();
    std::fs::write(
        dir.join("petstore-conformance.toml"),
        "[profile.nightly]\nseed = 3\ncases = 4\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("last-night")).unwrap();
    dir
}

/// Runs `script` in `sh -e` in `dir`, as a CI runner does, with the binary on PATH.
fn shell(dir: &Path, script: &str, env: &[(&str, &str)]) -> (i32, String) {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("PETSTORE_BASE_URL")
        .env_remove("GITHUB_STEP_SUMMARY");
    for var in [
        "PETSTORE_REFERENCE_FAULTS",
        "PETSTORE_REPORT_DIR",
        "PETSTORE_CONFIG",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let output = command.output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), said)
}

/// The artifact store of the test: last night's reports in a local directory.
fn keep_as_last_night(dir: &Path) {
    std::fs::copy(
        dir.join("reports/report.json"),
        dir.join("last-night/report.json"),
    )
    .unwrap();
}

const FETCH_LOCALLY: &str = "mkdir -p previous; if [ -f last-night/report.json ]; then cp last-night/report.json previous/report.json; fi";

/// Three nights of a recipe's `script` (the fetch replaced by FETCH_LOCALLY): a first night
/// with nothing before it passes; a night that breaks a rule fails, naming it; a night like
/// the one before passes.
fn three_nights(dir: &Path, script: &str, env: &[(&str, &str)]) {
    let (code, said) = shell(dir, script, env);
    assert_eq!(code, 0, "first night:\n{script}\n{said}");
    assert!(said.contains("no previous report"), "{said}");
    keep_as_last_night(dir);
    // A fault exactly one rule sees, whatever the timing of the run: one that several rules
    // may see (a listing that ignores its default limit shows to any rule that lists while
    // more than 20 pets match) could add a failure on a night like the one before.
    let mut broken = env.to_vec();
    broken.push(("PETSTORE_REFERENCE_FAULTS", "auth-one-char-short"));
    let (code, said) = shell(dir, script, &broken);
    assert_eq!(code, 1, "a night that broke a rule:\n{said}");
    assert!(said.contains("auth/near-miss/last-char-dropped"), "{said}");
    let compared = std::fs::read_to_string(dir.join("reports/compare.md")).unwrap();
    assert!(compared.contains("a gated rule newly fails"), "{compared}");
    keep_as_last_night(dir);
    let (code, said) = shell(dir, script, &broken);
    assert_eq!(
        code, 0,
        "a night like the one before (known breakage, nothing new):\n{said}"
    );
}

#[test]
fn the_gitlab_nightly_job_compares_tonight_with_last_night() {
    let doc = load(&ci_dir().join("gitlab.yml"));
    let job = &doc["nightly-conformance"];
    let mut lines = Vec::new();
    for line in job["script"].as_vec().unwrap() {
        let line = line.as_str().unwrap();
        // The artifact step, pointed at a local directory.
        lines.push(if line.contains("jobs/artifacts") {
            FETCH_LOCALLY.to_string()
        } else {
            line.to_string()
        });
    }
    let mut env: Vec<(String, String)> = Vec::new();
    for (name, value) in job["variables"].as_hash().unwrap() {
        env.push((
            name.as_str().unwrap().into(),
            value.as_str().unwrap().into(),
        ));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let dir = checkout("gitlab");
    three_nights(&dir, &lines.join("\n"), &env);
}

#[test]
fn the_github_nightly_steps_compare_tonight_with_last_night() {
    let doc = load(&ci_dir().join("github.yml"));
    let steps = doc["jobs"]["conformance"]["steps"].as_vec().unwrap();
    let step = |id: &str| {
        steps
            .iter()
            .find(|s| s["id"].as_str() == Some(id))
            .unwrap_or_else(|| panic!("no step {id}"))
    };
    let gate = step("gate")["run"].as_str().unwrap();
    assert!(
        step("previous")["run"]
            .as_str()
            .unwrap()
            .contains("gh run download")
    );
    // On a schedule, the expressions of the gate step's env read as these.
    let env = [
        ("PETSTORE_PROFILE", "nightly"),
        ("PETSTORE_CI_GATE", "new-failures"),
        ("PETSTORE_CI_UNDETERMINED", "fail"),
    ];
    let dir = checkout("github");
    three_nights(&dir, &format!("{FETCH_LOCALLY}\n{gate}"), &env);
}

#[test]
fn an_undetermined_run_is_not_green_unless_asked() {
    let dir = checkout("undetermined");
    // A run the budget cuts before any rule decides is undetermined.
    std::fs::write(
        dir.join("petstore-conformance.toml"),
        "[profile.nightly]\nseed = 3\nreference_latency_is_not_a_profile_key = 1\n",
    )
    .unwrap();
    let (code, said) = shell(&dir, "sh ci/gate.sh", &[("PETSTORE_PROFILE", "nightly")]);
    assert_eq!(
        code, 2,
        "a configuration error is 2, not a verdict:\n{said}"
    );
    std::fs::write(
        dir.join("petstore-conformance.toml"),
        "[profile.nightly]\nseed = 3\n",
    )
    .unwrap();
    let slow = [
        ("PETSTORE_PROFILE", "nightly"),
        ("PETSTORE_REFERENCE_LATENCY", "2s"),
        ("PETSTORE_TIME_BUDGET", "1"),
    ];
    let (code, said) = shell(&dir, "sh ci/gate.sh", &slow);
    assert_eq!(code, 3, "{said}");
    let mut passing = slow.to_vec();
    passing.push(("PETSTORE_CI_UNDETERMINED", "pass"));
    let (code, said) = shell(&dir, "sh ci/gate.sh", &passing);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("PETSTORE_CI_UNDETERMINED=pass"), "{said}");
}
