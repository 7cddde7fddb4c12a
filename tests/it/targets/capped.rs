//! A client real servers can bear: in front of the conforming reference, a proxy that holds at
//! most N connections at once and leaves the rest in its listen backlog (as waitress, a worker
//! pool or a sidecar with a connection cap does). The default run must conform there with no
//! rule inconclusive, give the same verdicts twice for one seed, and never hold more
//! connections than `--concurrency` allows.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};

use serde_json::Value;

use crate::common;

use common::servers::{self, Server};
use common::verdicts;

const KEY: &str = "capped-test-key";

/// A proxy to the reference at `upstream` (its base URL) that accepts a connection only while
/// fewer than `cap` are open (the rest wait in its backlog), each piped to a connection of its
/// own to the reference. Closed as soon as either side closes (the other is shut down with
/// it): a server that closes after an answer frees its place before the client's next
/// connect, as it does on a real server.
fn capped_proxy(upstream: &str, cap: usize) -> Server {
    let upstream = servers::authority(upstream);
    servers::listen().at_most(cap).connections(move |client| {
        let Ok(server) = TcpStream::connect(&upstream) else {
            return;
        };
        let client = client.tcp();
        let (Ok(client_in), Ok(client_out), Ok(server_out)) =
            (client.try_clone(), client.try_clone(), server.try_clone())
        else {
            return;
        };
        let upward = std::thread::spawn(move || pipe(client_in, server_out));
        pipe(server, client_out);
        let _ = upward.join();
    })
}

/// Copies `from` to `to` until either side closes, then closes both ways.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

/// The default run (seed 17) against `base_url`: exit code and report.
fn run(base_url: &str, name: &str, extra: &[&str]) -> (i32, Value) {
    let dir = common::temp_dir("capped", name);
    let output = common::bin()
        .args([
            "run",
            "--base-url",
            base_url,
            "--seed",
            "17",
            "--no-regressions",
            "--report-dir",
        ])
        .arg(&dir)
        .args(extra)
        .env("PETSTORE_API_KEY", KEY)
        .output()
        .unwrap();
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("report.json"))
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr))),
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (output.status.code().unwrap_or(-1), report)
}

use common::not_passed;

/// Capped at 16 and at 100 open connections, the conforming reference conforms, twice alike.
#[test]
fn a_server_capping_its_connections_conforms_with_the_same_verdicts_twice() {
    for cap in [16, 100] {
        let mut runs = Vec::new();
        for round in ["a", "b"] {
            // A fresh store each time: the same seed against the same state.
            let (_server, url) = common::serve_reference(KEY, &[]);
            let proxy = capped_proxy(&url, cap);
            let (code, report) = run(&proxy.base_url(), &format!("cap{cap}-{round}"), &[]);
            assert_eq!(code, 0, "cap {cap}: {:?}", not_passed(&report));
            assert!(
                not_passed(&report).is_empty(),
                "cap {cap}: {:?}",
                not_passed(&report)
            );
            assert!(proxy.most_open() <= cap);
            runs.push(report);
        }
        let (first, second) = (&runs[0], &runs[1]);
        assert_eq!(verdicts(first), verdicts(second), "cap {cap}");
        let connections = &first["connections"];
        assert!(
            connections["most_open"].as_u64().unwrap()
                <= connections["concurrency_ceiling"].as_u64().unwrap(),
            "{connections}"
        );
        assert!(
            connections["opened"].as_u64().unwrap() >= 1
                && connections["concurrency_reached"].as_u64().unwrap() >= 1,
            "{connections}"
        );
    }
}

/// At most `--concurrency` connections are ever open to the target, reused with keep-alive.
#[test]
fn connections_never_exceed_the_concurrency_allowed() {
    let (_server, url) = common::serve_reference(KEY, &[]);
    for concurrency in [4, 96] {
        // Uncapped: every connection the harness opens is accepted and counted.
        let proxy = capped_proxy(&url, usize::MAX);
        let log = std::env::temp_dir().join(format!(
            "pc-capped-requests-{concurrency}-{}.jsonl",
            std::process::id()
        ));
        let (code, report) = run(
            &proxy.base_url(),
            &format!("concurrency{concurrency}"),
            &[
                "--concurrency",
                &concurrency.to_string(),
                "--request-log",
                log.to_str().unwrap(),
            ],
        );
        assert_eq!(code, 0, "{:?}", not_passed(&report));
        let most_open = proxy.most_open();
        assert!(
            most_open <= concurrency,
            "--concurrency {concurrency}: {most_open} connections open at once ({})",
            report["connections"]
        );
        let accepted = proxy.accepted() as u64;
        let sent = std::fs::read_to_string(&log).unwrap().lines().count() as u64;
        let _ = std::fs::remove_file(&log);
        assert!(
            accepted * 4 < sent,
            "keep-alive: {accepted} connections for {sent} requests"
        );
        assert_eq!(
            report["connections"]["opened"].as_u64().unwrap(),
            accepted,
            "the report counts the connections the target saw"
        );
    }
}
