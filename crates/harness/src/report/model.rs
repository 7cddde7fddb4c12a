//! The report model: what a run found, as every format renders it and report.json holds it
//! (`reports/report.schema.json` pins its wire format).

use serde::{Deserialize, Serialize};

use super::coverage::InputCoverage;
use super::facts::{Cases, ContractInfo, CreatedPetsInfo, Integrity, Named, TargetInfo};
use super::statements::StatementCoverage;
use crate::catalogue::{Citation, Gate, Level, Rule};
use crate::contract::Operation;
use crate::outcome::{Counterexample, Verdict, VerdictKind};
use crate::outcome::{RecordedRequest, RecordedResponse};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub suite: Named,
    pub contract: ContractInfo,
    pub target: TargetInfo,
    pub seed: u64,
    pub cases_per_property: Cases,
    pub gate: Gate,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: u64,
    /// SIGINT or SIGTERM stopped the run: the rules not run are skipped ("interrupted").
    pub interrupted: bool,
    /// What the target's throttling cost: waits, time waited, requests given up on.
    #[serde(default)]
    pub throttling: crate::execution::client::ThrottleTally,
    /// The connections the run opened and the concurrency it reached (and cut, for overload).
    #[serde(default)]
    pub connections: crate::execution::ConnectionTally,
    pub conformance: Conformance,
    pub totals: Totals,
    /// The failed rules grouped by cause (`findings.rs`): what the target did, once, with the
    /// rules it broke; each rule keeps its own verdict and evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<super::finding::Finding>,
    /// Re-runs the same cases against the same target.
    pub rerun: String,
    pub rules: Vec<RuleReport>,
    /// Every pet the run created names start with this.
    pub run_prefix: String,
    pub created_pets: CreatedPetsInfo,
    /// The request-coverage table: per operation and input, each class of values, tried or
    /// not, with its cases and failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_coverage: Vec<InputCoverage>,
    /// The SHA-256 of the report's own canonical content (this field empty), written by the
    /// JSON rendering: `verify-report` recomputes it.
    #[serde(default)]
    pub integrity: Integrity,
    /// The shard of a split run this report is (`run --partition`); absent for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<crate::catalogue::partition::ShardRecord>,
    /// The shards a merged report was put together from (`merge`); absent for one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Merged>,
    /// The contract coverage matrix: each statement, the rules that check it and their
    /// verdicts, or why it cannot be checked through this interface.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<StatementCoverage>,
    /// Why the evidence may be over-redacted (a key shorter than 12 characters allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redaction: Option<String>,
}

/// An entry of a team's list of known failures (`--known-failures FILE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    pub rule: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// `YYYY-MM-DD`: from the day after, the rule gates again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

impl KnownFailure {
    /// Whether the entry has run out on `today` (`YYYY-MM-DD`).
    pub fn expired(&self, today: &str) -> bool {
        self.expires.as_deref().is_some_and(|date| date < today)
    }

    /// What a failure of a rule whose entry ran out says first, wherever it is shown (the
    /// terminal, every report): otherwise it reads as a plain new failure.
    pub fn expired_note(&self) -> String {
        format!(
            "known failure expired on {} ({}): gated again",
            self.expires.as_deref().unwrap_or("?"),
            self.reason
        )
    }
}

/// The run's answer to "does the target conform?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Conformance {
    /// Every required rule ran and passed.
    Conforms,
    /// A gated rule failed.
    DoesNotConform,
    /// No gated rule failed, but a selected required rule was inconclusive or skipped (or the
    /// target stopped answering). Rules the user left out (a filter, --read-only) do not count:
    /// the report says they were left out.
    Undetermined,
    /// No gated rule failed, but a required rule is a known failure: the gate passes, the
    /// target does not conform yet.
    KnownFailuresOnly,
}

impl Conformance {
    /// The answer from what the rules showed, in this order: a gated failure, then a required
    /// rule without a verdict, then a required rule failing as a known failure. `run` and
    /// `merge` both answer through it.
    pub fn of(gated_failure: bool, required_undecided: bool, required_known: bool) -> Conformance {
        if gated_failure {
            Conformance::DoesNotConform
        } else if required_undecided {
            Conformance::Undetermined
        } else if required_known {
            Conformance::KnownFailuresOnly
        } else {
            Conformance::Conforms
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Conformance::Conforms => "conforms",
            Conformance::DoesNotConform => "does not conform",
            Conformance::Undetermined => "undetermined",
            Conformance::KnownFailuresOnly => "conforms but for known failures",
        }
    }

    /// What the answer means, with the exit code `run` gave it, in one sentence.
    pub fn meaning(self) -> &'static str {
        match self {
            Conformance::Conforms => "every selected required rule passed (exit code 0)",
            Conformance::DoesNotConform => "a gated rule failed (exit code 1)",
            Conformance::Undetermined => {
                "no gated rule failed, but a selected required rule reached no verdict: inconclusive or skipped (exit code 3)"
            }
            Conformance::KnownFailuresOnly => {
                "no gated rule failed; the required rules that failed are known failures (exit code 0)"
            }
        }
    }

    /// The exit code of `run` for this answer (a signal's, 130 or 143, takes precedence): an
    /// undetermined run is never 0.
    pub fn exit_code(self) -> u8 {
        match self {
            Conformance::Conforms | Conformance::KnownFailuresOnly => 0,
            Conformance::DoesNotConform => 1,
            Conformance::Undetermined => 3,
        }
    }
}

/// Why a rule that creates pets did not run under `--read-only` (the user left it out).
pub const READ_ONLY_SKIP: &str = "read-only profile: this rule creates pets";

/// Why the crowded-store rule did not run without `--fill-store` (the user asks for it: it
/// leaves a shared store a thousand pets or more it cannot delete).
pub const FILL_STORE_SKIP: &str = "not asked for: this rule fills the store past common row limits only under --fill-store PETS (a shared store keeps every pet: the contract has no delete)";

/// Whether a rule skipped with `reason` was left out by the run's options (`--read-only`, no
/// `--fill-store`): the user's choice, not a rule that reached no verdict.
pub fn left_out_by_option(reason: Option<&str>) -> bool {
    matches!(reason, Some(READ_ONLY_SKIP | FILL_STORE_SKIP))
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Totals {
    pub rules: usize,
    pub passed: usize,
    pub failed_required: usize,
    pub failed_recommended: usize,
    pub inconclusive: usize,
    pub skipped: usize,
    /// Rules of the catalogue left out by a filter.
    pub not_selected: usize,
    /// Failed rules on the list of known failures (not gated).
    #[serde(default)]
    pub known_failures: usize,
    /// Rules the contract gives no way to decide on this store (not gated, but under
    /// `--gate certify` a required one leaves the run undetermined).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_decidable: usize,
    /// Of the failed rules, those the gate does not count (recommended ones under `--gate
    /// required` or `certify`): reported, shown as warnings, never a "failed" of any count.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_not_gated: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuleReport {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub operation: Operation,
    pub citation: Citation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub verdict: VerdictKind,
    /// Whether this verdict fails the run under its gate.
    pub gated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The entry of the known-failures list this rule is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_failure: Option<KnownFailure>,
    pub cases_run: u32,
    /// The rule's chain of dependent requests (a batch sent at once counts one): against a
    /// remote target, its run time is about this many round trips.
    #[serde(default)]
    pub round_trips: u32,
    /// Answers to the rule's requests the transport cut mid-body (a reset, an early end, a
    /// timeout): never judged; an idempotent request was sent once more.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub transport_cuts: u32,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureReport>,
    /// How many distinct failures the rule found (`failure` and `more_failures`), at most 10.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub distinct_failures: u32,
    /// The rule's distinct failures after the first (`failure`), each with its own evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_failures: Vec<FailureReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailureReport {
    /// What went wrong, as the class that tells this failure from the rule's others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    pub expected: String,
    pub observed: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RecordedRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RecordedResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_error: Option<String>,
    /// Earlier tries of the request that got no answer (see `outcome::Retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<crate::outcome::Retries>,
    /// When the target throttled the request before answering it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<crate::outcome::Throttling>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curl: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
    /// For a sequence rule: each step of the minimal failing sequence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepReport>,
    /// The failure did not show again when its case was re-sent (how often): a failure all the
    /// same, on the complete exchange above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intermittent: Option<String>,
}

impl FailureReport {
    pub fn of(failure: &crate::outcome::Failure, key_env: &str) -> FailureReport {
        FailureReport {
            class: failure.class.clone(),
            expected: failure.expected.clone(),
            observed: failure.observed.clone(),
            request: failure.exchange.as_ref().map(|e| e.request.clone()),
            response: failure
                .exchange
                .as_ref()
                .and_then(|e| e.response.clone())
                .map(excerpt),
            transport_error: failure
                .exchange
                .as_ref()
                .and_then(|e| e.transport_error.as_ref().map(ToString::to_string)),
            retries: failure
                .exchange
                .as_ref()
                .and_then(|e| e.retries.as_deref().cloned()),
            throttled: failure.exchange.as_ref().and_then(|e| e.throttled),
            curl: failure.exchange.as_ref().map(|e| e.curl(key_env)),
            counterexample: failure.counterexample.clone(),
            steps: failure
                .steps
                .iter()
                .map(|step| StepReport {
                    what: step.what.clone(),
                    status: step.exchange.status(),
                    curl: step.exchange.curl(key_env),
                })
                .collect(),
            intermittent: failure.intermittent.clone(),
        }
    }

    /// "expected ...; observed ...", worded as the terminal words it.
    pub fn message(&self) -> String {
        crate::outcome::with_intermittent(
            crate::outcome::failure_message(&self.expected, &self.observed),
            self.intermittent.as_deref(),
        )
    }
}

/// One step of a failing sequence as a report shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepReport {
    pub what: String,
    /// The status it got; none when nothing answered.
    pub status: Option<u16>,
    pub curl: String,
}

impl RuleReport {
    pub fn new(
        rule: &Rule,
        verdict: &Verdict,
        gated: bool,
        cases_run: u32,
        duration_ms: u64,
        key_env: &str,
    ) -> RuleReport {
        let (failure, more_failures) = match verdict {
            Verdict::Failed(failure) => (
                Some(FailureReport::of(failure, key_env)),
                failure
                    .more
                    .iter()
                    .map(|more| FailureReport::of(more, key_env))
                    .collect(),
            ),
            _ => (None, Vec::new()),
        };
        let distinct_failures = match verdict {
            Verdict::Failed(failure) => u32::try_from(failure.distinct()).unwrap_or(u32::MAX),
            _ => 0,
        };
        let reason = match verdict {
            Verdict::Inconclusive { reason }
            | Verdict::Skipped { reason }
            | Verdict::NotDecidable { reason } => Some(reason.clone()),
            _ => None,
        };
        RuleReport {
            id: rule.id.clone(),
            title: rule.title.clone(),
            level: rule.level,
            operation: rule.operation,
            citation: rule.citation.clone(),
            note: rule.shown_note(),
            verdict: verdict.kind(),
            gated,
            reason,
            known_failure: None,
            cases_run,
            round_trips: 0,
            transport_cuts: 0,
            duration_ms,
            failure,
            distinct_failures,
            more_failures,
        }
    }
}

impl RuleReport {
    /// Where this rule's verdict stands, first to last: by [`VerdictKind::RANKED`], and a
    /// gated failure before one that is not gated.
    pub fn rank(&self) -> (usize, bool) {
        (self.verdict.rank(), !self.gated)
    }

    /// For a failed rule on the list of known failures (so its entry expired: a failure it
    /// still excused would be a `known-failure`), the note that says so.
    pub fn expired_known_failure(&self) -> Option<String> {
        let known = self.known_failure.as_ref()?;
        (self.verdict == VerdictKind::Failed).then(|| known.expired_note())
    }
}

impl Report {
    /// How many rules the user left out: not selected by a filter, and skipped by
    /// `--read-only`. The answer is the rules run's; a partial run says so.
    pub fn left_out(&self) -> (usize, usize) {
        let read_only = self
            .rules
            .iter()
            .filter(|rule| rule.reason.as_deref() == Some(READ_ONLY_SKIP))
            .count();
        (self.totals.not_selected, read_only)
    }

    /// The answer's meaning; an interrupted run exits with the signal's code instead.
    pub fn answer_line(&self) -> String {
        if self.interrupted {
            let meaning = self.conformance.meaning();
            let meaning = meaning.split(" (exit code").next().unwrap_or(meaning);
            return format!(
                "{meaning}, until the run was interrupted (exit code 130 for SIGINT, 143 for SIGTERM)"
            );
        }
        self.conformance.meaning().to_string()
    }

    /// One sentence on a partial run, or `None` when every rule of the catalogue ran.
    pub fn partial_note(&self) -> Option<String> {
        if let Some(note) = split_note(self) {
            return Some(note);
        }
        let (not_selected, read_only) = self.left_out();
        let mut parts = Vec::new();
        if not_selected > 0 {
            parts.push(format!("{} not selected", rules(not_selected)));
        }
        if read_only > 0 {
            parts.push(format!(
                "{} that create pets skipped (--read-only)",
                rules(read_only)
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "Partial run: {}; the answer covers the {} run.",
                parts.join(", "),
                rules(self.totals.rules - read_only)
            )
        })
    }

    /// The rules in the order a person reads them (by [`RuleReport::rank`]): gated failures,
    /// failures not gated, known failures, inconclusive, not decidable, skipped, passed;
    /// catalogue order within each.
    pub fn rules_failures_first(&self) -> Vec<&RuleReport> {
        let mut ordered: Vec<_> = self.rules.iter().collect();
        ordered.sort_by_key(|rule| rule.rank());
        ordered
    }
}

/// What a merged report was put together from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Merged {
    /// The split, without a shard (`hash:*/3`).
    pub split: String,
    /// The shards given, in shard order.
    pub shards: Vec<MergedShard>,
    /// The shards not given (`hash:2/3`): their rules are skipped and the answer undetermined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The rules of the missing shards, which no report judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
}

/// One shard's report as the merge read it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergedShard {
    /// `hash:1/3`.
    pub shard: String,
    /// The shard report's own digest (`integrity.sha256`): which report exactly was merged,
    /// for an attestation over the merged files to name.
    pub report_sha256: String,
    pub duration_ms: u64,
    pub rules: usize,
}

/// What a shard's report, or a merge missing shards, answers for, in one sentence; `None` for
/// a whole run or a whole merge.
pub fn split_note(report: &Report) -> Option<String> {
    if let Some(shard) = &report.partition {
        return Some(format!(
            "Shard {} of a split run: the answer covers its {} (the response oracles over its own responses); `merge` the shards' reports for the whole run's.",
            shard.name,
            rules(report.totals.rules)
        ));
    }
    let merged = report.merged.as_ref().filter(|m| !m.missing.is_empty())?;
    Some(format!(
        "Partial run: shards {} of {} missing, their {} not run: the answer is undetermined.",
        merged.missing.join(", "),
        merged.split,
        rules(merged.not_run.len())
    ))
}

/// "1 rule", "2 rules".
pub fn rules(count: usize) -> String {
    match count {
        1 => "1 rule".into(),
        n => format!("{n} rules"),
    }
}

fn is_zero_u32(count: &u32) -> bool {
    *count == 0
}

/// Characters of a response body kept in a report; the rest is summarised.
pub const BODY_EXCERPT: usize = crate::outcome::BODY_SHOWN;

fn excerpt(mut response: RecordedResponse) -> RecordedResponse {
    // The exchange kept the start of a long body; what it left out counts as not shown.
    let total = response.body.chars().count() + response.body_omitted;
    if total > BODY_EXCERPT {
        let mut kept: String = response.body.chars().take(BODY_EXCERPT).collect();
        kept.push_str(&format!(
            "… ({} more characters not shown)",
            total - BODY_EXCERPT
        ));
        response.body = kept;
    }
    response
}
