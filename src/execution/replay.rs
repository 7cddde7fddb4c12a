//! `replay <report.json> <rule-id>`: re-sends the request a report recorded for a failed rule
//! (for a property rule, the minimal counterexample) and returns the new exchange.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::client::{Body, Client, ClientSettings, Credential, Exchange, RequestSpec};
use super::engine::RunError;
use crate::reference::{Fault, ReferenceConfig, ReferenceServer, Variant};

/// Where to send the replayed request; `None` takes the report's own target.
pub struct ReplayTarget {
    pub base_url: Option<String>,
    pub api_key: String,
}

fn method(name: &str) -> Option<&'static str> {
    ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
        .into_iter()
        .find(|m| *m == name)
}

/// The recorded request of `rule_id` in `report`, as a request relative to its base address.
pub fn recorded_request(report: &Value, rule_id: &str) -> Result<RequestSpec, RunError> {
    let config = |reason: String| RunError::Config(reason);
    let rule = report["rules"]
        .as_array()
        .and_then(|rules| rules.iter().find(|rule| rule["id"] == rule_id))
        .ok_or_else(|| config(format!("rule {rule_id:?} is not in the report")))?;
    let request = &rule["failure"]["request"];
    if request.is_null() {
        return Err(config(format!(
            "rule {rule_id:?} has no recorded request (verdict {})",
            rule["verdict"]
        )));
    }
    let base = report["target"]["base_url"].as_str().unwrap_or("");
    let url = request["url"].as_str().unwrap_or("");
    let path = url
        .strip_prefix(base)
        .ok_or_else(|| config(format!("recorded URL {url} is not under the target {base}")))?;
    let method = method(request["method"].as_str().unwrap_or(""))
        .ok_or_else(|| config(format!("recorded method {} is not HTTP", request["method"])))?;
    let headers: Vec<(String, String)> =
        serde_json::from_value(request["headers"].clone()).unwrap_or_default();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let credential = header("authorization").map_or(Credential::Missing, Credential::Recorded);
    let body = match request["body"].as_str() {
        Some(text) => Body::Raw {
            content_type: header("content-type"),
            bytes: text.as_bytes().to_vec(),
        },
        None => Body::None,
    };
    Ok(RequestSpec {
        method,
        path: path.to_string(),
        query: Vec::new(),
        raw_query: None,
        credential,
        body,
    })
}

/// Re-sends the recorded request. A report of the built-in reference replays against a fresh
/// reference with the same faults (its store starts empty).
pub fn replay(
    report_path: &Path,
    rule_id: &str,
    target: ReplayTarget,
) -> Result<Exchange, RunError> {
    let text = std::fs::read_to_string(report_path)
        .map_err(|e| RunError::Config(format!("{}: cannot read: {e}", report_path.display())))?;
    let report: Value = serde_json::from_str(&text)
        .map_err(|e| RunError::Config(format!("{}: not a report: {e}", report_path.display())))?;
    let spec = recorded_request(&report, rule_id)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| RunError::Config(e.to_string()))?;
    let (base_url, api_key, _server) = match target.base_url {
        Some(base_url) => {
            super::engine::check_base_url(&base_url)?;
            (base_url, target.api_key, None)
        }
        // The key goes only where the current configuration says: a report may name any host.
        None if report["target"]["kind"] == "external" => {
            return Err(RunError::Config(format!(
                "the report's target is {}; the key is sent only to the target you configure: pass --base-url (or set PETSTORE_BASE_URL) to replay there",
                report["target"]["base_url"].as_str().unwrap_or("unknown")
            )));
        }
        None => {
            let faults: BTreeSet<Fault> = report["target"]["faults"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|name| Fault::parse(name.as_str()?))
                .collect();
            let api_key = format!("replay-{}", super::engine::random_seed());
            let server = runtime
                .block_on(ReferenceServer::start(
                    ReferenceConfig {
                        api_key: api_key.clone(),
                        faults,
                        variants: report["target"]["variants"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|name| Variant::parse(name.as_str()?))
                            .collect(),
                    },
                    0,
                ))
                .map_err(|e| RunError::Config(format!("cannot start the reference: {e}")))?;
            (server.base_url.clone(), api_key, Some(server))
        }
    };
    if api_key.is_empty() {
        return Err(RunError::Config(
            "no API key in the environment variable".into(),
        ));
    }
    super::engine::check_api_key(&api_key, "the API key variable")?;
    let client = Client::new(
        &base_url,
        &api_key,
        ClientSettings::default(),
        runtime.handle().clone(),
    )
    .map_err(|e| RunError::Config(e.to_string()))?;
    let exchange = client.send(&spec);
    if exchange.response.is_none() {
        return Err(RunError::Unreachable(format!(
            "{base_url}: {}",
            exchange.summary()
        )));
    }
    Ok(exchange)
}
