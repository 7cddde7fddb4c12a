//! The CI recipes in ci/ work as written: every file there parses and passes the checks a CI
//! system would make (actionlint too, where it is installed), and the documented GitLab and
//! GitHub commands, run in a shell with the artifact step pointed at a local directory,
//! compare tonight with last night and end with the right exit code.

use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use crate::common;

use common::{BIN, servers};

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
        if text.contains("jobs/artifacts") || text.contains("packages/generic") {
            assert!(
                text.contains("JOB-TOKEN"),
                "{name}: fetches from GitLab's API without the job token"
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
/// on PATH; the nightly target is the built-in reference (`PETSTORE_CI_TARGET=reference`).
fn checkout(name: &str) -> PathBuf {
    let dir = common::temp_dir("ci", name);
    std::fs::create_dir_all(dir.join("ci")).unwrap();
    std::fs::copy(ci_dir().join("gate.sh"), dir.join("ci/gate.sh")).unwrap();
    std::fs::write(
        dir.join("petstore-conformance.toml"),
        "[profile.nightly]\nseed = 3\ncases = 4\n",
    )
    .unwrap();
    dir
}

/// Runs `script` in `sh -e` in `dir`, as a CI runner does, with the binary (and `extra_path`,
/// the test's stand-ins) on PATH.
fn shell_with(
    dir: &Path,
    script: &str,
    env: &[(&str, &str)],
    extra_path: &[&Path],
) -> (i32, String) {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let mut path: Vec<String> = extra_path.iter().map(|p| p.display().to_string()).collect();
    path.push(bin_dir.display().to_string());
    path.push(std::env::var("PATH").unwrap_or_default());
    let mut command = Command::new("sh");
    command
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path.join(":"))
        .env_remove("PETSTORE_BASE_URL")
        .env_remove("GITHUB_STEP_SUMMARY")
        // The nightly target of these tests is the built-in reference, asked for by name.
        .env("PETSTORE_CI_TARGET", "reference");
    for var in [
        "PETSTORE_REFERENCE_FAULTS",
        "PETSTORE_REPORT_DIR",
        "PETSTORE_CONFIG",
        "PETSTORE_CI_PREVIOUS",
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

fn shell(dir: &Path, script: &str, env: &[(&str, &str)]) -> (i32, String) {
    shell_with(dir, script, env, &[])
}

/// A fault exactly one rule sees, whatever the timing of the run: one that several rules may
/// see (a listing that ignores its default limit shows to any rule that lists while more than
/// 20 pets match) could add a failure on a night like the one before.
const BREAKING: (&str, &str) = ("PETSTORE_REFERENCE_FAULTS", "auth-one-char-short");
const BROKEN_RULE: &str = "auth/near-miss/last-char-dropped";

/// A recipe's nightly job, run here: each night runs its steps against the test's stand-in of
/// the CI system's storage, and keeps tonight's report there as CI would.
trait Nightly {
    /// One night, with the job's environment and `extra`; its exit code and what it said.
    fn night(&mut self, extra: &[(&str, &str)]) -> (i32, String);
    /// From now on, last night's report cannot be downloaded (a token refused, a run that
    /// uploaded nothing).
    fn lose_the_store(&mut self);
}

/// The nights every recipe must get right. The gate fails closed: a target that does not
/// conform fails it on a first night and on a night like the one before; the comparison says
/// what is new; a report that cannot be downloaded is an error, not a first night.
fn nights(dir: &Path, recipe: &mut dyn Nightly) {
    let (code, said) = recipe.night(&[BREAKING]);
    assert_eq!(code, 1, "a first night on a failing target:\n{said}");
    assert!(said.contains("no previous report"), "{said}");
    assert!(said.contains(BROKEN_RULE), "{said}");
    let (code, said) = recipe.night(&[]);
    assert_eq!(code, 0, "a night that fixed it:\n{said}");
    let compared = std::fs::read_to_string(dir.join("compare.md")).unwrap();
    assert!(compared.contains("## fixed (1)"), "{compared}");
    let (code, said) = recipe.night(&[BREAKING]);
    assert_eq!(code, 1, "a night that broke a rule:\n{said}");
    assert!(said.contains(BROKEN_RULE), "{said}");
    let compared = std::fs::read_to_string(dir.join("compare.md")).unwrap();
    assert!(compared.contains("a gated rule newly fails"), "{compared}");
    assert!(
        said.contains("newly fails since the previous report"),
        "{said}"
    );
    let (code, said) = recipe.night(&[BREAKING]);
    assert_eq!(
        code, 1,
        "a night like the one before still does not conform:\n{said}"
    );
    assert!(said.contains("no gated rule newly fails"), "{said}");
    assert!(
        !dir.join("reports/compare.md").exists(),
        "the comparison is written beside the reports, not among them"
    );
    recipe.lose_the_store();
    std::fs::remove_dir_all(dir.join("reports")).unwrap();
    let (code, said) = recipe.night(&[]);
    assert_eq!(
        code, 2,
        "a report that cannot be downloaded is no first night:\n{said}"
    );
    assert!(said.contains("is not there"), "{said}");
    assert!(
        dir.join("reports/report.json").is_file(),
        "the suite ran all the same"
    );
}

/// GitLab's generic package registry as the recipe uses it: a PUT keeps a file, a GET gives it
/// back (404 before any), each with the job's token; once `refuse` is set, every GET is 403.
struct Registry {
    url: String,
    refuse: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

const JOB_TOKEN: &str = "test-job-token";

fn registry() -> Registry {
    use std::sync::atomic::Ordering;
    let refuse = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let refusing = std::sync::Arc::clone(&refuse);
    let files: std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>> = Default::default();
    let server = servers::listen().requests(move |request, _, stream| {
        let path = request.target().to_string();
        let (status, answer) = if request.header("job-token") != Some(JOB_TOKEN) {
            ("401 Unauthorized", Vec::new())
        } else if request.method() == "PUT" {
            files.lock().unwrap().insert(path, request.body.clone());
            ("201 Created", b"{\"message\":\"201 Created\"}".to_vec())
        } else if refusing.load(Ordering::SeqCst) {
            ("403 Forbidden", b"{\"message\":\"403 Forbidden\"}".to_vec())
        } else {
            match files.lock().unwrap().get(&path) {
                Some(file) => ("200 OK", file.clone()),
                None => (
                    "404 Not Found",
                    b"{\"message\":\"404 Package Not Found\"}".to_vec(),
                ),
            }
        };
        servers::respond(stream, status, &[("Connection", "close")], &answer);
        false
    });
    Registry {
        url: format!("http://{}/api/v4", server.addr()),
        refuse,
    }
}

/// The GitLab nightly job as written: its variables (expanded as GitLab expands them), its
/// script, then its after_script, against the test's package registry.
struct GitLab {
    dir: PathBuf,
    registry: Registry,
    script: String,
    after: String,
    variables: Vec<(String, String)>,
}

impl Nightly for GitLab {
    fn night(&mut self, extra: &[(&str, &str)]) -> (i32, String) {
        let mut env: Vec<(&str, &str)> = vec![
            ("CI_API_V4_URL", self.registry.url.as_str()),
            ("CI_PROJECT_ID", "7"),
            ("CI_COMMIT_REF_SLUG", "main"),
            ("CI_JOB_TOKEN", JOB_TOKEN),
        ];
        env.extend(extra);
        let exports: String = self
            .variables
            .iter()
            .map(|(name, value)| format!("export {name}=\"{value}\"\n"))
            .collect();
        let said = shell(&self.dir, &format!("{exports}{}", self.script), &env);
        let (code, uploaded) = shell(&self.dir, &format!("{exports}{}", self.after), &env);
        assert_eq!(code, 0, "after_script:\n{uploaded}");
        said
    }

    fn lose_the_store(&mut self) {
        self.registry
            .refuse
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn the_gitlab_nightly_job_compares_tonight_with_last_night() {
    let doc = load(&ci_dir().join("gitlab.yml"));
    let job = &doc["nightly-conformance"];
    let lines = |list: &str| -> String {
        job[list]
            .as_vec()
            .unwrap_or_else(|| panic!("nightly-conformance has no {list}"))
            .iter()
            .map(|line| line.as_str().unwrap().to_string() + "\n")
            .collect()
    };
    let variables = job["variables"]
        .as_hash()
        .unwrap()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().unwrap().to_string(),
                value.as_str().unwrap().to_string(),
            )
        })
        .collect();
    let dir = checkout("gitlab");
    let mut recipe = GitLab {
        dir: dir.clone(),
        registry: registry(),
        script: lines("script"),
        after: lines("after_script"),
        variables,
    };
    nights(&dir, &mut recipe);
}

/// The GitHub nightly steps as written: the previous night's step (with a stand-in `gh` that
/// lists and downloads the runs of the test's artifact store), then the gate step with what the
/// first put in `$GITHUB_OUTPUT`; tonight's reports are uploaded as the run's artifact.
struct GitHub {
    dir: PathBuf,
    previous: String,
    gate: String,
    runs: u32,
}

/// A stand-in for `gh run list` and `gh run download` over `$FAKE_GH`: `last-run` names the
/// last completed run, `runs/ID/` holds its artifact.
const FAKE_GH: &str = r#"#!/bin/sh
case "$1 $2" in
"run list") cat "$FAKE_GH/last-run" 2>/dev/null; exit 0 ;;
"run download")
    id=$3; shift 3; dir=.
    while [ $# -gt 0 ]; do
        if [ "$1" = --dir ]; then dir=$2; shift; fi
        shift
    done
    [ -f "$FAKE_GH/runs/$id/report.json" ] || { echo "no artifact in run $id" >&2; exit 1; }
    mkdir -p "$dir" && cp "$FAKE_GH/runs/$id/report.json" "$dir/" ;;
*) echo "gh $*: not faked" >&2; exit 2 ;;
esac
"#;

impl GitHub {
    fn store(&self) -> PathBuf {
        self.dir.join("github-store")
    }
}

impl Nightly for GitHub {
    fn night(&mut self, extra: &[(&str, &str)]) -> (i32, String) {
        use std::os::unix::fs::PermissionsExt;
        let store = self.store();
        let bin = store.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("gh"), FAKE_GH).unwrap();
        std::fs::set_permissions(bin.join("gh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let output = self.dir.join("github-output");
        std::fs::write(&output, "").unwrap();
        let (code, fetched) = shell_with(
            &self.dir,
            &self.previous,
            &[
                ("FAKE_GH", store.to_str().unwrap()),
                ("GITHUB_OUTPUT", output.to_str().unwrap()),
                ("GITHUB_REF_NAME", "main"),
            ],
            &[&bin],
        );
        assert_eq!(code, 0, "the previous night's step:\n{fetched}");
        let outputs = std::fs::read_to_string(&output).unwrap();
        let report = outputs
            .lines()
            .find_map(|line| line.strip_prefix("report="))
            .unwrap_or("");
        // On a schedule, the expressions of the gate step's env read as these.
        let mut env = vec![
            ("PETSTORE_PROFILE", "nightly"),
            ("PETSTORE_CI_GATE", "new-failures"),
            ("PETSTORE_CI_UNDETERMINED", "fail"),
            ("PETSTORE_CI_PREVIOUS", report),
        ];
        env.extend(extra);
        let (code, said) = shell(&self.dir, &self.gate, &env);
        // The upload step (`if: always()`): tonight's run, completed, with its reports.
        self.runs += 1;
        let run = store.join("runs").join(self.runs.to_string());
        std::fs::create_dir_all(&run).unwrap();
        std::fs::copy(
            self.dir.join("reports/report.json"),
            run.join("report.json"),
        )
        .unwrap();
        std::fs::write(store.join("last-run"), format!("{}\n", self.runs)).unwrap();
        (code, format!("{fetched}{said}"))
    }

    fn lose_the_store(&mut self) {
        // The last run uploaded nothing (it was cancelled before the upload, say).
        let _ = std::fs::remove_dir_all(self.store().join("runs").join(self.runs.to_string()));
    }
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
    let gate = step("gate");
    assert_eq!(
        gate["env"]["PETSTORE_CI_PREVIOUS"].as_str(),
        Some("${{ steps.previous.outputs.report }}")
    );
    let dir = checkout("github");
    let mut recipe = GitHub {
        dir: dir.clone(),
        previous: step("previous")["run"].as_str().unwrap().to_string(),
        gate: gate["run"].as_str().unwrap().to_string(),
        runs: 0,
    };
    nights(&dir, &mut recipe);
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
    // The reports go where the profile says, and the gate verifies them there, not the stale
    // ones in reports/.
    std::fs::write(
        dir.join("petstore-conformance.toml"),
        "[profile.nightly]\nseed = 3\nreport_dir = \"reports/staging\"\n",
    )
    .unwrap();
    let (code, said) = shell(&dir, "sh ci/gate.sh", &[("PETSTORE_PROFILE", "nightly")]);
    assert_eq!(code, 0, "{said}");
    assert!(dir.join("reports/staging/report.json").is_file(), "{said}");
}

/// With no base URL anywhere (the variable unset, a profile without one), the gate and every
/// recipe that runs the suite stop with exit 2 and one line naming what to set, before any
/// run: never the built-in reference judged in the target's place.
#[test]
fn the_gate_and_the_recipes_refuse_to_run_without_a_base_url() {
    let dir = checkout("no-base-url");
    let unnamed = [("PETSTORE_PROFILE", "nightly"), ("PETSTORE_CI_TARGET", "")];
    let (code, said) = shell(&dir, "sh ci/gate.sh", &unnamed);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.starts_with("no base URL: set PETSTORE_BASE_URL"),
        "{said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(!dir.join("reports").exists(), "the suite ran:\n{said}");
    // An empty variable is no base URL either (the run refuses it itself).
    let mut empty = unnamed.to_vec();
    empty.push(("PETSTORE_BASE_URL", ""));
    let (code, said) = shell(&dir, "sh ci/gate.sh", &empty);
    assert_eq!(code, 2, "{said}");
    assert!(!dir.join("reports").exists(), "the suite ran:\n{said}");
    // The sharded recipes run the suite themselves: their shard job stops the same way.
    let github = load(&ci_dir().join("github-shards.yml"));
    let github_shard = github["jobs"]["shard"]["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|step| step["run"].as_str())
        .find(|run| run.contains("--partition"))
        .expect("a step runs the shard")
        .to_string();
    let gitlab = load(&ci_dir().join("gitlab-shards.yml"));
    let gitlab_shard: String = gitlab["conformance-shard"]["script"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|line| format!("{}\n", line.as_str().unwrap()))
        .collect();
    for (recipe, script) in [
        ("github-shards", github_shard),
        ("gitlab-shards", gitlab_shard),
    ] {
        let (code, said) = shell(&dir, &script, &unnamed);
        assert_eq!(code, 2, "{recipe}: {said}");
        assert!(said.contains("no base URL"), "{recipe}: {said}");
        assert!(!dir.join("shards").exists() && !dir.join("reports").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
