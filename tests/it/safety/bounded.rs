//! Nothing runs for ever: every run is bounded, by `--time-budget` or by a default
//! bound from its work; a target that stalls mid-body, frames its answers wrongly or throttles
//! everything ends the run within seconds; every file a user names is read with a bound; a
//! signal ends every process; a closed stdout ends a run quietly, its reports written.
//!
//! Each hang case runs against a raw-TCP target of `common::servers`, with a small timeout or
//! throttle wait where the bound follows from them, so that each test takes seconds.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;

use common::servers::{self, json_head};
use common::{serve_reference, temp_dir};

const KEY: &str = "bounded-test-key-31f9";

/// `run ARGS` into `dir` with the key, timed.
fn run(args: &[&str], dir: &Path) -> (Output, Duration) {
    let started = Instant::now();
    let output = common::bin()
        .arg("run")
        .args(args)
        .args(["--no-regressions", "--report-dir"])
        .arg(dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PETSTORE_BASE_URL")
        .env("PETSTORE_API_KEY", KEY)
        .output()
        .expect("binary runs");
    (output, started.elapsed())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("a report is written");
    serde_json::from_str(&text).unwrap()
}

fn rules_with(report: &Value, verdict: &str) -> Vec<Value> {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|rule| rule["verdict"] == verdict)
        .cloned()
        .collect()
}

#[test]
fn a_body_that_stalls_mid_way_stops_the_run_as_silence_does() {
    // Each answer's head at once, then its body a byte each half second: no answer completes
    // within the timeout. Before, each stall counted as an answer and the run went on for ever.
    let url = servers::raw(|_, _, stream| {
        if stream
            .write_all(json_head("200 OK", 100).as_bytes())
            .is_err()
        {
            return false;
        }
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(500));
            if stream.write_all(b" ").is_err() {
                return false;
            }
        }
        true
    });
    let dir = temp_dir("bounded", "stall");
    let (output, elapsed) = run(&["--base-url", &url, "--timeout", "2"], &dir);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    // The preflight's timeout, the first wave's, and start-up.
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    let report = report(&dir);
    common::assert_valid_report(&report);
    assert_eq!(report["conformance"], "undetermined");
    let stopped = report["target"]["stopped_answering"].as_str().unwrap_or("");
    assert!(
        stopped.contains("consecutive") && stopped.contains("timed out"),
        "{stopped}"
    );
    assert!(
        rules_with(&report, "failed").is_empty(),
        "a stall is no evidence"
    );
}

#[test]
fn a_content_length_shorter_than_the_body_is_judged_as_declared_and_the_run_goes_on() {
    // Five bytes declared, a listing sent: the rest lands where the next answer's head should
    // be on a kept connection. Each answer is what its framing declared, its connection is
    // dropped, and the default run ends (it ran past 120 s).
    let body = br#"[{"id":1,"name":"rex","status":"available"}]"#;
    let url = servers::raw(move |_, _, stream| {
        stream.write_all(json_head("200 OK", 5).as_bytes()).is_ok()
            && stream.write_all(body).is_ok()
    });
    let dir = temp_dir("bounded", "short-length");
    let (output, elapsed) = run(&["--base-url", &url], &dir);
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}");
    // The five bytes declared are not JSON: the target does not conform, on evidence.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = report(&dir);
    common::assert_valid_report(&report);
    let failed = rules_with(&report, "failed");
    assert!(!failed.is_empty());
    for rule in &failed {
        let body = rule["failure"]["response"]["body"].as_str().unwrap_or("");
        assert!(
            body.is_empty() || body == r#"[{"id"#,
            "{}: judged on more than the declared bytes: {body:?}",
            rule["id"]
        );
    }
    assert!(report["target"]["stopped_answering"].is_null());
}

#[test]
fn a_target_that_goes_down_mid_run_is_blamed_for_no_silence() {
    // The reference behind a front that forwards the first 60 requests, then closes every
    // connection unanswered: a server gone down mid-run. Requests in flight then were answered
    // by none, though others were answered while they waited: no evidence against an
    // operation. The run ends undetermined, every rule it failed failed on a whole answer, and
    // few requests reach the server once it is down: the tries in flight, then one at a time
    // after pauses that grow, not every request the rules had queued.
    let (_server, upstream) = serve_reference(KEY, &[]);
    let upstream = servers::authority(&upstream);
    let after_down = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&after_down);
    let url = servers::raw(move |request, n, client| {
        if n > 60 {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return false;
        }
        let Some(answer) = servers::forward(&upstream, request) else {
            return false;
        };
        client.write_all(answer.head.as_bytes()).is_ok() && client.write_all(&answer.body).is_ok()
    });
    let dir = temp_dir("bounded", "goes-down");
    let (output, elapsed) = run(&["--base-url", &url, "--timeout", "1"], &dir);
    let report = report(&dir);
    let failed = common::failed_rules(&report);
    assert!(failed.is_empty(), "failed on silence: {failed:#?}");
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    // The tries in flight when it went down (at most the level, 64 against a near target), the
    // 16 in a row that show it quiet, then 7 alone after pauses (hundreds before).
    let sent = after_down.load(std::sync::atomic::Ordering::SeqCst);
    use petstore_conformance::execution::lanes::{NEAR_LEVEL, START};
    let bound = NEAR_LEVEL + 2 * START + 8;
    eprintln!("{sent} requests after the target went down, in {elapsed:?}");
    assert!(
        sent <= bound,
        "{sent} requests reached the target once down (at most {bound})"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_target_throttling_everything_is_undetermined_within_seconds_of_the_wait() {
    // The reference behind a gateway that lets 20 requests through, then throttles every one
    // (429, Retry-After: 1): the run ends undetermined within seconds of its throttle wait,
    // however many requests the throttling answers.
    let (_server, upstream) = serve_reference(KEY, &[]);
    let url = servers::proxy(&upstream, |_, n| {
        let body = r#"{"code":"throttled","message":"slow down","status":429}"#;
        (n > 20).then(|| {
            let head = json_head("429 Too Many Requests", body.len());
            format!(
                "{}{body}",
                head.replace("\r\n\r\n", "\r\nRetry-After: 1\r\n\r\n")
            )
            .into_bytes()
        })
    });
    let dir = temp_dir("bounded", "throttled");
    let (output, elapsed) = run(&["--base-url", &url, "--max-throttle-wait", "2"], &dir);
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report = report(&dir);
    common::assert_valid_report(&report);
    assert_eq!(report["conformance"], "undetermined");
    let stopped = report["target"]["stopped_answering"].as_str().unwrap_or("");
    assert!(stopped.contains("throttled"), "{stopped}");
    assert!(
        rules_with(&report, "failed").is_empty(),
        "a 429 is no failure"
    );
    // 429s lower the level, as other overloads do.
    let connections = &report["connections"];
    assert!(
        connections["backoffs"].as_u64().unwrap() > 0,
        "{connections}"
    );
    assert!(
        connections["concurrency_final"].as_u64() < connections["concurrency_reached"].as_u64(),
        "{connections}"
    );
}

#[test]
fn without_a_time_budget_a_slow_target_is_cut_by_the_default_bound() {
    // A conforming target 300 ms away, every request one after another: far too slow for the
    // bound that --timeout 1 and --cases 0 give (2 s of waits and 64 round trips of 0.1 s).
    // What was judged stands; what the bound cut is inconclusive, and the run undetermined.
    let dir = temp_dir("bounded", "default-bound");
    let args = [
        "--reference-latency",
        "300ms",
        "--timeout",
        "1",
        "--cases",
        "0",
        "--max-throttle-wait",
        "0",
        "--concurrency",
        "1",
        "--test-threads",
        "1",
    ];
    let (output, elapsed) = run(&args, &dir);
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report = report(&dir);
    assert_eq!(report["conformance"], "undetermined");
    assert!(rules_with(&report, "failed").is_empty());
    assert!(!rules_with(&report, "passed").is_empty());
    let cut = rules_with(&report, "inconclusive")
        .into_iter()
        .filter(|rule| {
            rule["reason"]
                .as_str()
                .is_some_and(|r| r.contains("the run's default time budget (8 s"))
        })
        .count();
    assert!(cut > 0, "no rule says the default bound cut it");
}

/// The lines of the run's `created-pets.jsonl`: one per pet it created.
fn pets_listed(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("created-pets.jsonl"))
        .expect("the created pets are listed")
        .lines()
        .count()
}

#[test]
fn a_time_budget_creates_no_more_pets_than_max_pets_and_says_it_stopped_there() {
    // A budget used to create pets as fast as the rules could send them (199,061 in two
    // minutes of a 5 m budget): on a shared store, with no delete, that is damage.
    let dir = temp_dir("bounded", "max-pets");
    let (output, _) = run(&["--time-budget", "3", "--max-pets", "50"], &dir);
    let report = report(&dir);
    let created = &report["created_pets"];
    let count = created["count"].as_u64().unwrap();
    assert!(count <= 50, "{count} pets created under --max-pets 50");
    assert_eq!(pets_listed(&dir) as u64, count);
    assert_eq!(created["cap"]["max_pets"], 50, "{created}");
    assert_eq!(created["cap"]["reached"], true, "{created}");
    assert!(
        stderr(&output).contains(&format!(
            "created {count} pets (the --max-pets cap of 50, reached)"
        )),
        "{}",
        stderr(&output)
    );
    // A re-run is held to the same cap.
    assert!(report["rerun"].as_str().unwrap().contains("--max-pets 50"));
}

#[test]
fn a_default_run_creates_no_more_pets_than_before() {
    // A default run created 520 pets on the target. The population fixture makes its page of
    // the other rules' pets (it waits for the rules that store many, which are queued first,
    // and gives them a moment to start: it made 79 of its own in a run in five when they
    // started after it), the round trip reads back valid/created's pets, the distinct-ids
    // burst is one round of 24 creates and all-listed's 8, sequences have at most 6 steps: 184
    // at this seed, 176 to 198 over seeds 1 to 20.
    let dir = temp_dir("bounded", "default-pets");
    let (output, _) = run(&["--seed", "7"], &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = report(&dir);
    let count = report["created_pets"]["count"].as_u64().unwrap();
    assert!(count <= 200, "a default run created {count} pets");
    assert_eq!(pets_listed(&dir) as u64, count);
    assert!(
        report["created_pets"].get("cap").is_none(),
        "no cap without a budget"
    );
    assert!(
        stderr(&output).contains(&format!("created {count} pets, named")),
        "{}",
        stderr(&output)
    );
}

/// Waits for `child` with its resource usage: the exit code and the peak RSS in kB.
fn wait_measured(child: &std::process::Child) -> (Option<i32>, u64) {
    let mut status = 0;
    // SAFETY: plain out-parameters; the child is ours and not yet waited for.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, usage.ru_maxrss as u64)
}

#[test]
fn a_named_file_that_is_no_regular_file_or_too_large_is_refused_at_once() {
    if !common::process::alone(
        module_path!(),
        "a_named_file_that_is_no_regular_file_or_too_large_is_refused_at_once",
    ) {
        return;
    }
    let dir = temp_dir("bounded", "files");
    let fifo = dir.join("fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let fifo = fifo.to_str().unwrap().to_string();
    // A report directory whose report.json is the FIFO, for merge and verify-report.
    let shard = dir.join("shard");
    std::fs::create_dir_all(&shard).unwrap();
    std::os::unix::fs::symlink(&fifo, shard.join("report.json")).unwrap();
    let shard = shard.to_str().unwrap().to_string();
    let large = dir.join("large.toml");
    std::fs::File::create(&large)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let large = large.to_str().unwrap().to_string();
    let base = ["--base-url", "http://127.0.0.1:9/v1"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&["run"], &base[..], &["--api-key-file", "/dev/zero"]].concat(),
            "/dev/zero",
        ),
        (
            [&["run"], &base[..], &["--api-key-file", &fifo]].concat(),
            &fifo,
        ),
        (vec!["run", "--config", "/dev/zero"], "/dev/zero"),
        (vec!["run", "--config", &fifo], &fifo),
        (vec!["run", "--config", &large], &large),
        (vec!["run", "--known-failures", &fifo], &fifo),
        (vec!["run", "--regressions", &fifo], &fifo),
        (vec!["run", "--ca-cert", "/dev/zero"], "/dev/zero"),
        (vec!["run", "--sign-key", &fifo], &fifo),
        (vec!["compare", "/dev/zero", &fifo], "/dev/zero"),
        (vec!["compare", &large, &fifo], &large),
        (vec!["replay", &fifo, "list-pets/limit/huge"], &fifo),
        (
            vec!["merge", &shard, "--report-dir", "/nonexistent/out"],
            &shard,
        ),
        (vec!["verify-report", &shard], &shard),
    ];
    for (args, named) in cases {
        let started = Instant::now();
        // Reaped by `wait_measured` (wait4, for its peak RSS), not by `Child::wait`.
        #[allow(clippy::zombie_processes)]
        let mut child = common::bin()
            .args(&args)
            .current_dir(&dir)
            // One case is a --regressions file.
            .env_remove("PETSTORE_NO_REGRESSIONS")
            .env("PETSTORE_API_KEY", KEY)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut said = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
        let (code, peak_kb) = wait_measured(&child);
        let elapsed = started.elapsed();
        assert_eq!(code, Some(2), "{args:?}: {said}");
        assert!(
            elapsed < Duration::from_secs(2),
            "{args:?} took {elapsed:?}"
        );
        assert!(peak_kb < 64 * 1024, "{args:?}: peak RSS {peak_kb} kB");
        assert_eq!(said.lines().count(), 1, "{args:?}: {said}");
        assert!(said.contains(named), "{args:?}: {said}");
    }
}

/// Sends `signal` to `child` and waits at most `within` for it to end; its exit code.
fn signal_and_wait(child: &mut std::process::Child, signal: i32, within: Duration) -> Option<i32> {
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(
            sent.elapsed() < within,
            "still running {within:?} after the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_reference_ends_on_the_first_signal_serving_or_not() {
    let start = || {
        let mut child = common::bin()
            .args(["serve-reference", "--port", "0", "--api-key", KEY])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        let url = line.trim().rsplit(' ').next().unwrap().to_string();
        (child, url)
    };
    // After serving a whole run: one SIGTERM.
    let (mut server, url) = start();
    let dir = temp_dir("bounded", "serve");
    let (output, _) = run(&["--base-url", &url], &dir);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        signal_and_wait(&mut server, libc::SIGTERM, Duration::from_secs(1)),
        Some(143)
    );
    // Before serving anything: one SIGINT.
    let (mut server, _) = start();
    assert_eq!(
        signal_and_wait(&mut server, libc::SIGINT, Duration::from_secs(1)),
        Some(130)
    );
}

#[test]
fn a_run_whose_stdout_is_closed_ends_quietly_with_its_reports() {
    // stdout a pipe nobody reads (`run | head -1` once head has gone): libtest's printer
    // panicked on the first line (exit 101, no report).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let dir = temp_dir("bounded", "closed-stdout");
    let output = common::bin()
        .args(["run", "--no-regressions", "--report-dir"])
        .arg(&dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PETSTORE_BASE_URL")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(report(&dir)["conformance"], "conforms");
    for file in ["junit.xml", "summary.md", "report.html"] {
        assert!(dir.join(file).is_file(), "{file} not written");
    }
}
