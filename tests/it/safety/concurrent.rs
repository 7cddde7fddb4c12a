//! One run into a report directory at a time: a second is refused naming the first, whose
//! reports and list of created pets are left whole.

use std::time::Duration;

use serde_json::Value;

use crate::common;

use common::process::{Running, run_command};
use common::read_json;

use super::{partial_files, temp_dir};

#[test]
fn a_second_run_into_a_held_report_dir_is_refused_naming_the_first() {
    let dir = temp_dir("concurrent");
    // A line left by a run that is gone (killed, its lock let go by the kernel): taken over.
    std::fs::write(
        dir.join(".lock"),
        "pid 999999999, started 2020-01-01T00:00:00Z",
    )
    .unwrap();
    let mut first = Running::start(&mut run_command(
        &["--seed", "1", "--cases", "4"],
        None,
        &dir,
    ));
    let holder = format!("pid {},", first.pid());
    let waiting = std::time::Instant::now();
    while !std::fs::read_to_string(dir.join(".lock")).is_ok_and(|said| said.starts_with(&holder)) {
        assert!(
            first.try_finish().is_none() && waiting.elapsed() < Duration::from_secs(30),
            "the first run never held the directory"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = Running::start(&mut run_command(
        &["--seed", "2", "--cases", "4"],
        None,
        &dir,
    ))
    .wait(Duration::from_secs(60));
    second.assert_no_panic();
    assert_eq!(second.code, Some(2), "{}", second.stderr());
    let said = second.stderr();
    assert!(
        said.contains(&format!("another run ({holder} started ")) && said.contains("--report-dir"),
        "{said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "one line: {said}");
    let finished = first.wait(Duration::from_secs(90));
    finished.assert_no_panic();
    assert_eq!(finished.code, Some(0), "{}", finished.stderr());
    // The reports and the list of created pets are the first run's, whole.
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["seed"].as_u64(), Some(1));
    let created = std::fs::read_to_string(dir.join("created-pets.jsonl")).unwrap();
    assert_eq!(
        created.lines().count() as u64,
        report["created_pets"]["count"].as_u64().unwrap()
    );
    let prefix = report["created_pets"]["run_prefix"].as_str().unwrap();
    for line in created.lines() {
        let pet: Value = serde_json::from_str(line).unwrap();
        let name = pet["name"].as_str().unwrap();
        // The request space's free names (`""`, `null`, `7`) carry no prefix; every other
        // name says whose run the file is.
        let free = !name.starts_with("pc-")
            && pet["rule"]
                .as_str()
                .unwrap()
                .starts_with("inputs/create-pet/");
        assert!(
            free || name.starts_with(prefix),
            "{line} is not the first run's"
        );
    }
    assert_eq!(partial_files(&dir), Vec::<String>::new());
    // Released at its end: the directory is free for the next run, and names no one.
    assert_eq!(std::fs::read_to_string(dir.join(".lock")).unwrap(), "");
    let _ = std::fs::remove_dir_all(dir);
}
