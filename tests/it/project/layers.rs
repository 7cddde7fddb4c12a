//! The house's floors (docs/src/architecture.md, "Layout"): a module may use only the modules on
//! floors below its own, so data flows one way and no import circle can form. The lowest
//! floors are crates of their own (`crates/vocabulary`, `crates/reference`), which the compiler
//! keeps below; inside a crate, the sources' own `use crate::...` and `crate::...::` paths are
//! read here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module and its floor. seed to outcome are the vocabulary crate's,
/// `reference` is the reference crate, the rest this crate's.
const FLOORS: [(&str, u8); 16] = [
    ("seed", 1),
    // JSON as RFC 8259 defines it: the one reader of bodies, for the harness and the reference.
    ("json", 1),
    ("contract", 1),
    ("catalogue", 2),
    ("outcome", 2),
    ("generation", 3),
    ("execution", 4),
    // The run engine (the run's state and recorder, scheduling, workers, the property runner,
    // the store setup) sits below the checks, which stand on it.
    ("engine", 5),
    ("rules", 6),
    ("report", 7),
    ("reference", 7),
    ("runner", 8),
    // The reference the program embeds, as the runner starts it; the command line (arguments,
    // profiles, sub-commands) and the binary that calls it.
    ("embedded", 9),
    ("cli", 10),
    ("main", 11),
    ("lib", 11),
];

/// The workspace's crates, each with the workspace crates it may depend on: a floor as the
/// compiler sees it. The top package (the CLI and its facade) embeds the reference.
const CRATES: [(&str, &[&str]); 4] = [
    ("crates/vocabulary", &[]),
    ("crates/reference", &["petstore-vocabulary"]),
    // The harness does not depend on the reference: the CLI hands the runner one to start.
    ("crates/harness", &["petstore-vocabulary"]),
    (
        ".",
        &[
            "petstore-harness",
            "petstore-reference",
            "petstore-vocabulary",
        ],
    ),
];

/// What `reference` may use of the vocabulary: the contract, the JSON reader and the seeds
/// (not the catalogue of rules it is judged by, nor the outcome).
const REFERENCE_USES: [&str; 3] = ["contract", "json", "seed"];

/// What `report` may use: it renders what the run found (the outcome, the rules as the catalogue
/// writes them, the contract they cite), with the redactor and the file writer; it reads no
/// check, no run state and no generator.
const REPORT_USES: [&str; 6] = [
    "outcome",
    "catalogue",
    "contract",
    "execution",
    "json",
    "seed",
];

pub(super) fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Each crate's source directory, the module every file of it belongs to when the crate is one
/// module of the house (`reference`), and the prefix its sources name the vocabulary by.
fn source_roots() -> Vec<(PathBuf, Option<&'static str>)> {
    vec![
        (root().join("src"), None),
        (root().join("crates/harness/src"), None),
        (root().join("crates/vocabulary/src"), None),
        (root().join("crates/reference/src"), Some("reference")),
    ]
}

fn module_of(path: &Path, src: &Path, whole: Option<&str>) -> String {
    if let Some(module) = whole {
        return module.to_string();
    }
    let relative = path.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap();
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

pub(super) fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Every Rust source of the workspace, by path from the repository's top.
fn all_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (src, _) in source_roots() {
        rust_files(&src, &mut files);
    }
    files.sort();
    files
}

fn shown(file: &Path) -> String {
    file.strip_prefix(root()).unwrap().display().to_string()
}

/// The modules a source names: `crate::x` within its crate (a crate that is one module names
/// only itself so), and the house's modules by the crates' names.
fn modules_named(text: &str, whole: Option<&str>) -> Vec<String> {
    let mut prefixes = vec!["petstore_conformance::", "petstore_vocabulary::"];
    if whole.is_none() {
        prefixes.push("crate::");
    }
    let mut named = Vec::new();
    for prefix in prefixes {
        for (at, _) in text.match_indices(prefix) {
            named.push(
                text[at + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect::<String>(),
            );
        }
    }
    if text.contains("petstore_reference::") {
        named.push("reference".into());
    }
    named
}

#[test]
fn every_import_points_down() {
    let floors: BTreeMap<&str, u8> = FLOORS.into_iter().collect();
    let mut wrong = Vec::new();
    for (src, whole) in source_roots() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let module = module_of(&file, &src, whole);
            let floor = floors[module.as_str()];
            let text = std::fs::read_to_string(&file).unwrap();
            for used in modules_named(&text, whole) {
                if used.is_empty() || used == module {
                    continue;
                }
                let Some(used_floor) = floors.get(used.as_str()) else {
                    wrong.push(format!("{}: uses unknown module {used}", shown(&file)));
                    continue;
                };
                let allowed = if module == "reference" {
                    REFERENCE_USES.contains(&used.as_str())
                } else if module == "report" {
                    REPORT_USES.contains(&used.as_str())
                } else {
                    *used_floor < floor
                };
                if !allowed {
                    wrong.push(format!(
                        "{} (floor {floor}) uses {used} (floor {used_floor})",
                        shown(&file)
                    ));
                }
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports that do not point down:\n{}",
        wrong.join("\n")
    );
}

/// The crates are floors: each depends on the workspace crates below it only, as its manifest
/// says (what `cargo tree` shows), and the vocabulary holds exactly the five lowest modules.
#[test]
fn the_crates_are_floors() {
    let workspace: Vec<&str> = CRATES
        .iter()
        .map(|(dir, _)| *dir)
        .filter(|dir| *dir != ".")
        .collect();
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let members: Vec<&str> = manifest["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(members, workspace);
    for (dir, allowed) in CRATES {
        let text = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
        let manifest: toml::Table = toml::from_str(&text).unwrap();
        let mut local: Vec<String> = ["dependencies", "dev-dependencies"]
            .iter()
            .filter_map(|table| manifest.get(*table).and_then(|t| t.as_table()))
            .flat_map(|table| table.keys())
            .filter(|name| name.starts_with("petstore-"))
            .cloned()
            .collect();
        local.sort();
        assert_eq!(
            local, allowed,
            "{dir}/Cargo.toml: the workspace crates it uses"
        );
    }
    let vocabulary = std::fs::read_to_string(root().join("crates/vocabulary/src/lib.rs")).unwrap();
    let mut modules: Vec<&str> = vocabulary
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    modules.sort();
    assert_eq!(
        modules,
        ["catalogue", "contract", "json", "outcome", "seed"]
    );
}

/// The names a file takes from its own directory: `super::name`, `super::{a::.., b}` and
/// `crate::<its module path>::name`.
fn names_from_its_directory(text: &str, module_path: &str) -> Vec<String> {
    let mut names = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut prefixes = vec!["super::".to_string()];
    if !module_path.is_empty() {
        prefixes.push(format!("crate::{module_path}::"));
    }
    for prefix in &prefixes {
        for (at, _) in text.match_indices(prefix.as_str()) {
            let rest = &text[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                names.extend(inner.split(',').map(|part| ident(part.trim())));
            } else {
                names.push(ident(rest));
            }
        }
    }
    names
}

/// The sibling modules a file names.
fn siblings_used(text: &str, module_path: &str, siblings: &[String]) -> Vec<String> {
    let mut names = names_from_its_directory(text, module_path);
    names.retain(|name| siblings.contains(name));
    names
}

/// No import circle between the files of one directory (a parent `mod.rs` and its children
/// excepted: that is how a module shows its parts).
#[test]
fn no_import_circle_between_sibling_files() {
    let mut dirs: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for file in all_sources() {
        let name = file.file_stem().unwrap().to_string_lossy();
        if name == "mod" || name == "main" || name == "lib" {
            continue;
        }
        dirs.entry(file.parent().unwrap().to_path_buf())
            .or_default()
            .push(file);
    }
    let mut circles = Vec::new();
    for (dir, files) in &dirs {
        let (src, _) = source_roots()
            .into_iter()
            .find(|(src, _)| dir.starts_with(src))
            .unwrap();
        let module_path = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let stem = |f: &PathBuf| f.file_stem().unwrap().to_string_lossy().to_string();
        let siblings: Vec<String> = files.iter().map(stem).collect();
        let edges: BTreeMap<String, Vec<String>> = files
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(f).unwrap();
                let mut used = siblings_used(&text, &module_path, &siblings);
                used.retain(|u| *u != stem(f));
                used.sort();
                used.dedup();
                (stem(f), used)
            })
            .collect();
        // A circle is a pair of files each reachable from the other.
        let reach = |from: &String| {
            let mut seen = std::collections::BTreeSet::new();
            let mut todo = vec![from.clone()];
            while let Some(at) = todo.pop() {
                for next in &edges[&at] {
                    if seen.insert(next.clone()) {
                        todo.push(next.clone());
                    }
                }
            }
            seen
        };
        for a in &siblings {
            for b in reach(a) {
                if *a < b && reach(&b).contains(a) {
                    circles.push(format!("{}: {a} <-> {b}", shown(dir)));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// The directories whose files hold what they share in files of their own, not in the parent
/// (`mod.rs`, or the file beside the directory): a file there names the sibling it takes a
/// type from, never its parent, so a newcomer finds each thing where its name says. (The
/// other directories, `reference/` among them, still keep some of theirs in the parent.)
const NO_PARENT_IMPORTS: [&str; 4] = ["engine", "report", "rules", "runner"];

/// The names a file takes from its parent module (`super::X` or `crate::<its module>::X`, X
/// not a sibling file or directory); a file's own inline test module is not counted.
fn parent_names_used(text: &str, module_path: &str, siblings: &[String]) -> Vec<String> {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut names = names_from_its_directory(text, module_path);
    names.retain(|name| !name.is_empty() && name != "super" && !siblings.contains(name));
    names.sort();
    names.dedup();
    names
}

#[test]
fn no_leaf_imports_its_parent() {
    let src = root().join("crates/harness/src");
    let mut files = Vec::new();
    for dir in NO_PARENT_IMPORTS {
        rust_files(&src.join(dir), &mut files);
    }
    let mut wrong = Vec::new();
    for file in files {
        let name = file.file_stem().unwrap().to_string_lossy();
        // A module's `tests.rs` tests its parent: it takes what it tests from there, as an
        // inline test module would.
        if name == "mod" || name == "tests" {
            continue;
        }
        let dir = file.parent().unwrap();
        let siblings: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                path.file_stem().unwrap().to_string_lossy().to_string()
            })
            .collect();
        let module_path = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let text = std::fs::read_to_string(&file).unwrap();
        let names = parent_names_used(&text, &module_path, &siblings);
        if !names.is_empty() {
            wrong.push(format!(
                "{}: {}",
                file.strip_prefix(&src).unwrap().display(),
                names.join(", ")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "files that take these from their parent module:\n{}",
        wrong.join("\n")
    );
}

/// A room a newcomer can read: no source file over 600 lines (split it into modules that
/// name their parts instead).
#[test]
fn no_source_file_over_600_lines() {
    let mut long: Vec<String> = all_sources()
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).unwrap().lines().count();
            (lines > 600).then(|| format!("{} ({lines} lines)", shown(file)))
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "source files over 600 lines:\n{}",
        long.join("\n")
    );
}

/// A function a newcomer can read: clippy's `too_many_lines` is on for the library and the
/// binary at the threshold `clippy.toml` holds (CI runs clippy with `-D warnings`), and no
/// function is let past it.
const LONG_FUNCTIONS_WAITING: [&str; 0] = [];

#[test]
fn functions_are_held_to_about_120_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let conf = std::fs::read_to_string(root.join("clippy.toml")).unwrap();
    assert!(
        conf.lines()
            .any(|line| line.trim() == "too-many-lines-threshold = 120"),
        "clippy.toml: {conf}"
    );
    for file in [
        "src/lib.rs",
        "src/main.rs",
        "crates/vocabulary/src/lib.rs",
        "crates/reference/src/lib.rs",
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            text.contains("#![warn(clippy::too_many_lines)]"),
            "{file} does not turn the function-length lint on"
        );
    }
    // Any other mention of the lint is an allowance (or an expectation) for one more.
    let mut allowed = sources_containing("clippy::too_many_lines");
    allowed.retain(|file| !file.ends_with("src/lib.rs") && file != "src/main.rs");
    assert_eq!(
        allowed, LONG_FUNCTIONS_WAITING,
        "functions let past the limit"
    );
}

/// The sources that contain `needle`, by path from the repository's top.
fn sources_containing(needle: &str) -> Vec<String> {
    all_sources()
        .iter()
        .filter(|file| std::fs::read_to_string(file).unwrap().contains(needle))
        .map(|file| shown(file))
        .collect()
}

/// Rules are named in data (`cases/`, the faults' and the predictions' JSON) and in tests, never
/// as a string literal in the code: a renamed rule is one edit, and the code that names one by
/// hand cannot drift from the catalogue.
#[test]
fn no_rule_id_literal_outside_data_and_tests() {
    let catalogue = petstore_conformance::catalogue::Catalogue::built_in().unwrap();
    let mut areas: Vec<String> = catalogue
        .rules
        .iter()
        .map(|rule| format!("\"{}/", rule.id.split('/').next().unwrap()))
        .collect();
    areas.sort();
    areas.dedup();
    let mut found = Vec::new();
    for file in all_sources() {
        let is_test = file.file_stem().is_some_and(|s| s == "tests")
            || file.components().any(|c| c.as_os_str() == "tests");
        if is_test {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or(&text);
        for area in &areas {
            for (at, _) in code.match_indices(area.as_str()) {
                let line = code[..at].lines().count();
                found.push(format!("{}:{line}", shown(&file)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "rule ids written in code:\n{}",
        found.join("\n")
    );
}

/// A file's name says what it holds wherever it is found: no two sources of the workspace share
/// one (a module's `mod.rs`, its `tests.rs` and a crate's `lib.rs` and `main.rs` aside), so a
/// name in a stack trace, a search or a review is one file.
#[test]
fn file_names_are_unique_across_the_tree() {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in all_sources() {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        if ["mod.rs", "tests.rs", "lib.rs", "main.rs"].contains(&name.as_str()) {
            continue;
        }
        seen.entry(name).or_default().push(shown(&file));
    }
    let repeated: Vec<String> = seen
        .into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(name, files)| format!("{name}: {}", files.join(", ")))
        .collect();
    assert!(
        repeated.is_empty(),
        "file names used twice:\n{}",
        repeated.join("\n")
    );
}

/// No lifetime is erased by hand: work shared between threads borrows through scopes the
/// compiler checks, never through a `transmute` whose soundness rests on a guard's drop order.
#[test]
fn no_transmute_in_the_sources() {
    let found = sources_containing("transmute");
    assert!(found.is_empty(), "transmute in: {}", found.join(", "));
}

/// The program owns its memory policy, in one place: the allocator is chosen in main.rs (the
/// library leaves it to whatever links it), and nothing tunes it from a module or from outside
/// (no `mallopt`, no `GLIBC_TUNABLES`, no starting itself again).
#[test]
fn the_allocator_is_chosen_in_main_only() {
    assert_eq!(
        sources_containing("#[global_allocator]"),
        vec!["src/main.rs"]
    );
    for tuning in ["mallopt", "GLIBC_TUNABLES", "/proc/self/exe"] {
        let found = sources_containing(tuning);
        assert!(found.is_empty(), "{tuning} in: {}", found.join(", "));
    }
}

/// The allocator's settings are built into the program, not read from the environment it
/// starts in: jemalloc's own statistics (printed at exit when asked) show them in force.
#[test]
fn the_program_runs_on_jemalloc_with_its_settings_built_in() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_petstore-conformance"))
        .arg("rules")
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stats = String::from_utf8_lossy(&out.stderr);
    for setting in [
        "opt.narenas: 1\n",
        "opt.tcache: false\n",
        "opt.oversize_threshold: 262144\n",
    ] {
        assert!(stats.contains(setting), "{setting:?} not in:\n{stats}");
    }
}
