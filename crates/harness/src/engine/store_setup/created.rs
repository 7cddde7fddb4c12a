//! Every pet the run created: counted, streamed to `created-pets.jsonl`, remembered by id to
//! find one given twice; and a few of the Pets createPet answered, kept whole to be read back.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::outcome::Exchange;

/// A pet this run created, so that it can be found again.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CreatedPet {
    pub id: i64,
    pub name: String,
    pub rule: String,
}

/// Ids remembered to find one given twice: the first this many pets of a run (about 2 MB).
/// Past them the memory of a run stays flat, and a repeated id is found only among these.
pub const TRACKED_IDS: usize = 10_000;

/// Characters of a name kept with a remembered id (names may be 65536 characters long).
const TRACKED_NAME: usize = 80;

/// An id the target gave to two pets of the run.
#[derive(Debug, Clone)]
pub struct Duplicate {
    pub earlier: CreatedPet,
    pub later: CreatedPet,
    /// The createPet answer that gave the id the second time.
    pub exchange: Box<Exchange>,
}

/// Every pet the run created: counted, streamed to `created-pets.jsonl`, and the first
/// [`TRACKED_IDS`] remembered by id so that an id given twice is seen.
#[derive(Default)]
pub struct CreatedPets {
    count: AtomicU64,
    /// The id of the first pet recorded: beside the others, which way the store's ids grow.
    first: std::sync::OnceLock<i64>,
    by_id: Mutex<BTreeMap<i64, CreatedPet>>,
    /// The first id given to two pets: the earlier pet, the later one, and the answer that
    /// gave it again.
    duplicate: Mutex<Option<Duplicate>>,
    sink: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
    /// The names come from the target's answers, which may echo the key.
    redactor: Option<crate::execution::Redactor>,
}

impl CreatedPets {
    /// Streams every created pet, one JSON line each, to `file`.
    pub fn streamed_to(file: std::fs::File, redactor: crate::execution::Redactor) -> CreatedPets {
        CreatedPets {
            sink: Some(Mutex::new(std::io::BufWriter::new(file))),
            redactor: Some(redactor),
            ..CreatedPets::default()
        }
    }

    pub(super) fn record(&self, pet: CreatedPet, exchange: &Exchange) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let _ = self.first.set(pet.id);
        if let Some(sink) = &self.sink
            && let Ok(line) = serde_json::to_string(&pet)
        {
            let line = match &self.redactor {
                // The pet as the target answered it.
                Some(redactor) => redactor.redact_sent(&line),
                None => line,
            };
            let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(sink, "{line}");
        }
        let mut by_id = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
        let short = CreatedPet {
            name: pet.name.chars().take(TRACKED_NAME).collect(),
            ..pet
        };
        if let Some(earlier) = by_id.get(&short.id) {
            let mut duplicate = self.duplicate.lock().unwrap_or_else(|e| e.into_inner());
            duplicate.get_or_insert_with(|| Duplicate {
                earlier: earlier.clone(),
                later: short,
                exchange: Box::new(exchange.evidence()),
            });
        } else if by_id.len() < TRACKED_IDS {
            by_id.insert(short.id, short);
        }
    }

    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The run's pets (of the first [`TRACKED_IDS`]) whose ids are not in `known`.
    pub fn distinct_not_in(&self, known: &BTreeSet<i64>) -> usize {
        self.by_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .filter(|id| !known.contains(id))
            .count()
    }

    /// The id of the first pet the run recorded.
    pub(super) fn first_id(&self) -> Option<i64> {
        self.first.get().copied()
    }

    /// The ids of the run's own pets (the first [`TRACKED_IDS`]).
    pub(super) fn ids(&self) -> Vec<i64> {
        self.by_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .copied()
            .collect()
    }

    /// Whether `id` is one of the run's own pets (among the first [`TRACKED_IDS`]).
    pub fn knows(&self, id: i64) -> bool {
        self.by_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&id)
    }

    /// The first id the target gave to two pets of this run, if any.
    pub fn duplicate(&self) -> Option<Duplicate> {
        self.duplicate
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Writes out what is buffered, so the file holds whole lines of every pet so far.
    pub fn flush(&self) {
        if let Some(sink) = &self.sink {
            let _ = sink.lock().unwrap_or_else(|e| e.into_inner()).flush();
        }
    }
}

/// Pets createPet answered to create-pet/valid/created's generated NewPets, kept whole:
/// create-pet/valid/round-trip reads them back by id instead of storing pets of its own (the
/// contract has no delete). At most [`ANSWERED_PETS`], each at most [`ANSWERED_PET_BYTES`]
/// written out (a longer name's read-back is create-pet/sizes/name-ladder's).
#[derive(Default)]
pub struct AnsweredPets {
    pets: Mutex<Vec<Value>>,
}

/// Pets kept to be read back: a default run's valid/created answers about 45.
pub const ANSWERED_PETS: usize = 64;

/// The largest pet kept, written out.
const ANSWERED_PET_BYTES: usize = 4096;

impl AnsweredPets {
    /// Keeps `pet` (a Pet createPet answered with) while there is room.
    pub fn keep(&self, pet: &Value) {
        if serde_json::to_string(pet).map_or(true, |text| text.len() > ANSWERED_PET_BYTES) {
            return;
        }
        let mut pets = self.pets.lock().unwrap_or_else(|e| e.into_inner());
        if pets.len() < ANSWERED_PETS {
            pets.push(pet.clone());
        }
    }

    /// The pets kept so far, in the order they were answered.
    pub fn all(&self) -> Vec<Value> {
        self.pets.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answered_pets_are_bounded_in_number_and_size() {
        let kept = AnsweredPets::default();
        kept.keep(&serde_json::json!({"id": 1, "name": "x".repeat(ANSWERED_PET_BYTES)}));
        assert!(kept.all().is_empty(), "a pet over the size is not kept");
        for id in 0..ANSWERED_PETS + 5 {
            kept.keep(&serde_json::json!({"id": id, "name": "a"}));
        }
        let all = kept.all();
        assert_eq!(all.len(), ANSWERED_PETS);
        assert_eq!(all[0]["id"], 0, "in the order answered");
    }
}
