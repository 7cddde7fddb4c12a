//! No circle between the files of the harness, across folders and through `mod.rs` too: a file
//! that names another's items (by `crate::`, `super::` or a child's path) depends on it, and no
//! two files may each depend, at any remove, on the other. A module's `mod` lines and the
//! re-exports that show its parts are structure, not use; what a `mod.rs` calls is use.
//!
//! The circles the tree had when this test came are listed, to be taken apart (issue 37: the
//! run, its store setup and the context a check is handed); a new one fails, and so does a
//! listed one that is gone, so the list only shrinks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::layers::{root, rust_files};

/// The circles of the harness's files still waiting to be taken apart, each its modules sorted:
/// none (the last, the run, its store setup and the check context, went when the store setup
/// took a `StoreAccess` in place of the context).
const CIRCLES_WAITING: &[&[&str]] = &[];

/// The crates whose files are read for circles: the harness and the CLI above it.
const CRATE_SOURCES: [&str; 2] = ["crates/harness/src", "src"];

/// Every module of a crate by its path (`engine::run`; the crate's root is ``).
fn modules(src: &str) -> BTreeMap<String, PathBuf> {
    let src = root().join(src);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                parts.clear();
            }
            (parts.join("::"), file)
        })
        .collect()
}

/// The module a path names: its longest prefix that is a module.
fn resolve(modules: &BTreeMap<String, PathBuf>, segments: &[String]) -> Option<String> {
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find(|path| modules.contains_key(path))
}

/// The paths a source names (`a::b::C`, and each item of `a::{b, c::D}`), as segments.
fn paths(text: &str) -> Vec<Vec<String>> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if !is_ident(chars[at]) || (at > 0 && (is_ident(chars[at - 1]) || chars[at - 1] == ':')) {
            at += 1;
            continue;
        }
        let (segments, end) = path_at(&chars, at);
        if segments.len() > 1 || chars.get(end) == Some(&'{') {
            if chars.get(end) == Some(&'{') {
                // `prefix::{a, b::c}`: each item after the prefix.
                let close = (end..chars.len())
                    .find(|&i| chars[i] == '}')
                    .unwrap_or(chars.len());
                let inner: String = chars[end + 1..close].iter().collect();
                for item in inner.split(',') {
                    let item: Vec<char> = item.trim().chars().collect();
                    let (more, _) = path_at(&item, 0);
                    found.push(segments.iter().cloned().chain(more).collect());
                }
            } else {
                found.push(segments);
            }
        }
        at = end.max(at + 1);
    }
    found
}

/// The `a::b::` path starting at `at`: its segments, and where it ends (after a trailing `::`).
fn path_at(chars: &[char], mut at: usize) -> (Vec<String>, usize) {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut segments = Vec::new();
    loop {
        let start = at;
        while at < chars.len() && is_ident(chars[at]) {
            at += 1;
        }
        if at == start {
            break;
        }
        segments.push(chars[start..at].iter().collect());
        if chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            break;
        }
    }
    (segments, at)
}

/// The modules `module` depends on: what its code names, outside its tests, comments, `mod`
/// lines and `pub use` re-exports of its own children.
fn depends_on(modules: &BTreeMap<String, PathBuf>, module: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(&modules[module]).unwrap();
    let code = text.split("#[cfg(test)]").next().unwrap_or(&text);
    let here: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let lines: String = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .filter(|line| {
            let line = line.trim_start();
            !(line.starts_with("mod ")
                || line.starts_with("pub mod ")
                || line.starts_with("pub(crate) mod "))
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut used = BTreeSet::new();
    for path in paths(&lines) {
        let absolute: Vec<String> = match path[0].as_str() {
            "crate" => path[1..].to_vec(),
            "super" => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let base = &here[..here.len().saturating_sub(ups)];
                base.iter()
                    .cloned()
                    .chain(path[ups..].iter().cloned())
                    .collect()
            }
            "self" => here
                .iter()
                .cloned()
                .chain(path[1..].iter().cloned())
                .collect(),
            _ => here.iter().cloned().chain(path.iter().cloned()).collect(),
        };
        let Some(target) = resolve(modules, &absolute) else {
            continue;
        };
        // A child named from its parent's own path: a child's `pub use` in the parent is how
        // the module shows its parts, not a use of them.
        let child_of_here = target.len() > module.len() && target.starts_with(module);
        let reexport = child_of_here && is_reexport(&lines, &path);
        if target != module && !reexport {
            used.insert(target);
        }
    }
    used
}

/// Whether `path` is named only by a `pub use` line of the file.
fn is_reexport(lines: &str, path: &[String]) -> bool {
    let spelled = path.join("::");
    let head = path.first().map(String::as_str).unwrap_or("");
    lines
        .lines()
        .filter(|line| line.contains(head))
        .all(|line| {
            !line.contains(&spelled)
                || line.trim_start().starts_with("pub use ")
                || line.trim_start().starts_with("pub(crate) use ")
        })
}

/// The groups of modules each reachable from every other (strongly connected), larger than one.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(at) = todo.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (module, from_it) in &reached {
        let group: Vec<String> = from_it
            .iter()
            .filter(|other| reached[other].contains(*module))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

#[test]
fn no_import_circle_between_files() {
    let mut found = Vec::new();
    for src in CRATE_SOURCES {
        let modules = modules(src);
        assert!(modules.len() > 5, "{src}: {modules:?}");
        let edges: BTreeMap<String, BTreeSet<String>> = modules
            .keys()
            .map(|module| (module.clone(), depends_on(&modules, module)))
            .collect();
        found.extend(circles(&edges));
    }
    let waiting: Vec<Vec<String>> = CIRCLES_WAITING
        .iter()
        .map(|circle| circle.iter().map(|m| m.to_string()).collect())
        .collect();
    assert_eq!(
        found, waiting,
        "the circles between files (left) are not the ones waiting (right)"
    );
}

/// The reading finds a circle where there is one: two files that name each other's items.
#[test]
fn a_circle_is_found() {
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    edges.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    edges.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    edges.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&edges), vec![vec!["a", "b", "c"]]);
    let text = "use super::{ctx::RuleCtx, run};\nlet x = crate::engine::run::Run::new();";
    let named = paths(text);
    assert!(named.contains(&vec!["super".into(), "ctx".into(), "RuleCtx".into()]));
    assert!(named.contains(&vec!["super".into(), "run".into()]));
    assert!(named.contains(&vec![
        "crate".into(),
        "engine".into(),
        "run".into(),
        "Run".into(),
        "new".into()
    ]));
}
