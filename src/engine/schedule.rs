//! When a rule runs, and where its requests stand in line for a place in flight: the phases
//! (a quiet store first, the oracles last), the order within a phase, and which rules' requests
//! go first (those on long chains, so that the run's longest chains are not also last in line).
//! Each check states its traits once ([`Check::traits`]); these read them.

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
        Stores::Few | Stores::Many => false,
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
