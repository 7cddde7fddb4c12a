//! `replay <report.json> <rule-id>`: re-sends the request a report recorded for a failed rule
//! (for a property rule, the minimal counterexample) and returns the new exchange.

use std::path::Path;

use crate::report::{Report, TargetKind};

use super::error::RunError;
use crate::execution::{BaseUrl, Client, ClientSettings};
use crate::generation::request::{Body, Credential, RequestSpec};
use crate::outcome::Exchange;

/// Where to send the replayed request; `None` takes the report's own target.
pub struct ReplayTarget {
    pub base_url: Option<BaseUrl>,
    pub api_key: String,
    /// The same TLS, header and proxy settings as `run` (`--ca-cert`, `-H`, `--proxy`, ...).
    pub settings: ClientSettings,
    /// The built-in reference the program embeds, for a report of one (started afresh with
    /// the report's faults and variants).
    pub built_in: Option<super::built_in::BuiltIn>,
}

/// Headers a client's set may change (cases/request-space.json, `headers`), sent again as
/// recorded.
const CLIENT_HEADERS: [&str; 5] = [
    "Accept",
    "Accept-Encoding",
    "Referer",
    "Origin",
    "User-Agent",
];

fn method(name: &str) -> Option<&'static str> {
    ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
        .into_iter()
        .find(|m| *m == name)
}

/// The recorded request of `rule_id` in `report`, as a request relative to its base address.
pub fn recorded_request(report: &Report, rule_id: &str) -> Result<RequestSpec, RunError> {
    let config = |reason: String| RunError::Config(reason);
    let rule = report
        .rules
        .iter()
        .find(|rule| rule.id == rule_id)
        .ok_or_else(|| config(format!("rule {rule_id:?} is not in the report")))?;
    let Some(request) = rule.failure.as_ref().and_then(|f| f.request.as_ref()) else {
        return Err(config(format!(
            "rule {rule_id:?} has no recorded request (verdict {})",
            rule.verdict
        )));
    };
    let base = &report.target.base_url;
    let path = request.url.strip_prefix(base.as_str()).ok_or_else(|| {
        config(format!(
            "recorded URL {} is not under the target {base}",
            request.url
        ))
    })?;
    let method = method(&request.method)
        .ok_or_else(|| config(format!("recorded method {:?} is not HTTP", request.method)))?;
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    // The key goes back only where the request carried it: the channel it names, or the
    // Authorization header as recorded.
    let channel = request.key_channel.as_deref();
    let credential = match channel.and_then(Credential::of_channel) {
        Some(credential) => credential,
        None => header("authorization").map_or(Credential::Missing, Credential::Recorded),
    };
    // A key in the query was appended last; the client appends it again.
    let mut path = path;
    if let Some(name) = channel.and_then(|channel| channel.strip_prefix("query ")) {
        let pair = format!("{name}={}", crate::outcome::REDACTED);
        if let Some(rest) = path.strip_suffix(pair.as_str()) {
            path = rest.strip_suffix(['?', '&']).unwrap_or(rest);
        }
    }
    // The headers of a client's set the case sent (the client's own otherwise).
    let headers = request
        .headers
        .iter()
        .filter(|(name, value)| {
            CLIENT_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name))
                && !value.contains("[REDACTED")
        })
        .cloned()
        .collect();
    if let Some(length) = request.body_length {
        return Err(config(format!(
            "rule {rule_id:?}: the report keeps only the first 64 KiB of its {length}-byte request body; the failure's class and minimal case say what was sent"
        )));
    }
    let body = match &request.body {
        Some(text) => Body::Raw {
            content_type: header("content-type"),
            bytes: match request.body_escaped {
                true => crate::outcome::unescape_body(text),
                false => text.as_bytes().to_vec(),
            }
            .into(),
        },
        None => Body::None,
    };
    Ok(RequestSpec {
        method,
        path: path.to_string(),
        query: Vec::new(),
        raw_query: None,
        credential,
        headers,
        body,
        refused_by_contract: false,
    })
}

/// Re-sends the recorded request. A report of the built-in reference replays against a fresh
/// reference with the same faults (its store starts empty).
pub fn replay(
    report_path: &Path,
    rule_id: &str,
    target: ReplayTarget,
) -> Result<Exchange, RunError> {
    use crate::execution::files;
    let text = files::read_text(report_path, files::EVIDENCE_CAP)
        .map_err(|e| RunError::Config(format!("{}: {e}", report_path.display())))?;
    let report: Report = serde_json::from_str(&text)
        .map_err(|e| RunError::Config(format!("{}: not a report: {e}", report_path.display())))?;
    let spec = recorded_request(&report, rule_id)?;
    let runtime = super::runtime::runtime()?;
    let (base_url, api_key, _server) = match target.base_url {
        Some(base_url) => (base_url.as_str().to_string(), target.api_key, None),
        // The key goes only where the current configuration says: a report may name any host.
        None if report.target.kind == TargetKind::External => {
            return Err(RunError::Config(format!(
                "the report's target is {}; the key is sent only to the target you configure: pass --base-url (or set PETSTORE_BASE_URL) to replay there",
                report.target.base_url
            )));
        }
        None => {
            let Some(built_in) = &target.built_in else {
                return Err(RunError::Config(
                    "the report's target is the built-in reference, which this program does not embed: pass --base-url to replay elsewhere".into(),
                ));
            };
            let built_in =
                built_in.with(report.target.faults.clone(), report.target.variants.clone());
            let (server, api_key) =
                super::target::start_reference(&runtime, &built_in, std::time::Duration::ZERO)?;
            (server.base_url.clone(), api_key, Some(server))
        }
    };
    if api_key.is_empty() {
        return Err(RunError::Config(
            "no API key in the environment variable".into(),
        ));
    }
    super::target::check_api_key(&api_key, "the API key variable")?;
    let client = Client::new(
        &base_url,
        &api_key,
        target.settings,
        runtime.handle().clone(),
    )?;
    let exchange = client.send(&spec);
    if exchange.response.is_none() {
        return Err(RunError::Unreachable(format!(
            "{base_url}: {}",
            exchange.summary()
        )));
    }
    Ok(exchange)
}
