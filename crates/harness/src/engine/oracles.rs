//! The response oracles' tally: every exchange of the run is judged, as it passes the
//! recorder ([`Observations::inspect`]), against the statements that hold on every response,
//! whichever rule sent the request (store setup, generated cases, shrinking steps, auth
//! probes): JSON content type, Error bodies whose `status` repeats the HTTP status, no 5xx, 2xx
//! bodies valid against the operation's response schema, deprecation headers on getPet only.
//! The oracle rules (`rules/responses.rs`) read the tally once every other rule has finished.
//!
//! Only evidence is tallied: an answer the transport cut mid-body is counted as a cut of the
//! rule that sent it, never judged. The contract's statements judge the answers to its
//! operations; a request no operation matches (`GET /pets/`, a trailing slash) is a robustness
//! probe, which only the recommended "no 5xx" judges. An answer with no body (a redirect, 204,
//! 304, an empty body) has no media type to judge.

use std::sync::Mutex;

use serde_json::Value;

use crate::catalogue::Check;
use crate::contract::{Contract, Operation, SchemaName};
use crate::outcome::Exchange;

/// A statement that holds on every response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statement {
    JsonContentType,
    ErrorBody,
    NoServerError,
    SuccessSchema,
    DeprecationOnGetPetOnly,
    /// No 5xx to a request outside the contract's operations (robustness, recommended).
    OutsideNoServerError,
}

const STATEMENTS: [Statement; 6] = [
    Statement::JsonContentType,
    Statement::ErrorBody,
    Statement::NoServerError,
    Statement::SuccessSchema,
    Statement::DeprecationOnGetPetOnly,
    Statement::OutsideNoServerError,
];

/// What the responses a statement applies to showed: how many, how many break it, and the
/// first that did (the rule that sent it, the problem, the exchange).
#[derive(Default, Clone)]
pub struct Tally {
    pub inspected: usize,
    pub violations: usize,
    pub first: Option<(String, String, Box<Exchange>)>,
}

/// The running tally of every response against the cross-cutting statements.
#[derive(Default)]
pub struct Observations {
    tallies: Mutex<[Tally; STATEMENTS.len()]>,
    /// The sweep is sent once per run: the three statements read the same tally.
    pub(crate) swept: std::sync::OnceLock<()>,
    /// Answers the transport cut mid-body, per rule that sent the request.
    cuts: Mutex<std::collections::BTreeMap<String, u32>>,
}

/// Whether an answer carries no body to judge as JSON: informational, a redirect, 204 No
/// Content, 304 Not Modified, the answer to HEAD, or an empty body where one is allowed. An
/// error must carry an Error body "with `Content-Type: application/json`", so an empty 4xx or
/// 5xx is still judged.
fn body_less(exchange: &Exchange) -> bool {
    let Some(response) = &exchange.response else {
        return true;
    };
    matches!(response.status, 100..=199 | 204 | 300..=399)
        || exchange.request.method == "HEAD"
        || (response.body.is_empty() && !response.body_truncated && response.status < 400)
}

/// The body was not read (nested past the JSON reader's bound): it is evidence of nothing.
fn unread(response: &crate::outcome::RecordedResponse) -> bool {
    matches!(
        response.json_error,
        Some(crate::outcome::NoJson::NotRead(_))
    )
}

/// What is wrong with `exchange` under `statement`, if anything; `None` when it does not apply.
fn problem(
    statement: Statement,
    operation: Option<Operation>,
    exchange: &Exchange,
    contract: &Contract,
) -> Option<Option<String>> {
    let response = exchange.response.as_ref()?;
    // Outside the operations, only robustness is judged; inside, everything but it.
    if (statement == Statement::OutsideNoServerError) != operation.is_none() {
        return None;
    }
    match statement {
        Statement::SuccessSchema => {
            let schema = match (operation?, response.status) {
                (Operation::ListPets, 200) => SchemaName::Pets,
                (Operation::CreatePet, 201) | (Operation::GetPet, 200) => SchemaName::Pet,
                _ => return None, // not a documented success: the status rules judge it
            };
            if response.body_truncated || unread(response) {
                return None; // a body cut at --body-cap, or not read, cannot be judged
            }
            let name = schema.file_name().trim_end_matches(".json");
            Some(match &response.json {
                None => Some(format!("{} with a body that is not JSON", response.status)),
                Some(body) => contract
                    .check(schema, body)
                    .err()
                    .map(|reason| format!("{} body not a valid {name}: {reason}", response.status)),
            })
        }
        Statement::DeprecationOnGetPetOnly => {
            let operation = operation?;
            if !matches!(operation, Operation::ListPets | Operation::CreatePet) {
                return None;
            }
            let announced: Vec<String> = ["deprecation", "sunset"]
                .iter()
                .filter_map(|name| exchange.header(name).map(|v| format!("{name}: {v}")))
                .collect();
            Some((!announced.is_empty()).then(|| {
                format!(
                    "{} answered with {}",
                    operation.name(),
                    announced.join(", ")
                )
            }))
        }
        Statement::JsonContentType => {
            if body_less(exchange) {
                return None; // no body, so no media type to be application/json
            }
            let content_type = exchange.header("content-type");
            let essence = content_type
                .and_then(|value| value.split(';').next())
                .map(|essence| essence.trim().to_ascii_lowercase());
            Some(match essence.as_deref() {
                Some("application/json") => None,
                Some(_) => Some(format!("Content-Type: {}", content_type.unwrap_or(""))),
                None => Some("no Content-Type".into()),
            })
        }
        Statement::ErrorBody => {
            if response.status < 400 || response.body_truncated || unread(response) {
                return None; // a body cut at --body-cap, or not read, cannot be judged
            }
            let Some(body) = &response.json else {
                return Some(Some(format!(
                    "{} with a body that is not JSON",
                    response.status
                )));
            };
            if let Err(reason) = contract.check(SchemaName::Error, body) {
                return Some(Some(format!("{}: {reason}", response.status)));
            }
            let field = body.get("status").and_then(Value::as_i64);
            Some((field != Some(i64::from(response.status))).then(|| {
                format!(
                    "HTTP {} with an Error whose status is {}",
                    response.status,
                    field.map_or("missing".into(), |s| s.to_string())
                )
            }))
        }
        Statement::NoServerError | Statement::OutsideNoServerError => {
            Some((response.status >= 500).then(|| format!("{} (server error)", response.status)))
        }
    }
}

/// The oracles read every exchange of the run.
impl super::events::Subscriber for Observations {
    fn on(&self, event: &super::events::Event<'_>) {
        if let super::events::Event::ExchangeRecorded(recorded) = event {
            self.inspect(
                recorded.origin,
                recorded.operation,
                recorded.exchange,
                recorded.contract,
            );
        }
    }
}

impl Observations {
    /// Tallies one exchange; called for every exchange of the run.
    pub fn inspect(
        &self,
        rule_id: &str,
        operation: Option<Operation>,
        exchange: &Exchange,
        contract: &Contract,
    ) {
        if exchange.gave_up_throttled() {
            return; // a throttling answer is the gateway's, not the contract's
        }
        if exchange.cut_by_transport() {
            // Not evidence: counted, so the report says which rule's answer was cut.
            let mut cuts = self.cuts.lock().unwrap_or_else(|e| e.into_inner());
            *cuts.entry(rule_id.to_string()).or_default() += 1;
            return;
        }
        let found: Vec<Option<Option<String>>> = STATEMENTS
            .iter()
            .map(|statement| problem(*statement, operation, exchange, contract))
            .collect();
        let mut tallies = self.tallies.lock().unwrap_or_else(|e| e.into_inner());
        for (tally, found) in tallies.iter_mut().zip(found) {
            let Some(problem) = found else { continue };
            tally.inspected += 1;
            if let Some(problem) = problem {
                tally.violations += 1;
                if tally.first.is_none() {
                    tally.first =
                        Some((rule_id.to_string(), problem, Box::new(exchange.evidence())));
                }
            }
        }
    }

    /// How many answers to `rule_id`'s requests the transport cut mid-body.
    pub fn cuts_of(&self, rule_id: &str) -> u32 {
        let cuts = self.cuts.lock().unwrap_or_else(|e| e.into_inner());
        cuts.get(rule_id).copied().unwrap_or(0)
    }

    /// What the responses so far showed of `statement`.
    pub fn tally(&self, statement: Statement) -> Tally {
        let index = STATEMENTS.iter().position(|s| *s == statement).unwrap_or(0);
        self.tallies.lock().unwrap_or_else(|e| e.into_inner())[index].clone()
    }
}

/// What the oracle `check` finds wrong with one exchange sent to `base_url`, judged on its
/// own, as a report prints it: `None` when the check is no oracle, the statement does not apply, or the
/// exchange keeps it. A printed failure of an oracle, re-judged, must fail the same way.
pub fn rejudge(
    check: &Check,
    exchange: &Exchange,
    base_url: &str,
    contract: &Contract,
) -> Option<String> {
    let statement = match check {
        Check::ResponsesJsonContentType {} => Statement::JsonContentType,
        Check::ResponsesErrorBody {} => Statement::ErrorBody,
        Check::ResponsesNoServerError {} => Statement::NoServerError,
        Check::ResponsesSuccessSchema {} => Statement::SuccessSchema,
        Check::ResponsesDeprecationGetPetOnly {} => Statement::DeprecationOnGetPetOnly,
        Check::ResponsesOutsideNoServerError {} => Statement::OutsideNoServerError,
        _ => return None,
    };
    let mut exchange = exchange.clone();
    // A printed response carries its body, not what it parsed to.
    if let Some(response) = exchange.response.as_mut()
        && response.json.is_none()
        && !response.body_truncated
    {
        let body = std::mem::take(&mut response.body);
        response.read_json(body.as_bytes());
        response.body = body;
    }
    let url = &exchange.request.url;
    let operation = Operation::of(
        &exchange.request.method,
        url.strip_prefix(base_url.trim_end_matches('/'))
            .unwrap_or(url),
    );
    if exchange.cut_by_transport() || exchange.gave_up_throttled() {
        return None;
    }
    problem(statement, operation, &exchange, contract).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{RecordedRequest, RecordedResponse};

    fn exchange(method: &str, path: &str, status: u16, body: &str, cut: bool) -> Exchange {
        let headers = if body.is_empty() {
            vec![("location".to_string(), "http://x/v1/pets".to_string())]
        } else {
            vec![("content-type".to_string(), "text/plain".to_string())]
        };
        Exchange {
            request: RecordedRequest {
                method: method.into(),
                url: format!("http://x/v1{path}"),
                headers: Vec::new(),
                body: None,
                body_length: None,
                key_channel: None,
                body_escaped: false,
            },
            response: Some(RecordedResponse {
                version: "HTTP/1.1".into(),
                status,
                headers,
                body: body.into(),
                body_truncated: false,
                body_omitted: 0,
                json: None,
                json_error: Some(crate::outcome::NoJson::NotJson("not JSON".into())),
                duplicate_names: Vec::new(),
            }),
            transport_error: cut.then(|| {
                crate::outcome::TransportError::new(
                    crate::outcome::TransportKind::RequestFailed,
                    "reset",
                )
                .cutting_body()
            }),
            elapsed_ms: 0,
            throttled: None,
            retries: None,
        }
    }

    /// What each statement's tally holds after `exchanges`: (inspected, violations).
    fn tallies(exchanges: &[Exchange]) -> (Observations, Vec<(usize, usize)>) {
        let contract = Contract::load(None).unwrap();
        let observations = Observations::default();
        for exchange in exchanges {
            let path = exchange.request.url.trim_start_matches("http://x/v1");
            let operation = Operation::of(&exchange.request.method, path);
            observations.inspect("rule/a", operation, exchange, &contract);
        }
        let counts = STATEMENTS
            .iter()
            .map(|statement| {
                let tally = observations.tally(*statement);
                (tally.inspected, tally.violations)
            })
            .collect();
        (observations, counts)
    }

    #[test]
    fn a_cut_answer_is_counted_not_judged() {
        let (observations, counts) = tallies(&[exchange("GET", "/pets", 200, "[{\"id\"", true)]);
        assert!(
            counts.iter().all(|&(inspected, _)| inspected == 0),
            "{counts:?}"
        );
        assert_eq!(observations.cuts_of("rule/a"), 1);
        assert_eq!(observations.cuts_of("rule/b"), 0);
    }

    #[test]
    fn outside_the_operations_only_a_5xx_counts() {
        let (_, counts) = tallies(&[
            exchange("GET", "/pets/", 307, "", false),
            exchange("GET", "/pets/1/", 500, "oops", false),
        ]);
        let outside = STATEMENTS
            .iter()
            .position(|s| *s == Statement::OutsideNoServerError)
            .unwrap();
        for (n, &(inspected, violations)) in counts.iter().enumerate() {
            if n == outside {
                assert_eq!((inspected, violations), (2, 1));
            } else {
                assert_eq!(inspected, 0, "{:?}", STATEMENTS[n]);
            }
        }
    }

    #[test]
    fn a_body_less_redirect_has_no_media_type_to_judge() {
        let (_, counts) = tallies(&[
            exchange("GET", "/pets", 307, "", false),
            exchange("GET", "/pets", 401, "", false),
        ]);
        // The redirect is not judged; the empty 401 is (an error carries a JSON Error).
        assert_eq!(counts[0], (1, 1));
    }
}
