//! The README and the guide in docs/ (an mdBook) say what the code does: their figures are the
//! catalogue's, not typed by hand (the number of rules, the concurrency rules' clients and
//! rounds follow `cases/`); every command they quote names a sub-command and options the
//! binary has; every rule id, fault and variant they name exists; every relative link leads to
//! a file; every chapter is in SUMMARY.md; the README stays a front door (under 200 lines);
//! and the book builds, where mdbook is installed (`cargo install mdbook --locked`).
//! The performance figures come from `bench`'s output and are not measured here.

use std::path::{Path, PathBuf};
use std::process::Command;

use petstore_conformance::catalogue::Catalogue;
use petstore_conformance::reference::{FAULTS, VARIANTS};

use crate::common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

fn chapter(name: &str) -> String {
    std::fs::read_to_string(root().join("docs/src").join(name)).unwrap()
}

/// README.md and every chapter of the guide, with their paths.
fn documents() -> Vec<(PathBuf, String)> {
    let mut files = vec![root().join("README.md")];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root().join("docs/src"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    files.extend(chapters);
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

/// The number just before `after` in `text` (`all 91 rules` with after = " rules").
fn number_before(text: &str, before: &str, after: &str) -> u64 {
    let start = text
        .find(before)
        .unwrap_or_else(|| panic!("README: no {before:?}"))
        + before.len();
    let rest = &text[start..];
    let end = rest
        .find(after)
        .unwrap_or_else(|| panic!("README: no {after:?} after {before:?}"));
    rest[..end].trim().parse().unwrap_or_else(|_| {
        panic!(
            "README: {before:?}{}{after:?} is not a number",
            &rest[..end]
        )
    })
}

fn catalogue() -> Catalogue {
    Catalogue::load(Some(&Path::new(env!("CARGO_MANIFEST_DIR")).join("cases"))).unwrap()
}

#[test]
fn the_readme_counts_the_rules_of_the_catalogue() {
    let rules = catalogue().rules.len() as u64;
    assert_eq!(number_before(&readme(), "runs\nall ", " rules"), rules);
}

#[test]
fn the_readme_gives_the_concurrency_rules_own_figures() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/create-pet.json"),
    )
    .unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let params = |id: &str| {
        cases["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|rule| rule["id"] == id)
            .unwrap_or_else(|| panic!("{id} not in cases/create-pet.json"))["params"]
            .clone()
    };
    let readme = chapter("judging.md");
    let distinct = params("create-pet/concurrent/distinct-ids");
    assert_eq!(
        number_before(&readme, "`create-pet/concurrent/*`): ", " clients"),
        distinct["clients"].as_u64().unwrap()
    );
    assert_eq!(
        number_before(&readme, "at the same moment (", " for the"),
        params("create-pet/concurrent/all-listed")["clients"]
            .as_u64()
            .unwrap()
    );
    assert_eq!(distinct["rounds"], 1, "judging.md says one round");
}

#[test]
fn notes_show_param_values_not_names() {
    for rule in catalogue().rules {
        // As a reader sees it: the case file names params as `{name}`.
        if let Some(note) = &rule.shown_note() {
            // `${PETSTORE_API_KEY}` is shell; a bare `{name}` is a param left unfilled.
            let unfilled = note
                .match_indices('{')
                .any(|(at, _)| at == 0 || note.as_bytes()[at - 1] != b'$');
            assert!(!unfilled, "{}: unfilled param in {note:?}", rule.id);
            assert!(!note.contains("max_steps"), "{}: {note:?}", rule.id);
            assert!(!note.contains("rounds rounds"), "{}: {note:?}", rule.id);
        }
    }
}

#[test]
fn the_readme_is_a_front_door() {
    let lines = readme().lines().count();
    assert!(
        lines <= 200,
        "README.md is {lines} lines: the rest belongs in docs/"
    );
    // The two commands, and how long each takes on a fresh clone.
    let text = readme();
    assert!(text.contains("\ncargo run --release -- run\n"));
    assert!(text.contains("\ncargo test\n"));
    assert!(text.contains("about **7 minutes**") && text.contains("about **14 minutes**"));
}

/// The README's first command, as it is written, from a directory with nothing in it: exit 0,
/// CONFORMS, and the reports it names. CI builds no release binary (seven minutes on 2 cores);
/// this runs the same command line on the test build.
#[test]
fn the_first_command_runs_the_suite_and_writes_its_reports() {
    let text = readme();
    let line = text
        .lines()
        .skip_while(|line| !line.starts_with("# 1. "))
        .nth(1)
        .expect("a line after the first command's comment");
    let args = line
        .strip_prefix("cargo run --release -- ")
        .expect("the first command runs the release build");
    let dir = common::temp_dir("readme", "first-command");
    let output = common::bin()
        .args(args.split_whitespace())
        .current_dir(&dir)
        .env_remove("PETSTORE_API_KEY")
        .env_remove("PETSTORE_BASE_URL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("CONFORMS against the built-in reference server"),
        "{stderr}"
    );
    use petstore_conformance::report::{CREATED_PETS_FILE, REPORT_FILES};
    for name in REPORT_FILES.into_iter().chain([CREATED_PETS_FILE]) {
        assert!(
            text.contains(&format!("`reports/{name}`")) && dir.join("reports").join(name).is_file(),
            "reports/{name}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn every_chapter_is_in_the_summary_and_every_link_leads_somewhere() {
    let summary = chapter("SUMMARY.md");
    for (path, text) in documents() {
        let name = path.file_name().unwrap().to_str().unwrap();
        if path.starts_with(root().join("docs/src")) && name != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("]({name})")),
                "{name} is not in SUMMARY.md"
            );
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let target = &rest[..rest.find(')').unwrap_or(rest.len())];
            let file = target.split('#').next().unwrap_or_default();
            if file.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = path.parent().unwrap().join(file);
            assert!(
                resolved.exists(),
                "{}: the link {target} leads to nothing",
                path.display()
            );
            // The built book holds only docs/src: a link out of it is a 404 there.
            assert!(
                !path.starts_with(root().join("docs/src")) || !file.starts_with("../"),
                "{}: the link {target} leaves the book (name the file in code instead)",
                path.display()
            );
        }
    }
}

/// The sub-commands and the options `petstore-conformance SUB --help` lists.
fn options_of(sub: &str) -> Option<String> {
    let output = common::bin().args([sub, "--help"]).output().unwrap();
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Every command line a document quotes: in code blocks and in inline code, a line continued
/// with `\\` joined to the next.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(continued) = line.strip_suffix('\\') {
            pending.push_str(continued);
            pending.push(' ');
            continue;
        }
        let whole = format!("{pending}{line}");
        pending.clear();
        for marker in ["petstore-conformance ", "cargo run --release -- "] {
            let mut from = 0;
            while let Some(at) = whole[from..].find(marker) {
                let start = from + at + marker.len();
                // Up to a comment, a pipe, another command or the end of the inline code.
                let end = whole[start..]
                    .find(['#', '|', '`', ';', ')'])
                    .map_or(whole.len(), |end| start + end);
                let end = whole[start..end].find("&&").map_or(end, |and| start + and);
                out.push(whole[start..end].trim().to_string());
                from = end;
            }
        }
    }
    out
}

#[test]
fn every_command_quoted_names_a_sub_command_and_options_it_has() {
    let mut checked = 0;
    let mut helps: std::collections::HashMap<String, Option<String>> = Default::default();
    for (path, text) in documents() {
        for command in commands(&text) {
            let mut words = command.split_whitespace();
            let Some(sub) = words.next() else { continue };
            // Prose ("petstore-conformance 0.1.0: ..."), file names and flags before a
            // sub-command are not commands.
            if !sub.chars().all(|c| c.is_ascii_lowercase() || c == '-') || sub.starts_with('-') {
                continue;
            }
            let help = helps
                .entry(sub.to_string())
                .or_insert_with(|| options_of(sub))
                .clone();
            let help = help
                .unwrap_or_else(|| panic!("{}: `{command}`: no sub-command {sub}", path.display()));
            for word in words.filter(|w| w.starts_with("--") && w.len() > 2) {
                let option = word.split('=').next().unwrap_or(word);
                assert!(
                    help.contains(&format!("{option} ")) || help.contains(&format!("{option}\n")),
                    "{}: `{command}`: {sub} has no option {option}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 30,
        "only {checked} commands found: is the parser still reading them?"
    );
}

#[test]
fn every_rule_fault_and_variant_named_exists() {
    let rules: Vec<String> = catalogue().rules.into_iter().map(|rule| rule.id).collect();
    let areas = [
        "auth/",
        "list-pets/",
        "create-pet/",
        "get-pet/",
        "sequences/",
        "deprecation/",
        "inputs/",
        "responses/",
    ];
    let mut named = 0;
    for (path, text) in documents() {
        for code in text.split('`').skip(1).step_by(2) {
            let code = code.trim();
            if areas.iter().any(|area| code.starts_with(area))
                && code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-/*<>".contains(c))
            {
                // A rule id, or a prefix that selects some (`list-pets/limit`, `responses/*`).
                let prefix = code.split(['*', '<']).next().unwrap_or(code);
                assert!(
                    rules.iter().any(|id| id.starts_with(prefix)),
                    "{}: `{code}` names no rule",
                    path.display()
                );
                named += 1;
            }
            for (flag, names) in [
                (
                    "--reference-fault ",
                    FAULTS.iter().map(|f| f.name).collect::<Vec<_>>(),
                ),
                ("--fault ", FAULTS.iter().map(|f| f.name).collect()),
                (
                    "--reference-variant ",
                    VARIANTS.iter().map(|v| v.name).collect(),
                ),
                ("--variant ", VARIANTS.iter().map(|v| v.name).collect()),
            ] {
                let mut rest = code;
                while let Some(at) = rest.find(flag) {
                    rest = &rest[at + flag.len()..];
                    let value = rest.split_whitespace().next().unwrap_or_default();
                    if value.starts_with(['N', '.', '<']) || value.is_empty() {
                        continue;
                    }
                    for name in value.split(',') {
                        assert!(
                            names.contains(&name),
                            "{}: no fault or variant {name}",
                            path.display()
                        );
                    }
                }
            }
        }
    }
    assert!(named >= 20, "only {named} rule ids found");
}

#[test]
fn the_guide_builds_with_mdbook() {
    let mdbook = std::env::var_os("MDBOOK").map(PathBuf::from).or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join("mdbook"))
            .find(|candidate| candidate.is_file())
    });
    let Some(mdbook) = mdbook else {
        eprintln!(
            "readme: mdbook is not installed; docs/ was NOT built (cargo install mdbook --locked)"
        );
        return;
    };
    let out = common::temp_dir("readme", "book");
    let output = Command::new(mdbook)
        .arg("build")
        .arg(root().join("docs"))
        .arg("--dest-dir")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "mdbook build docs:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(out.join("judging.html").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

/// The conforming stores the README and the judging chapter say every `cargo test` runs are the
/// ones tests/conformance runs.
#[test]
fn the_conforming_seeds_quoted_are_the_tests_own() {
    let source = std::fs::read_to_string(root().join("tests/conformance/conforming.rs")).unwrap();
    let ci_seeds = number_before(&source, "pub const CI_SEEDS: u64 = ", ";");
    assert_eq!(
        number_before(&readme(), "any of them: ", " seeds in every"),
        ci_seeds
    );
    assert_eq!(
        number_before(
            &chapter("judging.md"),
            "whole catalogue against ",
            " of them"
        ),
        ci_seeds
    );
}
