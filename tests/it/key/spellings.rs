//! Safety of a run: the key never written in any spelling, refusals of what cannot be run
//! safely, bounded runs against a target that stops answering, interrupts that leave whole
//! reports, concurrent runs into one directory, and memory that does not grow with the budget.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;

use common::{BIN, Server, serve_reference, servers};
use petstore_conformance::report::{CREATED_PETS_FILE, REPORT_FILES};

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("safety", name)
}

/// The binary with no PETSTORE_* variable inherited from whoever runs the tests.
fn binary() -> Command {
    let mut command = Command::new(BIN);
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PETSTORE_") {
            command.env_remove(name);
        }
    }
    command
}

/// `run ARGS --report-dir DIR --no-regressions`, with `key` in PETSTORE_API_KEY if given.
fn run_command(args: &[&str], key: Option<&str>, report_dir: &Path) -> Command {
    let mut command = binary();
    command
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(report_dir)
        .arg("--no-regressions");
    if let Some(key) = key {
        command.env("PETSTORE_API_KEY", key);
    }
    command
}

struct Finished {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    elapsed: Duration,
}

impl Finished {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    fn assert_no_panic(&self) {
        let all = format!("{}{}", self.stdout(), self.stderr());
        assert!(
            !all.contains("panicked") && !all.contains("RUST_BACKTRACE"),
            "the binary panicked:\n{all}"
        );
    }
}

/// A child whose output is drained as it comes (no pipe fills up), killed if dropped unfinished.
struct Running {
    child: Option<Child>,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
    started: Instant,
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

impl Running {
    fn start(command: &mut Command) -> Running {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("binary starts");
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        Running {
            child: Some(child),
            stdout: Some(stdout),
            stderr: Some(stderr),
            started: Instant::now(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Whether the child has ended (without reaping anything else).
    fn try_finish(&mut self) -> Option<Finished> {
        let status = self.child.as_mut().unwrap().try_wait().unwrap()?;
        self.child = None;
        Some(Finished {
            code: status.code(),
            stdout: self.stdout.take().unwrap().join().unwrap(),
            stderr: self.stderr.take().unwrap().join().unwrap(),
            elapsed: self.started.elapsed(),
        })
    }

    /// Waits at most `limit` from the start; past it, kills the child and fails the test.
    fn wait(mut self, limit: Duration) -> Finished {
        loop {
            if let Some(finished) = self.try_finish() {
                return finished;
            }
            if self.started.elapsed() > limit {
                let _ = self.child.as_mut().unwrap().kill();
                let _ = self.child.as_mut().unwrap().wait();
                let stderr = self.stderr.take().unwrap().join().unwrap();
                self.child = None;
                panic!(
                    "still running after {limit:?}; killed. stderr:\n{}",
                    String::from_utf8_lossy(&stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn run_to_end(command: &mut Command, limit: Duration) -> Finished {
    Running::start(command).wait(limit)
}

/// Reads a file written by a run; a report.json must also read back into the report model and
/// write out the same.
fn read_json(path: &Path) -> Value {
    if path.file_name().is_some_and(|name| name == "report.json") {
        let text = std::fs::read_to_string(path).unwrap();
        let report: petstore_conformance::report::Report =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let written: Value = serde_json::from_str(&text).unwrap();
        common::assert_valid_report(&written);
        assert_eq!(serde_json::to_value(&report).unwrap(), written);
    }
    read_json_value(path)
}

fn read_json_value(path: &Path) -> Value {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

fn rules(report: &Value) -> &Vec<Value> {
    report["rules"].as_array().expect("report.json has rules")
}

fn failed_rules(report: &Value) -> Vec<String> {
    rules(report)
        .iter()
        .filter(|rule| rule["verdict"] == "failed")
        .map(|rule| format!("{}: {}", rule["id"], rule["failure"]["observed"]))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. The key in every spelling a target or a renderer may give it.

/// A JSON string literal of `text`, quotes included.
fn json_literal(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A JSON string's contents, less the quotes.
fn json_inner(text: &str) -> String {
    let literal = json_literal(text);
    literal[1..literal.len() - 1].to_string()
}

/// A JSON string literal with every character that is not ASCII alphanumeric as `\uXXXX`.
fn unicode_literal(text: &str, upper_hex: bool) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if upper_hex {
            out.push_str(&format!("\\u{:04X}", c as u32));
        } else {
            out.push_str(&format!("\\u{:04x}", c as u32));
        }
    }
    out.push('"');
    out
}

fn xml_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// As report.html writes a text: `&#39;` for `'` (HTML has no `&apos;` of its own).
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Every spelling of `key` that must appear nowhere, named; compared ignoring ASCII case (so
/// the lowercase and uppercase forms are covered too).
fn spellings(key: &str) -> Vec<(&'static str, String)> {
    let json = json_inner(key);
    let unicode = unicode_literal(key, false);
    vec![
        ("raw", key.to_string()),
        ("JSON-escaped", json.clone()),
        ("JSON-escaped with \\/", json.replace('/', "\\/")),
        ("JSON-escaped twice", json_inner(&json)),
        ("\\u-escaped", unicode[1..unicode.len() - 1].to_string()),
        ("XML-escaped", xml_escaped(key)),
        ("XML-escaped JSON", xml_escaped(&json)),
        ("HTML-escaped", html_escaped(key)),
        (
            "HTML-escaped with &#x27;",
            html_escaped(key).replace("&#39;", "&#x27;"),
        ),
        ("HTML-escaped JSON", html_escaped(&json)),
        ("Markdown-escaped", key.replace('|', "\\|")),
        ("Markdown-escaped JSON", json.replace('|', "\\|")),
        ("percent-encoded", percent_encoded(key)),
    ]
}

/// Fails the test if any spelling of `secret` is in any of `written` (name, bytes).
fn assert_absent(secret: &str, written: &[(String, Vec<u8>)]) {
    for (form_name, form) in spellings(secret) {
        let form = form.to_ascii_lowercase();
        for (file, bytes) in written {
            let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
            if let Some(at) = text.find(&form) {
                let start = text[..at]
                    .char_indices()
                    .rev()
                    .nth(80)
                    .map_or(0, |(i, _)| i);
                let end = (at + form.len() + 80).min(text.len());
                let end = (end..=text.len())
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(text.len());
                panic!(
                    "the key {secret:?} leaked ({form_name} form) in {file}: ...{}...",
                    &text[start..end]
                );
            }
        }
    }
}

/// Every file under `dir` (hidden and temporary ones too), with its name.
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    files
}

/// A target that echoes the Authorization header back in every escaping it can think of.
fn echoing_target(key: &str) -> String {
    let key = key.to_string();
    let ids = AtomicUsize::new(1);
    servers::raw(move |request, n, stream| {
        let n = n - 1;
        let seen = request.header("authorization").unwrap_or("").to_string();
        let right = seen == format!("Bearer {key}");
        // Every other response escapes `/` as `\/`; the rest spell every non-alphanumeric
        // character as \uXXXX (lower or upper hex).
        let literal = |text: &str| match n % 4 {
            0 | 2 => json_literal(text).replace('/', "\\/"),
            1 => unicode_literal(text, false),
            _ => unicode_literal(text, true),
        };
        let echo = ("X-Seen-Authorization", seen.as_str());
        if !right {
            let body = format!(
                r#"{{"code":"unauthorized","message":{},"status":401}}"#,
                literal(&format!("bad credential: {seen}"))
            );
            let challenge = ("WWW-Authenticate", "Bearer");
            return servers::respond_json(stream, "401 Unauthorized", &[echo, challenge], &body);
        }
        match (request.method(), request.path()) {
            ("GET", "/v1/pets") => servers::respond_json(stream, "200 OK", &[echo], "[]"),
            ("POST", "/v1/pets") => {
                let parsed = serde_json::from_slice::<Value>(&request.body);
                let Ok(Value::Object(mut pet)) = parsed else {
                    let body = format!(
                        r#"{{"code":"bad-request","message":{},"status":400}}"#,
                        literal(&format!("not a pet, {key}"))
                    );
                    return servers::respond_json(stream, "400 Bad Request", &[echo], &body);
                };
                let id = ids.fetch_add(1, Ordering::SeqCst);
                pet.insert("id".into(), Value::from(id as i64));
                pet.insert("message".into(), Value::from(format!("created for {key}")));
                let mut body = serde_json::to_string(&Value::Object(pet)).unwrap();
                if n.is_multiple_of(2) {
                    body = body.replace('/', "\\/");
                }
                let location = format!("/v1/pets/{id}");
                let headers = [echo, ("Location", location.as_str())];
                servers::respond_json(stream, "201 Created", &headers, &body)
            }
            _ => {
                let body = format!(
                    r#"{{"code":"not-found","message":{},"status":404}}"#,
                    literal(&format!("nothing here for {key}"))
                );
                servers::respond_json(stream, "404 Not Found", &[echo], &body)
            }
        }
    })
}

#[test]
fn the_key_survives_no_escaping_target() {
    let keys = [
        r#"k&y|"<\>/'x-0123456789"#,
        r#"pipe|amp&lt<quote"back\slash/"#,
        "plainLongKeyQ7w3Z9x1-4f9a2c7e1b3d5f6a",
    ];
    // The three runs at once: each takes its whole time budget.
    let runs: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(n, key)| {
            let key = key.to_string();
            std::thread::spawn(move || {
                let url = echoing_target(&key);
                let dir = temp_dir(&format!("escaping-{n}"));
                let report_dir = dir.join("reports");
                let log = dir.join("requests.jsonl");
                let finished = run_to_end(
                    &mut run_command(
                        &[
                            "--base-url",
                            &url,
                            "--gate",
                            "all",
                            "--request-log",
                            log.to_str().unwrap(),
                            "--timeout",
                            "2",
                            "--time-budget",
                            "10",
                        ],
                        Some(&key),
                        &report_dir,
                    ),
                    Duration::from_secs(90),
                );
                (key, dir, report_dir, log, finished)
            })
        })
        .collect();
    for handle in runs {
        let (key, dir, report_dir, log, finished) = handle.join().unwrap();
        finished.assert_no_panic();
        assert!(
            matches!(finished.code, Some(0 | 1 | 3)),
            "{key:?}: exit {:?}\n{}",
            finished.code,
            finished.stderr()
        );
        let mut written = vec![
            ("stdout".to_string(), finished.stdout.clone()),
            ("stderr".to_string(), finished.stderr.clone()),
            (log.display().to_string(), std::fs::read(&log).unwrap()),
        ];
        let reports = files_in(&report_dir);
        for name in REPORT_FILES.into_iter().chain([CREATED_PETS_FILE]) {
            assert!(
                reports.iter().any(|(file, _)| file.ends_with(name)),
                "{key:?}: no {name} written"
            );
        }
        written.extend(reports);
        assert_absent(&key, &written);
        // The target's echoes reached the reports, redacted: the 401 bodies and the
        // X-Seen-Authorization header of failed rules' responses, the message of created pets.
        let report = read_json(&report_dir.join("report.json"));
        let responses: String = rules(&report)
            .iter()
            .filter_map(|rule| rule["failure"].get("response"))
            .map(Value::to_string)
            .collect();
        assert!(
            responses.contains("[REDACTED]"),
            "{key:?}: no failed rule shows a redacted echo of the key; failed: {:?}",
            failed_rules(&report)
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

// ---------------------------------------------------------------------------------------------
// 2. A key cut by --body-cap.

#[test]
fn a_key_straddling_the_body_cap_leaves_no_prefix() {
    let key = "zq9XkW-straddles-the-cap-7Hc2Lm";
    let prefix = &key[..6];
    // The key starts 6 bytes before byte 1024: a cap of 1024 bytes keeps `zq9XkW` only.
    let head = format!("{{\"pad\":\"{}\",\"echo\":\"", "a".repeat(1000));
    assert_eq!(head.len(), 1018);
    let body = format!("{head}{key}\",\"tail\":\"{}\"}}", "b".repeat(200));
    let url = servers::raw(move |_, _, stream| servers::respond_json(stream, "200 OK", &[], &body));
    let dir = temp_dir("body-cap");
    let report_dir = dir.join("reports");
    let log = dir.join("requests.jsonl");
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--gate",
                "all",
                "--body-cap",
                "1024",
                "--cases",
                "4",
                "--timeout",
                "2",
                "--request-log",
                log.to_str().unwrap(),
            ],
            Some(key),
            &report_dir,
        ),
        Duration::from_secs(60),
    );
    finished.assert_no_panic();
    // 200 where 401 is due: the auth rules fail, and show the cut body.
    assert_eq!(finished.code, Some(1), "{}", finished.stderr());
    let mut written = vec![
        ("stdout".to_string(), finished.stdout.clone()),
        ("stderr".to_string(), finished.stderr.clone()),
        (log.display().to_string(), std::fs::read(&log).unwrap()),
    ];
    written.extend(files_in(&report_dir));
    for (file, bytes) in &written {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text
                .to_ascii_lowercase()
                .contains(&prefix.to_ascii_lowercase()),
            "the key's first 6 characters {prefix:?} are in {file}"
        );
    }
    // The cut bodies are in the report, their end redacted.
    let report = read_json(&report_dir.join("report.json"));
    let cut: Vec<&str> = rules(&report)
        .iter()
        .filter_map(|rule| rule["failure"]["response"]["body"].as_str())
        .filter(|body| body.contains("\"echo\":\""))
        .collect();
    assert!(
        !cut.is_empty(),
        "no failed rule shows the cut body: {:?}",
        failed_rules(&report)
    );
    for body in cut {
        assert!(
            body.ends_with("\"echo\":\"[REDACTED]"),
            "{}",
            &body[body.len().saturating_sub(60)..]
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------------
// 3. What cannot be run safely is refused: exit 2 and one line.

/// Asserts a refusal: exit 2, no panic, and one line naming the problem on stderr (not even
/// the seed banner before it); returns that line.
fn assert_refused(finished: &Finished, what: &str) -> String {
    finished.assert_no_panic();
    let stderr = finished.stderr();
    assert_eq!(finished.code, Some(2), "{what}: {stderr}");
    let problems: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(problems.len(), 1, "{what}: not one line:\n{stderr}");
    assert!(
        finished.stdout.is_empty(),
        "{what}: stdout: {}",
        finished.stdout()
    );
    problems[0].to_string()
}

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn credentials_in_the_base_url_are_refused() {
    let dir = temp_dir("credentials");
    let counting = servers::counting();
    let port = counting.port();
    for url in [
        format!("http://user:s3cretpass@127.0.0.1:{port}/v1"),
        format!("http://s3cretuser@127.0.0.1:{port}/v1"),
        format!("http://user:s3cretpass@localhost:{port}/v1/"),
    ] {
        let finished = run_to_end(
            &mut run_command(&["--base-url", &url], Some("key-1234-long-enough"), &dir),
            LIMIT,
        );
        let line = assert_refused(&finished, &url);
        assert!(line.contains("credentials"), "{url}: {line}");
        assert!(
            !line.contains("s3cret"),
            "{url}: the credential is echoed: {line}"
        );
    }
    assert_eq!(counting.accepted(), 0, "a refused run connected");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_base_url_with_a_query_or_fragment_is_refused() {
    let dir = temp_dir("query");
    let counting = servers::counting();
    let port = counting.port();
    for suffix in ["?token=abc", "?", "#fragment", "#", "/?a=1"] {
        let url = format!("http://127.0.0.1:{port}/v1{suffix}");
        let finished = run_to_end(
            &mut run_command(&["--base-url", &url], Some("key-1234-long-enough"), &dir),
            LIMIT,
        );
        let line = assert_refused(&finished, &url);
        assert!(line.contains("query string or fragment"), "{url}: {line}");
    }
    assert_eq!(counting.accepted(), 0, "a refused run connected");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_key_with_a_newline_is_refused() {
    let dir = temp_dir("newline");
    let counting = servers::counting();
    let port = counting.port();
    let url = format!("http://127.0.0.1:{port}/v1");
    for key in [
        "first-half-AAAA\nsecond-half-BBBB",
        "first-half-AAAA\r\nX-Injected: yes",
        "first-half-AAAA\tsecond-half-BBBB",
        "first-half-AAAA\u{7f}second-half-BBBB",
    ] {
        let finished = run_to_end(
            &mut run_command(&["--base-url", &url], Some(key), &dir),
            LIMIT,
        );
        let line = assert_refused(&finished, &format!("{key:?}"));
        assert!(line.contains("PETSTORE_API_KEY"), "{key:?}: {line}");
        assert!(line.contains("control character"), "{key:?}: {line}");
        assert!(
            !line.contains("first-half") && !line.contains("second-half"),
            "{key:?}: the key is echoed: {line}"
        );
    }
    // Another variable, and a key file: the message names where the key came from.
    let finished = run_to_end(
        run_command(
            &["--base-url", &url, "--api-key-env", "MY_PETSTORE_KEY"],
            None,
            &dir,
        )
        .env("MY_PETSTORE_KEY", "first-half\nsecond-half"),
        LIMIT,
    );
    let line = assert_refused(&finished, "--api-key-env");
    assert!(line.contains("MY_PETSTORE_KEY"), "{line}");
    let key_file = dir.join("key.txt");
    std::fs::write(&key_file, "first-half\nsecond-half\n").unwrap();
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--api-key-file",
                key_file.to_str().unwrap(),
            ],
            None,
            &dir,
        ),
        LIMIT,
    );
    let line = assert_refused(&finished, "--api-key-file");
    assert!(line.contains("--api-key-file"), "{line}");
    assert_eq!(counting.accepted(), 0, "a refused run connected");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn numeric_options_at_their_ends_work_or_exit_2() {
    let dir = temp_dir("numeric");
    let refused: [(&[&str], &str); 26] = [
        (&["--timeout", "0"], "--timeout"),
        (&["--timeout", "3601"], "--timeout"),
        (&["--timeout", "18446744073709551615"], "--timeout"),
        (&["--body-cap", "0"], "--body-cap"),
        (&["--body-cap", "1023"], "--body-cap"),
        (&["--body-cap", "18446744073709551615"], "--body-cap"),
        (&["--cases", "4294967295"], "--cases"),
        (
            &["--max-transport-failures", "0"],
            "--max-transport-failures",
        ),
        (
            &["--max-transport-failures", "1000001"],
            "--max-transport-failures",
        ),
        (&["--test-threads", "0"], "--test-threads"),
        // Once a hang, then seven minutes deaf to SIGTERM.
        (&["--test-threads", "1025"], "--test-threads"),
        (&["--test-threads", "10000000"], "--test-threads"),
        // Once a panic (1e-300), or a run that never ends.
        (&["--rate", "1e-300"], "--rate"),
        (&["--rate", "0.009"], "--rate"),
        (&["--rate", "0"], "--rate"),
        (&["--rate=-1"], "--rate"),
        (&["--rate", "NaN"], "--rate"),
        (&["--rate", "inf"], "--rate"),
        (&["--rate", "100001"], "--rate"),
        (&["--concurrency", "0"], "--concurrency"),
        (&["--concurrency", "1025"], "--concurrency"),
        (&["--time-budget", "0"], "--time-budget"),
        (&["--time-budget", "604801"], "--time-budget"),
        (&["--time-budget", "18446744073709551615"], "--time-budget"),
        (&["--max-throttle-wait", "3601"], "--max-throttle-wait"),
        (&["--reference-latency", "61s"], "--reference-latency"),
    ];
    for (args, option) in refused {
        let finished = run_to_end(&mut run_command(args, None, &dir), LIMIT);
        let line = assert_refused(&finished, &format!("{args:?}"));
        assert!(line.contains(option), "{args:?}: {line}");
    }
    // Nothing was run, so nothing was written.
    assert!(!dir.join("report.json").exists());
    // A cap of 1 KiB cuts the longer lists: those rules are inconclusive (not failed), so
    // the run is undetermined (exit 3) rather than conforming.
    let accepted: [(&[&str], &str); 8] = [
        (&["--cases", "0"], "conforms"),
        (&["--time-budget", "604800", "--cases", "1"], "conforms"),
        (&["--rate", "100000", "--cases", "1"], "conforms"),
        (
            &[
                "--test-threads",
                "1024",
                "--concurrency",
                "1024",
                "--cases",
                "1",
            ],
            "conforms",
        ),
        (
            &["--test-threads", "1", "--concurrency", "1", "--cases", "1"],
            "conforms",
        ),
        (
            &["--timeout", "1", "--body-cap", "1024", "--cases", "1"],
            "undetermined",
        ),
        (
            &[
                "--timeout",
                "3600",
                "--body-cap",
                "1073741824",
                "--cases",
                "1",
            ],
            "conforms",
        ),
        (
            &["--max-transport-failures", "1000000", "--cases", "1"],
            "conforms",
        ),
    ];
    for (args, conformance) in accepted {
        let _ = std::fs::remove_file(dir.join("report.json"));
        let finished = run_to_end(&mut run_command(args, None, &dir), Duration::from_secs(60));
        finished.assert_no_panic();
        let code = if conformance == "undetermined" { 3 } else { 0 };
        assert_eq!(finished.code, Some(code), "{args:?}: {}", finished.stderr());
        let report = read_json(&dir.join("report.json"));
        assert_eq!(report["conformance"], conformance, "{args:?}");
        assert!(
            failed_rules(&report).is_empty(),
            "{args:?}: {:?}",
            failed_rules(&report)
        );
        if conformance == "undetermined" {
            for rule in rules(&report) {
                if rule["verdict"] == "inconclusive" {
                    let reason = rule["reason"].as_str().unwrap_or("");
                    assert!(reason.contains("--body-cap"), "{args:?}: {reason}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_absurd_schema_bound_is_capped_or_refused() {
    let dir = temp_dir("schema-bound");
    let schemas = dir.join("schemas");
    std::fs::create_dir_all(&schemas).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, schemas.join(path.file_name().unwrap())).unwrap();
    }
    let original = read_json(&schemas.join("NewPet.json"));
    let with_name_bound = |bound: &str| {
        let mut schema = original.clone();
        schema["properties"]["name"][bound] = Value::from(2_000_000_000u64);
        std::fs::write(
            schemas.join("NewPet.json"),
            serde_json::to_string_pretty(&schema).unwrap(),
        )
        .unwrap();
    };
    let report_dir = dir.join("reports");
    let schemas_arg = schemas.to_str().unwrap();

    with_name_bound("maxLength");
    let finished = run_to_end(
        &mut run_command(
            &["--schemas", schemas_arg, "--seed", "1"],
            None,
            &report_dir,
        ),
        Duration::from_secs(120),
    );
    finished.assert_no_panic();
    let stderr = finished.stderr();
    assert_eq!(finished.code, Some(0), "{stderr}");
    assert!(
        stderr.contains("maxLength 2000000000") && stderr.contains("65536"),
        "no note of the cap: {stderr}"
    );
    let report = read_json(&report_dir.join("report.json"));
    assert_eq!(report["conformance"], "conforms");
    assert!(
        std::fs::metadata(report_dir.join("report.json"))
            .unwrap()
            .len()
            < 1 << 20,
        "report.json of a capped run is over 1 MB"
    );

    with_name_bound("minLength");
    let _ = std::fs::remove_dir_all(&report_dir);
    let finished = run_to_end(
        &mut run_command(
            &["--schemas", schemas_arg, "--seed", "1"],
            None,
            &report_dir,
        ),
        Duration::from_secs(60),
    );
    let line = assert_refused(&finished, "minLength 2000000000");
    assert!(
        line.contains("NewPet") && line.contains("minLength"),
        "{line}"
    );
    assert!(!report_dir.join("report.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------------
// 4. replay sends the key only where it is told to.

#[test]
fn replay_sends_the_key_only_to_the_configured_target() {
    let key = "replay-key-6d2a91";
    let (_server, url) = serve_reference(key, &["long-name-500"]);
    let dir = temp_dir("replay");
    let finished = run_to_end(
        &mut run_command(&["--base-url", &url, "--seed", "3"], Some(key), &dir),
        Duration::from_secs(60),
    );
    assert_eq!(finished.code, Some(1), "{}", finished.stderr());
    let report_path = dir.join("report.json");
    let report = read_json(&report_path);
    assert_eq!(report["target"]["kind"], "external");
    let replay = |base_url: Option<&str>| {
        let mut command = binary();
        command
            .args([
                "replay",
                report_path.to_str().unwrap(),
                "create-pet/valid/created",
            ])
            .env("PETSTORE_API_KEY", key);
        if let Some(base_url) = base_url {
            command.args(["--base-url", base_url]);
        }
        run_to_end(&mut command, LIMIT)
    };
    let refused = replay(None);
    let line = assert_refused(&refused, "replay without --base-url");
    assert!(line.contains("--base-url"), "{line}");
    let sent = replay(Some(&url));
    sent.assert_no_panic();
    // Failed again on the same target: exit 1.
    assert_eq!(sent.code, Some(1), "{}", sent.stderr());
    let shown = sent.stdout();
    assert!(
        shown.contains("> POST ") && shown.contains("< 500"),
        "{shown}"
    );
    assert!(
        !shown.contains(key) && !sent.stderr().contains(key),
        "{shown}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------------
// 5. A target that stops answering, a budget already spent.

#[test]
fn a_target_that_stops_answering_gets_no_failed_verdict() {
    for resets in [false, true] {
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&requests);
        let url = servers::raw(move |_, _, stream| {
            if counter.fetch_add(1, Ordering::SeqCst) == 0 {
                return servers::respond_json(stream, "200 OK", &[], "[]");
            }
            if !resets {
                // Holds the connection and never answers.
                std::thread::sleep(Duration::from_secs(60));
            }
            false
        });
        let dir = temp_dir(&format!("stops-answering-{resets}"));
        let finished = run_to_end(
            &mut run_command(
                &["--base-url", &url, "--timeout", "1", "--gate", "all"],
                Some("silent-key-1234"),
                &dir,
            ),
            Duration::from_secs(30),
        );
        finished.assert_no_panic();
        let what = if resets { "resets" } else { "silent" };
        assert_eq!(finished.code, Some(3), "{what}: {}", finished.stderr());
        let report = read_json(&dir.join("report.json"));
        assert!(
            failed_rules(&report).is_empty(),
            "{what}: failed without a response: {:?}",
            failed_rules(&report)
        );
        let stopped = report["target"]["stopped_answering"].as_str().unwrap_or("");
        assert!(
            stopped.contains("consecutive"),
            "{what}: {}",
            report["target"]
        );
        let all = rules(&report).len();
        let inconclusive = rules(&report)
            .iter()
            .filter(|rule| rule["verdict"] == "inconclusive")
            .count();
        assert!(
            inconclusive * 2 > all,
            "{what}: only {inconclusive} of {all} rules inconclusive"
        );
        // It stopped sending: a few requests past the first failures, not one per case. The
        // preflight's 4, then at most the first wave: the level it starts at (128), halved by
        // the preflight's failures, and a few more.
        let sent = requests.load(Ordering::SeqCst);
        eprintln!("{what}: {sent} requests, {:?}", finished.elapsed);
        let bound = 4 + petstore_conformance::execution::lanes::START / 2 + 4;
        assert!(
            sent <= bound,
            "{what}: {sent} requests reached a dead target (at most {bound})"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_spent_budget_fails_nothing() {
    // The preflight alone takes longer than the budget: the budget is spent before any rule's
    // answer. Undetermined (exit 3) with reports, not "could not be reached".
    let dir = temp_dir("spent-budget");
    let finished = run_to_end(
        &mut run_command(
            &[
                "--time-budget",
                "1",
                "--reference-latency",
                "1500ms",
                "--gate",
                "all",
            ],
            None,
            &dir,
        ),
        LIMIT,
    );
    finished.assert_no_panic();
    assert_eq!(finished.code, Some(3), "{}", finished.stderr());
    assert!(
        !finished.stderr().contains("could not be reached"),
        "{}",
        finished.stderr()
    );
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["conformance"], "undetermined");
    assert!(
        failed_rules(&report).is_empty(),
        "{:?}",
        failed_rules(&report)
    );
    assert_eq!(report["created_pets"]["count"], 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_stalling_target_ends_within_the_budget() {
    // The preflight is answered, then every request is held for a minute: with a 60 s timeout,
    // only the budget ends the run, and it does, reports written, within budget + 2 s. The
    // rules it cut say so ("time budget"), not that the target stopped answering.
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&requests);
    let url = servers::raw(move |_, _, stream| {
        if counter.fetch_add(1, Ordering::SeqCst) == 0 {
            return servers::respond_json(stream, "200 OK", &[], "[]");
        }
        std::thread::sleep(Duration::from_secs(60));
        false
    });
    let dir = temp_dir("stall-budget");
    let budget = 3;
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--timeout",
                "60",
                "--time-budget",
                &budget.to_string(),
            ],
            Some("stall-key-1234"),
            &dir,
        ),
        Duration::from_secs(30),
    );
    finished.assert_no_panic();
    assert!(
        finished.elapsed <= Duration::from_secs(budget + 2),
        "a {budget} s budget took {:?}",
        finished.elapsed
    );
    assert_eq!(finished.code, Some(3), "{}", finished.stderr());
    let report = read_json(&dir.join("report.json"));
    assert!(
        failed_rules(&report).is_empty(),
        "{:?}",
        failed_rules(&report)
    );
    assert!(
        report["target"]["stopped_answering"].is_null(),
        "{}",
        report["target"]
    );
    let reasons: Vec<&str> = rules(&report)
        .iter()
        .filter(|rule| rule["verdict"] == "inconclusive")
        .filter_map(|rule| rule["reason"].as_str())
        .collect();
    assert!(
        !reasons.is_empty() && reasons.iter().all(|reason| reason.contains("time budget")),
        "{reasons:?}"
    );
    assert!(
        !finished.stderr().contains("stopped answering"),
        "{}",
        finished.stderr()
    );
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------------
// 6. Runs racing into one report directory.

fn partial_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".partial"))
        .collect()
}

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

// ---------------------------------------------------------------------------------------------
// 7. SIGINT and SIGTERM.

/// A target that answers the preflight at once and every later request after 3 s.
fn slow_target() -> String {
    servers::raw(|_, n, stream| {
        if n > 1 {
            std::thread::sleep(Duration::from_secs(3));
        }
        servers::respond_json(stream, "200 OK", &[], "[]")
    })
}

#[cfg(unix)]
fn interrupt_a_run(signal: &str) {
    for slow in [true, false] {
        let what = format!(
            "SIG{signal} {}",
            if slow { "slow target" } else { "reference" }
        );
        let dir = temp_dir(&format!("signal-{signal}-{slow}"));
        let report_dir = dir.join("reports");
        let log = dir.join("requests.jsonl");
        let log_arg = log.to_str().unwrap();
        let url = if slow {
            slow_target()
        } else {
            String::new()
        };
        let args: Vec<&str> = if slow {
            vec![
                "--base-url",
                &url,
                "--timeout",
                "30",
                "--request-log",
                log_arg,
            ]
        } else {
            vec![
                "--time-budget",
                "60",
                "--cases",
                "1000000",
                "--request-log",
                log_arg,
            ]
        };
        let mut run = Running::start(&mut run_command(
            &args,
            Some("signal-key-1234"),
            &report_dir,
        ));
        std::thread::sleep(Duration::from_millis(1500));
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &run.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "{what}: kill failed");
        let signalled = Instant::now();
        let finished = loop {
            if let Some(finished) = run.try_finish() {
                break finished;
            }
            assert!(
                signalled.elapsed() < Duration::from_secs(15),
                "{what}: still running 15 s after the signal"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        finished.assert_no_panic();
        let code = if signal == "TERM" { 143 } else { 130 };
        assert_eq!(finished.code, Some(code), "{what}: {}", finished.stderr());
        let report = read_json(&report_dir.join("report.json"));
        assert_eq!(report["interrupted"], true, "{what}");
        let interrupted = rules(&report)
            .iter()
            .filter(|rule| {
                rule["verdict"] == "skipped"
                    && rule["reason"]
                        .as_str()
                        .is_some_and(|r| r.starts_with("interrupted"))
            })
            .count();
        assert!(interrupted > 0, "{what}: no rule skipped as interrupted");
        assert!(
            failed_rules(&report).is_empty(),
            "{what}: {:?}",
            failed_rules(&report)
        );
        for name in REPORT_FILES {
            assert!(report_dir.join(name).exists(), "{what}: no {name}");
        }
        assert_eq!(partial_files(&report_dir), Vec::<String>::new(), "{what}");
        let logged = std::fs::read_to_string(&log).unwrap();
        if !slow {
            assert!(!logged.is_empty(), "{what}: nothing logged");
        }
        assert!(
            logged.is_empty() || logged.ends_with('\n'),
            "{what}: a cut line"
        );
        for line in logged.lines() {
            assert!(
                serde_json::from_str::<Value>(line).is_ok(),
                "{what}: not a whole JSON line: {line}"
            );
        }
        if let Ok(created) = std::fs::read_to_string(report_dir.join("created-pets.jsonl")) {
            assert_eq!(
                created.lines().count() as u64,
                report["created_pets"]["count"].as_u64().unwrap(),
                "{what}"
            );
            for line in created.lines() {
                assert!(
                    serde_json::from_str::<Value>(line).is_ok(),
                    "{what}: {line}"
                );
            }
        }
        eprintln!(
            "{what}: exit {code} {:?} after the signal, {interrupted} rules interrupted, {} requests logged",
            signalled.elapsed(),
            logged.lines().count()
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(unix)]
#[test]
fn sigint_writes_an_interrupted_report() {
    interrupt_a_run("INT");
}

#[cfg(unix)]
#[test]
fn sigterm_writes_an_interrupted_report() {
    interrupt_a_run("TERM");
}

/// A signal while the preflight waits on a target that accepted the connection and never
/// answers: this run's report, marked interrupted, with this run's seed, replaces the
/// previous run's; never the previous report left looking current.
#[cfg(unix)]
fn interrupt_the_preflight(signal: &str, code: i32, twice: bool) {
    // Reads the request and answers nothing, until the client lets go.
    let silent = servers::listen().connections(|mut stream| {
        let _ = std::io::copy(&mut stream, &mut std::io::sink());
    });
    let dir = temp_dir(&format!("preflight-signal-{signal}-{twice}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("report.json"),
        r#"{"seed": 1, "conformance": "conforms", "previous": true}"#,
    )
    .unwrap();
    std::fs::write(dir.join("summary.md"), "# previous run: conforms\n").unwrap();
    let url = silent.base_url();
    let mut run = Running::start(&mut run_command(
        &["--base-url", &url, "--timeout", "60", "--seed", "99"],
        Some("preflight-key-1234"),
        &dir,
    ));
    let waiting = Instant::now();
    while silent.accepted() == 0 {
        assert!(
            waiting.elapsed() < Duration::from_secs(20),
            "the preflight never connected"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..if twice { 2 } else { 1 } {
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &run.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "kill failed");
    }
    let signalled = Instant::now();
    let finished = loop {
        if let Some(finished) = run.try_finish() {
            break finished;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(10),
            "SIG{signal}: still running 10 s after the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    finished.assert_no_panic();
    assert_eq!(
        finished.code,
        Some(code),
        "SIG{signal}: {}",
        finished.stderr()
    );
    assert!(
        !finished.stderr().contains("could not be reached"),
        "SIG{signal}: {}",
        finished.stderr()
    );
    if twice && !dir.join("report.json").exists() {
        // Quit before this run's report was written: the previous one is withdrawn too.
        eprintln!("SIG{signal} twice: quit before writing; no report left");
        for name in REPORT_FILES {
            assert!(!dir.join(name).exists(), "SIG{signal} twice: {name} left");
        }
        return;
    }
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["interrupted"], true, "SIG{signal}");
    assert_eq!(
        report["seed"], 99,
        "SIG{signal}: the previous run's report is left"
    );
    assert!(failed_rules(&report).is_empty(), "SIG{signal}");
    assert!(
        rules(&report)
            .iter()
            .all(|rule| rule["verdict"] == "skipped"),
        "SIG{signal}: a rule ran after the signal"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("**Interrupted**"), "{summary}");
    assert_eq!(partial_files(&dir), Vec::<String>::new(), "SIG{signal}");
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(unix)]
#[test]
fn sigterm_during_the_preflight_writes_this_runs_interrupted_report() {
    interrupt_the_preflight("TERM", 143, false);
}

#[cfg(unix)]
#[test]
fn sigint_during_the_preflight_writes_this_runs_interrupted_report() {
    interrupt_the_preflight("INT", 130, false);
}

/// The second signal quits at once: this run's report, or none; never the previous one.
#[cfg(unix)]
#[test]
fn two_signals_during_the_preflight_leave_this_runs_report_or_none() {
    interrupt_the_preflight("TERM", 143, true);
}

// ---------------------------------------------------------------------------------------------
// 8. Memory over a long budget.

/// The peak resident set of a process (VmHWM, kB), while it runs.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The harness's own memory, over a night-long budget: each run talks to a reference server of
/// its own in another process (a target's store grows with what it is asked to store; that
/// is the target's memory, not the harness's).
#[test]
fn memory_stays_flat_over_a_long_budget() {
    // Five times longer is long enough to see growth (about five times the pets created),
    // short enough for CI.
    let budgets = ["5", "25"];
    let key = "memory-test-key-0123";
    let servers: Vec<(Server, String)> =
        budgets.iter().map(|_| serve_reference(key, &[])).collect();
    let dirs: Vec<PathBuf> = budgets
        .iter()
        .map(|budget| temp_dir(&format!("memory-{budget}")))
        .collect();
    let mut running: Vec<Option<Running>> = budgets
        .iter()
        .zip(&dirs)
        .zip(&servers)
        .map(|((budget, dir), (_, url))| {
            Some(Running::start(&mut run_command(
                &["--time-budget", budget, "--base-url", url],
                Some(key),
                dir,
            )))
        })
        .collect();
    let mut peaks = [0u64; 2];
    let mut finished: Vec<Option<Finished>> = vec![None, None];
    let started = Instant::now();
    while finished.iter().any(Option::is_none) {
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the runs did not end in 150 s"
        );
        for n in 0..2 {
            if let Some(run) = &mut running[n] {
                if let Some(kb) = peak_rss_kb(run.pid()) {
                    peaks[n] = peaks[n].max(kb);
                }
                if let Some(done) = run.try_finish() {
                    finished[n] = Some(done);
                    running[n] = None;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for (n, done) in finished.iter().enumerate() {
        let done = done.as_ref().unwrap();
        done.assert_no_panic();
        assert_eq!(
            done.code,
            Some(0),
            "--time-budget {}: {}",
            budgets[n],
            done.stderr()
        );
        assert!(
            peaks[n] > 0,
            "no VmHWM read for --time-budget {}",
            budgets[n]
        );
    }
    let sizes: Vec<u64> = dirs
        .iter()
        .map(|dir| std::fs::metadata(dir.join("report.json")).unwrap().len())
        .collect();
    let created: Vec<Value> = dirs
        .iter()
        .map(|dir| read_json(&dir.join("report.json"))["created_pets"]["count"].clone())
        .collect();
    eprintln!(
        "peak RSS: --time-budget 5: {} kB ({:?}, report.json {} bytes, {} pets created); --time-budget 25: {} kB ({:?}, report.json {} bytes, {} pets created)",
        peaks[0],
        finished[0].as_ref().unwrap().elapsed,
        sizes[0],
        created[0],
        peaks[1],
        finished[1].as_ref().unwrap().elapsed,
        sizes[1],
        created[1],
    );
    assert!(
        peaks[1] <= 2 * peaks[0],
        "peak RSS grew with the budget: {} kB at 5 s ({} pets created), {} kB at 25 s ({} pets \
         created)",
        peaks[0],
        created[0],
        peaks[1],
        created[1]
    );
    for (n, size) in sizes.iter().enumerate() {
        assert!(
            *size < 1 << 20,
            "--time-budget {}: report.json of {size} bytes",
            budgets[n]
        );
    }
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

// ---------------------------------------------------------------------------------------------
// The key as a careless target echoes it: \u-escaped (either case) in a string never closed,
// nested as JSON inside a JSON string, \u-escaped across the body-cap cut, percent-encoded
// (either case), base64 (standard and URL-safe, at any alignment).

/// Every character of `text` as `\uXXXX`.
fn every_char_escaped(text: &str, upper_hex: bool) -> String {
    text.chars()
        .map(|c| {
            if upper_hex {
                format!("\\u{:04X}", c as u32)
            } else {
                format!("\\u{:04x}", c as u32)
            }
        })
        .collect()
}

/// Spellings that the renderers never give but a target may: each must be gone too.
fn echoed_spellings(key: &str) -> Vec<(&'static str, String)> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let every_byte: String = key.bytes().map(|b| format!("%{b:02x}")).collect();
    vec![
        (
            "\\u-escaped, every character",
            every_char_escaped(key, false),
        ),
        ("percent-encoded, every byte", every_byte),
        ("base64", STANDARD_NO_PAD.encode(key)),
        ("base64url", URL_SAFE_NO_PAD.encode(key)),
        // `user:` puts the key at the third alignment of base64's groups.
        (
            "base64 of user:KEY",
            STANDARD_NO_PAD.encode(format!("usr:{key}"))[8..].to_string(),
        ),
    ]
}

/// `text` with `\\` unescaped repeatedly and every `\uXXXX` decoded: what a reader of the
/// file, decoding as often as it likes, would see.
fn decoded_fully(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..4 {
        text = text.replace("\\\\", "\\");
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let hex = rest.get(at + 2..at + 6).unwrap_or("");
        match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            Some(c) if hex.len() == 4 => {
                out.push(c);
                rest = &rest[at + 6..];
            }
            _ => {
                out.push_str("\\u");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn a_target_echoing_the_key_in_any_encoding_leaks_nothing() {
    use base64::Engine;
    let key = "zq9XkW-echo/KEY|7Hc2Lm-e&x";
    let prefix = "zq9XkW";
    let bodies: Vec<String> = vec![
        // \u-escaped, lower and upper hex, in a string never closed.
        format!("{{\"message\":\"seen {}", every_char_escaped(key, false)),
        format!("{{\"message\":\"seen {}", every_char_escaped(key, true)),
        // Nested: a JSON text inside a JSON string, the key \u-escaped in the inner one.
        format!(
            "{{\"message\":{}}}",
            serde_json::to_string(&format!(
                "{{\"inner\":\"{}\"}}",
                every_char_escaped(key, true)
            ))
            .unwrap()
        ),
        // Percent-encoded, every byte, lower and upper hex.
        format!(
            "{{\"link\":\"/v1/pets?k={}\"}}",
            key.bytes().map(|b| format!("%{b:02x}")).collect::<String>()
        ),
        format!("{{\"link\":\"/v1/pets?k={}\"}}", percent_encoded(key)),
        // base64 and base64url, alone and after `usr:`.
        format!(
            "{{\"basic\":\"{}\",\"url\":\"{}\",\"b\":\"{}\"}}",
            base64::engine::general_purpose::STANDARD.encode(format!("usr:{key}")),
            base64::engine::general_purpose::URL_SAFE.encode(key),
            base64::engine::general_purpose::STANDARD.encode(format!("u:{key}")),
        ),
        // \u-escaped across the cut at 1024 bytes: the key's first 7 characters before it.
        {
            let head = format!("{{\"pad\":\"{}\",\"echo\":\"", "a".repeat(964));
            assert_eq!(head.len(), 1024 - 7 * 6);
            format!("{head}{}\"}}", every_char_escaped(key, false))
        },
    ];
    // 500 to everything: every rule fails and shows the body it got.
    let url = servers::raw(move |_, n, stream| {
        let body = &bodies[(n - 1) % bodies.len()];
        servers::respond_json(stream, "500 Internal Server Error", &[], body)
    });
    let dir = temp_dir("echoed-encodings");
    let report_dir = dir.join("reports");
    let log = dir.join("requests.jsonl");
    let finished = run_to_end(
        &mut run_command(
            &[
                "--base-url",
                &url,
                "--gate",
                "all",
                "--body-cap",
                "1024",
                "--cases",
                "8",
                "--timeout",
                "2",
                "--request-log",
                log.to_str().unwrap(),
            ],
            Some(key),
            &report_dir,
        ),
        Duration::from_secs(90),
    );
    finished.assert_no_panic();
    assert!(
        matches!(finished.code, Some(1)),
        "exit {:?}: {}",
        finished.code,
        finished.stderr()
    );
    let mut written = vec![
        ("stdout".to_string(), finished.stdout.clone()),
        ("stderr".to_string(), finished.stderr.clone()),
    ];
    if let Ok(bytes) = std::fs::read(&log) {
        written.push((log.display().to_string(), bytes));
    }
    written.extend(files_in(&report_dir));
    assert_absent(key, &written);
    for (form_name, form) in echoed_spellings(key) {
        let form = form.to_ascii_lowercase();
        for (file, bytes) in &written {
            let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
            assert!(!text.contains(&form), "{form_name} of the key in {file}");
        }
    }
    for (file, bytes) in &written {
        let decoded = decoded_fully(&String::from_utf8_lossy(bytes));
        assert!(
            !decoded.contains(prefix),
            "the key's first characters, decoded, in {file}"
        );
    }
    // The echoes reached the reports, redacted.
    let report = std::fs::read_to_string(report_dir.join("report.json")).unwrap_or_default();
    assert!(
        report.contains("[REDACTED]"),
        "no redacted echo in report.json"
    );
    let _ = std::fs::remove_dir_all(dir);
}
