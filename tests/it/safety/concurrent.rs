//! Runs racing into one report directory each leave whole files, never a mix.

use std::time::Duration;

use serde_json::Value;

use crate::common;

use common::process::{Running, run_command};
use common::read_json;

use super::{partial_files, temp_dir};

#[test]
fn concurrent_runs_into_one_report_dir() {
    let dir = temp_dir("concurrent");
    for round in 0..3u64 {
        let seeds: Vec<String> = (1..=4).map(|n| (round * 10 + n).to_string()).collect();
        let running: Vec<Running> = seeds
            .iter()
            .map(|seed| Running::start(&mut run_command(&["--seed", seed], None, &dir)))
            .collect();
        for (seed, run) in seeds.iter().zip(running) {
            let finished = run.wait(Duration::from_secs(90));
            finished.assert_no_panic();
            assert_eq!(finished.code, Some(0), "seed {seed}: {}", finished.stderr());
        }
        let report = read_json(&dir.join("report.json"));
        let seed = report["seed"].as_u64().unwrap().to_string();
        assert!(seeds.contains(&seed), "round {round}: seed {seed}");
        let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        assert!(
            junit.contains(&format!("<property name=\"seed\" value=\"{seed}\"")),
            "round {round}: report.json is seed {seed}, junit.xml is not"
        );
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(
            summary.contains(&format!("seed `{seed}`")),
            "round {round}: report.json is seed {seed}, summary.md is not"
        );
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(
            html.contains(&format!("<code id=\"seed\">{seed}</code>")),
            "round {round}: report.json is seed {seed}, report.html is not"
        );
        let created = std::fs::read_to_string(dir.join("created-pets.jsonl")).unwrap();
        assert_eq!(
            created.lines().count() as u64,
            report["created_pets"]["count"].as_u64().unwrap(),
            "round {round}: created-pets.jsonl is not report.json's"
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
                "round {round}: {line} is not from the run of report.json ({prefix})"
            );
        }
        assert_eq!(partial_files(&dir), Vec::<String>::new(), "round {round}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
