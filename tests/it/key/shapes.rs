//! Keys of any shape: every rule decides whatever the key is made of. A key of digits only has
//! no other case, so its case-swapped near miss is the key shifted (each digit to the next),
//! still another token the store must refuse, and the run conforms.

use crate::common;

use super::{run, temp_dir};

#[test]
fn a_key_of_digits_only_conforms_against_the_reference() {
    let key = "482915736021";
    let (_server, base_url) = common::serve_reference(key, &[]);
    let dir = temp_dir("digits-key");
    let output = run(
        &["--base-url", &base_url, "--seed", "5", "--cases", "4"],
        key,
        &dir.join("reports"),
    );
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("CONFORMS"), "{said}");
    let report = common::read_json(&dir.join("reports/report.json"));
    let verdicts = common::verdicts(&report);
    let case_swapped = verdicts
        .iter()
        .find(|(id, _)| id == "auth/near-miss/case-swapped")
        .expect("the rule is in the report");
    assert_eq!(case_swapped.1, "passed", "{verdicts:?}");
    assert!(
        !verdicts
            .iter()
            .any(|(id, verdict)| id.starts_with("auth/") && verdict != "passed"),
        "every rule of the key decided and passed: {verdicts:?}"
    );
    for entry in std::fs::read_dir(dir.join("reports")).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        assert!(!text.contains(key), "{} holds the key", path.display());
    }
    let _ = std::fs::remove_dir_all(dir);
}
