//! Rules: the check logic behind the catalogue, one module per area of the contract.
//!
//! A check is a plain function from a [`RuleCtx`] to `Ok(())` (passed) or the verdict that
//! stopped it. The catalogue (`cases/*.json`) names the check and its parameters.

mod auth;
mod concurrency;
mod create_pet;
mod deprecation;
pub mod expect;
mod get_pet;
mod list_pets;
mod parameters;
mod property;
pub mod responses;
mod sequences;

use std::cell::Cell;

use serde::Serialize;

use crate::catalogue::Rule;
use crate::contract::Contract;
use crate::execution::engine::Run;
use crate::execution::{Exchange, RequestSpec};

pub use property::{Counterexample, splitmix64 as property_seed};

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
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed(_) => "failed",
            Verdict::Inconclusive { .. } => "inconclusive",
            Verdict::Skipped { .. } => "skipped",
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
            exchange: Some(exchange.clone()),
            counterexample: None,
            steps: Vec::new(),
        }))
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

    /// The verdict with every text it carries passed through the redactor: checks quote what
    /// the target sent, and the target may have echoed the key in any spelling.
    pub fn redacted(self, redactor: &crate::execution::Redactor) -> Verdict {
        match self {
            Verdict::Passed => Verdict::Passed,
            Verdict::Failed(mut failure) => {
                failure.expected = redactor.redact(&failure.expected);
                failure.observed = redactor.redact(&failure.observed);
                if let Some(example) = &mut failure.counterexample {
                    example.original = redactor.redact(&example.original);
                    example.minimal = redactor.redact(&example.minimal);
                    example.minimal_value = redactor.redact_json(&example.minimal_value);
                }
                for step in &mut failure.steps {
                    step.what = redactor.redact(&step.what);
                }
                Verdict::Failed(failure)
            }
            Verdict::Inconclusive { reason } => Verdict::inconclusive(redactor.redact(&reason)),
            Verdict::Skipped { reason } => Verdict::skipped(redactor.redact(&reason)),
        }
    }

    /// One line for the terminal and the JUnit message.
    pub fn message(&self) -> String {
        match self {
            Verdict::Passed => "passed".into(),
            Verdict::Failed(failure) => {
                format!(
                    "expected {}; observed {}",
                    failure.expected, failure.observed
                )
            }
            Verdict::Inconclusive { reason } | Verdict::Skipped { reason } => reason.clone(),
        }
    }
}

/// What a failed rule expected, what it saw, and the exchange that shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub expected: String,
    pub observed: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<Exchange>,
    /// For a property rule: the generated case that failed first, and the shrunk one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
    /// For a sequence: every step of the (minimal) failing sequence, with its exchange.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<SequenceStep>,
}

/// One step of a failing sequence: what it did, and the exchange it made.
#[derive(Debug, Clone, Serialize)]
pub struct SequenceStep {
    pub what: String,
    pub exchange: Exchange,
}

/// `Ok(())` is a pass; `Err` carries the verdict that stopped the check.
pub type Checked = Result<(), Verdict>;

/// Everything a check may use: the run (client, contract, fixtures) and its own rule.
pub struct RuleCtx<'r> {
    pub run: &'r Run,
    pub rule: &'r Rule,
    /// Derived from the run seed and the rule id, so a subset of rules gets the same cases.
    pub seed: u64,
    cases_run: Cell<u32>,
}

impl<'r> RuleCtx<'r> {
    pub fn new(run: &'r Run, rule: &'r Rule) -> RuleCtx<'r> {
        RuleCtx {
            run,
            rule,
            seed: run.rule_seed(&rule.id),
            cases_run: Cell::new(0),
        }
    }

    pub fn contract(&self) -> &Contract {
        &self.run.contract
    }

    /// Sends a request through the run's client; every response is also inspected for the
    /// statements that hold on every response (see [`responses`]).
    pub fn send(&self, spec: &RequestSpec) -> Exchange {
        self.run.send(&self.rule.id, spec)
    }

    /// Sends every request at the same moment, each through the recorder.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.run.send_all(&self.rule.id, specs)
    }

    /// Counts one case (one generated or fixed input) of this rule.
    pub fn case_done(&self) {
        self.cases_run.set(self.cases_run.get() + 1);
    }

    pub fn cases_run(&self) -> u32 {
        self.cases_run.get().max(1)
    }

    pub fn param_str(&self, name: &str) -> Result<&'r str, Verdict> {
        self.rule
            .param_str(name)
            .ok_or_else(|| Verdict::skipped(format!("rule has no string param {name:?}")))
    }

    /// A name for a pet this rule creates: the run prefix, the rule, and a tag.
    pub fn pet_name(&self, tag: &str) -> String {
        self.run.pet_name(tag)
    }
}

/// When, relative to the others, a check must run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Needs to see the whole store in one listing page: runs before anything fills it.
    QuietStore,
    Main,
    /// Looks at every response of the run: runs after everything else.
    Last,
}

pub type CheckFn = fn(&RuleCtx) -> Checked;

pub struct CheckDef {
    pub name: &'static str,
    pub run: CheckFn,
    pub phase: Phase,
}

const CHECKS: &[CheckDef] = &[
    CheckDef {
        name: "auth-refused",
        run: auth::refused,
        phase: Phase::Main,
    },
    CheckDef {
        name: "auth-accepted",
        run: auth::accepted,
        phase: Phase::Main,
    },
    CheckDef {
        name: "auth-refused-create-stores-nothing",
        run: auth::refused_create_stores_nothing,
        phase: Phase::QuietStore,
    },
    CheckDef {
        name: "auth-near-miss-refused",
        run: auth::near_miss_refused,
        phase: Phase::Main,
    },
    CheckDef {
        name: "auth-precedence",
        run: auth::precedence,
        phase: Phase::Main,
    },
    CheckDef {
        name: "store-orders-answered",
        run: auth::store_orders_answered,
        phase: Phase::Main,
    },
    CheckDef {
        name: "parameters-answered",
        run: parameters::answered,
        phase: Phase::Main,
    },
    CheckDef {
        name: "parameters-refused",
        run: parameters::refused,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-ok",
        run: list_pets::ok,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-default-at-most",
        run: list_pets::default_at_most,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-limit-property",
        run: list_pets::limit_property,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-limit-accepted",
        run: list_pets::limit_accepted,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-fills-page",
        run: list_pets::fills_page,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-limit-refused",
        run: list_pets::limit_refused,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-out-of-range-capped",
        run: list_pets::out_of_range_capped,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-status-property",
        run: list_pets::status_property,
        phase: Phase::Main,
    },
    CheckDef {
        name: "list-status-refused",
        run: list_pets::status_refused,
        phase: Phase::Main,
    },
    CheckDef {
        name: "create-property",
        run: create_pet::created_property,
        phase: Phase::Main,
    },
    CheckDef {
        name: "create-unique-ids",
        run: create_pet::unique_ids,
        phase: Phase::Main,
    },
    CheckDef {
        name: "create-round-trip",
        run: create_pet::round_trip,
        phase: Phase::Main,
    },
    CheckDef {
        name: "create-refused",
        run: create_pet::refused,
        phase: Phase::QuietStore,
    },
    CheckDef {
        name: "create-mutations-property",
        run: create_pet::mutations_property,
        phase: Phase::Main,
    },
    CheckDef {
        name: "create-type-confusion",
        run: create_pet::type_confusion,
        phase: Phase::Main,
    },
    CheckDef {
        name: "create-type-confusion-stores-nothing",
        run: create_pet::type_confusion_stores_nothing,
        phase: Phase::QuietStore,
    },
    CheckDef {
        name: "create-concurrent-distinct-ids",
        run: concurrency::distinct_ids,
        phase: Phase::Main,
    },
    CheckDef {
        name: "create-concurrent-all-listed",
        run: concurrency::all_listed,
        phase: Phase::QuietStore,
    },
    CheckDef {
        name: "create-invalid-values-400",
        run: create_pet::invalid_values_400,
        phase: Phase::Main,
    },
    CheckDef {
        name: "sequences-read-your-writes",
        run: sequences::read_your_writes,
        phase: Phase::Main,
    },
    CheckDef {
        name: "get-existing",
        run: get_pet::existing,
        phase: Phase::Main,
    },
    CheckDef {
        name: "get-unknown",
        run: get_pet::unknown,
        phase: Phase::Main,
    },
    CheckDef {
        name: "get-non-integer",
        run: get_pet::non_integer,
        phase: Phase::Main,
    },
    CheckDef {
        name: "deprecation-signalled",
        run: deprecation::signalled,
        phase: Phase::Main,
    },
    CheckDef {
        name: "deprecation-syntax",
        run: deprecation::syntax,
        phase: Phase::Main,
    },
    CheckDef {
        name: "sunset-present",
        run: deprecation::sunset_present,
        phase: Phase::Main,
    },
    CheckDef {
        name: "sunset-date",
        run: deprecation::sunset_date,
        phase: Phase::Main,
    },
    CheckDef {
        name: "sunset-after-deprecation",
        run: deprecation::sunset_after_deprecation,
        phase: Phase::Main,
    },
    CheckDef {
        name: "successor-link",
        run: deprecation::successor_link,
        phase: Phase::Main,
    },
    CheckDef {
        name: "not-deprecated",
        run: deprecation::not_deprecated,
        phase: Phase::Main,
    },
    CheckDef {
        name: "responses-json-content-type",
        run: responses::json_content_type,
        phase: Phase::Last,
    },
    CheckDef {
        name: "responses-error-body",
        run: responses::error_body,
        phase: Phase::Last,
    },
    CheckDef {
        name: "responses-no-server-error",
        run: responses::no_server_error,
        phase: Phase::Last,
    },
    CheckDef {
        name: "responses-success-schema",
        run: responses::success_schema,
        phase: Phase::Last,
    },
    CheckDef {
        name: "responses-deprecation-get-pet-only",
        run: responses::deprecation_on_get_pet_only,
        phase: Phase::Last,
    },
];

pub fn lookup(name: &str) -> Option<&'static CheckDef> {
    CHECKS.iter().find(|check| check.name == name)
}

/// Runs a rule's check, turning a panic in check code into an inconclusive verdict rather
/// than a crashed run; the verdict comes back redacted.
pub fn evaluate(ctx: &RuleCtx) -> Verdict {
    judge(ctx).redacted(ctx.run.client.redactor())
}

/// No rule fails without a response that shows it: a failure whose exchange got no answer
/// (a timeout, a reset, a request not sent) is the absence of evidence, so inconclusive.
fn judge(ctx: &RuleCtx) -> Verdict {
    match check(ctx) {
        Verdict::Failed(failure)
            if failure
                .exchange
                .as_ref()
                .is_none_or(|exchange| exchange.response.is_none()) =>
        {
            let seen = failure
                .exchange
                .as_ref()
                .map_or("no exchange".to_string(), |exchange| exchange.summary());
            Verdict::inconclusive(format!(
                "no response shows it (expected {}; {seen})",
                failure.expected
            ))
        }
        verdict => verdict,
    }
}

fn check(ctx: &RuleCtx) -> Verdict {
    let Some(check) = lookup(&ctx.rule.check) else {
        return Verdict::skipped(format!("no check named {:?}", ctx.rule.check));
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (check.run)(ctx))) {
        Ok(Ok(())) => Verdict::Passed,
        Ok(Err(verdict)) => verdict,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Verdict::inconclusive(format!("the harness's check panicked: {message}"))
        }
    }
}
