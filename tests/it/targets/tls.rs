//! TLS: certificates are verified by default; `--ca-cert` trusts a private CA; `--insecure` is
//! explicit and recorded in the report. The reference is put behind a TLS front whose
//! certificate a freshly generated CA signed.

use std::process::Output;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::ServerConfig;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::common;

use common::{serve_reference, servers};
const KEY: &str = "tls-test-key";

fn run(base_url: &str, extra: &[&str], dir: &std::path::Path) -> Output {
    common::bin()
        .args([
            "run",
            "--base-url",
            base_url,
            "--no-regressions",
            "--cases",
            "4",
        ])
        .args(extra)
        .arg("--report-dir")
        .arg(dir)
        .env("PETSTORE_API_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn certificates_are_verified_and_a_private_ca_can_be_trusted() {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &ca)
        .unwrap();
    let dir = std::env::temp_dir().join(format!("pc-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![server_cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
        )
        .unwrap();
    let (_reference, base_url) = tls_front(tls);

    let unknown_ca = run(&base_url, &[], &dir);
    let stderr = String::from_utf8_lossy(&unknown_ca.stderr);
    // A certificate it cannot verify: the target cannot be reached, nothing could run.
    assert_eq!(unknown_ca.status.code(), Some(2), "{stderr}");
    assert!(stderr.to_lowercase().contains("certificate"), "{stderr}");

    let trusted = run(&base_url, &["--ca-cert", ca_file.to_str().unwrap()], &dir);
    assert_eq!(
        trusted.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["target"]["tls_verification"], true);
    assert_eq!(report["conformance"], "conforms");

    // The store now holds the first run's pets, past the first page: the rules that look
    // for a refused pet there have no evidence (exit 3). The limit rules are enough to show
    // the run goes through without verification.
    let insecure = run(&base_url, &["--insecure", "list-pets/limit"], &dir);
    assert_eq!(
        insecure.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&insecure.stderr)
    );
    assert!(String::from_utf8_lossy(&insecure.stderr).contains("NOT verified"));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["target"]["tls_verification"], false);

    let missing = run(&base_url, &["--ca-cert", "/nonexistent/ca.pem"], &dir);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/ca.pem"));
    let _ = std::fs::remove_dir_all(dir);
}

/// The reference behind a TLS front that serves `tls`: the reference (alive while it is
/// held) and the front's base URL.
fn tls_front(tls: ServerConfig) -> (common::Server, String) {
    let (reference, upstream) = serve_reference(KEY, &[]);
    let front = servers::listen().tls(tls).proxy(&upstream, |_, _| None);
    (reference, front.base_url())
}

#[test]
fn a_client_certificate_is_presented_to_a_target_that_requires_one() {
    use rustls::RootCertStore;
    use rustls::server::WebPkiClientVerifier;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &ca)
        .unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client_cert = CertificateParams::new(vec!["petstore-conformance".to_string()])
        .unwrap()
        .signed_by(&client_key, &ca)
        .unwrap();
    let dir = std::env::temp_dir().join(format!("pc-mtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    let cert_file = dir.join("client.pem");
    let key_file = dir.join("client.key");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    std::fs::write(&cert_file, client_cert.pem()).unwrap();
    std::fs::write(&key_file, client_key.serialize_pem()).unwrap();

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let verifier =
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
            .build()
            .unwrap();
    let tls = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![server_cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
        )
        .unwrap();
    let (_reference, base_url) = tls_front(tls);
    let ca_cert = ["--ca-cert", ca_file.to_str().unwrap(), "list-pets/limit"];

    // Without a certificate the server ends the handshake: nothing could run.
    let refused = run(&base_url, &ca_cert, &dir);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let mut with_cert = ca_cert.to_vec();
    with_cert.extend([
        "--client-cert",
        cert_file.to_str().unwrap(),
        "--client-key",
        key_file.to_str().unwrap(),
    ]);
    let accepted = run(&base_url, &with_cert, &dir);
    assert_eq!(
        accepted.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
}

/// https:// to a server that answers in plain HTTP: exit 2, and the message says what is
/// likely wrong rather than only what rustls saw.
#[test]
fn https_to_a_plain_http_server_says_to_try_http() {
    let (_server, url) = serve_reference(KEY, &[]);
    let https = url.replacen("http://", "https://", 1);
    let dir = std::env::temp_dir().join(format!("pc-tls-plain-{}", std::process::id()));
    let output = run(&https, &[], &dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("could not be reached") && stderr.contains("is the base URL http://?"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
