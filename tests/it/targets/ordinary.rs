//! Conforming stores on ordinary servers: the reference behind a front that serves as a Python
//! `http.server` does (a thread per connection, keep-alive, idle connections closed, a listen
//! backlog of 5), as a gateway that answers overload with 503 and throttles with Retry-After in
//! any form, and as a server that closes each connection after one answer without saying so.
//! Each is a store that conforms: every run CONFORMS, exit 0, with no rule left undecided.
//! So does a store behind a few workers that reset connections past 32 open. And a store that
//! never answers one request, on any connection, fails the rule that sent it, with the tries
//! as evidence.
//!
//! `PETSTORE_ORDINARY_RUNS=200 cargo test --test it targets::ordinary` runs each store that
//! many times (seeds 1 to N) where the default is two.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::common;

use common::servers::{self, Listen, Message};

const KEY: &str = "ordinary-test-key";

/// How many seeds each conforming store is run with.
fn runs() -> u64 {
    std::env::var("PETSTORE_ORDINARY_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(2)
}

/// The run with `seed` against `base_url`: its exit code and report.
fn run(base_url: &str, name: &str, seed: u64) -> (i32, Value) {
    let dir = common::temp_dir("ordinary", &format!("{name}-{seed}"));
    let output = common::bin()
        .args(["run", "--base-url", base_url, "--no-regressions", "--seed"])
        .arg(seed.to_string())
        .arg("--report-dir")
        .arg(&dir)
        .env("PETSTORE_API_KEY", KEY)
        .env("PETSTORE_NO_PROGRESS", "true")
        .output()
        .unwrap();
    let report = std::fs::read_to_string(dir.join("report.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code().unwrap_or(-1), report)
}

/// Runs every seed against a fresh reference behind `front`; each must conform with every
/// rule decided.
fn conforms_behind(name: &str, front: impl Fn() -> Listen, forward: ForwardFn) {
    for seed in 1..=runs() {
        let (_reference, upstream) = common::serve_reference(KEY, &[]);
        let forward = Arc::clone(&forward);
        let upstream_authority = servers::authority(&upstream);
        let base_url = front()
            .requests(move |request, n, client| forward(&upstream_authority, request, n, client))
            .base_url();
        let (code, report) = run(&base_url, name, seed);
        let undecided = common::not_passed(&report);
        assert!(
            code == 0 && undecided.is_empty(),
            "{name}, seed {seed}: exit {code}, not passed: {undecided:?}\nconnections: {}",
            report["connections"]
        );
    }
}

type ForwardFn =
    Arc<dyn Fn(&str, &Message, usize, &mut servers::Stream) -> bool + Send + Sync + 'static>;

/// Forwards the request to the reference and writes its answer back; the connection goes on.
fn pass_through() -> ForwardFn {
    Arc::new(|upstream, request, _, client| write_forwarded(upstream, request, client))
}

fn write_forwarded(upstream: &str, request: &Message, client: &mut servers::Stream) -> bool {
    use std::io::Write;
    let Some(answer) = servers::forward(upstream, request) else {
        return false;
    };
    client.write_all(answer.head.as_bytes()).is_ok() && client.write_all(&answer.body).is_ok()
}

#[test]
fn a_python_http_server_conforms() {
    // Idle connections closed after 300 ms: far sooner than any server's default, so that a
    // run meets the race of a request sent on a connection the server is closing many times.
    conforms_behind(
        "python",
        || {
            servers::listen()
                .backlog(5)
                .idle(Duration::from_millis(300))
        },
        pass_through(),
    );
}

/// A few workers that reset every connection past 32 open: a run opens no connection past
/// those the server has served at once for a request that may not be sent twice, and bursts of
/// 16 stay within the cap, so every rule is decided.
#[test]
fn a_few_workers_resetting_past_32_connections_conform() {
    conforms_behind(
        "workers",
        || servers::listen().workers(4).reset_past(32),
        pass_through(),
    );
}

#[test]
fn a_server_closing_each_connection_after_one_answer_conforms() {
    conforms_behind(
        "one-answer",
        servers::listen,
        Arc::new(|upstream, request, _, client| {
            write_forwarded(upstream, request, client);
            false // closed after its answer, without `Connection: close`
        }),
    );
}

#[test]
fn a_gateway_answering_503_past_8_in_flight_conforms() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    conforms_behind(
        "limit-conn",
        servers::listen,
        Arc::new(move |upstream, request, _, client| {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            let written = if now > 8 {
                servers::respond(client, "503 Service Unavailable", &[], b"busy")
            } else {
                write_forwarded(upstream, request, client)
            };
            in_flight.fetch_sub(1, Ordering::SeqCst);
            written
        }),
    );
}

#[test]
fn a_gateway_throttling_with_retry_after_in_any_form_conforms() {
    // Three requests are throttled, their Retry-After written as a decimal, a fraction, and
    // not a number at all; each, sent again, is let through.
    conforms_behind(
        "retry-after",
        servers::listen,
        Arc::new(|upstream, request, n, client| {
            let (status, retry_after) = match n {
                40 => ("429 Too Many Requests", "2.0"),
                80 => ("503 Service Unavailable", "0.5"),
                120 => ("429 Too Many Requests", "soon"),
                _ => return write_forwarded(upstream, request, client),
            };
            servers::respond(client, status, &[("Retry-After", retry_after)], b"{}")
        }),
    );
}

#[test]
fn a_request_the_store_never_answers_fails_its_rule_with_the_tries() {
    // Every `GET /v1/pets?limit=0` is met by a close, on any connection; everything else is
    // answered.
    let (_reference, upstream) = common::serve_reference(KEY, &[]);
    let upstream = servers::authority(&upstream);
    let base_url = servers::raw(move |request, _, client| {
        if request.target() == "/v1/pets?limit=0" {
            servers::close(client);
            return false;
        }
        write_forwarded(&upstream, request, client)
    });
    let (code, report) = run(&base_url, "never-answered", 1);
    assert_eq!(code, 1, "{}", report["summary"]);
    let rule = common::rules(&report)
        .iter()
        .find(|rule| rule["id"] == "list-pets/limit/below-minimum")
        .expect("the rule that sends limit=0");
    assert_eq!(rule["verdict"], "failed", "{rule}");
    let observed = rule["failure"]["observed"].as_str().unwrap();
    assert!(
        observed.contains("no answer to GET") && observed.contains("in 4 tries"),
        "{observed}"
    );
    // The store seen answering between the last two tries, both sent alone.
    assert!(
        observed.contains("meanwhile GET") && observed.contains("sent alone before the last try"),
        "{observed}"
    );
}
