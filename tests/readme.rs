//! The README's figures are the catalogue's, not typed by hand: the number of rules and the
//! concurrency rules' clients and rounds follow `cases/`.

use std::path::Path;

use petstore_conformance::catalogue::Catalogue;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
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
    let readme = readme();
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
    assert_eq!(distinct["rounds"], 3, "the README says three rounds");
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
