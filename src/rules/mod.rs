//! Rules: the check logic behind the catalogue, one module per area of the contract.
//!
//! A check is a plain function from a [`RuleCtx`] and its typed params to `Ok(())` (passed)
//! or the verdict that stopped it. The catalogue (`cases/*.json`) names the check and its
//! params, read into a [`Check`]; [`run`] dispatches on it and [`phase`] says when it runs.

mod auth;
mod concurrency;
mod create_pet;
mod deprecation;
mod get_pet;
pub mod inputs;
mod list_pets;
mod parameters;
mod read_back;
pub mod responses;
mod sequences;
mod sizes;

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::catalogue::{Check, Rule};
use crate::contract::Contract;
use crate::execution::Priority;
use crate::generation::request::RequestSpec;
pub use crate::outcome::{Checked, Counterexample, Exchange, Failure, SequenceStep, Verdict};
pub use crate::engine::run::Run;
pub use crate::engine::schedule::{Phase, on_long_chain, phase, phase_for, starts_early};
pub(crate) use crate::engine::{expect, property};

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
    /// Whether this rule's first requests were answered, or it ended (counted once, see
    /// [`Run::quiet_unanswered`]).
    answered: std::sync::atomic::AtomicBool,
    /// Fixtures this rule is building now, for every rule that waits on them.
    building: AtomicU32,
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

/// Runs `work` beside the rule's own chain (in a thread of its own); returns what `work`
/// returns and the round trips it waited on, for the rule to count the longest of them.
pub(crate) fn lane_collect<T>(work: impl FnOnce() -> T) -> (T, u32) {
    let mut out = None;
    let trips = lane(|| out = Some(work()));
    (out.expect("the lane ran"), trips)
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
            answered: std::sync::atomic::AtomicBool::new(false),
            building: AtomicU32::new(0),
        }
    }

    /// Builds a fixture of the run: its requests go first in flight, since every rule that
    /// needs it waits on them.
    pub(crate) fn building<T>(&self, build: impl FnOnce() -> T) -> T {
        self.building.fetch_add(1, Ordering::Relaxed);
        let built = build();
        self.building.fetch_sub(1, Ordering::Relaxed);
        built
    }

    pub fn contract(&self) -> &Contract {
        &self.run.contract
    }

    /// Sends a request through the run's client; every response is also inspected for the
    /// statements that hold on every response (see [`responses`]).
    pub fn send(&self, spec: &RequestSpec) -> Exchange {
        self.round_trip();
        let exchange = self.run.send(&self.rule.id, spec, self.priority());
        self.answered_once();
        exchange
    }

    /// Sends every request at once (each as soon as the run's concurrency allows), each through
    /// the recorder.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.round_trip();
        let exchanges = self
            .run
            .send_all(&self.rule.id, specs, false, self.priority());
        self.answered_once();
        exchanges
    }

    /// Sends every request at the same moment, for a race: the requests wait until they can all
    /// go together (within the concurrency level).
    pub fn send_at_once(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.round_trip();
        let exchanges = self
            .run
            .send_all(&self.rule.id, specs, true, Priority::Chain);
        self.answered_once();
        exchanges
    }

    /// Where this rule's requests stand in line for a place in flight: a fixture being built,
    /// a quiet-store rule, or a rule on a long chain during its first pass, goes first (after
    /// it, under a time budget, every rule is equal).
    pub(crate) fn priority(&self) -> Priority {
        let first = self.building.load(Ordering::Relaxed) > 0
            || phase(&self.rule.check) == Phase::QuietStore
            || (on_long_chain(&self.rule.check) && !self.first_pass_over.load(Ordering::Relaxed));
        if first {
            Priority::Chain
        } else {
            Priority::Plain
        }
    }

    /// This rule's first requests were answered, or it ended: a quiet-store rule counts itself
    /// out of [`Run::quiet_unanswered`] once.
    pub fn answered_once(&self) {
        if !self.answered.swap(true, Ordering::Relaxed)
            && phase(&self.rule.check) == Phase::QuietStore
        {
            let _ = self.run.quiet_unanswered.fetch_update(
                Ordering::Relaxed,
                Ordering::Relaxed,
                |left| left.checked_sub(1),
            );
        }
    }

    /// A rule that only reads, run beside the quiet-store rules: waits until their first
    /// requests (the creates whose storing they look for) are answered, so that the reads
    /// take the places the creates leave, beside the listings that follow them; at most a
    /// few seconds.
    pub fn wait_for_quiet_creates(&self) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while self.run.quiet_unanswered.load(Ordering::Relaxed) > 0
            && std::time::Instant::now() < until
            && !self.run.stops.interrupted()
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
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
        if phase_for(self.rule, self.run.deadline.is_some()) != Phase::Last
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
        if phase_for(self.rule, self.run.deadline.is_some()) == Phase::QuietStore {
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
