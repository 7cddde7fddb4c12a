//! How each check is scheduled, declared once per check in one exhaustive match: a new check
//! does not compile until its traits are stated (`engine::schedule` reads them, nothing else
//! decides them).

use super::Check;

/// When, relative to the others, a check must run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Needs to see the whole store in one listing page: runs before anything fills it.
    QuietStore,
    Main,
    /// Looks at every response of the run: runs after everything else.
    Last,
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

const QUIET: Traits = at(Phase::QuietStore);
const MAIN: Traits = at(Phase::Main);
const LAST: Traits = at(Phase::Last);

impl Traits {
    const fn early(self) -> Traits {
        Traits {
            starts_early: true,
            ..self
        }
    }
    const fn long_chain(self) -> Traits {
        Traits {
            on_long_chain: true,
            ..self
        }
    }
    const fn stores(self, stores: Stores) -> Traits {
        Traits { stores, ..self }
    }
    const fn reads(self, reads: Reads) -> Traits {
        Traits { reads, ..self }
    }
    const fn main_under_budget(self) -> Traits {
        Traits {
            last_unless_budget: true,
            ..self
        }
    }
}

impl Check {
    /// This check's scheduling traits.
    pub const fn traits(&self) -> Traits {
        use Reads::{Only, OnlyWhenListing};
        use Stores::{EveryCase, EveryCaseOfCreatePet, Many};
        match self {
            Check::AuthRefusedCreateStoresNothing {}
            | Check::CreateRefused { .. }
            | Check::CreateTypeConfusionStoresNothing {}
            | Check::InputsStoresNothing {}
            | Check::ListEmptyIsArray {} => QUIET,
            Check::CreateConcurrentAllListed { .. } | Check::CreateNameLadder { .. } => {
                QUIET.early()
            }
            Check::ResponsesJsonContentType {}
            | Check::ResponsesErrorBody {}
            | Check::ResponsesNoServerError {}
            | Check::ResponsesSuccessSchema {}
            | Check::ResponsesDeprecationGetPetOnly {}
            | Check::ResponsesOutsideNoServerError {} => LAST,
            // A pet it stores may break every read that shows it: after the other rules' reads.
            Check::CreatePoisonedReadBack {} | Check::CreatePoisonedBytes {} => {
                LAST.main_under_budget()
            }
            // Reads back the pets create-pet/valid/created stored: after it.
            Check::CreateRoundTrip {} => LAST.main_under_budget().stores(EveryCase),
            Check::AuthRefused { .. }
            | Check::AuthAccepted { .. }
            | Check::AuthPrecedence { .. } => MAIN.reads(OnlyWhenListing),
            Check::AuthNearMissRefused { .. }
            | Check::CreateInvalidValues400 { .. }
            | Check::CreateBodyLadder { .. }
            | Check::GetExisting {}
            | Check::GetUnknown {}
            | Check::DeprecationSignalled {}
            | Check::DeprecationSyntax {}
            | Check::SunsetPresent {}
            | Check::SunsetDate {}
            | Check::SunsetAfterDeprecation {}
            | Check::DeprecationBeforeRemoval {}
            | Check::SuccessorLink {}
            | Check::SuccessorIsListPets {} => MAIN,
            Check::StoreOrdersAnswered {}
            | Check::ParametersRefused {}
            | Check::ListLimitRefused { .. }
            | Check::ListStatusRefused { .. }
            | Check::GetNonInteger { .. }
            | Check::NotDeprecated {}
            | Check::ListOk {} => MAIN.reads(Only),
            Check::ParametersAnswered {}
            | Check::CreateMutationsProperty {}
            | Check::CreateTypeConfusion {} => MAIN.early(),
            Check::InputsWalk {} => MAIN.early().stores(EveryCaseOfCreatePet),
            Check::CreateProperty {} => MAIN.early().stores(Many),
            Check::ListDefaultAtMost { .. }
            | Check::ListLimitProperty {}
            | Check::ListStatusProperty {}
            | Check::ListFillsPage { .. }
            | Check::CreateUniqueIds { .. } => MAIN.early().long_chain(),
            Check::SequencesReadYourWrites { .. } | Check::CreateConcurrentDistinctIds { .. } => {
                MAIN.early().long_chain().stores(Many)
            }
            Check::ListLimitAccepted { .. }
            | Check::ListOutOfRangeCapped { .. }
            | Check::ListLimitBeside { .. } => MAIN.long_chain(),
        }
    }
}
