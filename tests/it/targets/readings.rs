//! Answers HTTP allows, read as HTTP reads them: a store behind a gateway at `/~stage/v1` that
//! gzips in two members, brotlis or zstds answers nobody asked a coding for (RFC 9110 section
//! 12.5.3 allows any then), writes its successor link as `</%7Estage/v1/pets>` with quoted
//! titles holding commas, and adds 120 fields to every head, conforms. A head past what the
//! harness reads is an answer it could not read, not a target it could not reach.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Output;

use crate::common;

use common::serve_reference;
use common::servers::{self, Message};

const KEY: &str = "readings-test-key";

/// What the gateway does to the store's answers.
#[derive(Clone, Copy, Debug)]
enum Gateway {
    /// Every body gzipped in two members, unless the request asked for another coding only.
    TwoMemberGzip,
    /// Bodies the request asked no coding for in brotli and zstd, turn about.
    Unasked,
    /// Fields past what the harness reads: 300.
    Crowded,
}

const LINK: &str = concat!(
    r#"<https://docs.example/deprecations>; title="getPet, then listPets; see \"pets\""; rel=deprecation, "#,
    r#"</%7Estage/v1/pets>;title="pets, by status"; rel="successor-version""#
);

/// The store's answer to `request`, its path under `/~stage` taken off.
fn upstream(upstream: &str, request: &Message) -> Option<(String, Vec<u8>)> {
    let (line, rest) = request.head.split_once("\r\n")?;
    let line = line
        .replacen(" /~stage/", " /", 1)
        .replacen(" /%7Estage/", " /", 1);
    let rest: String = rest
        .split_inclusive("\r\n")
        .filter(|field| {
            let field = field.to_ascii_lowercase();
            // The gateway answered `100-continue` itself: the store's answer is its only one.
            !field.starts_with("connection:") && !field.starts_with("expect:")
        })
        .collect();
    let head = format!(
        "{line}\r\n{}",
        rest.replacen("\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1)
    );
    let mut server = TcpStream::connect(upstream).ok()?;
    server.write_all(head.as_bytes()).ok()?;
    server.write_all(&request.body).ok()?;
    let mut answer = Vec::new();
    server.read_to_end(&mut answer).ok()?;
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&answer[..end]).into_owned();
    let mut body = answer[end + 4..].to_vec();
    if request.method() == "HEAD" {
        body.clear();
    } else if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunked(&body);
    }
    Some((head, body))
}

fn dechunked(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(end) = chunked.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&chunked[..end]);
        let size =
            usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        body.extend_from_slice(&chunked[end + 2..end + 2 + size]);
        chunked = &chunked[end + 4 + size..];
    }
    body
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The gateway in front of the reference at `base_url`; its own base URL, at `/~stage/v1`.
fn gateway(base_url: &str, gateway: Gateway) -> String {
    let authority = servers::authority(base_url);
    let server = servers::listen().requests(move |request, n, client| {
        let Some((head, body)) = upstream(&authority, request) else {
            return false;
        };
        let asked = request.header("accept-encoding");
        let (coding, body) = match gateway {
            _ if body.is_empty() => (None, body),
            Gateway::TwoMemberGzip if asked.is_none_or(|asked| asked.contains("gzip")) => {
                let (first, second) = body.split_at(body.len() / 2);
                (Some("gzip"), [gzip(first), gzip(second)].concat())
            }
            Gateway::Unasked if asked.is_none() && n % 2 == 0 => (
                Some("br"),
                petstore_conformance::reference::codings::brotli_stored(&body),
            ),
            Gateway::Unasked if asked.is_none() => (
                Some("zstd"),
                petstore_conformance::reference::codings::zstd(&body),
            ),
            _ => (None, body),
        };
        let mut out = String::new();
        for (at, line) in head.split("\r\n").enumerate() {
            let name = line.split(':').next().unwrap_or("").to_ascii_lowercase();
            match name.as_str() {
                _ if at == 0 => out.push_str(line),
                "content-length" if request.method() == "HEAD" => {
                    out.push_str(&format!("\r\n{line}"))
                }
                "content-length" | "transfer-encoding" | "connection" => continue,
                "link" => out.push_str(&format!("\r\nLink: {LINK}")),
                _ => out.push_str(&format!("\r\n{line}")),
            }
        }
        let fields = if matches!(gateway, Gateway::Crowded) {
            300
        } else {
            120
        };
        for field in 1..=fields {
            out.push_str(&format!("\r\nX-Trace-{field}: {:08x}", field * 7919));
        }
        if let Some(coding) = coding {
            out.push_str(&format!(
                "\r\nContent-Encoding: {coding}\r\nVary: Accept-Encoding"
            ));
        }
        if request.method() != "HEAD" {
            out.push_str(&format!("\r\nContent-Length: {}", body.len()));
        }
        out.push_str("\r\n\r\n");
        client.write_all(out.as_bytes()).is_ok() && client.write_all(&body).is_ok()
    });
    format!("http://{}/~stage/v1", server.addr())
}

fn run(base_url: &str, dir: &Path) -> Output {
    common::bin()
        .args(["run", "--base-url", base_url, "--no-regressions"])
        .arg("--report-dir")
        .arg(dir)
        .env("PETSTORE_API_KEY", KEY)
        .env_remove("PETSTORE_BASE_URL")
        .output()
        .expect("binary runs")
}

fn conforms(kind: Gateway) {
    let (_server, base_url) = serve_reference(KEY, &[]);
    let url = gateway(&base_url, kind);
    let dir = common::temp_dir("readings", &format!("{kind:?}"));
    let output = run(&url, &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report = common::read_json(&dir.join("report.json"));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{kind:?}: {:?}\n{stderr}",
        common::failed_rules(&report)
    );
    // The link was read and judged, not skipped.
    let successor = common::rules(&report)
        .iter()
        .find(|rule| {
            rule["id"]
                .as_str()
                .is_some_and(|id| id.ends_with("successor-is-list-pets"))
        })
        .expect("the successor rule runs");
    assert_eq!(successor["verdict"], "passed", "{successor}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_store_gzipping_in_two_members_behind_a_tilde_base_path_conforms() {
    conforms(Gateway::TwoMemberGzip);
}

#[test]
fn a_store_answering_in_brotli_and_zstd_unasked_conforms() {
    conforms(Gateway::Unasked);
}

#[test]
fn a_head_too_large_to_read_is_an_answer_not_an_unreachable_target() {
    let (_server, base_url) = serve_reference(KEY, &[]);
    let url = gateway(&base_url, Gateway::Crowded);
    let dir = common::temp_dir("readings", "crowded");
    let output = run(&url, &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("could not be reached"), "{stderr}");
    // Nothing read, so nothing judged: undetermined, with a report saying why.
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let report = std::fs::read_to_string(dir.join("report.json")).unwrap();
    assert!(report.contains("answer's head too large"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
