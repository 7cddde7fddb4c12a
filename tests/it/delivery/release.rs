//! Releases as a user installs them: `.github/release/package.sh` (what the release workflow
//! runs for each target) makes the archives, and `cargo binstall`'s metadata in Cargo.toml,
//! rendered for every target the workflow builds, names exactly those files and the binary's
//! path inside; ci/install.sh installs a pinned release from them, checking its SHA-256 first;
//! every CI recipe pins the crate's version; the glibc floor check fails a binary past it.
//! The workflow itself runs only on GitHub: its targets and steps are read, not run.

use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_rust2::YamlLoader;

use crate::common;

use common::BIN;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifest() -> toml::Table {
    std::fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap()
}

/// The package's version: the workspace's, which every crate of it takes.
fn version() -> String {
    let manifest = manifest();
    manifest["package"]["version"]
        .as_str()
        .or_else(|| manifest["workspace"]["package"]["version"].as_str())
        .unwrap()
        .to_string()
}

/// The targets .github/workflows/release.yml builds.
fn workflow_targets() -> Vec<String> {
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let doc = &YamlLoader::load_from_str(&text).unwrap()[0];
    doc["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_vec()
        .expect("a matrix of targets")
        .iter()
        .map(|entry| entry["target"].as_str().unwrap().to_string())
        .collect()
}

/// binstall's template for `field`, rendered as cargo-binstall does for `target`.
fn binstall(field: &str, target: &str) -> String {
    let manifest = manifest();
    let package = &manifest["package"];
    let template = package["metadata"]["binstall"][field].as_str().unwrap();
    template
        .replace("{ repo }", package["repository"].as_str().unwrap())
        .replace("{ name }", package["name"].as_str().unwrap())
        .replace("{ version }", &version())
        .replace("{ target }", target)
        .replace("{ bin }", "petstore-conformance")
        .replace("{ binary-ext }", "")
}

/// `package.sh` for `target`, packing `binary` (the binary under test for this machine's target;
/// for the others a stand-in file, since only the names are checked).
fn package_binary(target: &str, binary: &Path, out: &Path) -> PathBuf {
    let output = Command::new("sh")
        .arg(root().join(".github/release/package.sh"))
        .args([&version(), target])
        .arg(binary)
        .arg(out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

fn package(target: &str, out: &Path) -> PathBuf {
    package_binary(target, Path::new(BIN), out)
}

fn sh(script: &str, dir: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let output = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

#[test]
fn binstall_names_the_assets_the_release_workflow_makes() {
    let targets = workflow_targets();
    for wanted in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(targets.iter().any(|t| t == wanted), "{wanted}: {targets:?}");
    }
    let workflow = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    assert!(workflow.contains("sh .github/release/package.sh \"$VERSION\" \"$TARGET\""));
    assert!(workflow.contains("sh .github/release/glibc-floor.sh"));
    let dir = common::temp_dir("release", "binstall");
    let stand_in = dir.join("stand-in");
    std::fs::write(&stand_in, "#!/bin/sh\n").unwrap();
    for target in &targets {
        let archive = package_binary(target, &stand_in, &dir);
        let url = binstall("pkg-url", target);
        let file = url.rsplit('/').next().unwrap();
        assert_eq!(
            archive.file_name().unwrap().to_str().unwrap(),
            file,
            "{url}"
        );
        // The tag the workflow runs on is v{version}: binstall's URL asks for that release.
        assert!(
            url.contains(&format!("/releases/download/v{}/", version())),
            "{url}"
        );
        let listed = Command::new("tar")
            .arg("-tzf")
            .arg(&archive)
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&listed.stdout);
        let bin_dir = binstall("bin-dir", target);
        assert!(
            listed.lines().any(|line| line == bin_dir),
            "{bin_dir} not in\n{listed}"
        );
        let (ok, said) = sh(&format!("sha256sum -c {file}.sha256"), &dir, &[]);
        assert!(ok, "{said}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn install_sh_installs_a_pinned_release_and_refuses_a_corrupt_one() {
    let dir = common::temp_dir("release", "install");
    let releases = dir.join("releases");
    let version = version();
    package(
        "x86_64-unknown-linux-gnu",
        &releases.join(format!("v{version}")),
    );
    let url = format!("file://{}", releases.display());
    let env = [("PETSTORE_CONFORMANCE_RELEASES", url.as_str())];
    let install = format!("sh {}/ci/install.sh {version} bin", root().display());
    let (ok, said) = sh(&install, &dir, &env);
    assert!(ok, "{said}");
    assert!(
        said.contains(&format!("petstore-conformance {version}")),
        "{said}"
    );
    let installed = dir.join("bin/petstore-conformance");
    let (ok, said) = sh(&format!("{} rules", installed.display()), &dir, &[]);
    assert!(
        ok && said.contains("list-pets/limit/above-maximum"),
        "{said}"
    );

    // A corrupt archive is refused before anything is unpacked.
    std::fs::remove_file(&installed).unwrap();
    let archive = releases.join(format!(
        "v{version}/petstore-conformance-{version}-x86_64-unknown-linux-gnu.tar.gz"
    ));
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();
    let (ok, said) = sh(&install, &dir, &env);
    assert!(!ok, "a corrupt archive installed: {said}");
    assert!(!installed.exists());
    // A version that was never released names what it could not fetch.
    let (ok, said) = sh(
        &format!("sh {}/ci/install.sh 9.9.9 bin", root().display()),
        &dir,
        &env,
    );
    assert!(!ok && said.contains("9.9.9"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_ci_recipe_installs_this_version_and_builds_nothing() {
    let version = version();
    for entry in std::fs::read_dir(root().join("ci")).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "yml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.display();
        assert!(!text.contains("cargo install"), "{name} builds from source");
        assert!(
            text.contains(&format!("PETSTORE_CONFORMANCE_VERSION: \"{version}\"")),
            "{name} does not pin {version}"
        );
        if name.to_string().contains("github") {
            assert!(
                text.contains("sh ci/install.sh \"$PETSTORE_CONFORMANCE_VERSION\""),
                "{name}"
            );
        } else {
            assert!(
                text.contains("petstore-conformance:${PETSTORE_CONFORMANCE_VERSION}-ci"),
                "{name} does not run in the release's image"
            );
        }
    }
}

#[test]
fn the_glibc_floor_check_refuses_a_binary_past_it() {
    let script = root().join(".github/release/glibc-floor.sh");
    let check = |floor: &str| {
        Command::new("sh")
            .arg(&script)
            .args([BIN, floor])
            .output()
            .unwrap()
    };
    let far = check("99.0");
    assert!(far.status.success(), "{far:?}");
    let old = check("2.2");
    assert!(!old.status.success(), "{old:?}");
    assert!(
        String::from_utf8_lossy(&old.stderr).contains("newer than the promised floor 2.2"),
        "{old:?}"
    );
}
