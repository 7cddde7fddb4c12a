//! The run's scheduler. When a rule runs, and where its requests stand in line for a place in
//! flight: the phases (a quiet store first, the oracles last), the order within a phase, and
//! which rules' requests go first (those on long chains, so that the run's longest chains are
//! not also last in line), read from the traits each check states once ([`Check::traits`]).
//! And, while the run goes, where it stands between its rules: a rule starts once every
//! selected rule of an earlier phase is judged, but the main phase starts beside the quiet
//! store, its creates within the places of a page the quiet-store rules leave while they list
//! (see [`Scheduler::wait_for_room`]); the rules still on their first pass, the rules storing
//! many pets now and the quiet-store rules not yet answered are counted here, and every
//! change wakes the rules waiting on it (a condition variable), so that none polls a counter.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::catalogue::traits::{Reads, Stores};
use crate::catalogue::{Check, Rule};

pub use crate::catalogue::traits::Phase;

/// When a check runs, from what it needs of the store.
pub fn phase(check: &Check) -> Phase {
    check.traits().phase
}

/// Whether a property rule stores a pet for each case it draws (valid NewPets, sequences that
/// create): a shared store keeps them all, the contract having no delete, so a run without
/// `--cases` or a budget draws fewer of these ([`STORING_CASES`]).
pub fn stores_every_case(rule: &Rule) -> bool {
    // create-pet/valid/created and sequences/read-your-writes keep their 32: a name past 255
    // characters, which only generated cases draw, must show in nearly every seed, and a
    // sequence's listing must ask a limit under the pets it made (with 16, limit-ignored went
    // unseen by the sequences at seed 7, and long-name-500 shrank to 267 characters at 115).
    match rule.check.traits().stores {
        Stores::EveryCase => true,
        Stores::EveryCaseOfCreatePet => rule.operation == crate::contract::Operation::CreatePet,
        Stores::Few | Stores::Many | Stores::Fill => false,
    }
}

/// Whether a rule stores many pets on its first pass (a pet per case, or a burst of creates):
/// the pets of a page are made of theirs, so the population fixture waits for them, and they
/// are queued first so that it finds them running.
pub fn stores_many(rule: &Rule) -> bool {
    stores_every_case(rule) || rule.check.traits().stores == Stores::Many
}

/// Generated cases of a rule that stores a pet per case, where `--cases` and `--time-budget`
/// say none: its boundary values (the longest name, the ends of int64) are tried besides, and
/// the faults these rules catch show in this many.
pub const STORING_CASES: u32 = 8;

/// Whether a check starts before the others of its phase: the checks whose chain of dependent
/// requests is long (sequences, rounds, a fixture to build first, cases in batches) go first,
/// so that the phase's end is their chain's, not a queue of short checks before them; a
/// check of one or two round trips fits in beside them.
pub fn starts_early(check: &Check) -> bool {
    check.traits().starts_early
}

/// Checks whose verdict waits on a chain of three or more dependent round trips (or on a
/// fixture's, then its own): their requests take free places in flight first, so that the
/// run's longest chains are not also the last in line (see `execution::Priority`).
pub fn on_long_chain(check: &Check) -> bool {
    check.traits().on_long_chain
}

/// When a rule runs in a run with or without a time budget: the poisoned read-back and the
/// round trip run last, after every other rule's reads, but under a budget the last phase may start after the
/// budget has stopped all sending, so it runs in the main phase once every rule has had its
/// first pass (see `read_back`). A main-phase rule that only reads runs beside the quiet-store
/// rules, in the places their few requests leave free (see [`reads_only`]).
pub fn phase_for(rule: &Rule, budget: bool) -> Phase {
    let traits = rule.check.traits();
    match traits.phase {
        Phase::Last if budget && traits.last_unless_budget => Phase::Main,
        Phase::Main if reads_only(rule) => Phase::QuietStore,
        phase => phase,
    }
}

/// A rule that sends a fixed few reads and needs no pet of the run (no fixture that creates
/// one): it changes nothing the quiet-store rules count. (A property rule would, under a time
/// budget, go on generating and hold the main phase back.)
fn reads_only(rule: &Rule) -> bool {
    use crate::contract::Operation;
    if rule.writes {
        return false;
    }
    match rule.check.traits().reads {
        Reads::Only => true,
        Reads::OnlyWhenListing => matches!(
            rule.operation,
            Operation::ListPets | Operation::ListStoreOrders
        ),
        Reads::Not => false,
    }
}

/// The run's fixtures of one pet each, made by whichever rule asks first: a pet to read and
/// the marker's baseline. The quiet store keeps room for them, and `--max-pets` its last
/// places (the pet cap).
pub const FIXTURE_PETS: u64 = 2;

/// Pets a quiet-store rule stores at most on a store that conforms: a refused body stores
/// none (a store that keeps one anyway fails the rule that sent it, where the page shows it).
pub fn quiet_pets(check: &Check) -> u64 {
    match check {
        Check::CreateConcurrentAllListed { clients } => *clients,
        Check::CreateNameLadder { lengths } => u64::try_from(lengths.len()).unwrap_or(u64::MAX),
        _ => 0,
    }
}

/// How often a waiting rule looks again at what no change here announces: an interrupt, the
/// run's halt, the pets the store setup counts.
const LOOK_AGAIN: Duration = Duration::from_millis(20);

/// Answers in a row, none lost between, after which the reads beside the quiet-store rules
/// need not wait for those rules' creates: the preflight's four (the store's first page and
/// each status's). Their answers show the target more connections, which is what lets the
/// creates, kept to the connections it has served at once, open more; and the creates, once
/// the target keeps a connection, are handed the lanes that come back before the reads (see
/// `execution::lanes`). Waiting for 16 held the quiet-store phase's creates on about eight
/// connections for three round trips at 50 ms. A target that stops answering before (as one
/// that answers its first request and resets every connection after) keeps them waiting, so
/// they do not go out to it all at once.
pub const ANSWERING_SHOWN: usize = 4;

/// Where the run stands between its rules.
#[derive(Default)]
pub struct Scheduler {
    state: Mutex<State>,
    /// Told of a change that may end a wait, one for each [`Topic`]: with a hundred rules
    /// waiting, every change woke them all, a third of a run's context switches (and then,
    /// each rule's first pass ending, a quarter of its wake-ups).
    phases: Condvar,
    quiet: Condvar,
    passes: Condvar,
    /// Told of a pet created, and of a change in the rules storing many, for the waits on the
    /// store's population.
    created: Condvar,
    /// Exchanges answered since the last one that got no answer (see [`ANSWERING_SHOWN`]).
    answered_in_a_row: std::sync::atomic::AtomicUsize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct State {
    /// Selected rules of each phase not judged yet.
    unjudged: [usize; 4],
    /// Rules (before the last phase) still on their first pass.
    first_passes_left: usize,
    /// Rules storing many pets on their first pass now: the population fixture makes its page
    /// of theirs rather than of pets of its own.
    storing: usize,
    /// Quiet-store rules by their own traits not judged yet: a later rule's creates wait for
    /// these only, not for the reads run in their phase beside them (which change nothing
    /// they count, and which held the main phase's creates two round trips more at 50 ms).
    quiet_unjudged: usize,
    /// Quiet-store rules whose first requests are not answered yet: the reads that run beside
    /// them wait for none to be left, so that the creates have the first places.
    quiet_unanswered: usize,
    /// The target answered [`ANSWERING_SHOWN`] requests in a row: the reads beside the
    /// quiet-store rules go without waiting (their answers show the target's connections to
    /// the level, which lets the creates open more).
    answering_shown: bool,
    /// Pets the target said it created: the population fixture waits on their number.
    pets_created: u64,
    /// Places of the store's first page the quiet-store rules keep for their own pets (see
    /// [`quiet_pets`]), besides the run's two fixtures.
    quiet_reserve: u64,
    /// Pets the later rules may have added while the quiet-store rules are not judged: their
    /// creates in flight, and those answered with a pet (see [`Scheduler::wait_for_room`]).
    room_taken: u64,
    /// Batches of creates of the quiet-store rules in flight: the later rules' creates wait for
    /// them, which would otherwise take the connections they wait for.
    quiet_creating: usize,
}

/// What a change is about, and so which waits it may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Topic {
    /// The rules judged, phase by phase (`unjudged`).
    Phases,
    /// The quiet-store rules: judged, answered, their creates out, the room they leave, the
    /// target seen answering.
    Quiet,
    /// The first passes, and the rules storing many pets now.
    Passes,
}

fn index(phase: Phase) -> usize {
    match phase {
        Phase::QuietStore => 0,
        Phase::Main => 1,
        Phase::Last => 2,
        Phase::Oracles => 3,
    }
}

impl Scheduler {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn told(&self, topic: Topic) -> &Condvar {
        match topic {
            Topic::Phases => &self.phases,
            Topic::Quiet => &self.quiet,
            Topic::Passes => &self.passes,
        }
    }

    /// Changes the state and wakes every rule waiting on `topic`.
    fn change(&self, topic: Topic, change: impl FnOnce(&mut State)) {
        change(&mut self.state());
        self.told(topic).notify_all();
    }

    /// Waits until `done` holds of the state, or `give_up` does (looked at on every change of
    /// `topic` and at least every `look_again`), or `until` passes.
    fn wait(
        &self,
        topic: Topic,
        done: impl Fn(&State) -> bool,
        (give_up, look_again): (&dyn Fn() -> bool, Duration),
        until: Option<Instant>,
    ) {
        self.wait_on(self.told(topic), done, (give_up, look_again), until);
    }

    /// [`Scheduler::wait`], woken by `told`.
    fn wait_on(
        &self,
        told: &Condvar,
        done: impl Fn(&State) -> bool,
        (give_up, look_again): (&dyn Fn() -> bool, Duration),
        until: Option<Instant>,
    ) {
        let mut state = self.state();
        while !done(&state) && !give_up() {
            let now = Instant::now();
            let slice = match until {
                Some(until) if until <= now => return,
                Some(until) => (until - now).min(look_again),
                None => look_again,
            };
            state = told
                .wait_timeout(state, slice)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The phases of the selected rules, of which `quiet` are quiet-store rules by their own
    /// traits, storing `quiet_reserve` pets at most on a store that conforms (see
    /// [`quiet_pets`]): said once, before any rule starts.
    pub fn select(
        &self,
        selected: impl IntoIterator<Item = Phase>,
        quiet: usize,
        quiet_reserve: u64,
    ) {
        let mut unjudged = [0; 4];
        for phase in selected {
            unjudged[index(phase)] += 1;
        }
        self.change(Topic::Phases, |state| {
            *state = State {
                unjudged,
                first_passes_left: unjudged[0] + unjudged[1],
                quiet_unanswered: quiet,
                quiet_unjudged: quiet,
                quiet_reserve,
                ..*state
            }
        });
        self.quiet.notify_all();
        self.passes.notify_all();
    }

    /// The places of a page a later rule's creates may take while the quiet-store rules are
    /// not judged, on a store whose first page held `before` pets before the run: what the
    /// quiet-store rules and the run's two fixtures (a pet to read, the marker's baseline) do
    /// not keep, below 100, so that one listing still shows every pet.
    pub fn quiet_room(&self, before: usize) -> u64 {
        let kept = u64::try_from(before).unwrap_or(u64::MAX);
        99u64.saturating_sub(kept.saturating_add(self.state().quiet_reserve + FIXTURE_PETS))
    }

    /// Waits until `wanted` creates more fit within `room` (see [`Scheduler::quiet_room`]), or
    /// the quiet-store rules are judged, or `stopped`; counts them while those rules are not.
    /// Whether it counted them: those answered without a pet are given back
    /// ([`Scheduler::room_back`]).
    pub fn wait_for_room(&self, wanted: u64, room: u64, stopped: &dyn Fn() -> bool) -> bool {
        let mut state = self.state();
        loop {
            if state.quiet_unjudged == 0 {
                return false;
            }
            let fits = state.room_taken.saturating_add(wanted) <= room
                && (state.quiet_creating == 0 || room == u64::MAX);
            if fits || stopped() {
                state.room_taken += wanted;
                return true;
            }
            state = self
                .quiet
                .wait_timeout(state, LOOK_AGAIN)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Whether every quiet-store rule is judged: a later rule's creates then go as they please.
    pub fn quiet_store_judged(&self) -> bool {
        self.state().quiet_unjudged == 0
    }

    /// A quiet-store rule (by its own traits) was judged.
    pub fn quiet_rule_judged(&self) {
        self.change(Topic::Quiet, |state| {
            state.quiet_unjudged = state.quiet_unjudged.saturating_sub(1)
        });
    }

    /// A quiet-store rule's batch of creates goes out (`true`) or is back: the creates
    /// waiting for room are woken when none is out.
    pub fn quiet_creating(&self, going: bool) {
        let mut state = self.state();
        if going {
            state.quiet_creating += 1;
        } else {
            state.quiet_creating = state.quiet_creating.saturating_sub(1);
            if state.quiet_creating == 0 {
                self.quiet.notify_all();
            }
        }
    }

    /// `count` creates counted by [`Scheduler::wait_for_room`] stored nothing.
    pub fn room_back(&self, count: u64) {
        if count > 0 {
            self.change(Topic::Quiet, |state| {
                state.room_taken = state.room_taken.saturating_sub(count)
            });
        }
    }

    /// Waits until every quiet-store rule is judged (a fixture that fills the store past a
    /// page), or `stopped`.
    pub fn wait_for_quiet_store(&self, stopped: &dyn Fn() -> bool) {
        self.wait(
            Topic::Quiet,
            |state| state.quiet_unjudged == 0,
            (stopped, LOOK_AGAIN),
            None,
        );
    }

    /// Waits until every rule of the last phase is judged: an oracle, started beside them
    /// (see [`judge_all`](Scheduler::judge_all)), reads its tally after.
    pub fn wait_for_last_phase(&self, stopped: &dyn Fn() -> bool) {
        self.wait(
            Topic::Phases,
            |state| state.unjudged[index(Phase::Last)] == 0,
            (stopped, LOOK_AGAIN),
            None,
        );
    }

    /// Waits until every selected rule of an earlier phase than `phase` is judged. Rules are
    /// started in phase order, so a waiting rule only ever waits on rules already started.
    pub fn wait_for_earlier_phases(&self, phase: Phase) {
        let before = index(phase);
        self.wait(
            Topic::Phases,
            |state| state.unjudged[..before].iter().all(|n| *n == 0),
            (&|| false, LOOK_AGAIN),
            None,
        );
    }

    /// Judges every item of `queue` on `threads` threads of the scheduler's own, in the
    /// queue's order (phase by phase: an item starts once every selected rule of an earlier
    /// phase is judged, but an oracle starts with the last phase: its few reads go out beside
    /// that phase's, and it waits for that phase before it reads its tally), and returns when
    /// all are. Every rule of the last phase is started before an oracle, so none waits on a
    /// rule that no thread has taken.
    pub fn judge_all<T: Sync>(
        &self,
        queue: &[(Phase, T)],
        threads: usize,
        judge: &(dyn Fn(&T) + Sync),
    ) {
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..threads.clamp(1, queue.len().max(1)) {
                scope.spawn(|| {
                    loop {
                        let at = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some((phase, item)) = queue.get(at) else {
                            break;
                        };
                        self.wait_for_earlier_phases(match phase {
                            // Beside the quiet-store rules, its creates within the room they
                            // leave (see `wait_for_room`).
                            Phase::Main => Phase::QuietStore,
                            Phase::Oracles => Phase::Last,
                            phase => *phase,
                        });
                        judge(item);
                        self.judged(*phase);
                    }
                });
            }
        });
    }

    /// A rule of `phase` was judged.
    pub fn judged(&self, phase: Phase) {
        self.change(Topic::Phases, |state| {
            let slot = &mut state.unjudged[index(phase)];
            *slot = slot.saturating_sub(1);
        });
    }

    /// A rule that stores many pets on its first pass started.
    pub fn storing_started(&self) {
        self.change(Topic::Passes, |state| state.storing += 1);
        self.created.notify_all();
    }

    /// A rule's first pass is over (`stored_many`: it was one storing many pets).
    pub fn first_pass_over(&self, stored_many: bool) {
        self.change(Topic::Passes, |state| {
            if stored_many {
                state.storing = state.storing.saturating_sub(1);
            }
            state.first_passes_left = state.first_passes_left.saturating_sub(1);
        });
        if stored_many {
            self.created.notify_all();
        }
    }

    /// A quiet-store rule's first requests were answered (or it ended).
    pub fn quiet_answered(&self) {
        self.change(Topic::Quiet, |state| {
            state.quiet_unanswered = state.quiet_unanswered.saturating_sub(1)
        });
    }

    /// An exchange was recorded: answered, or lost (an answer cut short counts as lost).
    fn heard(&self, state: crate::outcome::ExchangeState<'_>) {
        use crate::outcome::ExchangeState;
        use std::sync::atomic::Ordering;
        match state {
            ExchangeState::Answered(_) => {
                let in_a_row = self.answered_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
                if in_a_row == ANSWERING_SHOWN {
                    self.change(Topic::Quiet, |state| state.answering_shown = true);
                }
            }
            ExchangeState::Unanswered(_) | ExchangeState::Cut(..) => {
                self.answered_in_a_row.store(0, Ordering::Relaxed);
            }
            ExchangeState::NotSent(_) => {}
        }
    }

    /// Waits until every quiet-store rule's first requests are answered, or the target has
    /// shown it answers ([`ANSWERING_SHOWN`]), at most `within`.
    pub fn wait_for_quiet_answers(&self, within: Duration, stopped: &dyn Fn() -> bool) {
        self.wait(
            Topic::Quiet,
            |state| state.quiet_unanswered == 0 || state.answering_shown,
            (stopped, LOOK_AGAIN),
            Some(Instant::now() + within),
        );
    }

    /// Waits until every rule before the last phase has had its first pass, or `deadline`.
    pub fn wait_for_first_passes(&self, deadline: Option<Instant>, stopped: &dyn Fn() -> bool) {
        self.wait(
            Topic::Passes,
            |state| state.first_passes_left == 0,
            (stopped, LOOK_AGAIN),
            deadline,
        );
    }

    /// Waits at most `within` for a rule storing many pets to start (none will once every first
    /// pass is over).
    pub fn wait_for_storing_to_start(&self, within: Duration) {
        self.wait(
            Topic::Passes,
            |state| state.storing > 0 || state.first_passes_left == 0,
            (&|| false, LOOK_AGAIN),
            Some(Instant::now() + within),
        );
    }

    /// Waits while rules store many pets, until `enough` holds: looked at on every change, a
    /// pet created among them (the store setup counts them, and the event stream tells this of
    /// each), so that the population fixture goes on the moment they are enough.
    pub fn wait_while_storing(&self, enough: &dyn Fn() -> bool) {
        self.wait_on(
            &self.created,
            |state| state.storing == 0,
            (enough, LOOK_AGAIN),
            None,
        );
    }

    /// Pets the target said it created so far (see [`Scheduler::wait_for_a_pet_after`]).
    pub fn pets_created(&self) -> u64 {
        self.state().pets_created
    }

    /// Waits until a pet is created after the first `seen`, or `until`.
    pub fn wait_for_a_pet_after(&self, seen: u64, until: Instant) {
        self.wait_on(
            &self.created,
            |state| state.pets_created > seen,
            (&|| false, LOOK_AGAIN),
            Some(until),
        );
    }
}

/// The scheduler hears of every pet created, after the store setup has counted it: the rules
/// waiting on the store's population are woken by it, not by a clock.
/// It hears of every answer too: a target seen answering lets the reads beside the
/// quiet-store rules go (see [`ANSWERING_SHOWN`]).
impl super::events::Subscriber for Scheduler {
    fn on(&self, event: &super::events::Event<'_>) {
        let super::events::Event::ExchangeRecorded(recorded) = event else {
            return;
        };
        self.heard(recorded.exchange.state());
        if recorded.created_pet().is_some() {
            self.state().pets_created += 1;
            self.created.notify_all();
        }
    }
}

#[cfg(test)]
mod tests;
