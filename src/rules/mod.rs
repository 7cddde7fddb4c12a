//! Rules: the check logic behind the catalogue, one module per area of the contract.
//!
//! A check is a plain function from a [`RuleCtx`] and its typed params to `Ok(())` (passed)
//! or the verdict that stopped it. The catalogue (`cases/*.json`) names the check and its
//! params, read into a [`Check`]; [`run`] dispatches on it and [`phase`] says when it runs.

mod auth;
mod concurrency;
mod create_pet;
mod deprecation;
pub mod expect;
pub mod fixtures;
mod get_pet;
pub mod inputs;
mod list_pets;
mod parameters;
mod property;
mod read_back;
pub mod responses;
pub mod run;
mod sequences;
mod sizes;
mod threads;
pub mod workers;

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::catalogue::{Check, Rule};
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
    /// Whether this rule has said its first pass is over (it says so once).
    first_pass_over: std::sync::atomic::AtomicBool,
}

thread_local! {
    /// Inside a worker of a property rule: the requests this worker waited on, which the
    /// rule's chain counts only once, as the longest of its workers (see [`lane`]).
    static LANE: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Inside a worker, the round trips it has waited on so far (0 outside one).
pub(crate) fn lane_so_far() -> u32 {
    LANE.with(|lane| lane.get()).unwrap_or(0)
}

/// Runs `work` beside the rule's own chain (in a thread of its own), its round trips not
/// counted on that chain; returns what `work` returns.
pub(crate) fn lane_collect<T>(work: impl FnOnce() -> T) -> T {
    let mut out = None;
    lane(|| out = Some(work()));
    out.expect("the lane ran")
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
            first_pass_over: std::sync::atomic::AtomicBool::new(false),
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

    /// Sends every request at once (each as soon as the run's concurrency allows), each through
    /// the recorder.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.round_trip();
        self.run.send_all(&self.rule.id, specs, false)
    }

    /// Sends every request at the same moment, for a race: the requests wait until they can all
    /// go together (within the concurrency level).
    pub fn send_at_once(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.round_trip();
        self.run.send_all(&self.rule.id, specs, true)
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

    /// This rule's first pass is over: it finished, or, under a time budget, judged its first
    /// batch of cases. Counted once.
    pub fn end_first_pass(&self) {
        if phase_for(&self.rule.check, self.run.deadline.is_some()) != Phase::Last
            && !self.first_pass_over.swap(true, Ordering::Relaxed)
        {
            let _ = self.run.first_pass_left.fetch_update(
                Ordering::Relaxed,
                Ordering::Relaxed,
                |left| left.checked_sub(1),
            );
        }
    }

    /// Under a time budget, before generating past its first batch: waits until every rule
    /// has had its first pass (fixtures built, fixed rules judged), so that the budget's long
    /// tail of generated cases does not crowd them out of the in-flight places. A rule of
    /// the quiet-store phase does not wait: the main phase only starts after it.
    pub fn wait_for_first_passes(&self) {
        self.end_first_pass();
        if phase_for(&self.rule.check, self.run.deadline.is_some()) == Phase::QuietStore {
            return;
        }
        while self.run.first_pass_left.load(Ordering::Relaxed) > 0
            && !self.run.stops.interrupted()
            && self
                .run
                .deadline
                .is_none_or(|deadline| std::time::Instant::now() < deadline)
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
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

/// When a check runs, from what it needs of the store.
pub fn phase(check: &Check) -> Phase {
    match check {
        Check::AuthRefusedCreateStoresNothing {}
        | Check::CreateRefused { .. }
        | Check::CreateTypeConfusionStoresNothing {}
        | Check::CreateConcurrentAllListed { .. }
        | Check::CreateNameLadder { .. }
        | Check::ListEmptyIsArray {} => Phase::QuietStore,
        Check::ResponsesJsonContentType {}
        | Check::ResponsesErrorBody {}
        | Check::ResponsesNoServerError {}
        | Check::ResponsesSuccessSchema {}
        | Check::ResponsesDeprecationGetPetOnly {}
        | Check::ResponsesOutsideNoServerError {}
        // A pet it stores may break every read that shows it: after the other rules' reads.
        | Check::CreatePoisonedReadBack {} => Phase::Last,
        Check::AuthRefused { .. }
        | Check::AuthAccepted { .. }
        | Check::AuthNearMissRefused { .. }
        | Check::AuthPrecedence { .. }
        | Check::StoreOrdersAnswered {}
        | Check::ParametersAnswered {}
        | Check::ParametersRefused {}
        | Check::ListOk {}
        | Check::ListDefaultAtMost { .. }
        | Check::ListLimitProperty {}
        | Check::ListLimitAccepted { .. }
        | Check::ListFillsPage { .. }
        | Check::ListLimitRefused { .. }
        | Check::ListOutOfRangeCapped { .. }
        | Check::ListStatusProperty {}
        | Check::ListStatusRefused { .. }
        | Check::CreateProperty {}
        | Check::CreateUniqueIds { .. }
        | Check::CreateRoundTrip {}
        | Check::CreateMutationsProperty {}
        | Check::CreateTypeConfusion {}
        | Check::CreateConcurrentDistinctIds { .. }
        | Check::CreateInvalidValues400 { .. }
        | Check::CreateBodyLadder { .. }
        | Check::SequencesReadYourWrites { .. }
        | Check::GetExisting {}
        | Check::GetUnknown {}
        | Check::GetNonInteger { .. }
        | Check::DeprecationSignalled {}
        | Check::DeprecationSyntax {}
        | Check::SunsetPresent {}
        | Check::SunsetDate {}
        | Check::SunsetAfterDeprecation {}
        | Check::SuccessorLink {}
        | Check::NotDeprecated {}
        | Check::InputsWalk {} => Phase::Main,
    }
}

/// Whether a check starts before the others of its phase: the checks whose chain of dependent
/// requests is long (sequences, rounds, a fixture to build first, cases in batches) go first,
/// so that the phase's end is their chain's, not a queue of short checks before them; a
/// check of one or two round trips fits in beside them.
pub fn starts_early(check: &Check) -> bool {
    matches!(
        check,
        Check::SequencesReadYourWrites { .. }
            | Check::CreateConcurrentDistinctIds { .. }
            | Check::CreateUniqueIds { .. }
            | Check::CreateRoundTrip {}
            | Check::CreateProperty {}
            | Check::CreateMutationsProperty {}
            | Check::CreateTypeConfusion {}
            | Check::InputsWalk {}
            | Check::ParametersAnswered {}
            | Check::ListDefaultAtMost { .. }
            | Check::ListLimitProperty {}
            | Check::ListStatusProperty {}
            | Check::ListFillsPage { .. }
            | Check::CreateConcurrentAllListed { .. }
            | Check::CreateNameLadder { .. }
    )
}

/// When a check runs in a run with or without a time budget: the poisoned read-back runs last,
/// after every other rule's reads, but under a budget the last phase may start after the
/// budget has stopped all sending, so it runs in the main phase once every rule has had its
/// first pass (see `read_back`).
pub fn phase_for(check: &Check, budget: bool) -> Phase {
    match check {
        Check::CreatePoisonedReadBack {} if budget => Phase::Main,
        _ => phase(check),
    }
}

/// Runs the rule's check with its params.
pub fn run(ctx: &RuleCtx) -> Checked {
    match &ctx.rule.check {
        Check::AuthRefused { credential } => auth::refused(ctx, credential),
        Check::AuthAccepted { credential } => auth::accepted(ctx, credential),
        Check::AuthRefusedCreateStoresNothing {} => auth::refused_create_stores_nothing(ctx),
        Check::AuthNearMissRefused { near_miss } => auth::near_miss_refused(ctx, near_miss),
        Check::AuthPrecedence {
            credentials,
            queries,
            pet_ids,
            mutations,
        } => auth::precedence(
            ctx,
            credentials,
            auth::Invalid {
                queries: queries.as_deref().unwrap_or_default(),
                pet_ids: pet_ids.as_deref().unwrap_or_default(),
                mutations: mutations.as_deref().unwrap_or_default(),
            },
        ),
        Check::StoreOrdersAnswered {} => auth::store_orders_answered(ctx),
        Check::ParametersAnswered {} => parameters::answered(ctx),
        Check::ParametersRefused {} => parameters::refused(ctx),
        Check::ListOk {} => list_pets::ok(ctx),
        Check::ListEmptyIsArray {} => list_pets::empty_is_array(ctx),
        Check::CreateNameLadder { lengths } => sizes::name_ladder(ctx, lengths),
        Check::CreateBodyLadder { sizes } => sizes::body_ladder(ctx, sizes),
        Check::CreatePoisonedReadBack {} => read_back::lone_surrogate(ctx),
        Check::ListDefaultAtMost { max } => list_pets::default_at_most(ctx, *max),
        Check::ListLimitProperty {} => list_pets::limit_property(ctx),
        Check::ListLimitAccepted { limit } => list_pets::limit_accepted(ctx, limit),
        Check::ListFillsPage { expect, limit } => {
            list_pets::fills_page(ctx, *expect, limit.as_deref())
        }
        Check::ListLimitRefused { limit } => list_pets::limit_refused(ctx, limit),
        Check::ListOutOfRangeCapped { limits } => list_pets::out_of_range_capped(ctx, limits),
        Check::ListStatusProperty {} => list_pets::status_property(ctx),
        Check::ListStatusRefused { status } => list_pets::status_refused(ctx, status),
        Check::CreateProperty {} => create_pet::created_property(ctx),
        Check::CreateUniqueIds { count } => create_pet::unique_ids(ctx, *count),
        Check::CreateRoundTrip {} => create_pet::round_trip(ctx),
        Check::CreateRefused { mutation, expect } => create_pet::refused(ctx, mutation, *expect),
        Check::CreateMutationsProperty {} => create_pet::mutations_property(ctx),
        Check::CreateTypeConfusion {} => create_pet::type_confusion(ctx),
        Check::CreateTypeConfusionStoresNothing {} => {
            create_pet::type_confusion_stores_nothing(ctx)
        }
        Check::CreateConcurrentDistinctIds { clients, rounds } => {
            concurrency::distinct_ids(ctx, *clients, *rounds)
        }
        Check::CreateConcurrentAllListed { clients } => concurrency::all_listed(ctx, *clients),
        Check::CreateInvalidValues400 { mutations } => {
            create_pet::invalid_values_400(ctx, mutations)
        }
        Check::SequencesReadYourWrites { max_steps } => {
            sequences::read_your_writes(ctx, *max_steps)
        }
        Check::GetExisting {} => get_pet::existing(ctx),
        Check::GetUnknown {} => get_pet::unknown(ctx),
        Check::GetNonInteger { pet_id } => get_pet::non_integer(ctx, pet_id),
        Check::DeprecationSignalled {} => deprecation::signalled(ctx),
        Check::DeprecationSyntax {} => deprecation::syntax(ctx),
        Check::SunsetPresent {} => deprecation::sunset_present(ctx),
        Check::SunsetDate {} => deprecation::sunset_date(ctx),
        Check::SunsetAfterDeprecation {} => deprecation::sunset_after_deprecation(ctx),
        Check::SuccessorLink {} => deprecation::successor_link(ctx),
        Check::NotDeprecated {} => deprecation::not_deprecated(ctx),
        Check::ResponsesJsonContentType {} => responses::json_content_type(ctx),
        Check::ResponsesErrorBody {} => responses::error_body(ctx),
        Check::ResponsesNoServerError {} => responses::no_server_error(ctx),
        Check::ResponsesSuccessSchema {} => responses::success_schema(ctx),
        Check::ResponsesDeprecationGetPetOnly {} => responses::deprecation_on_get_pet_only(ctx),
        Check::ResponsesOutsideNoServerError {} => responses::outside_no_server_error(ctx),
        Check::InputsWalk {} => inputs::walk(ctx),
    }
}

/// Runs a rule's check, turning a panic in check code into an inconclusive verdict rather
/// than a crashed run; the verdict comes back redacted.
pub fn evaluate(ctx: &RuleCtx) -> Verdict {
    ctx.run.client.redactor().redact_verdict(judge(ctx))
}

/// No rule fails without a response that shows it: a failure whose exchange got no answer
/// (a timeout, a reset, a request not sent), or an answer the transport cut mid-body, is the
/// absence of evidence, so inconclusive.
fn judge(ctx: &RuleCtx) -> Verdict {
    match check(ctx) {
        // Distinct failures: each must stand on its own evidence; one that does not is
        // dropped, and the first that does leads.
        Verdict::Failed(mut failure) if !failure.more.is_empty() => {
            let more = std::mem::take(&mut failure.more);
            let all: Vec<Failure> = std::iter::once(*failure).chain(more).collect();
            let (shown, unshown): (Vec<_>, Vec<_>) = all
                .into_iter()
                .partition(|f| evidenced(&Verdict::Failed(Box::new(f.clone()))));
            match Verdict::failed_distinct(shown) {
                Some(verdict) => verdict,
                None => judge_one(
                    unshown
                        .into_iter()
                        .next()
                        .map(|f| Verdict::Failed(Box::new(f))),
                ),
            }
        }
        verdict => judge_one(Some(verdict)),
    }
}

/// A failure whose evidence [`judge_one`] leaves as it is.
fn evidenced(verdict: &Verdict) -> bool {
    matches!(judge_one(Some(verdict.clone())), Verdict::Failed(_))
}

fn judge_one(verdict: Option<Verdict>) -> Verdict {
    let Some(verdict) = verdict else {
        return Verdict::inconclusive("no failure shown");
    };
    match verdict {
        Verdict::Failed(failure)
            if failure
                .exchange
                .as_ref()
                .is_some_and(Exchange::cut_by_transport)
                || failure
                    .steps
                    .iter()
                    .any(|step| step.exchange.cut_by_transport()) =>
        {
            let cut = failure
                .exchange
                .iter()
                .chain(failure.steps.iter().map(|step| &step.exchange))
                .find(|exchange| exchange.cut_by_transport())
                .map(expect::cut);
            cut.unwrap_or_else(|| Verdict::inconclusive("a response was cut by the transport"))
        }
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
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(ctx))) {
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
