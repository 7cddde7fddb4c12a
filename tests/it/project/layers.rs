//! The house's floors (docs/src/architecture.md, "Layout"): a module may use only the modules on floors below
//! its own, so data flows one way and no import circle can form. Read from the sources' own
//! `use crate::...` and `crate::...::` paths.

use std::collections::BTreeMap;
use std::path::Path;

/// Each top-level module and its floor; `reference` is a program of its own beside the house.
const FLOORS: [(&str, u8); 15] = [
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
    // The command line (arguments, profiles, sub-commands) and the binary that calls it.
    ("cli", 9),
    ("main", 10),
    ("lib", 10),
];

/// What `reference` may use, besides the floor rule: the contract, the JSON reader and the seeds.
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

fn module_of(path: &Path, src: &Path) -> String {
    let relative = path.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap();
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

fn rust_files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let floors: BTreeMap<&str, u8> = FLOORS.into_iter().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let module = module_of(&file, &src);
        let floor = floors[module.as_str()];
        let text = std::fs::read_to_string(&file).unwrap();
        let uses = text
            .match_indices("crate::")
            .chain(text.match_indices("petstore_conformance::"))
            .map(|(at, prefix)| {
                text[at + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect::<String>()
            });
        for used in uses {
            if used.is_empty() || used == module {
                continue;
            }
            let Some(used_floor) = floors.get(used.as_str()) else {
                wrong.push(format!("{}: uses unknown module {used}", file.display()));
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
                    file.strip_prefix(&src).unwrap().display()
                ));
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut dirs: BTreeMap<std::path::PathBuf, Vec<std::path::PathBuf>> = BTreeMap::new();
    for file in files {
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
        let module_path = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let stem = |f: &std::path::PathBuf| f.file_stem().unwrap().to_string_lossy().to_string();
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
                    circles.push(format!(
                        "src/{}: {a} <-> {b}",
                        dir.strip_prefix(&src).unwrap().display()
                    ));
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for dir in NO_PARENT_IMPORTS {
        rust_files(&src.join(dir), &mut files);
    }
    let mut wrong = Vec::new();
    for file in files {
        let name = file.file_stem().unwrap().to_string_lossy();
        if name == "mod" {
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).unwrap().lines().count();
            (lines > 600).then(|| {
                format!(
                    "{} ({lines} lines)",
                    file.strip_prefix(&src).unwrap().display()
                )
            })
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
    for file in ["src/lib.rs", "src/main.rs"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(
            text.contains("#![warn(clippy::too_many_lines)]"),
            "{file} does not turn the function-length lint on"
        );
    }
    // Any other mention of the lint is an allowance (or an expectation) for one more.
    let mut allowed = sources_containing("clippy::too_many_lines");
    allowed.retain(|file| file != "lib.rs" && file != "main.rs");
    assert_eq!(
        allowed, LONG_FUNCTIONS_WAITING,
        "functions let past the limit"
    );
}

/// The sources that contain `needle`, by path under src/.
fn sources_containing(needle: &str) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found: Vec<String> = files
        .iter()
        .filter(|file| std::fs::read_to_string(file).unwrap().contains(needle))
        .map(|file| file.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    found.sort();
    found
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
    assert_eq!(sources_containing("#[global_allocator]"), vec!["main.rs"]);
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
