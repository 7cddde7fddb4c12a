//! How a check is scheduled: the traits a check states beside its declaration (`check.rs`,
//! after its `=>`), built from a phase ([`QUIET`], [`MAIN`], [`LAST`]) and what sets it apart.
//! `engine::schedule` reads them; nothing else decides them.

/// When, relative to the others, a check must run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Needs to see the whole store in one listing page: runs before anything fills it.
    QuietStore,
    Main,
    /// Changes the store in ways the other rules would see (a pet whose reads fail, a store
    /// filled past a row limit): runs after every other rule's reads.
    Last,
    /// Looks at every response of the run: runs after everything else, the last phase's
    /// answers included.
    Oracles,
}

/// What a check stores as it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stores {
    /// A fixed few pets, or none.
    Few,
    /// Many pets on its first pass (a burst of creates, a property of valid NewPets).
    Many,
    /// A pet per generated case.
    EveryCase,
    /// A pet per generated case where its operation is createPet (the request space's walk).
    EveryCaseOfCreatePet,
    /// As many as the store must hold to pass a row limit: only when the run is told to fill
    /// the store (a shared store keeps them all).
    Fill,
}

/// Whether a check only reads (a fixed few requests, no pet of the run needed), so that it
/// may run beside the quiet-store rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// It writes, or needs a pet of the run, or generates on under a budget.
    Not,
    Only,
    /// Only where its operation lists (of getPet, the request names the run's own pet).
    OnlyWhenListing,
}

/// A check's scheduling traits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traits {
    pub phase: Phase,
    /// Starts before the others of its phase: its chain of dependent requests is long.
    pub starts_early: bool,
    /// Its verdict waits on three or more dependent round trips: its requests go first in line.
    pub on_long_chain: bool,
    pub stores: Stores,
    pub reads: Reads,
    /// In the last phase without a budget; in the main phase under one (the last phase may
    /// start after the budget stopped all sending).
    pub last_unless_budget: bool,
}

const fn at(phase: Phase) -> Traits {
    Traits {
        phase,
        starts_early: false,
        on_long_chain: false,
        stores: Stores::Few,
        reads: Reads::Not,
        last_unless_budget: false,
    }
}

/// Runs in the quiet-store phase.
pub const QUIET: Traits = at(Phase::QuietStore);
/// Runs in the main phase.
pub const MAIN: Traits = at(Phase::Main);
/// Runs in the last phase.
pub const LAST: Traits = at(Phase::Last);
/// Runs after every other rule: a response oracle.
pub const ORACLES: Traits = at(Phase::Oracles);

impl Traits {
    /// Starts before the others of its phase.
    pub const fn early(self) -> Traits {
        Traits {
            starts_early: true,
            ..self
        }
    }
    /// Its requests go first in line (a chain of three or more round trips).
    pub const fn long_chain(self) -> Traits {
        Traits {
            on_long_chain: true,
            ..self
        }
    }
    /// What it stores as it runs.
    pub const fn stores(self, stores: Stores) -> Traits {
        Traits { stores, ..self }
    }
    /// Whether it only reads.
    pub const fn reads(self, reads: Reads) -> Traits {
        Traits { reads, ..self }
    }
    /// In the main phase under a time budget, though last without one.
    pub const fn main_under_budget(self) -> Traits {
        Traits {
            last_unless_budget: true,
            ..self
        }
    }
}
