//! The shared vocabulary of a run, one floor above the contract: the exchange as recorded (key
//! redacted, near misses as expressions), and the verdict a rule reaches with its evidence.
//! Execution produces exchanges, rules produce verdicts, reports render both; none of them
//! needs another to name these.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What replaces the key wherever it would appear.
pub use crate::contract::credential::REDACTED;

mod curl;
mod escaped;
mod exchange_state;
mod kept;
mod transport_error;
pub use curl::header_variable;
pub use escaped::{escape_body, unescape_body};
pub use exchange_state::ExchangeState;
pub use kept::BODY_SHOWN;
pub use transport_error::{TransportError, TransportKind};

/// How each near miss is written where the key may not be: an expression over `[REDACTED]`
/// that `replay` expands and a curl line turns into the shell's own (`${KEY:1}`, `${KEY%?}`,
/// `${KEY~~}`).
pub const RECORDED_FORMS: [(&str, &str); 3] = [
    ("[REDACTED:1]", ":1"),
    ("[REDACTED%?]", "%?"),
    ("[REDACTED~~]", "~~"),
];

/// The case-swapped near miss of a key without letters: each digit and each of token68's
/// symbols shifted to the next (`0` to `1`, `9` to `0`, `-._~+/` round), another token of the
/// key's shape. No `${...}` operator does this, so a curl line pipes the key through `tr`.
pub const SHIFTED_FORM: (&str, &str) = ("[REDACTED+1]", r"tr '0-9._~+/\055' '1-90_~+/\055.'");

/// A request as it was sent, with the key redacted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The whole body's length in bytes, when `body` keeps only its first [`BODY_KEPT`] bytes
    /// (a rung of a size ladder kept as evidence): memory and reports stay bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_length: Option<usize>,
    /// Where the key went outside the Authorization header (`header X-API-Key`, `header
    /// Cookie`, `query api_key`): there `[REDACTED]` is the API key, and a curl line and
    /// `replay` put it back there (another header's `[REDACTED]` is its own secret, `-H`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_channel: Option<String>,
    /// The bytes sent were not UTF-8: `body` writes each byte that is not as `\xHH` and each
    /// backslash as `\\` ([`escape_body`]), so it says the real bytes; curl lines and
    /// `replay` send them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub body_escaped: bool,
}

/// Bytes of a response body's text an exchange keeps (the start; the parse is of the whole
/// body): enough for every message and report, which show less, and memory bounded whatever
/// the target sends.
pub const BODY_KEPT: usize = 64 << 10;

/// A response as it was received (body capped), with the key redacted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedResponse {
    /// The protocol the answer came in ("HTTP/1.1", "HTTP/2.0").
    pub version: String,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body's text, its first [`BODY_KEPT`] bytes.
    pub body: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub body_truncated: bool,
    /// Characters of the body's text not kept in `body` (past [`BODY_KEPT`]).
    #[serde(skip)]
    pub body_omitted: usize,
    /// The parsed body, shared by the exchanges that got the same bytes; `None` when it is
    /// not JSON or was not read (see `json_error`).
    #[serde(skip)]
    pub json: Option<std::sync::Arc<Value>>,
    #[serde(skip)]
    pub json_error: Option<NoJson>,
    /// Member names the body gave twice in one object (RFC 8259 section 4: "SHOULD be unique").
    #[serde(skip)]
    pub duplicate_names: Vec<String>,
}

/// Why a response has no parsed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoJson {
    /// RFC 8259's grammar does not take the body: evidence that it is not JSON.
    NotJson(String),
    /// The body was not read (nested past the reader's bound, cut at the body cap, its parse
    /// let go with the evidence): it says nothing either way.
    NotRead(String),
}

impl std::fmt::Display for NoJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoJson::NotJson(reason) | NoJson::NotRead(reason) => f.write_str(reason),
        }
    }
}

impl From<crate::json::Unread> for NoJson {
    fn from(unread: crate::json::Unread) -> NoJson {
        match unread {
            crate::json::Unread::NotJson(reason) => NoJson::NotJson(reason),
            crate::json::Unread::TooDeep | crate::json::Unread::TooLarge => {
                NoJson::NotRead(unread.to_string())
            }
        }
    }
}

impl RecordedResponse {
    /// Reads `bytes` as the body (RFC 8259's grammar, [`crate::json`]).
    pub fn read_json(&mut self, bytes: &[u8]) {
        match crate::json::read(bytes) {
            Ok(read) => {
                self.json = Some(std::sync::Arc::new(read.value));
                self.json_error = None;
                self.duplicate_names = read.duplicate_names;
            }
            Err(unread) => {
                self.json = None;
                self.json_error = Some(unread.into());
            }
        }
    }

    /// The body was read and the grammar refused it.
    pub fn not_json(&self) -> Option<&str> {
        match &self.json_error {
            Some(NoJson::NotJson(reason)) => Some(reason),
            _ => None,
        }
    }
}

/// One request and what came back: a response, or the transport error that stood for one.
#[derive(Debug, Clone, Serialize)]
pub struct Exchange {
    pub request: RecordedRequest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RecordedResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_error: Option<TransportError>,
    pub elapsed_ms: u64,
    /// When the target throttled the request (429, or 503 with Retry-After): how long the
    /// client waited, and whether it gave up (the response is then the throttling answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<Throttling>,
    /// Earlier tries of this request that got no answer at all (its connection closed or was
    /// reset before any byte of an answer), each sent again on a fresh connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<Box<Retries>>,
}

/// The tries of a request that got no answer (RFC 9112 section 9.3.1: a client may send an
/// idempotent request again when its connection closed before the answer; a request that
/// provably was not written may always be). A cut is no evidence; the same request cut on
/// every fresh connection while the store answers other requests is: the operation gives no
/// answer to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retries {
    /// Why each earlier try got no answer, in order.
    pub unanswered: Vec<String>,
    /// When no try was answered: what the store answered to another request sent after the
    /// last try, which shows the store up and answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_answered: Option<String>,
}

/// The waits of one request that the target throttled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttling {
    pub waits: u32,
    pub waited_ms: u64,
    /// Still throttled after `--max-throttle-wait`: the answer says nothing of the contract.
    pub gave_up: bool,
}

impl Exchange {
    /// The request left and something (a response or a transport error) came of it.
    pub fn was_sent(&self) -> bool {
        !matches!(self.state(), ExchangeState::NotSent(_))
    }

    /// A response came, but the transport cut its body short: see [`ExchangeState::Cut`].
    pub fn cut_by_transport(&self) -> bool {
        matches!(self.state(), ExchangeState::Cut(..))
    }

    /// No try of this request got an answer, though the store answered another request after
    /// the last one: evidence that the operation does not answer it (see [`Retries`]).
    pub fn never_answered(&self) -> Option<&Retries> {
        let retries = self.retries.as_deref()?;
        (matches!(self.state(), ExchangeState::Unanswered(_)) && retries.store_answered.is_some())
            .then_some(retries)
    }

    /// The target was still throttling this request when the client stopped waiting.
    pub fn gave_up_throttled(&self) -> bool {
        self.throttled.is_some_and(|t| t.gave_up)
    }

    pub fn status(&self) -> Option<u16> {
        self.response.as_ref().map(|r| r.status)
    }

    pub fn json(&self) -> Option<&Value> {
        self.response.as_ref()?.json.as_deref()
    }

    /// All values of a response header (case-insensitive name).
    pub fn headers(&self, name: &str) -> Vec<&str> {
        self.response
            .iter()
            .flat_map(|r| r.headers.iter())
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers(name).into_iter().next()
    }

    /// One line saying what came back, for verdict messages.
    pub fn summary(&self) -> String {
        match self.state() {
            ExchangeState::Answered(r) | ExchangeState::Cut(r, _) => {
                let content_type = self.header("content-type").unwrap_or("no content type");
                let mut body: String = r.body.chars().take(160).collect();
                if r.body.chars().count() > 160 || r.body_truncated || r.body_omitted > 0 {
                    body.push('…');
                }
                format!("{} ({content_type}) {body}", r.status)
            }
            ExchangeState::NotSent(error) | ExchangeState::Unanswered(Some(error)) => {
                format!("no response: {error}")
            }
            ExchangeState::Unanswered(None) => "no response".into(),
        }
    }
}

/// What a verdict is, without its evidence: what reports and gates compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    Passed,
    Failed,
    Inconclusive,
    Skipped,
    /// Failed, and on the team's list of known failures (not expired): not gated.
    KnownFailure,
    /// The contract gives no way to decide the rule on this store (a crowded one): neither
    /// passed nor tried-and-undecided.
    NotDecidable,
}

impl VerdictKind {
    /// Every verdict, from the one that says most against the target to the one that says
    /// least: failed, a known failure, no verdict reached (inconclusive), none reachable on
    /// this store, not run (skipped), passed. A report lists its rules in this order, and a
    /// verdict made of several (a response oracle over the shards of a split run) is the
    /// first any of them reached: a pass holds only where every part passed.
    pub const RANKED: [VerdictKind; 6] = [
        VerdictKind::Failed,
        VerdictKind::KnownFailure,
        VerdictKind::Inconclusive,
        VerdictKind::NotDecidable,
        VerdictKind::Skipped,
        VerdictKind::Passed,
    ];

    /// This verdict's place in [`VerdictKind::RANKED`] (0 first).
    pub fn rank(self) -> usize {
        VerdictKind::RANKED
            .iter()
            .position(|kind| *kind == self)
            .unwrap_or(VerdictKind::RANKED.len())
    }

    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Passed => "passed",
            VerdictKind::Failed => "failed",
            VerdictKind::Inconclusive => "inconclusive",
            VerdictKind::Skipped => "skipped",
            VerdictKind::KnownFailure => "known-failure",
            VerdictKind::NotDecidable => "not-decidable",
        }
    }
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of a rule on a target.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
pub enum Verdict {
    Passed,
    Failed(Box<Failure>),
    /// The evidence could not decide; `reason` says why.
    Inconclusive {
        reason: String,
    },
    /// The rule did not apply or could not be run; `reason` says why.
    Skipped {
        reason: String,
    },
    /// The contract makes the rule undecidable on this store (it states no order for listPets,
    /// so a pet past the first 100 that match cannot be looked for); `reason` says why, with
    /// the counts.
    #[serde(rename = "not-decidable")]
    NotDecidable {
        reason: String,
    },
}

impl Verdict {
    pub fn kind(&self) -> VerdictKind {
        match self {
            Verdict::Passed => VerdictKind::Passed,
            Verdict::Failed(_) => VerdictKind::Failed,
            Verdict::Inconclusive { .. } => VerdictKind::Inconclusive,
            Verdict::Skipped { .. } => VerdictKind::Skipped,
            Verdict::NotDecidable { .. } => VerdictKind::NotDecidable,
        }
    }

    pub fn not_decidable(reason: impl Into<String>) -> Verdict {
        Verdict::NotDecidable {
            reason: reason.into(),
        }
    }

    pub fn inconclusive(reason: impl Into<String>) -> Verdict {
        Verdict::Inconclusive {
            reason: reason.into(),
        }
    }

    pub fn skipped(reason: impl Into<String>) -> Verdict {
        Verdict::Skipped {
            reason: reason.into(),
        }
    }

    /// A failure with the exchange that shows it.
    pub fn failed(
        expected: impl Into<String>,
        observed: impl Into<String>,
        exchange: &Exchange,
    ) -> Verdict {
        Verdict::Failed(Box::new(Failure {
            expected: expected.into(),
            observed: observed.into(),
            exchange: Some(exchange.evidence()),
            counterexample: None,
            steps: Vec::new(),
            class: None,
            more: Vec::new(),
            intermittent: None,
        }))
    }

    /// A failure said to belong to `class` (what went wrong, for telling distinct failures
    /// of one rule apart).
    pub fn in_class(self, class: impl Into<String>) -> Verdict {
        match self {
            Verdict::Failed(mut failure) => {
                failure.class = Some(class.into());
                Verdict::Failed(failure)
            }
            other => other,
        }
    }

    /// The first failure with the distinct ones after it (at most [`MAX_DISTINCT_FAILURES`]
    /// in all); `None` when there is none.
    pub fn failed_distinct(mut failures: Vec<Failure>) -> Option<Verdict> {
        failures.truncate(MAX_DISTINCT_FAILURES);
        let mut failures = failures.into_iter();
        let mut first = Box::new(failures.next()?);
        first.more.extend(failures);
        Some(Verdict::Failed(first))
    }

    /// A failure with the steps of the sequence that led to it.
    pub fn with_steps(self, steps: Vec<SequenceStep>) -> Verdict {
        match self {
            Verdict::Failed(mut failure) => {
                failure.steps = steps;
                Verdict::Failed(failure)
            }
            other => other,
        }
    }

    /// One line for the terminal and the JUnit message.
    pub fn message(&self) -> String {
        match self {
            Verdict::Passed => "passed".into(),
            Verdict::Failed(failure) => with_intermittent(
                failure_message(&failure.expected, &failure.observed),
                failure.intermittent.as_deref(),
            ),
            Verdict::Inconclusive { reason }
            | Verdict::Skipped { reason }
            | Verdict::NotDecidable { reason } => reason.clone(),
        }
    }
}

/// The one wording of a failure, for the terminal and every report format: what the contract
/// expected, then what was seen instead.
pub fn failure_message(expected: &str, observed: &str) -> String {
    format!("expected {expected}; observed {observed}")
}

/// A failure's message with, when it did not show again, what the re-sends gave.
pub fn with_intermittent(message: String, intermittent: Option<&str>) -> String {
    match intermittent {
        Some(note) => format!("{message} (intermittent: {note})"),
        None => message,
    }
}

/// What a failed rule expected, what it saw, and the exchange that shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub expected: String,
    pub observed: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<Exchange>,
    /// For a property rule: the generated case that failed first, and the shrunk one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
    /// For a sequence: every step of the (minimal) failing sequence, with its exchange.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<SequenceStep>,
    /// What went wrong, as a class (the status, the statement, the class of input), when the
    /// rule tells its failures apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The rule's other distinct failures, each with its own evidence and counterexample: a
    /// second kind of failure does not hide behind the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<Failure>,
    /// The failure did not show again when its case was sent again (how often, in words): still
    /// a failure, since the exchange that showed it was complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intermittent: Option<String>,
}

/// `text` with each number written N, but for an HTTP status (three digits, 100 to 599).
fn numbers_as_n(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut digits = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            let status =
                digits.len() == 3 && ('1'..='5').contains(&digits.chars().next().unwrap_or('0'));
            out.push_str(if status { &digits } else { "N" });
            digits.clear();
        }
        out.push(c);
    }
    out.pop();
    out
}

/// Distinct failures a rule reports at most (the first included).
pub const MAX_DISTINCT_FAILURES: usize = 10;

impl Failure {
    /// How many distinct failures this one stands for: itself and the others.
    pub fn distinct(&self) -> usize {
        1 + self.more.len()
    }

    /// The class a failure is told apart by: its own, or the status seen and what was
    /// expected, without the values it quotes (so "at most 20 pets" and "at most 25 pets",
    /// or two names echoed wrong, are one class).
    pub fn class_key(&self) -> String {
        if let Some(class) = &self.class {
            return class.clone();
        }
        let status = self
            .exchange
            .as_ref()
            .and_then(Exchange::status)
            .map_or("no status".to_string(), |s| s.to_string());
        // What was expected, up to the first value it quotes (a name, a Pet, a count), less
        // its asides about the input (which fields a confused body changed): the input's
        // class is told apart on its own, and a shrunk input must still count as failing.
        let quoted_from = self
            .expected
            .split(['=', ':', '{', '"', '['])
            .next()
            .unwrap_or_default();
        // Then without its asides: a parenthesis left open by the cut runs to the end.
        let mut depth = 0usize;
        let without_asides: String = quoted_from
            .chars()
            .filter(|c| {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth = depth.saturating_sub(1);
                        return false;
                    }
                    _ => {}
                }
                depth == 0
            })
            .collect();
        let expected = without_asides
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        format!("{status}: {}", numbers_as_n(&expected).trim())
    }
}

/// One step of a failing sequence: what it did, and the exchange it made.
#[derive(Debug, Clone, Serialize)]
pub struct SequenceStep {
    pub what: String,
    pub exchange: Exchange,
}

/// `Ok(())` is a pass; `Err` carries the verdict that stopped the check.
pub type Checked = Result<(), Verdict>;

/// Where a property rule's failing case came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CasePhase {
    /// Saved by an earlier run against this target, replayed first.
    Regression,
    /// A value a tester would pick by hand (bounds, each enum value).
    Boundary,
    /// Generated, then shrunk.
    Generated,
}

/// The failing input as first found, and as shrunk.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Counterexample {
    pub original: String,
    pub minimal: String,
    pub shrink_steps: u32,
    pub phase: CasePhase,
    /// The minimal input as data, as saved in a regression file.
    pub minimal_value: Value,
}

#[cfg(test)]
mod tests;
