//! The state every rule of a run shares: the client, the compiled contract, the seeds, the
//! fixtures and the tallies of the oracles, and the recorder every exchange of the rules
//! passes through: it decides the sending (the stops of a run, the pet cap) and tells the
//! run's event stream, which the oracles, the created pets and the side files read.

use std::collections::BTreeMap;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde_json::Value;

use super::events::{Event, EventStream, Recorded};
use super::oracles::Observations;
use super::scheduler::FIXTURE_PETS;
use super::stops::Stops;
use super::store_setup::Fixtures;
use crate::contract::Contract;
use crate::execution::{Client, Priority};
use crate::generation::request::RequestSpec;
use crate::outcome::Exchange;

/// Under a time budget, the pets a run creates at most (`--max-pets`): a createPet goes out
/// only while the pets created and the creates in flight are fewer, so that the count never
/// passes it, however many are sent at once.
#[derive(Default)]
pub struct PetCap {
    max: Option<u64>,
    in_flight: AtomicU64,
    reached: AtomicBool,
}

impl PetCap {
    pub fn new(max: Option<u64>) -> PetCap {
        PetCap {
            max,
            ..PetCap::default()
        }
    }

    /// The cap, where one applies.
    pub fn max(&self) -> Option<u64> {
        self.max
    }

    /// Whether a createPet was held back by the cap.
    pub fn reached(&self) -> bool {
        self.reached.load(Ordering::SeqCst)
    }

    /// Whether no rule's createPet may go out now: as many pets created, or about to be, as
    /// the cap leaves past the fixtures' places.
    pub fn full(&self, created: &dyn Fn() -> u64) -> bool {
        self.max.is_some_and(|max| {
            // In flight first: a create is counted created before it leaves the flight.
            let in_flight = self.in_flight.load(Ordering::SeqCst);
            created().saturating_add(in_flight) >= max.saturating_sub(FIXTURE_PETS)
        })
    }

    /// A place for one createPet, or none (and the cap is reached). A fixture's (`fixture`)
    /// may take the cap's last [`FIXTURE_PETS`]: the rules' own creates leave them, so that
    /// the pet most rules read is never held back by those that happened to go first.
    fn admit(&self, created: &dyn Fn() -> u64, fixture: bool) -> bool {
        let Some(max) = self.max else {
            return true;
        };
        let max = if fixture {
            max
        } else {
            max.saturating_sub(FIXTURE_PETS)
        };
        loop {
            let in_flight = self.in_flight.load(Ordering::SeqCst);
            if created().saturating_add(in_flight) >= max {
                self.reached.store(true, Ordering::SeqCst);
                return false;
            }
            if self
                .in_flight
                .compare_exchange(in_flight, in_flight + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return true;
            }
        }
    }

    fn release(&self) {
        if self.max.is_some() {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Whether a request creates a pet (createPet).
pub(super) fn creates(spec: &RequestSpec) -> bool {
    spec.method == "POST" && spec.path == "/pets"
}

/// The state every rule of a run shares.
pub struct Run {
    pub client: Client,
    pub contract: Contract,
    /// NewPet.json with `$ref` and `allOf` resolved, for generation.
    pub new_pet_schema: Value,
    pub seed: u64,
    pub cases: u32,
    /// Generated cases of a rule that stores a pet per case (see
    /// [`super::scheduler::stores_every_case`]).
    pub storing_cases: u32,
    /// Whether a failing generated case is shrunk to a minimal one. Not when a rule is judged
    /// again to replay a report's failure: the report holds its minimal case, and each shrink
    /// step of a rule that creates pets creates one.
    pub shrink: bool,
    /// Requests in flight at once, at most (`--concurrency`): also how many cases of a
    /// property rule are judged at once.
    pub concurrency: usize,
    /// The category ids the target accepts; valid pets use only these.
    pub categories: crate::generation::Categories,
    /// When generated cases stop, under `--time-budget`.
    pub deadline: Option<Instant>,
    pub stops: Stops,
    pub(crate) regressions: BTreeMap<String, Vec<Value>>,
    pub(crate) prefix: String,
    pub fixtures: Arc<Fixtures>,
    pub observations: Arc<Observations>,
    /// Every exchange recorded, every rule judged and the run's end, told to its subscribers.
    pub events: EventStream,
    /// Nothing may be created on the target.
    pub read_only: bool,
    /// Pets the run makes before the crowded-store rule lists (`--fill-store`).
    pub fill_store: Option<u64>,
    /// Under a time budget, the pets the run may create (`--max-pets`).
    pub pet_cap: PetCap,
    /// Where the run stands between its rules: phases, first passes, rules storing many pets,
    /// quiet-store rules not yet answered; every wait of a rule on another is here.
    pub scheduler: Arc<super::scheduler::Scheduler>,
    /// Whether the store took the plainest NewPet with the run's marker category, asked once
    /// before the first request-space case (`rules::stored::fill`): where it did not, the
    /// cases spell an accepted category, so that no probe is refused for its category alone.
    pub marker_taken: std::sync::OnceLock<bool>,
    /// The request space the coverage pass walks, and what it found per class.
    pub space: crate::generation::space::RequestSpace,
    pub input_tally: super::input_tally::InputTally,
    /// Helper threads of property rules, at most `concurrency` across the run.
    pub worker_slots: super::slots::WorkerSlots,
}

impl Run {
    /// Sends through the client, unless the run has stopped sending, and records the exchange
    /// (see [`Run::record`]). Every exchange of the rules passes through here.
    ///
    /// A repeatable request ([`RequestSpec::repeatable`]) whose response the transport cut
    /// mid-body is sent once more: a second answer is evidence, the cut one is not. A second
    /// cut, or a cut answer to a request that may not be repeated (a createPet a store may
    /// take), comes back cut, and no rule judges it.
    pub fn send(&self, rule_id: &str, spec: &RequestSpec, priority: Priority) -> Exchange {
        if let Some(reason) = self.stops.reason() {
            return self.client.not_sent(spec, &reason);
        }
        if !self.admitted(spec, priority) {
            return self.client.not_sent(spec, &self.cap_reason());
        }
        let exchange = self.record(rule_id, spec, self.client.send_as(spec, priority));
        if !(exchange.cut_by_transport() && spec.repeatable()) || self.stops.reason().is_some() {
            return exchange;
        }
        self.record(rule_id, spec, self.client.send_as(spec, priority))
    }

    /// Sends every request at once (`at_once`: at the same moment, for a race); each exchange
    /// passes the recorder as in [`Run::send`], and the repeatable ones the transport cut are
    /// sent again together.
    pub fn send_all(
        &self,
        rule_id: &str,
        specs: &[RequestSpec],
        at_once: bool,
        priority: Priority,
    ) -> Vec<Exchange> {
        // Each exchange is recorded as it comes back (a burst's come back together): the
        // pets of a batch of creates are counted as they are created, for the rules that wait
        // on them (the population), not once the slowest is answered.
        let send = |specs: &[RequestSpec]| {
            let record = |n: usize, exchange| self.record(rule_id, &specs[n], exchange);
            if at_once {
                let exchanges = self.client.send_at_once(specs).into_iter().enumerate();
                exchanges.map(|(n, exchange)| record(n, exchange)).collect()
            } else {
                self.client.send_all_each(specs, priority, &record)
            }
        };
        if let Some(reason) = self.stops.reason() {
            return specs
                .iter()
                .map(|spec| self.client.not_sent(spec, &reason))
                .collect();
        }
        let admitted: Vec<bool> = specs
            .iter()
            .map(|spec| self.admitted(spec, priority))
            .collect();
        let mut exchanges: Vec<Exchange> = if admitted.iter().all(|admitted| *admitted) {
            send(specs)
        } else {
            // Past the cap: the creates it holds back are not sent, the rest go out together.
            let going: Vec<RequestSpec> = specs
                .iter()
                .zip(&admitted)
                .filter(|(_, admitted)| **admitted)
                .map(|(spec, _)| spec.clone())
                .collect();
            let mut answers = send(&going).into_iter();
            specs
                .iter()
                .zip(&admitted)
                .map(
                    |(spec, admitted)| match admitted.then(|| answers.next()).flatten() {
                        Some(exchange) => exchange,
                        None => self.client.not_sent(spec, &self.cap_reason()),
                    },
                )
                .collect()
        };
        if self.stops.reason().is_none() {
            self.sent_again(specs, &mut exchanges, &send);
        }
        exchanges
    }

    /// The repeatable requests of `specs` the transport cut, sent again together once with
    /// `send`, their exchanges in place of the cut ones; which they were.
    fn sent_again(
        &self,
        specs: &[RequestSpec],
        exchanges: &mut [Exchange],
        send: &dyn Fn(&[RequestSpec]) -> Vec<Exchange>,
    ) -> Vec<usize> {
        let again: Vec<usize> = (0..specs.len())
            .filter(|&n| exchanges[n].cut_by_transport() && specs[n].repeatable())
            .collect();
        if again.is_empty() {
            return again;
        }
        let resent: Vec<RequestSpec> = again.iter().map(|&n| specs[n].clone()).collect();
        for (&n, exchange) in again.iter().zip(send(&resent)) {
            exchanges[n] = exchange;
        }
        again
    }

    /// [`Run::send_all`] of a batch whose answers decide more requests (`then`, given each
    /// request's place in `specs`): each of those goes as soon as the answer deciding it is
    /// back, not once the batch's slowest is. Under the pet cap, whose admissions go batch by
    /// batch, or once stopped, the answers decide a second batch.
    pub fn send_all_then(
        &self,
        rule_id: &str,
        specs: &[RequestSpec],
        priority: Priority,
        then: &dyn Fn(usize, &Exchange) -> Vec<RequestSpec>,
    ) -> (Vec<Exchange>, Vec<(RequestSpec, Exchange)>) {
        let second = |exchanges: &[Exchange], firsts: &[usize]| {
            let next: Vec<RequestSpec> = firsts
                .iter()
                .flat_map(|&n| then(n, &exchanges[n]))
                .collect();
            let answers = self.send_all(rule_id, &next, false, priority);
            next.into_iter().zip(answers).collect::<Vec<_>>()
        };
        if self.pet_cap.max().is_some() || self.stops.reason().is_some() {
            let exchanges = self.send_all(rule_id, specs, false, priority);
            let after = second(&exchanges, &(0..specs.len()).collect::<Vec<_>>());
            return (exchanges, after);
        }
        let record = |n: usize, exchange| self.record(rule_id, &specs[n], exchange);
        let record_then = |spec: &RequestSpec, exchange| self.record(rule_id, spec, exchange);
        let sent = self
            .client
            .send_all_then(specs, priority, &record, then, &record_then);
        let (mut exchanges, after): (Vec<Exchange>, Vec<_>) = sent.into_iter().unzip();
        let mut after: Vec<(RequestSpec, Exchange)> = after.into_iter().flatten().collect();
        if self.stops.reason().is_some() {
            return (exchanges, after);
        }
        // The repeatable ones the transport cut go again, as in `send_all`; a first sent
        // again decides its own.
        let again = self.sent_again(specs, &mut exchanges, &|resent| {
            self.send_all(rule_id, resent, false, priority)
        });
        after.extend(second(&exchanges, &again));
        let (next, mut answers): (Vec<RequestSpec>, Vec<Exchange>) = after.into_iter().unzip();
        self.sent_again(&next, &mut answers, &|resent| {
            let record = |n: usize, exchange| self.record(rule_id, &resent[n], exchange);
            self.client.send_all_each(resent, priority, &record)
        });
        (exchanges, next.into_iter().zip(answers).collect())
    }

    /// Exchanges sent before the rules (the preflight), through the recorder all the same.
    pub fn record_all(&self, origin: &str, answers: &[(RequestSpec, Exchange)]) {
        for (spec, exchange) in answers {
            self.record(origin, spec, exchange.clone());
        }
    }

    /// Whether `spec` may go out under the pet cap (a createPet takes a place until recorded).
    fn admitted(&self, spec: &RequestSpec, priority: Priority) -> bool {
        !creates(spec)
            || self.pet_cap.admit(
                &|| self.fixtures.created.count(),
                priority == Priority::First,
            )
    }

    fn cap_reason(&self) -> String {
        format!(
            "not sent: the run created the {} pets --max-pets allows under its time budget",
            self.pet_cap.max().unwrap_or_default()
        )
    }

    /// Whether the run may create no more pets: the cap once held a createPet back, or the
    /// pets created and in flight fill it. Once held back stays so: refused creates create
    /// nothing, so places free up again and a search would go on drawing cases the cap refuses.
    pub fn out_of_pets(&self) -> bool {
        self.pet_cap.reached() || self.pet_cap.full(&|| self.fixtures.created.count())
    }

    /// The recorder: every exchange of the rules passes here once. A createPet's place under
    /// the cap is given back once its pet, if any, is counted.
    fn record(&self, rule_id: &str, spec: &RequestSpec, exchange: Exchange) -> Exchange {
        let exchange = self.recorded(rule_id, spec, exchange);
        if creates(spec) {
            self.pet_cap.release();
        }
        exchange
    }

    fn recorded(&self, rule_id: &str, spec: &RequestSpec, mut exchange: Exchange) -> Exchange {
        if self.stops.interrupted() && exchange.response.is_none() {
            return exchange; // cut off by the interrupt: says nothing about the target
        }
        if let Some(pause) = self.stops.observe(&exchange) {
            self.client.pause(pause);
        }
        // Everything that watches the exchanges reads them here: the oracles, the created
        // pets, the side files (see `events`).
        self.events.emit(&Event::ExchangeRecorded(&Recorded::new(
            rule_id,
            spec,
            &exchange,
            &self.contract,
            &self.client,
        )));
        // Written where every byte kept is: the rules hold what reports show.
        exchange.keep_shown();
        exchange
    }

    /// The seed of one rule: from the run seed and the rule id only.
    pub fn rule_seed(&self, rule_id: &str) -> u64 {
        crate::seed::rule_seed(self.seed, rule_id)
    }

    /// Saved counterexamples of a rule, replayed before its generated cases.
    pub fn regressions_for(&self, rule_id: &str) -> Vec<Value> {
        self.regressions.get(rule_id).cloned().unwrap_or_default()
    }

    /// A pet name with the run's prefix.
    pub fn pet_name(&self, tag: &str) -> String {
        format!("{}{tag}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_creates_leave_the_caps_last_places_to_the_fixtures() {
        let cap = PetCap::new(Some(5));
        let created = || 0;
        let rules = (0..5).filter(|_| cap.admit(&created, false)).count();
        assert_eq!(rules as u64, 5 - FIXTURE_PETS);
        assert!(cap.reached() && cap.full(&created));
        assert!(cap.admit(&created, true), "a fixture's create goes");
        assert!(cap.admit(&created, true));
        assert!(!cap.admit(&created, true), "never past the cap");
        assert_eq!(cap.in_flight.load(Ordering::SeqCst), 5);
    }
}
