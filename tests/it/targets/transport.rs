//! How requests reach a target and how a run is repeated: extra headers (`-H`), a proxy
//! (`--proxy`, and the environment's, which loopback ignores), the Re-run line of a report,
//! and profiles over `[profile.default]`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use crate::common;

use common::serve_reference;
use common::servers::{self, Message, Stream};

const KEY: &str = "transport-test-key";

fn run(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = common::bin();
    command
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(dir)
        .arg("--no-regressions")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PETSTORE_API_KEY", KEY);
    // The machine's own proxy settings must not decide what these tests see.
    for name in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "PETSTORE_BASE_URL",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command.output().expect("binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A forward HTTP proxy on loopback, one request per connection: it counts what it forwards
/// and keeps each request's head, to show what went through it.
struct Proxy {
    url: String,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let heads = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&heads);
        let server = servers::listen().requests(move |request, _, client| {
            let _ = forward(request, client, &kept);
            false
        });
        Proxy {
            url: format!("http://{}", server.addr()),
            heads,
        }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// Sends a request in absolute form (`GET http://host/v1/pets HTTP/1.1`) to its host, in
/// origin form and on a connection closed after the answer, and writes the answer back.
fn forward(
    request: &Message,
    client: &mut Stream,
    kept: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let Some(rest) = request.target().strip_prefix("http://") else {
        return Ok(());
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut head = format!("{} {path} HTTP/1.1\r\n", request.method());
    for line in request.head.split_inclusive('\n').skip(1) {
        let lower = line.to_ascii_lowercase();
        if line == "\r\n"
            || lower.starts_with("connection:")
            || lower.starts_with("proxy-connection:")
        {
            continue;
        }
        head.push_str(line);
    }
    head.push_str("Connection: close\r\n\r\n");
    let request_line = request.head.split_inclusive('\n').next().unwrap_or("");
    kept.lock().unwrap().push(format!("{request_line}{head}"));
    let mut upstream = TcpStream::connect(authority)?;
    upstream.write_all(head.as_bytes())?;
    upstream.write_all(&request.body)?;
    let mut answer = Vec::new();
    upstream.read_to_end(&mut answer)?;
    client.write_all(&answer)?;
    client.flush()
}

/// Every byte the run wrote into `dir`, as text.
fn written(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        all.push_str(&String::from_utf8_lossy(
            &std::fs::read(entry.path()).unwrap_or_default(),
        ));
    }
    all
}

#[test]
fn headers_go_out_through_an_explicit_proxy_and_credentials_are_redacted() {
    let (_server, base_url) = serve_reference(KEY, &[]);
    let proxy = Proxy::start();
    let dir = common::temp_dir("transport", "proxy");
    let secret = "gw-7f3a9c1e5b2d8f4a";
    let output = run(
        &[
            "--base-url",
            &base_url,
            "--proxy",
            &proxy.url,
            "-H",
            "X-Tenant: acme",
            "--header",
            &format!("X-Gateway-Token: {secret}"),
            "--har",
            dir.join("run.har").to_str().unwrap(),
            "list-pets/limit",
        ],
        &dir,
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let heads = proxy.heads();
    assert!(
        heads.len() > 5,
        "{} requests through the proxy",
        heads.len()
    );
    for head in &heads {
        let lower = head.to_ascii_lowercase();
        assert!(lower.contains("x-tenant: acme"), "{head}");
        assert!(
            lower.contains(&format!("x-gateway-token: {secret}")),
            "{head}"
        );
    }
    // The gateway token is a credential: nothing written holds it; the tenant is kept.
    let all = written(&dir);
    assert!(!all.contains(secret), "the gateway token was written");
    assert!(!stderr(&output).contains(secret));
    // The HAR export: HTTP Archive 1.2, one entry per request the proxy forwarded, with the
    // headers sent, the key and the token redacted.
    let har: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.har")).unwrap()).unwrap();
    assert_eq!(har["log"]["version"], "1.2");
    let entries = har["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), heads.len(), "one entry per request sent");
    for entry in entries {
        let headers = entry["request"]["headers"].as_array().unwrap();
        let value = |name: &str| {
            headers
                .iter()
                .find(|h| h["name"].as_str().unwrap().eq_ignore_ascii_case(name))
                .map(|h| h["value"].as_str().unwrap().to_string())
        };
        assert_eq!(value("X-Tenant").as_deref(), Some("acme"), "{entry}");
        assert_eq!(
            value("X-Gateway-Token").as_deref(),
            Some("[REDACTED]"),
            "{entry}"
        );
        assert!(
            entry["response"]["status"].as_u64().unwrap() >= 200,
            "{entry}"
        );
        assert!(entry["_rule"].is_string() && entry["startedDateTime"].is_string());
    }
    assert!(!all.contains(KEY), "the key was written");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let rerun = report["rerun"].as_str().unwrap();
    assert!(rerun.contains("'X-Tenant: acme'"), "{rerun}");
    assert!(rerun.contains("--proxy"), "{rerun}");
}

#[test]
fn the_environments_proxy_is_not_used_for_loopback() {
    let (_server, base_url) = serve_reference(KEY, &[]);
    let proxy = Proxy::start();
    let dir = common::temp_dir("transport", "env-proxy");
    let output = run(
        &["--base-url", &base_url, "list-pets/limit"],
        &dir,
        &[("HTTP_PROXY", &proxy.url), ("http_proxy", &proxy.url)],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(proxy.heads().len(), 0, "loopback went through the proxy");
}

/// Splits a POSIX shell line of plain and single-quoted words (what the Re-run line uses).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

#[test]
fn the_rerun_line_run_again_gives_the_same_rules_and_verdicts() {
    let dir = common::temp_dir("transport", "rerun-first");
    let output = run(
        &[
            "--seed",
            "11",
            "--cases",
            "5",
            "--gate",
            "all",
            "--category-ids",
            "1,2,3",
            "--timeout",
            "20s",
            "--reference-fault",
            "default-limit-ignored",
            "--skip",
            "deprecation",
            "list-pets",
        ],
        &dir,
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let line = report["rerun"].as_str().unwrap().to_string();
    for option in [
        "--seed 11",
        "--cases 5",
        "--gate all",
        "--category-ids 1,2,3",
        "--timeout 20s",
        "--reference-fault default-limit-ignored",
        "--skip deprecation",
        "list-pets",
    ] {
        assert!(line.contains(option), "{option} missing from {line}");
    }
    let words = shell_words(&line);
    assert_eq!(&words[..2], ["petstore-conformance", "run"], "{line}");
    let again = common::temp_dir("transport", "rerun-again");
    // The helper gives --no-regressions itself.
    let args: Vec<&str> = words[2..]
        .iter()
        .map(String::as_str)
        .filter(|word| *word != "--no-regressions")
        .collect();
    let output = run(&args, &again, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let first = common::verdicts(&common::read_json(&dir.join("report.json")));
    assert!(
        first
            .iter()
            .all(|(id, _)| id.contains("list-pets") && !id.contains("deprecation")),
        "{first:?}"
    );
    assert_eq!(
        first,
        common::verdicts(&common::read_json(&again.join("report.json"))),
        "{line}"
    );
}

#[test]
fn a_profile_inherits_the_default_and_print_config_says_from_where() {
    let dir = common::temp_dir("transport", "profiles");
    let file = dir.join("petstore-conformance.toml");
    std::fs::write(
        &file,
        "[profile.default]\ncases = 7\ntimeout = \"30s\"\nheaders = [\"X-Tenant: acme\"]\n\n[profile.ci]\ngate = \"all\"\ntime_budget = \"2m\"\n",
    )
    .unwrap();
    let output = run(
        &[
            "--config",
            file.to_str().unwrap(),
            "--profile",
            "ci",
            "--print-config",
        ],
        &dir,
        &[],
    );
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{printed}{}",
        stderr(&output)
    );
    let line = |name: &str| {
        printed
            .lines()
            .find(|line| line.starts_with(&format!("{name} = ")))
            .unwrap_or_else(|| panic!("no {name} in {printed}"))
            .to_string()
    };
    assert!(
        line("cases").contains("= 7") && line("cases").contains("[profile.default]"),
        "{printed}"
    );
    assert!(line("timeout").contains("= 30 "), "{printed}");
    assert!(
        line("gate").contains("= \"all\"") && line("gate").contains("[profile.ci]"),
        "{printed}"
    );
    assert!(line("time_budget").contains("= 120 "), "{printed}");
    assert!(
        line("headers").contains("[\"X-Tenant: acme\"]"),
        "{printed}"
    );
    assert!(line("report_dir").contains("command line"), "{printed}");
    assert!(
        !printed.contains("Some(") && !printed.contains("None"),
        "{printed}"
    );
}

#[test]
fn replay_takes_runs_key_header_and_proxy_options_and_prints_a_verdict() {
    let (_server, base_url) = serve_reference(KEY, &["long-name-500"]);
    let dir = common::temp_dir("transport", "replay");
    let output = run(&["--base-url", &base_url, "--seed", "3"], &dir, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let key_file = dir.join("key");
    std::fs::write(&key_file, KEY).unwrap();
    let proxy = Proxy::start();
    let replay = common::bin()
        .args(["replay", dir.join("report.json").to_str().unwrap()])
        .arg("create-pet/valid/created")
        .args(["--base-url", &base_url, "--proxy", &proxy.url])
        .args(["--api-key-file", key_file.to_str().unwrap()])
        .args(["-H", "X-Tenant: acme", "--no-regressions"])
        .env_remove("PETSTORE_API_KEY")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&replay.stdout).into_owned();
    assert_eq!(replay.status.code(), Some(1), "{shown}{}", stderr(&replay));
    assert!(shown.contains("< 500"), "{shown}");
    assert!(
        shown.contains("verdict: create-pet/valid/created failed (required"),
        "{shown}"
    );
    assert!(!shown.contains(KEY), "{shown}");
    let heads = proxy.heads();
    assert!(!heads.is_empty());
    assert!(
        heads
            .iter()
            .all(|head| head.to_ascii_lowercase().contains("x-tenant: acme")),
        "{} requests, not all with the header",
        heads.len()
    );
}
