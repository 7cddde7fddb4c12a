//! `bench`'s shard figure: the default run, then its three shards (`--partition hash:K/3`)
//! at once, each in a process of its own as three CI runners would run them, against a
//! reference 50 ms away; the slowest shard's wall time beside the single run's, and whether
//! the merged verdicts equal the single run's.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

/// Three shards run at once against the single run.
#[derive(Debug, Serialize)]
pub struct Shards {
    pub latency_ms: u64,
    pub single_wall_ms: u64,
    /// Each shard's wall time, in shard order.
    pub shard_wall_ms: Vec<u64>,
    /// Until the last shard ended: what a CI matrix waits before merging.
    pub shards_wall_ms: u64,
    /// The merged report gives every rule the single run's verdict, and the same answer.
    pub merged_equals_single: bool,
}

/// `run` of the default suite against its own reference `latency` away, in a process of its
/// own: the command, ready to spawn.
fn run_process(
    latency: Duration,
    report_dir: &Path,
    partition: Option<&str>,
) -> Result<std::process::Command, String> {
    let mut command = std::process::Command::new(super::HARNESS);
    command
        .args(["run", "--no-regressions", "--seed", "3", "--no-progress"])
        .args(["--reference-latency", &format!("{}ms", latency.as_millis())])
        .arg("--report-dir")
        .arg(report_dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(partition) = partition {
        command.args(["--partition", partition]);
    }
    Ok(command)
}

fn read_report(dir: &Path) -> Result<petstore_conformance::report::Report, String> {
    let text = std::fs::read_to_string(dir.join("report.json")).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// The single run, then its three shards at once, each its own process (as three runners).
pub fn shards(latency: Duration) -> Result<Shards, String> {
    use petstore_conformance::report::merge::{Shard, merge};
    let dir = super::scratch::scratch("shards");
    let started = Instant::now();
    run_process(latency, &dir.join("single"), None)?
        .status()
        .map_err(|e| e.to_string())?;
    let single_wall_ms = started.elapsed().as_millis() as u64;
    let started = Instant::now();
    let mut children = Vec::new();
    for k in 1..=3 {
        let partition = format!("hash:{k}/3");
        let child = run_process(latency, &dir.join(format!("shard-{k}")), Some(&partition))?
            .spawn()
            .map_err(|e| e.to_string())?;
        children.push(child);
    }
    let mut shard_wall_ms = vec![0; children.len()];
    while shard_wall_ms.contains(&0) {
        for (child, wall) in children.iter_mut().zip(shard_wall_ms.iter_mut()) {
            if *wall == 0 && child.try_wait().map_err(|e| e.to_string())?.is_some() {
                *wall = (started.elapsed().as_millis() as u64).max(1);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let shards_wall_ms = started.elapsed().as_millis() as u64;
    let single = read_report(&dir.join("single"))?;
    let parts = (1..=3)
        .map(|k| {
            let dir = dir.join(format!("shard-{k}"));
            read_report(&dir).map(|report| Shard {
                source: dir.display().to_string(),
                report,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let merged = merge(&parts, None).map_err(|e| e.to_string())?;
    let verdicts = |report: &petstore_conformance::report::Report| -> Vec<(String, petstore_conformance::outcome::VerdictKind)> {
        report
            .rules
            .iter()
            .map(|r| (r.id.clone(), r.verdict))
            .collect()
    };
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Shards {
        latency_ms: latency.as_millis() as u64,
        single_wall_ms,
        shard_wall_ms,
        shards_wall_ms,
        merged_equals_single: verdicts(&merged) == verdicts(&single)
            && merged.conformance == single.conformance,
    })
}
