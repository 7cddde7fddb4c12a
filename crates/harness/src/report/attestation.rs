//! `attestation.intoto.json`: a DSSE envelope (payloadType `application/vnd.in-toto+json`)
//! over an in-toto Statement v1 whose subjects are the report files with their SHA-256 and
//! whose predicate is a test result (`https://in-toto.io/attestation/test-result/v0.1`).
//! Signed with Ed25519 (ring) over DSSE's pre-authentication encoding, so any DSSE verifier
//! holding the public key can check it without trusting this tool.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer};
use serde_json::{Value, json};

use super::model::{Conformance, Report, RuleReport};
use crate::contract::{Contract, sha256_hex};
use crate::outcome::VerdictKind;

/// The file the envelope is written to, beside the reports.
pub const ATTESTATION_FILE: &str = "attestation.intoto.json";
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
pub const PREDICATE_TYPE: &str = "https://in-toto.io/attestation/test-result/v0.1";

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the raw 32-byte key follows.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// DSSE's pre-authentication encoding: what is signed, never the payload alone, so that a
/// signature cannot be moved to a payload of another type.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The key id a signature carries: the SHA-256 of the raw public key, in hex.
pub fn key_id(raw_public_key: &[u8]) -> String {
    sha256_hex(raw_public_key)
}

/// An Ed25519 private key, loaded once at start. Its bytes are never shown.
pub struct SigningKey {
    pair: Ed25519KeyPair,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey(keyid {})", self.key_id())
    }
}

impl SigningKey {
    /// A PKCS#8 PEM private key, as `openssl genpkey -algorithm ed25519` writes it.
    pub fn from_pem(pem: &[u8]) -> Result<SigningKey, String> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(pem)
            .map_err(|_| "not a PKCS#8 PEM private key (BEGIN PRIVATE KEY)".to_string())?;
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der.secret_pkcs8_der())
            .map_err(|_| "not an Ed25519 private key".to_string())?;
        Ok(SigningKey { pair })
    }

    pub fn key_id(&self) -> String {
        key_id(self.pair.public_key().as_ref())
    }

    /// The public key as PEM SubjectPublicKeyInfo, as `openssl pkey -pubout` writes it.
    pub fn public_key_pem(&self) -> String {
        let mut der = ED25519_SPKI_PREFIX.to_vec();
        der.extend_from_slice(self.pair.public_key().as_ref());
        let body = BASE64.encode(der);
        format!("-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n")
    }

    /// The DSSE envelope over `statement`.
    pub fn envelope(&self, statement: &Value) -> String {
        let payload = statement.to_string();
        let signature = self.pair.sign(&pae(PAYLOAD_TYPE, payload.as_bytes()));
        let envelope = json!({
            "payloadType": PAYLOAD_TYPE,
            "payload": BASE64.encode(payload.as_bytes()),
            "signatures": [{"keyid": self.key_id(), "sig": BASE64.encode(signature.as_ref())}],
        });
        let mut text = serde_json::to_string_pretty(&envelope).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// The raw Ed25519 key of a PEM SubjectPublicKeyInfo (`openssl pkey -pubout`).
pub fn public_key_from_pem(pem: &[u8]) -> Result<Vec<u8>, String> {
    let der = SubjectPublicKeyInfoDer::from_pem_slice(pem)
        .map_err(|_| "not a PEM public key (BEGIN PUBLIC KEY)".to_string())?;
    match der.as_ref().strip_prefix(&ED25519_SPKI_PREFIX[..]) {
        Some(raw) if raw.len() == 32 => Ok(raw.to_vec()),
        _ => Err("not an Ed25519 public key".into()),
    }
}

/// The statement and its verified payload, or why the envelope does not hold.
pub fn open_envelope(text: &str, raw_public_key: Option<&[u8]>) -> Result<Value, String> {
    let envelope: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if envelope["payloadType"] != PAYLOAD_TYPE {
        return Err(format!("payloadType is not {PAYLOAD_TYPE}"));
    }
    let payload = envelope["payload"]
        .as_str()
        .and_then(|p| BASE64.decode(p).ok())
        .ok_or("payload is not base64")?;
    if let Some(key) = raw_public_key {
        let signed = pae(PAYLOAD_TYPE, &payload);
        let verifier = UnparsedPublicKey::new(&ED25519, key);
        let holds = envelope["signatures"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["sig"].as_str().and_then(|sig| BASE64.decode(sig).ok()))
            .any(|sig| verifier.verify(&signed, &sig).is_ok());
        if !holds {
            return Err(format!(
                "no signature by this public key (keyid {}) over the payload",
                key_id(key)
            ));
        }
    }
    let statement: Value =
        serde_json::from_slice(&payload).map_err(|e| format!("payload is not JSON: {e}"))?;
    if statement["_type"] != STATEMENT_TYPE || statement["predicateType"] != PREDICATE_TYPE {
        return Err(format!(
            "payload is not an in-toto {STATEMENT_TYPE} of {PREDICATE_TYPE}"
        ));
    }
    Ok(statement)
}

/// SHA-256 of the JSON Schemas as loaded (canonical JSON, keyed by `$id`).
pub fn schemas_sha256(contract: &Contract) -> String {
    sha256_hex(
        serde_json::to_string(&contract.documents_by_id())
            .unwrap_or_default()
            .as_bytes(),
    )
}

/// What a run certified against: the configuration of the test result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configuration {
    pub contract_sha256: String,
    pub catalogue_sha256: String,
    pub schemas_sha256: String,
    pub tool_version: String,
}

impl Configuration {
    /// The resource descriptors of the predicate, by name.
    fn descriptors(&self) -> Value {
        json!([
            {"name": "contract", "uri": format!("{}#{}", crate::contract::CONTRACT_DOCUMENT, crate::contract::CONTRACT_VERSION), "digest": {"sha256": self.contract_sha256}},
            {"name": "rule-catalogue", "digest": {"sha256": self.catalogue_sha256}},
            {"name": "schemas", "digest": {"sha256": self.schemas_sha256}},
            {"name": "tool", "uri": format!("pkg:cargo/{}@{}", crate::SUITE_NAME, self.tool_version)},
        ])
    }

    /// Each item of `statement`'s configuration that differs from this one, named.
    pub fn differences(&self, statement: &Value) -> Vec<String> {
        let items = statement["predicate"]["configuration"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let find = |name: &str| items.iter().find(|item| item["name"] == name).cloned();
        let mut differ = Vec::new();
        for (name, own) in [
            ("contract", &self.contract_sha256),
            ("rule-catalogue", &self.catalogue_sha256),
            ("schemas", &self.schemas_sha256),
        ] {
            let theirs = find(name)
                .and_then(|item| item["digest"]["sha256"].as_str().map(String::from))
                .unwrap_or_default();
            if &theirs != own {
                differ.push(format!(
                    "{name}: SHA-256 {} is not this verifier's own {own}",
                    if theirs.is_empty() { "(none)" } else { &theirs }
                ));
            }
        }
        let tool = format!("pkg:cargo/{}@{}", crate::SUITE_NAME, self.tool_version);
        if find("tool").is_none_or(|item| item["uri"] != tool.as_str()) {
            differ.push(format!("tool: not this verifier's own {tool}"));
        }
        differ
    }
}

/// The annotation of a subject that holds its length in bytes: `verify-report` refuses a file
/// of another length before it reads a byte of it.
pub const SIZE_ANNOTATION: &str = "size";

/// The in-toto Statement over `files` (name, SHA-256 and length, as written) for `report`.
pub fn statement(
    report: &Report,
    files: &[(&str, String, u64)],
    configuration: &Configuration,
) -> Value {
    let subjects: Vec<Value> = files
        .iter()
        .map(|(name, sha256, size)| {
            json!({"name": name, "digest": {"sha256": sha256}, "annotations": {SIZE_ANNOTATION: size}})
        })
        .collect();
    let ids = |keep: &dyn Fn(&RuleReport) -> bool| -> Vec<String> {
        report
            .rules
            .iter()
            .filter(|rule| keep(rule))
            .map(|rule| rule.id.clone())
            .collect()
    };
    let passed = ids(&|rule| rule.verdict == VerdictKind::Passed);
    let failed = ids(&|rule| rule.verdict == VerdictKind::Failed && rule.gated);
    // Neither passed nor a gated failure: a failure not gated, a known failure, no verdict.
    let warned = ids(&|rule| {
        rule.verdict != VerdictKind::Passed && !(rule.verdict == VerdictKind::Failed && rule.gated)
    });
    let result = match report.conformance {
        Conformance::DoesNotConform => "FAILED",
        Conformance::Conforms if warned.is_empty() => "PASSED",
        _ => "WARNED",
    };
    json!({
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "result": result,
            "configuration": configuration.descriptors(),
            "url": report.target.base_url,
            "passedTests": passed,
            "warnedTests": warned,
            "failedTests": failed,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_is_the_dsse_encoding() {
        assert_eq!(pae("t", b"ab"), b"DSSEv1 1 t 2 ab".to_vec());
    }

    #[test]
    fn a_generated_key_signs_and_its_public_pem_verifies() {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            BASE64.encode(pkcs8.as_ref())
        );
        let key = SigningKey::from_pem(pem.as_bytes()).unwrap();
        assert!(!format!("{key:?}").contains(&BASE64.encode(pkcs8.as_ref())));
        let raw = public_key_from_pem(key.public_key_pem().as_bytes()).unwrap();
        let statement = json!({"_type": STATEMENT_TYPE, "predicateType": PREDICATE_TYPE});
        let envelope = key.envelope(&statement);
        assert_eq!(open_envelope(&envelope, Some(&raw)).unwrap(), statement);
        let other = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let other = Ed25519KeyPair::from_pkcs8(other.as_ref()).unwrap();
        assert!(open_envelope(&envelope, Some(other.public_key().as_ref())).is_err());
    }
}
