//! `--list` and `--version`: every rule with its level, and listings that end quietly.

use std::path::Path;

use crate::common;

use super::{run, stderr, temp_dir};

#[test]
fn list_shows_every_rule_with_its_level() {
    let dir = temp_dir("list");
    let output = run(&["--list"], None, &dir);
    assert_eq!(output.status.code(), Some(0));
    let listing = String::from_utf8_lossy(&output.stdout);
    let line = |id: &str| {
        listing
            .lines()
            .find(|line| line.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("{id} not in {listing}"))
            .to_string()
    };
    assert!(
        line("list-pets/limit/above-maximum").contains(" recommended "),
        "{listing}"
    );
    assert!(
        line("auth/missing-key/list-pets").contains(" required "),
        "{listing}"
    );
    assert!(!listing.contains(": test"), "{listing}");
    // --format json: one array, filtered as a run is.
    let output = run(
        &["--list", "--format", "json", "list-pets/limit"],
        None,
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let listed = listed.as_array().unwrap();
    assert!(!listed.is_empty());
    for rule in listed {
        assert!(
            rule["id"].as_str().unwrap().contains("list-pets/limit"),
            "{rule}"
        );
        assert!(
            rule["level"].is_string() && rule["operation"].is_string(),
            "{rule}"
        );
    }
    // libtest's flags that would do nothing here are not offered.
    for flag in ["--bench", "--ignored", "--nocapture", "-Zunstable-options"] {
        let output = run(&[flag], None, &dir);
        assert_eq!(output.status.code(), Some(2), "{flag}: {}", stderr(&output));
    }
}

#[test]
fn listings_end_quietly_on_a_closed_pipe_and_version_names_what_judges() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = common::bin()
        .arg("rules")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut errors = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut errors)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!errors.contains("panicked"), "{errors}");
    assert!(errors.is_empty(), "{errors} ({status:?})");
    let output = common::bin().arg("--version").output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains(env!("CARGO_PKG_VERSION")), "{said}");
    assert!(said.contains("contract 1.0.0"), "{said}");
    assert!(
        said.contains("catalogue ") && said.contains(" rules, sha256 "),
        "{said}"
    );
    // Every PETSTORE_* variable the command line reads is in a command's help.
    let help = |command: &str| {
        let output = common::bin().args([command, "--help"]).output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let helps: String = [
        "run",
        "serve-reference",
        "replay",
        "verify-report",
        "compare",
        "merge",
        "rules",
    ]
    .into_iter()
    .map(help)
    .collect();
    for file in [
        "src/cli/definition.rs",
        "src/cli/args.rs",
        "src/cli/listings.rs",
        "src/cli/profiles.rs",
    ] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        for (at, _) in text.match_indices("env = \"PETSTORE_") {
            let name: String = text[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect();
            assert!(
                helps.contains(&format!("[env: {name}")),
                "{name} is not in any help"
            );
        }
    }
    // Durations as people write them, a bare number still seconds.
    let dir = temp_dir("durations");
    for budget in ["1s", "1"] {
        let output = run(
            &["--time-budget", budget, "--cases", "1", "list-pets/limit"],
            None,
            &dir,
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{budget}: {}",
            stderr(&output)
        );
    }
}
