//! What the store setup is handed by the rule that asks for a fixture: a way to send (counted
//! on that rule's chain), the run's profile, and what the run says of the rules beside it. The
//! check context gives it ([`crate::engine::ctx::RuleCtx`]); a fake store gives it in the unit
//! tests, so that the setup is built and tested without a whole run.

use std::time::Duration;

use super::created::CreatedPets;
use crate::contract::Contract;
use crate::engine::scheduler::Scheduler;
use crate::generation::request::RequestSpec;
use crate::outcome::Exchange;

pub trait StoreAccess: Sync {
    /// Sends one request, recorded as every exchange of the run is.
    fn send(&self, spec: &RequestSpec) -> Exchange;
    /// Sends every request at once (as the run's concurrency allows).
    fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange>;
    /// Runs `build` as a fixture of the run: its requests go first in flight, since every rule
    /// that needs it waits on them.
    fn building<T>(&self, build: impl FnOnce() -> T) -> T;
    /// Every pet the run created so far, whichever rule created it.
    fn created_pets(&self) -> &CreatedPets;
    fn contract(&self) -> &Contract;
    /// Nothing may be created on the target (`--read-only`).
    fn read_only(&self) -> bool;
    /// A pet name with the run's prefix.
    fn pet_name(&self, tag: &str) -> String;
    /// A category id the target accepts.
    fn accepted_category(&self) -> i64;
    /// The quickest answer the target has given so far.
    fn fastest_answer(&self) -> Duration;
    /// Where the run stands between its rules (who stores many pets now, whose first pass is
    /// over).
    fn scheduler(&self) -> &Scheduler;
    /// The run stopped sending: interrupted, or the target stopped answering.
    fn stopped(&self) -> bool;
}
