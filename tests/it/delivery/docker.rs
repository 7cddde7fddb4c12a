//! The container image, as far as this machine can build it: the Dockerfile's final stage made
//! from a root filesystem that `docker/rootfs.sh` gathers around the binary under test (the
//! build stage's `rust` image cannot be pulled here; `ROOTFS` swaps it for a local import),
//! then run: as a non-root user, with nothing but the binary, its libraries and the CA
//! certificates, writing its reports to a mounted directory, against its own reference and
//! against a target on the host's loopback.
//!
//! The `ci` variant (Debian slim with a shell, for GitLab jobs) is built too where an image
//! `debian:bookworm-slim` is already on the engine (here: a debootstrap of Debian's packages,
//! imported), and runs ci/gate.sh as a GitLab job would.
//!
//! Needs a Docker engine with BuildKit (`DOCKER_BUILDKIT=1`); `PETSTORE_DOCKER` names the
//! client (default `docker`). Without an engine answering, the test says so and passes: it is
//! mandatory only under `PETSTORE_REQUIRE_DOCKER=1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;

use common::BIN;

fn docker() -> Command {
    let mut command =
        Command::new(std::env::var("PETSTORE_DOCKER").unwrap_or_else(|_| "docker".into()));
    command.env("DOCKER_BUILDKIT", "1");
    command
}

fn ok(what: &str, output: Output) -> String {
    assert!(
        output.status.success(),
        "{what}: {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn engine_answers() -> bool {
    let answers = docker()
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .is_ok_and(|o| o.status.success());
    // BuildKit builds only the stages the target needs (the build stage is skipped): a client
    // with buildx, or one from before 23, which carries BuildKit itself.
    let buildkit = docker()
        .args(["buildx", "version"])
        .output()
        .is_ok_and(|o| o.status.success())
        || docker()
            .args(["version", "--format", "{{.Client.Version}}"])
            .output()
            .ok()
            .and_then(|o| {
                let version = String::from_utf8_lossy(&o.stdout).into_owned();
                version.split('.').next()?.trim().parse::<u32>().ok()
            })
            .is_some_and(|major| major < 23);
    let usable = answers && buildkit;
    if !usable {
        assert!(
            std::env::var_os("PETSTORE_REQUIRE_DOCKER").is_none(),
            "PETSTORE_REQUIRE_DOCKER is set but no Docker engine with BuildKit answers"
        );
        eprintln!(
            "tests/docker.rs: {}; the image was NOT built or run (PETSTORE_DOCKER names the client)",
            if answers {
                "the Docker client has no BuildKit (buildx)"
            } else {
                "no Docker engine answers"
            }
        );
    }
    usable
}

fn id(flag: &str) -> String {
    let output = Command::new("id").arg(flag).output().unwrap();
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Builds the image from `rootfs.sh`'s output around the binary under test; returns its tag.
fn build_image(dir: &Path) -> String {
    build_target(dir, "image")
}

fn build_target(dir: &Path, target: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rootfs = dir.join("rootfs");
    ok(
        "docker/rootfs.sh",
        Command::new("sh")
            .arg(root.join("docker/rootfs.sh"))
            .arg(BIN)
            .arg(&rootfs)
            .output()
            .unwrap(),
    );
    let tar = dir.join("rootfs.tar");
    ok(
        "tar",
        Command::new("tar")
            .arg("-C")
            .arg(dir)
            .arg("-cf")
            .arg(&tar)
            .arg("rootfs")
            .output()
            .unwrap(),
    );
    let tag = format!("petstore-conformance-test:{target}-{}", std::process::id());
    let base = format!(
        "petstore-conformance-test-rootfs:{target}-{}",
        std::process::id()
    );
    ok(
        "docker import",
        docker()
            .arg("import")
            .arg(&tar)
            .arg(&base)
            .output()
            .unwrap(),
    );
    ok(
        "docker build",
        docker()
            .args(["build", "--quiet", "--network", "none", "--target", target])
            .arg("--build-arg")
            .arg(format!("ROOTFS={base}"))
            .args(["--tag", &tag])
            .arg(root)
            .output()
            .unwrap(),
    );
    tag
}

struct Image(String);

impl Drop for Image {
    fn drop(&mut self) {
        let _ = docker().args(["image", "rm", "--force", &self.0]).output();
        let base = self.0.replace(
            "petstore-conformance-test:",
            "petstore-conformance-test-rootfs:",
        );
        let _ = docker().args(["image", "rm", "--force", &base]).output();
    }
}

fn reports(dir: &Path, name: &str) -> PathBuf {
    let reports = dir.join(name);
    std::fs::create_dir_all(&reports).unwrap();
    reports
}

#[test]
fn the_image_runs_as_a_user_with_the_binary_and_certificates_only() {
    if !engine_answers() {
        return;
    }
    let dir = common::temp_dir("docker", "image");
    let image = Image(build_image(&dir));
    let tag = &image.0;

    let config = ok(
        "docker image inspect",
        docker()
            .args(["image", "inspect", tag, "--format"])
            .arg("{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}")
            .output()
            .unwrap(),
    );
    assert_eq!(
        config.trim(),
        r#"65532:65532|["/usr/local/bin/petstore-conformance"]|["run"]"#
    );

    // Nothing else in it: every file is the binary, a library it loads, the certificates or
    // the user's entry (docker export lists a container's filesystem).
    let container = ok(
        "docker create",
        docker().args(["create", tag]).output().unwrap(),
    );
    let container = container.trim();
    let export = docker().args(["export", container]).output().unwrap();
    let _ = docker().args(["rm", container]).output();
    assert!(export.status.success(), "docker export: {export:?}");
    let listing = dir.join("export.tar");
    std::fs::write(&listing, &export.stdout).unwrap();
    let files = ok(
        "tar -t",
        Command::new("tar")
            .arg("-tf")
            .arg(&listing)
            .output()
            .unwrap(),
    );
    for file in files.lines().filter(|f| !f.ends_with('/')) {
        let expected = file == "usr/local/bin/petstore-conformance"
            || file == "etc/ssl/certs/ca-certificates.crt"
            || ["etc/passwd", "etc/group", "etc/nsswitch.conf"].contains(&file)
            || (file.starts_with("lib") && file.contains(".so"))
            // Docker's own mount points, empty files it adds to every container.
            || [".dockerenv", "etc/hosts", "etc/hostname", "etc/resolv.conf", "etc/mtab"]
                .contains(&file)
            || file.starts_with("dev/")
            || file.starts_with("proc/")
            || file.starts_with("sys/");
        assert!(expected, "the image holds {file}\n{files}");
    }
    assert!(
        files.contains("etc/ssl/certs/ca-certificates.crt"),
        "{files}"
    );
    // No shell to run anything else with.
    let shell = docker()
        .args([
            "run",
            "--rm",
            "--network",
            "none",
            "--entrypoint",
            "/bin/sh",
        ])
        .arg(tag)
        .output()
        .unwrap();
    assert!(!shell.status.success(), "a shell ran in the image");

    // Without arguments: the suite against its built-in reference, reports to the mount.
    let own = reports(&dir, "own");
    let run = docker()
        .args(["run", "--rm", "--network", "none", "--user"])
        .arg(format!("{}:{}", id("-u"), id("-g")))
        .arg("--volume")
        .arg(format!("{}:/reports", own.display()))
        .arg(tag)
        .args(["run", "--seed", "7", "--cases", "2"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(0), "{said}");
    assert!(said.contains("wrote /reports/report.json"), "{said}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(own.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["conformance"], "conforms");
    assert!(own.join("junit.xml").is_file() && own.join("report.html").is_file());

    // Against a target on the host's loopback, the key from the environment, a broken rule
    // found and exit 1.
    let key = "docker-test-key-0123456789";
    let (_server, url) = common::serve_reference(key, &["auth-one-char-short"]);
    let remote = reports(&dir, "remote");
    let run = docker()
        .args(["run", "--rm", "--network", "host", "--user"])
        .arg(format!("{}:{}", id("-u"), id("-g")))
        .arg("--volume")
        .arg(format!("{}:/reports", remote.display()))
        .args(["--env", "PETSTORE_API_KEY"])
        .env("PETSTORE_API_KEY", key)
        .arg(tag)
        .args(["run", "--seed", "7", "--cases", "2", "--base-url", &url])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(1), "{said}");
    let text = std::fs::read_to_string(remote.join("report.json")).unwrap();
    assert!(text.contains("auth/near-miss/last-char-dropped"));
    assert!(!text.contains(key), "the key is in the report");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_ci_variant_runs_the_gate_script_as_a_gitlab_job_does() {
    if !engine_answers() {
        return;
    }
    let base = docker()
        .args(["image", "inspect", "debian:bookworm-slim"])
        .output()
        .unwrap();
    if !base.status.success() {
        eprintln!(
            "tests/docker.rs: no debian:bookworm-slim on the engine; the ci variant was NOT built"
        );
        return;
    }
    let dir = common::temp_dir("docker", "ci");
    let image = Image(build_target(&dir, "ci"));
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("ci")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/gate.sh"),
        project.join("ci/gate.sh"),
    )
    .unwrap();
    std::fs::write(
        project.join("petstore-conformance.toml"),
        "[profile.nightly]\nseed = 3\ncases = 2\n",
    )
    .unwrap();
    let run = docker()
        .args(["run", "--rm", "--network", "none", "--volume"])
        .arg(format!("{}:/builds/project", project.display()))
        .args(["--workdir", "/builds/project"])
        .args(["--env", "PETSTORE_PROFILE=nightly"])
        .arg(&image.0)
        .args(["sh", "-c", "curl --version >/dev/null && sh ci/gate.sh"])
        .output()
        .unwrap();
    let said = text(&run);
    assert_eq!(run.status.code(), Some(0), "{said}");
    assert!(project.join("reports/report.json").is_file(), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
