//! Rules: the check logic behind the catalogue, one module per area of the contract.
//!
//! A check is a plain function from a [`RuleCtx`] to `Ok(())` (passed) or the verdict that
//! stopped it. The catalogue (`cases/*.json`) names the check and its parameters.

mod auth;
mod concurrency;
mod create_pet;
mod deprecation;
pub mod expect;
pub mod fixtures;
mod get_pet;
mod list_pets;
mod parameters;
mod property;
pub mod responses;
pub mod run;
mod sequences;

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::catalogue::Rule;
use crate::contract::Contract;
use crate::generation::request::RequestSpec;
pub use crate::outcome::{Checked, Counterexample, Exchange, Failure, SequenceStep, Verdict};
pub use run::Run;

/// Everything a check may use: the run (client, contract, fixtures) and its own rule.
pub struct RuleCtx<'r> {
    pub run: &'r Run,
    pub rule: &'r Rule,
    /// Derived from the run seed and the rule id, so a subset of rules gets the same cases.
    pub seed: u64,
    cases_run: AtomicU32,
    /// Requests this rule waited on one after another (a batch sent at once counts one).
    round_trips: AtomicU32,
}

thread_local! {
    /// Inside a worker of a property rule: the requests this worker waited on, which the
    /// rule's chain counts only once, as the longest of its workers (see [`lane`]).
    static LANE: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Runs `work` as one lane of a rule's concurrent cases; returns the round trips it waited on.
pub(crate) fn lane(work: impl FnOnce()) -> u32 {
    LANE.with(|lane| lane.set(Some(0)));
    work();
    LANE.with(|lane| lane.take()).unwrap_or(0)
}

impl<'r> RuleCtx<'r> {
    pub fn new(run: &'r Run, rule: &'r Rule) -> RuleCtx<'r> {
        RuleCtx {
            run,
            rule,
            seed: run.rule_seed(&rule.id),
            cases_run: AtomicU32::new(0),
            round_trips: AtomicU32::new(0),
        }
    }

    pub fn contract(&self) -> &Contract {
        &self.run.contract
    }

    /// Sends a request through the run's client; every response is also inspected for the
    /// statements that hold on every response (see [`responses`]).
    pub fn send(&self, spec: &RequestSpec) -> Exchange {
        self.round_trip();
        self.run.send(&self.rule.id, spec)
    }

    /// Sends every request at the same moment, each through the recorder.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.round_trip();
        self.run.send_all(&self.rule.id, specs)
    }

    /// One more request waited on: on the rule's own chain, or on its lane's.
    fn round_trip(&self) {
        let in_lane = LANE.with(|lane| match lane.get() {
            Some(count) => {
                lane.set(Some(count + 1));
                true
            }
            None => false,
        });
        if !in_lane {
            self.add_round_trips(1);
        }
    }

    /// Lengthens the rule's chain (by the longest lane of a concurrent batch of cases).
    pub(crate) fn add_round_trips(&self, count: u32) {
        self.round_trips.fetch_add(count, Ordering::Relaxed);
    }

    /// Counts one case (one generated or fixed input) of this rule.
    pub fn case_done(&self) {
        self.cases_run.fetch_add(1, Ordering::Relaxed);
    }

    /// The rule's chain of dependent requests: what its run time is, in round trips.
    pub fn round_trips(&self) -> u32 {
        self.round_trips.load(Ordering::Relaxed)
    }

    pub fn cases_run(&self) -> u32 {
        self.cases_run.load(Ordering::Relaxed).max(1)
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

/// What a param of a check holds, as the case file must write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A string.
    Text,
    /// A whole number of 0 or more.
    Count,
    /// A list of strings.
    TextList,
}

impl ParamKind {
    fn accepts(self, value: &serde_json::Value) -> bool {
        match self {
            ParamKind::Text => value.is_string(),
            ParamKind::Count => value.is_u64(),
            ParamKind::TextList => value
                .as_array()
                .is_some_and(|items| items.iter().all(serde_json::Value::is_string)),
        }
    }

    fn name(self) -> &'static str {
        match self {
            ParamKind::Text => "a string",
            ParamKind::Count => "a whole number",
            ParamKind::TextList => "a list of strings",
        }
    }
}

pub struct CheckDef {
    pub name: &'static str,
    pub run: CheckFn,
    pub phase: Phase,
    /// The params the check reads, and what each holds; any other key is a mistake.
    pub params: &'static [(&'static str, ParamKind)],
}

const CHECKS: &[CheckDef] = &[
    CheckDef {
        name: "auth-refused",
        run: auth::refused,
        phase: Phase::Main,
        params: &[("credential", ParamKind::Text)],
    },
    CheckDef {
        name: "auth-accepted",
        run: auth::accepted,
        phase: Phase::Main,
        params: &[("credential", ParamKind::Text)],
    },
    CheckDef {
        name: "auth-refused-create-stores-nothing",
        run: auth::refused_create_stores_nothing,
        phase: Phase::QuietStore,
        params: &[],
    },
    CheckDef {
        name: "auth-near-miss-refused",
        run: auth::near_miss_refused,
        phase: Phase::Main,
        params: &[("near_miss", ParamKind::Text)],
    },
    CheckDef {
        name: "auth-precedence",
        run: auth::precedence,
        phase: Phase::Main,
        params: &[
            ("credentials", ParamKind::TextList),
            ("mutations", ParamKind::TextList),
            ("pet_ids", ParamKind::TextList),
            ("queries", ParamKind::TextList),
        ],
    },
    CheckDef {
        name: "store-orders-answered",
        run: auth::store_orders_answered,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "parameters-answered",
        run: parameters::answered,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "parameters-refused",
        run: parameters::refused,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "list-ok",
        run: list_pets::ok,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "list-default-at-most",
        run: list_pets::default_at_most,
        phase: Phase::Main,
        params: &[("max", ParamKind::Count)],
    },
    CheckDef {
        name: "list-limit-property",
        run: list_pets::limit_property,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "list-limit-accepted",
        run: list_pets::limit_accepted,
        phase: Phase::Main,
        params: &[("limit", ParamKind::Text)],
    },
    CheckDef {
        name: "list-fills-page",
        run: list_pets::fills_page,
        phase: Phase::Main,
        params: &[("expect", ParamKind::Count), ("limit", ParamKind::Text)],
    },
    CheckDef {
        name: "list-limit-refused",
        run: list_pets::limit_refused,
        phase: Phase::Main,
        params: &[("limit", ParamKind::Text)],
    },
    CheckDef {
        name: "list-out-of-range-capped",
        run: list_pets::out_of_range_capped,
        phase: Phase::Main,
        params: &[("limits", ParamKind::TextList)],
    },
    CheckDef {
        name: "list-status-property",
        run: list_pets::status_property,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "list-status-refused",
        run: list_pets::status_refused,
        phase: Phase::Main,
        params: &[("status", ParamKind::Text)],
    },
    CheckDef {
        name: "create-property",
        run: create_pet::created_property,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "create-unique-ids",
        run: create_pet::unique_ids,
        phase: Phase::Main,
        params: &[("count", ParamKind::Count)],
    },
    CheckDef {
        name: "create-round-trip",
        run: create_pet::round_trip,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "create-refused",
        run: create_pet::refused,
        phase: Phase::QuietStore,
        params: &[("expect", ParamKind::Text), ("mutation", ParamKind::Text)],
    },
    CheckDef {
        name: "create-mutations-property",
        run: create_pet::mutations_property,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "create-type-confusion",
        run: create_pet::type_confusion,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "create-type-confusion-stores-nothing",
        run: create_pet::type_confusion_stores_nothing,
        phase: Phase::QuietStore,
        params: &[],
    },
    CheckDef {
        name: "create-concurrent-distinct-ids",
        run: concurrency::distinct_ids,
        phase: Phase::Main,
        params: &[("clients", ParamKind::Count), ("rounds", ParamKind::Count)],
    },
    CheckDef {
        name: "create-concurrent-all-listed",
        run: concurrency::all_listed,
        phase: Phase::QuietStore,
        params: &[("clients", ParamKind::Count)],
    },
    CheckDef {
        name: "create-invalid-values-400",
        run: create_pet::invalid_values_400,
        phase: Phase::Main,
        params: &[("mutations", ParamKind::TextList)],
    },
    CheckDef {
        name: "sequences-read-your-writes",
        run: sequences::read_your_writes,
        phase: Phase::Main,
        params: &[("max_steps", ParamKind::Count)],
    },
    CheckDef {
        name: "get-existing",
        run: get_pet::existing,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "get-unknown",
        run: get_pet::unknown,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "get-non-integer",
        run: get_pet::non_integer,
        phase: Phase::Main,
        params: &[("pet_id", ParamKind::Text)],
    },
    CheckDef {
        name: "deprecation-signalled",
        run: deprecation::signalled,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "deprecation-syntax",
        run: deprecation::syntax,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "sunset-present",
        run: deprecation::sunset_present,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "sunset-date",
        run: deprecation::sunset_date,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "sunset-after-deprecation",
        run: deprecation::sunset_after_deprecation,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "successor-link",
        run: deprecation::successor_link,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "not-deprecated",
        run: deprecation::not_deprecated,
        phase: Phase::Main,
        params: &[],
    },
    CheckDef {
        name: "responses-json-content-type",
        run: responses::json_content_type,
        phase: Phase::Last,
        params: &[],
    },
    CheckDef {
        name: "responses-error-body",
        run: responses::error_body,
        phase: Phase::Last,
        params: &[],
    },
    CheckDef {
        name: "responses-no-server-error",
        run: responses::no_server_error,
        phase: Phase::Last,
        params: &[],
    },
    CheckDef {
        name: "responses-success-schema",
        run: responses::success_schema,
        phase: Phase::Last,
        params: &[],
    },
    CheckDef {
        name: "responses-deprecation-get-pet-only",
        run: responses::deprecation_on_get_pet_only,
        phase: Phase::Last,
        params: &[],
    },
];

pub fn lookup(name: &str) -> Option<&'static CheckDef> {
    CHECKS.iter().find(|check| check.name == name)
}

/// Every rule of the catalogue names a check that exists, and gives it only params it reads,
/// each of the kind it reads: a misspelt check or param key is a configuration error that
/// names the file, the rule and the field, before anything is sent.
pub fn validate(catalogue: &crate::catalogue::Catalogue) -> Result<(), String> {
    for rule in &catalogue.rules {
        let file = catalogue.file_of(&rule.id);
        let Some(check) = lookup(&rule.check) else {
            let known: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
            return Err(format!(
                "case file {file}: rule {:?}: check: {:?} does not exist (the checks: {})",
                rule.id,
                rule.check,
                known.join(", ")
            ));
        };
        for (key, value) in &rule.params {
            let Some((_, kind)) = check.params.iter().find(|(name, _)| name == key) else {
                let takes: Vec<&str> = check.params.iter().map(|(name, _)| *name).collect();
                return Err(format!(
                    "case file {file}: rule {:?}: params.{key}: check {} reads no param {key:?} (it reads: {})",
                    rule.id,
                    check.name,
                    if takes.is_empty() {
                        "none".into()
                    } else {
                        takes.join(", ")
                    }
                ));
            };
            if !kind.accepts(value) {
                return Err(format!(
                    "case file {file}: rule {:?}: params.{key}: must be {}, not {value}",
                    rule.id,
                    kind.name()
                ));
            }
        }
    }
    Ok(())
}

/// Runs a rule's check, turning a panic in check code into an inconclusive verdict rather
/// than a crashed run; the verdict comes back redacted.
pub fn evaluate(ctx: &RuleCtx) -> Verdict {
    ctx.run.client.redactor().redact_verdict(judge(ctx))
}

/// No rule fails without a response that shows it: a failure whose exchange got no answer
/// (a timeout, a reset, a request not sent) is the absence of evidence, so inconclusive.
fn judge(ctx: &RuleCtx) -> Verdict {
    match check(ctx) {
        Verdict::Failed(failure)
            if failure
                .exchange
                .as_ref()
                .is_some_and(Exchange::gave_up_throttled) =>
        {
            failure
                .exchange
                .as_ref()
                .map_or_else(|| Verdict::inconclusive("throttled"), expect::throttled)
        }
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
