//! A signed run's attestation: verified by `verify-report` and by an independent DSSE check
//! written here (PAE + Ed25519 over the payload, SHA-256 of each subject); any single-byte
//! change to any report file, a forged report.json with its plain digest recomputed, another
//! key, and a foreign catalogue each fail, with a line saying which; a file of another size than
//! attested is refused unread, and `compare` checks the attestation beside a report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use serde_json::Value;

use crate::common;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("attestation", name)
}

/// An Ed25519 key pair as PEM files: openssl's when it is on the machine (the format users
/// have), else one generated with ring and written as the same PKCS#8 / SPKI PEM.
fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    let openssl = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&private)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("openssl")
            .args(["pkey", "-pubout", "-in"])
            .arg(&private)
            .arg("-out")
            .arg(&public)
            .status()
            .is_ok_and(|s| s.success());
    if !openssl {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let pem = |label: &str, der: &[u8]| {
            format!(
                "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
                BASE64.encode(der)
            )
        };
        std::fs::write(&private, pem("PRIVATE KEY", pkcs8.as_ref())).unwrap();
        let mut spki = vec![
            0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
        ];
        spki.extend_from_slice(pair.public_key().as_ref());
        std::fs::write(&public, pem("PUBLIC KEY", &spki)).unwrap();
    }
    (private, public)
}

fn command(args: &[&str]) -> Command {
    let mut command = common::bin();
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PETSTORE_") {
            command.env_remove(name);
        }
    }
    command.args(args);
    command
}

/// A run of seed 7 signed with `private`, its reports in `reports`, with `extra` arguments:
/// it must exit 0.
fn signed_run(extra: &[&str], private: &Path, reports: &Path) {
    let output = command(&["run", "--seed", "7", "--no-regressions"])
        .args(extra)
        .arg("--sign-key")
        .arg(private)
        .arg("--report-dir")
        .arg(reports)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn verify(dir: &Path, public: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let output: Output = command(&["verify-report"])
        .arg(dir)
        .arg("--public-key")
        .arg(public)
        .args(extra)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr),
    )
}

/// The raw 32-byte key of a PEM SubjectPublicKeyInfo.
fn raw_public_key(pem: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(pem).unwrap();
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = BASE64.decode(body).unwrap();
    der[der.len() - 32..].to_vec()
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The independent check: DSSE's PAE signed by `key`, every subject's digest the file's.
fn independent_check(dir: &Path, key: &[u8]) -> Result<Value, String> {
    let envelope: Value = serde_json::from_slice(
        &std::fs::read(dir.join("attestation.intoto.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("envelope: {e}"))?;
    let payload_type = envelope["payloadType"].as_str().unwrap_or_default();
    let payload = BASE64
        .decode(envelope["payload"].as_str().unwrap_or_default())
        .map_err(|e| format!("payload: {e}"))?;
    let mut pae = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    pae.extend_from_slice(&payload);
    let signature = BASE64
        .decode(
            envelope["signatures"][0]["sig"]
                .as_str()
                .unwrap_or_default(),
        )
        .map_err(|e| format!("sig: {e}"))?;
    UnparsedPublicKey::new(&ED25519, key)
        .verify(&pae, &signature)
        .map_err(|_| "signature does not verify".to_string())?;
    let statement: Value = serde_json::from_slice(&payload).map_err(|e| e.to_string())?;
    for subject in statement["subject"].as_array().cloned().unwrap_or_default() {
        let name = subject["name"].as_str().unwrap_or_default();
        let bytes = std::fs::read(dir.join(name)).map_err(|e| format!("{name}: {e}"))?;
        if subject["digest"]["sha256"] != sha256_hex(&bytes).as_str() {
            return Err(format!("{name}: digest differs"));
        }
    }
    Ok(statement)
}

/// The names of the files an attestation's statement covers.
fn subjects(statement: &Value) -> Vec<&str> {
    statement["subject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn a_signed_run_verifies_and_any_changed_byte_fails_both_checks() {
    let dir = temp_dir("signed");
    let (private, public) = key_pair(&dir, "signer");
    let reports = dir.join("reports");
    // A certifying run runs every rule, the crowded store's too: a rule left out (no
    // --fill-store) would make the result WARNED, not PASSED.
    signed_run(&["--fill-store", "1001"], &private, &reports);
    let (code, said) = verify(&reports, &public, &[]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("signed by this public key"), "{said}");
    let key = raw_public_key(&public);
    let statement = independent_check(&reports, &key).unwrap();
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(
        statement["predicateType"],
        "https://in-toto.io/attestation/test-result/v0.1"
    );
    assert_eq!(statement["predicate"]["result"], "PASSED");
    let subjects = subjects(&statement);
    for name in [
        "report.json",
        "junit.xml",
        "summary.md",
        "report.html",
        "created-pets.jsonl",
    ] {
        assert!(
            subjects.contains(&name),
            "{name} not a subject: {subjects:?}"
        );
    }
    let configuration = statement["predicate"]["configuration"].to_string();
    for name in ["contract", "rule-catalogue", "schemas", "tool"] {
        assert!(configuration.contains(name), "{configuration}");
    }
    // One byte of each file changed (a letter's case: every format still parses).
    let tampered = dir.join("tampered");
    for name in subjects.iter().copied().chain(["attestation.intoto.json"]) {
        copy_dir(&reports, &tampered);
        let path = tampered.join(name);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = (bytes.len() / 2..bytes.len())
            .chain(0..bytes.len() / 2)
            .find(|i| bytes[*i].is_ascii_alphabetic())
            .unwrap();
        bytes[at] ^= 0x20;
        std::fs::write(&path, bytes).unwrap();
        let (code, said) = verify(&tampered, &public, &[]);
        assert_eq!(code, Some(1), "{name}: {said}");
        let first = said.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("FAILED") || first.starts_with("EDITED"),
            "{name}: {said}"
        );
        assert!(
            said.lines()
                .filter(|l| l.starts_with("FAILED") || l.starts_with("EDITED"))
                .any(|l| l.contains(name)),
            "{name}: no line names it: {said}"
        );
        assert!(
            independent_check(&tampered, &key).is_err(),
            "{name}: the independent check missed the change"
        );
    }
    // A forged report.json: a verdict edited and its plain digest recomputed.
    copy_dir(&reports, &tampered);
    let mut report: Value =
        serde_json::from_slice(&std::fs::read(tampered.join("report.json")).unwrap()).unwrap();
    report["totals"]["failed_required"] = Value::from(1);
    report["integrity"]["sha256"] = Value::from("");
    let digest = sha256_hex(report.to_string().as_bytes());
    report["integrity"]["sha256"] = Value::from(digest);
    std::fs::write(
        tampered.join("report.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    let (code, said) = verify(&tampered, &public, &[]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.starts_with("FAILED digest: report.json"), "{said}");
    assert!(
        said.contains("intact: report.json"),
        "the forgery is self-consistent: {said}"
    );
    // Another key's signature.
    let (_, other) = key_pair(&dir, "other");
    let (code, said) = verify(&reports, &other, &[]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.starts_with("FAILED signature"), "{said}");
    // A foreign catalogue: the verifier's own differs from the one the run used.
    let cases = dir.join("cases");
    copy_dir(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/cases")),
        &cases,
    );
    let file = cases.join("auth.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replacen("\"title\": \"", "\"title\": \"Foreign: ", 1);
    assert_ne!(text, edited);
    std::fs::write(&file, edited).unwrap();
    let (code, said) = verify(&reports, &public, &["--cases-dir", cases.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("FAILED configuration: rule-catalogue"),
        "{said}"
    );
    // Without the public key, or without a signature, it says integrity is all it shows.
    let output = command(&["verify-report"]).arg(&reports).output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("NOT CHECKED"), "{said}");
    std::fs::remove_file(reports.join("attestation.intoto.json")).unwrap();
    let output = command(&["verify-report"]).arg(&reports).output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("integrity is all this shows"), "{said}");
    let (code, said) = verify(&reports, &public, &[]);
    assert_eq!(code, Some(1), "{said}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_sign_key_that_cannot_sign_is_refused_before_the_run() {
    let dir = temp_dir("bad-key");
    let (_, public) = key_pair(&dir, "pair");
    for file in [public, dir.join("missing.pem")] {
        let output = command(&["run", "--no-regressions", "--sign-key"])
            .arg(&file)
            .arg("--report-dir")
            .arg(dir.join("reports"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--sign-key"), "{stderr}");
        assert!(!dir.join("reports").join("report.json").exists());
    }
}

#[test]
fn no_report_file_is_written_through_a_planted_link() {
    let dir = temp_dir("links");
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let request_log = dir.join("requests.jsonl");
    for name in [".lock", "report.json", "junit.xml", "created-pets.jsonl"] {
        let _ = std::os::unix::fs::symlink(&victim, reports.join(name));
    }
    std::os::unix::fs::symlink(&victim, &request_log).unwrap();
    let output = command(&["run", "--seed", "3", "--no-regressions", "--request-log"])
        .arg(&request_log)
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "keep me",
        "{stderr}"
    );
    // The lock is refused, so the run writes no report through it; nothing else is followed.
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(".lock"), "{stderr}");
    std::fs::remove_file(reports.join(".lock")).unwrap();
    let output = command(&["run", "--seed", "3", "--no-regressions"])
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    for name in ["report.json", "junit.xml", "created-pets.jsonl"] {
        let meta = std::fs::symlink_metadata(reports.join(name)).unwrap();
        assert!(!meta.is_symlink(), "{name} is still the planted link");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn every_file_of_a_signed_directory_is_covered_or_named_and_the_har_refuses_a_link() {
    let dir = temp_dir("coverage");
    let (private, public) = key_pair(&dir, "signer");
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    // The HAR and the request log written into the report directory are evidence too.
    let har = reports.join("run.har");
    let log = reports.join("requests.jsonl");
    signed_run(
        &[
            "list-pets/limit",
            "--har",
            har.to_str().unwrap(),
            "--request-log",
            log.to_str().unwrap(),
        ],
        &private,
        &reports,
    );
    let (code, said) = verify(&reports, &public, &[]);
    assert_eq!(code, Some(0), "{said}");
    let statement = independent_check(&reports, &raw_public_key(&public)).unwrap();
    let subjects = subjects(&statement);
    for name in ["run.har", "requests.jsonl"] {
        assert!(subjects.contains(&name), "{name}: {subjects:?}");
    }
    // Files the attestation does not cover, beside the signed ones: each named, exit 1.
    std::fs::write(reports.join("index.html"), "<h1>CONFORMS (certified)</h1>").unwrap();
    std::fs::copy(
        reports.join("report.json"),
        reports.join("report-final.json"),
    )
    .unwrap();
    let (code, said) = verify(&reports, &public, &[]);
    assert_eq!(code, Some(1), "{said}");
    for name in ["index.html", "report-final.json"] {
        assert!(
            said.contains(&format!(
                "FAILED coverage: {name} is here but the attestation does not cover it"
            )),
            "{said}"
        );
    }
    assert!(!said.contains("FAILED coverage: .lock"), "{said}");
    // A link planted where the HAR goes is refused, not followed: the file it points to is
    // left as it was, and the run goes on without a HAR.
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let har = dir.join("planted.har");
    std::os::unix::fs::symlink(&victim, &har).unwrap();
    let output = command(&["run", "--seed", "7", "--no-regressions", "list-pets/limit"])
        .arg("--har")
        .arg(&har)
        .arg("--report-dir")
        .arg(dir.join("elsewhere"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("--har") && stderr.contains("cannot create it"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(std::fs::symlink_metadata(&har).unwrap().is_symlink());
    let _ = std::fs::remove_dir_all(dir);
}

/// A signed directory's files are refused when they hold more or fewer bytes than the
/// attestation says, before a byte is hashed: a 20 GB sparse junit.xml, and a link to
/// /proc/self/pagemap (a file that says it is empty and reads on). `compare` refuses a report
/// whose verdict was flipped and its own digest recomputed when the attestation beside it
/// names another digest, and with `--public-key` checks the signature itself.
#[test]
fn a_file_of_another_size_is_refused_unread_and_compare_checks_the_attestation() {
    let dir = temp_dir("bounded");
    let (private, public) = key_pair(&dir, "signer");
    let reports = dir.join("reports");
    signed_run(&["list-pets/limit"], &private, &reports);
    let statement = independent_check(&reports, &raw_public_key(&public)).unwrap();
    let junit = statement["subject"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "junit.xml")
        .unwrap();
    let junit_size = std::fs::metadata(reports.join("junit.xml")).unwrap().len();
    assert_eq!(junit["annotations"]["size"], junit_size);

    let planted = dir.join("planted");
    copy_dir(&reports, &planted);
    let sparse = std::fs::File::create(planted.join("junit.xml")).unwrap();
    sparse.set_len(20 << 30).unwrap();
    drop(sparse);
    std::fs::remove_file(planted.join("summary.md")).unwrap();
    std::os::unix::fs::symlink("/proc/self/pagemap", planted.join("summary.md")).unwrap();
    let started = std::time::Instant::now();
    let (code, said) = verify(&planted, &public, &[]);
    // Hashing 20 GB takes a minute; refused unread, it is the start of a process. (A second
    // on an idle machine; ten allow for a loaded one.)
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "FAILED digest: junit.xml holds {} bytes, the attestation says {junit_size}",
            20u64 << 30
        )),
        "{said}"
    );
    assert!(
        said.contains("FAILED digest: summary.md holds 0 bytes"),
        "{said}"
    );

    // compare: the report against itself is no regression, with or without the key.
    let compare = |old: &Path, new: &Path, key: Option<&Path>| {
        let mut compare = command(&["compare"]);
        compare.arg(old).arg(new);
        if let Some(key) = key {
            compare.arg("--public-key").arg(key);
        }
        let output = compare.output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let signed = reports.join("report.json");
    assert_eq!(compare(&signed, &signed, None).0, Some(0));
    assert_eq!(compare(&signed, &signed, Some(&public)).0, Some(0));
    // A verdict flipped, the report's own digest recomputed, the attestation left beside it.
    let flipped = dir.join("flipped");
    copy_dir(&reports, &flipped);
    let mut report: Value = serde_json::from_slice(&std::fs::read(&signed).unwrap()).unwrap();
    let rule = report["rules"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|rule| rule["verdict"] == "passed" && rule["level"] == "required")
        .unwrap();
    rule["verdict"] = Value::from("failed");
    report["integrity"]["sha256"] = Value::from("");
    let digest = sha256_hex(report.to_string().as_bytes());
    report["integrity"]["sha256"] = Value::from(digest);
    std::fs::write(
        flipped.join("report.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    let (code, said) = compare(&signed, &flipped.join("report.json"), None);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("edited after it was signed"), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    // Without the attestation, its own digest is all it has: the forgery then reads as a run
    // (what --public-key is for).
    std::fs::remove_file(flipped.join("attestation.intoto.json")).unwrap();
    let (code, said) = compare(&signed, &flipped.join("report.json"), None);
    assert_eq!(code, Some(1), "{said}");
    let (code, said) = compare(&signed, &flipped.join("report.json"), Some(&public));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("not signed"), "{said}");
    // Another key: the signature does not hold.
    let (_, other) = key_pair(&dir, "other");
    let (code, said) = compare(&signed, &signed, Some(&other));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("no signature by this public key"), "{said}");
    let _ = std::fs::remove_dir_all(dir);
}
