//! The house's floors (README, "Layout"): a module may use only the modules on floors below
//! its own, so data flows one way and no import circle can form. Read from the sources' own
//! `use crate::...` and `crate::...::` paths.

use std::collections::BTreeMap;
use std::path::Path;

/// Each top-level module and its floor; `reference` is a program of its own beside the house.
const FLOORS: [(&str, u8); 14] = [
    ("seed", 1),
    ("contract", 1),
    ("catalogue", 2),
    ("outcome", 2),
    ("generation", 3),
    ("execution", 4),
    ("rules", 5),
    ("report", 6),
    ("reference", 6),
    ("runner", 7),
    ("main", 8),
    ("config", 8),
    // The binary's parsing of durations, headers and the rule selection: config reads
    // profiles with it, so it sits below config.
    ("options", 7),
    ("lib", 8),
];

/// What `reference` may use, besides the floor rule: the contract and the seeds only.
const REFERENCE_USES: [&str; 2] = ["contract", "seed"];

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
