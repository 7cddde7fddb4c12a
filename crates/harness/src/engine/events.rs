//! The run's one event stream. What happens in a run is told as typed events (an exchange
//! recorded, a rule judged, the run finished) to every subscriber, in the order they
//! subscribed: the oracles, the store setup's record of created pets, the request log, the
//! HAR, the progress display with its live failure lines and the runner's results each read
//! the events they care for. Adding a side file or a live view is one subscriber; no rule and
//! no engine file changes for it.
//!
//! The recorder (`Run::send`) keeps only what decides the sending itself (the
//! stops, the pet cap); everything that watches the exchanges is here.

use std::cell::OnceCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use crate::catalogue::Rule;
use crate::contract::{Contract, Operation};
use crate::execution::Client;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Exchange, Verdict};

/// One thing that happened in a run.
pub enum Event<'a> {
    /// An exchange passed the recorder: sent and answered, cut, or unanswered (one held back
    /// by the run never passes it).
    ExchangeRecorded(&'a Recorded<'a>),
    /// A rule was judged.
    VerdictReached(&'a Judged<'a>),
    /// Every selected rule was judged, or the run stopped: what is written is finished.
    RunFinished,
}

/// An exchange as the recorder saw it, with what it was sent for.
pub struct Recorded<'a> {
    /// The rule that sent it (or `preflight`).
    pub origin: &'a str,
    pub spec: &'a RequestSpec,
    pub operation: Option<Operation>,
    /// As recorded: a large body's start, not every byte.
    pub exchange: &'a Exchange,
    /// The contract the exchange is read against.
    pub contract: &'a Contract,
    client: &'a Client,
    whole: OnceCell<Option<Exchange>>,
}

impl<'a> Recorded<'a> {
    pub fn new(
        origin: &'a str,
        spec: &'a RequestSpec,
        exchange: &'a Exchange,
        contract: &'a Contract,
        client: &'a Client,
    ) -> Recorded<'a> {
        Recorded {
            origin,
            spec,
            operation: Operation::of(spec.method, &spec.path),
            exchange,
            contract,
            client,
            whole: OnceCell::new(),
        }
    }

    /// The exchange with every byte of its request body, redacted, where the recorded one kept
    /// only a large body's start; made once, for the first subscriber that asks.
    pub fn whole(&self) -> &Exchange {
        self.whole
            .get_or_init(|| {
                self.exchange.request.body_length?;
                let mut whole = self.exchange.clone();
                let body = self.client.whole_request_body(self.spec);
                whole.request.body_escaped = body.as_ref().is_some_and(|(_, escaped)| *escaped);
                whole.request.body = body.map(|(text, _)| text);
                whole.request.body_length = None;
                Some(whole)
            })
            .as_ref()
            .unwrap_or(self.exchange)
    }

    /// For a padded body whose start alone was kept: the spaces past that start (a rung is up to
    /// 16 MiB of them), for a subscriber that writes them as it goes rather than holding them.
    pub fn padding_past_kept(&self) -> Option<usize> {
        match (&self.spec.body, &self.exchange.request.body) {
            (Body::Padded { length, .. }, Some(kept))
                if self.exchange.request.body_length.is_some() =>
            {
                Some(length.saturating_sub(kept.len()))
            }
            _ => None,
        }
    }

    /// The pet the target says this exchange created: a createPet answered 2xx, whole, with a
    /// JSON body.
    pub fn created_pet(&self) -> Option<&serde_json::Value> {
        let exchange = self.exchange;
        if self.operation != Some(Operation::CreatePet) || exchange.cut_by_transport() {
            return None;
        }
        match exchange.status() {
            Some(200..=299) => exchange.json(),
            _ => None,
        }
    }

    /// The redactor every byte a subscriber writes passes.
    pub fn redactor(&self) -> &crate::execution::Redactor {
        self.client.redactor()
    }

    /// The target's base address, as the client sends to it.
    pub fn base_url(&self) -> &str {
        self.client.base_url()
    }
}

/// A rule judged, and what judging it took.
#[derive(Debug, Clone)]
pub struct Judgement {
    pub verdict: Verdict,
    pub cases_run: u32,
    pub round_trips: u32,
    /// Answers to this rule's requests the transport cut mid-body (not judged).
    pub transport_cuts: u32,
    pub duration_ms: u64,
}

/// A rule's judgement as the stream tells it: the rule, its place in the catalogue and how the
/// run's gate reads it.
pub struct Judged<'a> {
    /// The rule's index in the catalogue.
    pub index: usize,
    pub rule: &'a Rule,
    pub judgement: &'a Judgement,
    /// Whether a failure fails the run (its level under the gate, not a known failure).
    pub gated: bool,
    /// On the list of known failures (and not expired): shown, not counted.
    pub known: bool,
    /// The verdict's message as shown (after the note of an expired known failure).
    pub message: &'a str,
}

/// What reads the run's events. Called on the thread where the event happened, so a
/// subscriber is quick and locks only what it owns.
pub trait Subscriber: Send + Sync {
    fn on(&self, event: &Event<'_>);

    /// The side file this subscriber writes, once it exists (the report lists it beside the
    /// reports).
    fn writes(&self) -> Option<PathBuf> {
        None
    }
}

/// The subscribers of a run, and the count of exchanges that passed.
#[derive(Default)]
pub struct EventStream {
    subscribers: RwLock<Vec<Arc<dyn Subscriber>>>,
    exchanges: AtomicU64,
}

impl EventStream {
    /// Adds `subscriber`: it is told every event from now on, after the earlier subscribers.
    pub fn subscribe(&self, subscriber: Arc<dyn Subscriber>) {
        self.subscribers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(subscriber);
    }

    /// Removes `subscriber` (the same one [`EventStream::subscribe`] was given): it is told
    /// nothing more.
    pub fn unsubscribe(&self, subscriber: &Arc<dyn Subscriber>) {
        self.subscribers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|s| !Arc::ptr_eq(s, subscriber));
    }

    /// Tells every subscriber, in the order they subscribed.
    pub fn emit(&self, event: &Event<'_>) {
        if let Event::ExchangeRecorded(_) = event {
            self.exchanges.fetch_add(1, Ordering::Relaxed);
        }
        let subscribers = self.subscribers.read().unwrap_or_else(|e| e.into_inner());
        for subscriber in subscribers.iter() {
            subscriber.on(event);
        }
    }

    /// Exchanges recorded so far.
    pub fn exchanges(&self) -> u64 {
        self.exchanges.load(Ordering::Relaxed)
    }

    /// The side files the subscribers wrote.
    pub fn files_written(&self) -> Vec<PathBuf> {
        let subscribers = self.subscribers.read().unwrap_or_else(|e| e.into_inner());
        subscribers.iter().filter_map(|s| s.writes()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Heard(Mutex<Vec<&'static str>>, &'static str);

    impl Subscriber for Heard {
        fn on(&self, event: &Event<'_>) {
            if let Event::RunFinished = event {
                self.0.lock().unwrap().push(self.1);
            }
        }
    }

    #[test]
    fn every_subscriber_hears_every_event_in_the_order_it_subscribed() {
        let stream = EventStream::default();
        let log = Arc::new(Heard(Mutex::new(Vec::new()), "first"));
        stream.subscribe(log.clone());
        stream.emit(&Event::RunFinished);
        let second = Arc::new(Heard(Mutex::new(Vec::new()), "second"));
        stream.subscribe(second.clone());
        stream.emit(&Event::RunFinished);
        assert_eq!(*log.0.lock().unwrap(), ["first", "first"]);
        assert_eq!(*second.0.lock().unwrap(), ["second"]);
        let first: Arc<dyn Subscriber> = log.clone();
        stream.unsubscribe(&first);
        stream.emit(&Event::RunFinished);
        assert_eq!(*log.0.lock().unwrap(), ["first", "first"]);
        assert_eq!(*second.0.lock().unwrap(), ["second", "second"]);
        assert_eq!(stream.exchanges(), 0);
        assert!(stream.files_written().is_empty());
    }
}
