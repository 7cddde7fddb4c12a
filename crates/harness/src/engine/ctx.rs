//! What every check is handed: its rule, the run, and the counts the engine keeps of it (its
//! cases, its chain of round trips, its first pass), with the one way a check sends a request.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use super::run::Run;
use super::scheduler::{Phase, on_long_chain, phase, phase_for, stores_many};
use crate::catalogue::Rule;
use crate::contract::Contract;
use crate::execution::Priority;
use crate::generation::request::RequestSpec;
use crate::outcome::{Exchange, ExchangeState};

/// What a check is handed: its rule and seed, the contract and schemas, the one way to send,
/// and the run's shared services (the store setup, the tallies) through the methods below. The
/// run itself stays the engine's: a check reaches none of its machinery (the scheduler, the
/// stops, the event stream, the pet cap).
pub struct RuleCtx<'r> {
    pub(in crate::engine) run: &'r Run,
    pub rule: &'r Rule,
    /// Derived from the run seed and the rule id, so a subset of rules gets the same cases.
    pub seed: u64,
    cases_run: AtomicU32,
    /// Requests this rule waited on one after another (a batch sent at once counts one).
    round_trips: AtomicU32,
    /// Whether this rule has said its first pass is over (it says so once).
    first_pass_over: std::sync::atomic::AtomicBool,
    /// Whether this rule's first requests were answered, or it ended (told the scheduler
    /// once, see [`super::scheduler::Scheduler::quiet_answered`]).
    answered: std::sync::atomic::AtomicBool,
    /// Fixtures this rule is building now, for every rule that waits on them.
    building: AtomicU32,
    /// Requests sent ahead of the cases that send them, with their exchanges, each taken
    /// once by the first send of an equal request (see [`RuleCtx::keep_ahead`]).
    ahead: Mutex<Vec<(RequestSpec, Exchange)>>,
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
        if stores_many(rule) {
            run.scheduler.storing_started();
        }
        RuleCtx {
            run,
            rule,
            seed: run.rule_seed(&rule.id),
            cases_run: AtomicU32::new(0),
            round_trips: AtomicU32::new(0),
            first_pass_over: std::sync::atomic::AtomicBool::new(false),
            answered: std::sync::atomic::AtomicBool::new(false),
            building: AtomicU32::new(0),
            ahead: Mutex::default(),
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

    /// The run's store setup: the pets and the store a check needs, and the pets created.
    pub fn fixtures(&self) -> &'r super::store_setup::Fixtures {
        &self.run.fixtures
    }

    /// The category ids the target accepts.
    pub fn categories(&self) -> &'r crate::generation::Categories {
        &self.run.categories
    }

    /// NewPet.json with `$ref` and `allOf` resolved, for generation.
    pub fn new_pet_schema(&self) -> &'r serde_json::Value {
        &self.run.new_pet_schema
    }

    /// The request space the coverage pass walks.
    pub fn space(&self) -> &'r crate::generation::space::RequestSpace {
        &self.run.space
    }

    /// What the coverage pass and the parameter rules found per class.
    pub fn input_tally(&self) -> &'r super::input_tally::InputTally {
        &self.run.input_tally
    }

    /// What the responses of the run showed of the statements that hold on every one.
    pub fn observations(&self) -> &'r super::oracles::Observations {
        &self.run.observations
    }

    /// When generated cases stop, under `--time-budget`.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.run.deadline
    }

    /// Requests in flight at once, at most (`--concurrency`).
    pub fn concurrency(&self) -> usize {
        self.run.concurrency
    }

    /// Nothing may be created on the target (`--read-only`).
    pub fn read_only(&self) -> bool {
        self.run.read_only
    }

    /// Pets the run makes before the crowded-store rule lists (`--fill-store`).
    pub fn fill_store(&self) -> Option<u64> {
        self.run.fill_store
    }

    /// Whether the store took the plainest NewPet with the run's marker category, asked once.
    pub fn marker_taken(&self) -> &'r std::sync::OnceLock<bool> {
        &self.run.marker_taken
    }

    /// The redactor every text a check keeps passes.
    pub fn redactor(&self) -> &'r crate::execution::Redactor {
        self.run.client.redactor()
    }

    /// The target's base address, as the client sends to it.
    pub fn base_url(&self) -> &'r str {
        self.run.client.base_url()
    }

    /// Whether the run sends header `name` itself (`-H`, a gateway's key header).
    pub fn sends_extra_header(&self, name: &str) -> bool {
        self.run.client.sends_extra_header(name)
    }

    /// Whether a near miss of the key differs from the key as sent.
    pub fn near_miss_differs(&self, near: crate::contract::credential::NearMiss) -> bool {
        self.run.client.near_miss_differs(near)
    }

    /// Sends a request through the run's client; every response is also inspected for the
    /// statements that hold on every response (see [`super::oracles`]).
    pub fn send(&self, spec: &RequestSpec) -> Exchange {
        if let Some(exchange) = self.taken_ahead(spec) {
            return exchange;
        }
        self.round_trip();
        let specs = std::slice::from_ref(spec);
        let counted = self.room_for(specs);
        // A fixture's one request (a pet to read, the marker's baseline) goes before every
        // other: the rules waiting on it wait on nothing else.
        let priority = if self.building.load(Ordering::Relaxed) > 0 {
            Priority::First
        } else {
            self.priority()
        };
        let exchange = self.run.send(&self.rule.id, spec, priority);
        self.room_back(counted, specs, std::slice::from_ref(&exchange));
        self.answered_once();
        exchange
    }

    /// Sends every request at once (each as soon as the run's concurrency allows), each through
    /// the recorder.
    pub fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        let taken: Vec<Option<Exchange>> =
            specs.iter().map(|spec| self.taken_ahead(spec)).collect();
        if taken.iter().any(Option::is_some) {
            let missing: Vec<RequestSpec> = specs
                .iter()
                .zip(&taken)
                .filter(|(_, taken)| taken.is_none())
                .map(|(spec, _)| spec.clone())
                .collect();
            let mut sent = if missing.is_empty() {
                Vec::new().into_iter()
            } else {
                self.send_all(&missing).into_iter()
            };
            return taken
                .into_iter()
                .map(|taken| {
                    taken
                        .or_else(|| sent.next())
                        .expect("one exchange per request")
                })
                .collect();
        }
        self.round_trip();
        let counted = self.room_for(specs);
        let exchanges = self
            .run
            .send_all(&self.rule.id, specs, false, self.priority());
        self.room_back(counted, specs, &exchanges);
        self.answered_once();
        exchanges
    }

    /// [`RuleCtx::send_all`] of a batch whose answers decide the reads that follow (`then`,
    /// given a request's place in `specs`), each sent as soon as the answer deciding it is
    /// back: the batch's exchanges, and the reads with theirs.
    pub(crate) fn send_all_then(
        &self,
        specs: &[RequestSpec],
        then: &dyn Fn(usize, &Exchange) -> Vec<RequestSpec>,
    ) -> (Vec<Exchange>, Vec<(RequestSpec, Exchange)>) {
        self.round_trip();
        let counted = self.room_for(specs);
        let (exchanges, after) =
            self.run
                .send_all_then(&self.rule.id, specs, self.priority(), then);
        self.room_back(counted, specs, &exchanges);
        if !after.is_empty() {
            self.round_trip();
        }
        self.answered_once();
        (exchanges, after)
    }

    /// Keeps the exchanges of requests sent ahead of the cases that send them: a case's
    /// first `send` of an equal request takes its exchange instead of waiting on one (see
    /// `workers::judge_all`).
    pub(crate) fn keep_ahead(&self, specs: Vec<RequestSpec>, exchanges: Vec<Exchange>) {
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        ahead.extend(specs.into_iter().zip(exchanges));
    }

    /// The exchange of a request equal to `spec` sent ahead, if one is left.
    fn taken_ahead(&self, spec: &RequestSpec) -> Option<Exchange> {
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        let place = ahead.iter().position(|(sent, _)| sent == spec)?;
        Some(ahead.swap_remove(place).1)
    }

    /// Sends every request at the same moment, for a race: the requests wait until they can all
    /// go together (within the concurrency level).
    pub fn send_at_once(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.round_trip();
        let counted = self.room_for(specs);
        let exchanges = self
            .run
            .send_all(&self.rule.id, specs, true, Priority::Chain);
        self.room_back(counted, specs, &exchanges);
        self.answered_once();
        exchanges
    }

    /// Before a later rule's creates, while the quiet-store rules are not judged: room for
    /// their pets in the store's first page, which those rules read whole (see
    /// `Scheduler::wait_for_room`). A fixture's one pet goes at once, counted: a quiet-store
    /// rule may be waiting on it. Whether the creates were counted.
    fn room_for(&self, specs: &[RequestSpec]) -> bool {
        let creates = specs
            .iter()
            .filter(|spec| super::run::creates(spec))
            .count();
        if creates == 0 || self.run.read_only || self.run.scheduler.quiet_store_judged() {
            return false;
        }
        if phase_for(self.rule, self.run.deadline.is_some()) == Phase::QuietStore {
            self.run.scheduler.quiet_creating(true);
            return true;
        }
        let room = if self.building.load(Ordering::Relaxed) > 0 && creates == 1 {
            // A fixture's one pet (a pet to read, the marker's baseline): the quiet-store
            // rules keep its place (`FIXTURE_PETS`). A fixture's batch (the population's few
            // of every status) goes within the room, as a long chain's creates.
            u64::MAX
        } else if self.creates_wait_for_quiet_store() {
            // The room goes to the chains: the bulk of single creates fills a page in a round
            // trip once the quiet-store rules are judged, a chain needs its round trips in turn.
            0
        } else {
            // A store whose first page could not be read has no room known: its creates wait.
            let before = self.run.fixtures.first_page_count(self);
            before.map_or(0, |before| self.run.scheduler.quiet_room(before))
        };
        let creates = u64::try_from(creates).unwrap_or(u64::MAX);
        self.run
            .scheduler
            .wait_for_room(creates, room, &|| self.run.stops.reason().is_some())
    }

    /// Before a rule's worker brings in a helper: a rule whose creates wait for the quiet-store
    /// rules (see `room_for`: no room for a rule not on a long chain) waits for them first.
    /// Its helpers would only wait beside it, holding the run's worker slots, and a rule that
    /// reads beside the quiet-store rules got none: its cases went one at a time, a chain of
    /// six round trips at 50 ms. Once they are judged its helpers come in at once.
    pub(crate) fn wait_before_helpers(&self) {
        if self.rule.writes && self.creates_wait_for_quiet_store() {
            self.run
                .scheduler
                .wait_for_quiet_store(&|| self.run.stops.reason().is_some());
        }
    }

    /// Whether this rule's creates, now, wait for every quiet-store rule to be judged: no room
    /// is left them in the store's first page (see `room_for`). A fixture being built goes at
    /// once, a rule on a long chain within the room, and a quiet-store rule's own are theirs.
    fn creates_wait_for_quiet_store(&self) -> bool {
        !self.run.read_only
            && self.building.load(Ordering::Relaxed) == 0
            && !on_long_chain(&self.rule.check)
            && phase_for(self.rule, self.run.deadline.is_some()) != Phase::QuietStore
    }

    /// The counted creates that stored nothing (refused, or never sent) give their places back.
    fn room_back(&self, counted: bool, specs: &[RequestSpec], exchanges: &[Exchange]) {
        if !counted {
            return;
        }
        if phase_for(self.rule, self.run.deadline.is_some()) == Phase::QuietStore {
            self.run.scheduler.quiet_creating(false);
            return;
        }
        let stored_nothing = specs
            .iter()
            .zip(exchanges)
            .filter(|(spec, exchange)| {
                super::run::creates(spec)
                    && match exchange.state() {
                        ExchangeState::NotSent(_) => true,
                        ExchangeState::Answered(response) => !(200..300).contains(&response.status),
                        ExchangeState::Unanswered(_) | ExchangeState::Cut(..) => false,
                    }
            })
            .count();
        self.run
            .scheduler
            .room_back(u64::try_from(stored_nothing).unwrap_or(u64::MAX));
    }

    /// Where this rule's requests stand in line for a place in flight: a fixture being built,
    /// a quiet-store rule, or a rule on a long chain during its first pass, goes first (after
    /// it, under a time budget, every rule is equal).
    pub(super) fn priority(&self) -> Priority {
        // While the quiet-store rules are not judged, only their requests and the fixtures'
        // are chain requests: every later rule's creates wait on them, and a long chain of a
        // later rule only waits for them in turn.
        let first = self.building.load(Ordering::Relaxed) > 0
            || phase(&self.rule.check) == Phase::QuietStore
            || (on_long_chain(&self.rule.check)
                && !self.first_pass_over.load(Ordering::Relaxed)
                && self.run.scheduler.quiet_store_judged());
        if first {
            Priority::Chain
        } else {
            Priority::Plain
        }
    }

    /// This rule's first requests were answered, or it ended: a quiet-store rule tells the
    /// scheduler once.
    pub fn answered_once(&self) {
        if !self.answered.swap(true, Ordering::Relaxed)
            && phase(&self.rule.check) == Phase::QuietStore
        {
            self.run.scheduler.quiet_answered();
        }
    }

    /// A rule that only reads, run beside the quiet-store rules: waits until their first
    /// requests (the creates whose storing they look for) are answered, so that the reads
    /// take the places the creates leave, beside the listings that follow them, or until the
    /// target has answered enough requests in a row to show it is up (the reads then show its
    /// connections to the level, which lets the creates open more); at most a few seconds.
    pub fn wait_for_quiet_creates(&self) {
        self.run
            .scheduler
            .wait_for_quiet_answers(std::time::Duration::from_secs(5), &|| {
                self.run.stops.interrupted()
            });
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
        if phase_for(self.rule, self.run.deadline.is_some()) < Phase::Last
            && !self.first_pass_over.swap(true, Ordering::Relaxed)
        {
            self.run.scheduler.first_pass_over(stores_many(self.rule));
        }
    }

    /// An oracle, after its own reads: waits until every rule of the last phase is judged,
    /// so that its tally holds their answers too.
    pub fn wait_for_last_phase(&self) {
        self.run
            .scheduler
            .wait_for_last_phase(&|| self.run.stops.interrupted());
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
        self.run
            .scheduler
            .wait_for_first_passes(self.run.deadline, &|| self.run.stops.interrupted());
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

    /// This rule's saved counterexamples, as data: the first values a property rule judges.
    pub fn saved_values(&self) -> Vec<serde_json::Value> {
        self.run.regressions_for(&self.rule.id)
    }
}

/// A rule that asks for a fixture lends the store setup its way of sending: the fixture's
/// requests are counted on that rule's chain.
impl super::store_setup::StoreAccess for RuleCtx<'_> {
    fn send(&self, spec: &RequestSpec) -> Exchange {
        RuleCtx::send(self, spec)
    }

    fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        RuleCtx::send_all(self, specs)
    }

    fn building<T>(&self, build: impl FnOnce() -> T) -> T {
        RuleCtx::building(self, build)
    }

    fn created_pets(&self) -> &super::store_setup::CreatedPets {
        &self.run.fixtures.created
    }

    fn contract(&self) -> &Contract {
        RuleCtx::contract(self)
    }

    fn read_only(&self) -> bool {
        self.run.read_only
    }

    fn pet_name(&self, tag: &str) -> String {
        self.run.pet_name(tag)
    }

    fn accepted_category(&self) -> i64 {
        self.run.categories.accepted(1)
    }

    fn fastest_answer(&self) -> std::time::Duration {
        self.run.client.fastest_answer()
    }

    fn scheduler(&self) -> &super::scheduler::Scheduler {
        &self.run.scheduler
    }

    fn stopped(&self) -> bool {
        self.run.stops.interrupted() || self.run.stops.target_stopped().is_some()
    }
}
