//! What rules need to find on the target before they can decide: a pet that exists, a store
//! with more than 100 pets of every status. Built once per run, on first use, by creating
//! pets named with the run's prefix. Every pet the run creates is streamed to a file as it is
//! created (not kept in memory: a night-long run creates millions), and counted.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Checked, RuleCtx, Verdict};
use crate::contract::PET_STATUSES;
pub use crate::generation::Marker;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::Exchange;

/// A pet this run created, so that it can be found again.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CreatedPet {
    pub id: i64,
    pub name: String,
    pub rule: String,
}

/// How many pets the harness knows the store holds, at least.
#[derive(Debug, Clone, Copy)]
pub struct Population {
    pub known_pets: usize,
}

/// Pets needed to tell "limit=100 returns exactly 100" from "returns what there is".
pub const POPULATION_TARGET: usize = 101;

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
    by_id: Mutex<BTreeMap<i64, CreatedPet>>,
    /// The first id given to two pets: the earlier pet, the later one, and the answer that
    /// gave it again.
    duplicate: Mutex<Option<Duplicate>>,
    sink: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
}

impl CreatedPets {
    /// Streams every created pet, one JSON line each, to `file`.
    pub fn streamed_to(file: std::fs::File) -> CreatedPets {
        CreatedPets {
            sink: Some(Mutex::new(std::io::BufWriter::new(file))),
            ..CreatedPets::default()
        }
    }

    fn record(&self, pet: CreatedPet, exchange: &Exchange) {
        self.count.fetch_add(1, Ordering::Relaxed);
        if let Some(sink) = &self.sink
            && let Ok(line) = serde_json::to_string(&pet)
        {
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

#[derive(Default)]
pub struct Fixtures {
    pub created: CreatedPets,
    population: Mutex<Option<Result<Population, String>>>,
    existing: Mutex<Option<Result<Value, String>>>,
}

impl Fixtures {
    pub fn new(created: CreatedPets) -> Fixtures {
        Fixtures {
            created,
            ..Fixtures::default()
        }
    }

    /// Records a pet the target says it created (any 2xx to POST /pets with an id).
    pub fn record_created(&self, rule: &str, pet: &Value, exchange: &Exchange) {
        let (Some(id), Some(name)) = (
            pet.get("id").and_then(Value::as_i64),
            pet.get("name").and_then(Value::as_str),
        ) else {
            return;
        };
        self.created.record(
            CreatedPet {
                id,
                name: name.to_string(),
                rule: rule.to_string(),
            },
            exchange,
        );
    }

    /// A pet that exists on the target, created once for the run.
    pub fn existing_pet(&self, ctx: &RuleCtx) -> Result<Value, Verdict> {
        let mut slot = self.existing.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(if ctx.run.read_only {
                first_listed(ctx)
            } else {
                let name = ctx.run.pet_name("fixture-existing");
                create(ctx, &name, Some("available"))
            });
        }
        slot.clone()
            .unwrap_or_else(|| Err("no fixture".into()))
            .map_err(Verdict::inconclusive)
    }

    /// Makes sure the store holds more than 100 pets, some of every status, and says how many
    /// the harness knows of. Pets seen in a listing count, so a full staging store needs few.
    pub fn population(&self, ctx: &RuleCtx) -> Result<Population, Verdict> {
        let mut slot = self.population.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(populate(ctx));
        }
        slot.clone()
            .unwrap_or_else(|| Err("no population".into()))
            .map_err(Verdict::inconclusive)
    }
}

/// Pets the population fixture creates at once.
const POPULATION_BATCH: usize = 16;

fn create_request(ctx: &RuleCtx, name: &str, status: Option<&str>) -> RequestSpec {
    let mut pet = json!({"name": name, "categoryId": ctx.run.categories.accepted(1)});
    if let Some(status) = status {
        pet["status"] = json!(status);
    }
    RequestSpec::post("/pets", Body::Json(pet))
}

/// The pet a createPet answer says it created, or why the rule cannot have it.
fn created(exchange: &Exchange) -> Result<Value, String> {
    match (exchange.status(), exchange.json()) {
        (Some(200..=299), Some(pet)) if pet.get("id").and_then(Value::as_i64).is_some() => {
            Ok(pet.clone())
        }
        _ => Err(format!(
            "could not create the pet this rule needs: POST /pets answered {}",
            exchange.summary()
        )),
    }
}

fn created_id(exchange: &Exchange) -> Result<i64, String> {
    created(exchange).map(|pet| pet.get("id").and_then(Value::as_i64).unwrap_or_default())
}

fn create(ctx: &RuleCtx, name: &str, status: Option<&str>) -> Result<Value, String> {
    created(&ctx.send(&create_request(ctx, name, status)))
}

/// Under the read-only profile: a pet the store already holds.
fn first_listed(ctx: &RuleCtx) -> Result<Value, String> {
    let listing = ctx.send(&RequestSpec::get("/pets").query("limit", "1"));
    match listing
        .json()
        .and_then(Value::as_array)
        .and_then(|pets| pets.first())
    {
        Some(pet) if pet.get("id").and_then(Value::as_i64).is_some() => Ok(pet.clone()),
        _ => Err(format!(
            "read-only profile: the store lists no pet to use ({})",
            listing.summary()
        )),
    }
}

fn populate(ctx: &RuleCtx) -> Result<Population, String> {
    let mut known: BTreeSet<i64> = BTreeSet::new();
    let listing = ctx.send(&RequestSpec::get("/pets").query("limit", "100"));
    if let Some(Value::Array(pets)) = listing.json() {
        known.extend(pets.iter().filter_map(|pet| pet.get("id")?.as_i64()));
    }
    if ctx.run.read_only {
        // Nothing is created: the rules see the store as it is.
        return Ok(Population {
            known_pets: known.len(),
        });
    }
    // A few pets of every status (and some without one), then enough to pass 100.
    let statuses: Vec<Option<&str>> = PET_STATUSES
        .iter()
        .map(|s| Some(*s))
        .chain([None])
        .collect();
    let mut made = 0usize;
    while made < 3 * statuses.len() || known.len() < POPULATION_TARGET {
        // In batches sent at once: a remote store answers a batch in one round trip.
        let wanted = (3 * statuses.len())
            .saturating_sub(made)
            .max(POPULATION_TARGET.saturating_sub(known.len()))
            .min(POPULATION_BATCH);
        let specs: Vec<RequestSpec> = (made..made + wanted)
            .map(|n| {
                let name = ctx.run.pet_name(&format!("fixture-population-{n}"));
                create_request(ctx, &name, statuses[n % statuses.len()])
            })
            .collect();
        for exchange in ctx.send_all(&specs) {
            known.insert(created_id(&exchange)?);
        }
        made += wanted;
        if made > 2 * POPULATION_TARGET + 12 {
            return Err(format!(
                "created {made} pets but know of only {} distinct ids",
                known.len()
            ));
        }
    }
    Ok(Population {
        known_pets: known.len(),
    })
}

/// Passes when no pet in the listing carries the marker and the listing shows the whole store;
/// fails when one does; is inconclusive when the store is larger than one page.
pub fn assert_not_stored(ctx: &RuleCtx, marker: &Marker) -> Checked {
    assert_none_stored(ctx, std::slice::from_ref(marker))
}

/// [`assert_not_stored`] for several refused requests at once, in one listing.
pub fn assert_none_stored(ctx: &RuleCtx, markers: &[Marker]) -> Checked {
    let exchange = ctx.send(&RequestSpec::get("/pets").query("limit", "100"));
    super::expect::truncated(&exchange)?;
    let Some(Value::Array(pets)) = exchange.json().filter(|_| exchange.status() == Some(200))
    else {
        return Err(Verdict::inconclusive(format!(
            "could not list pets to see that nothing was stored: GET /pets answered {}",
            exchange.summary()
        )));
    };
    let found = pets.iter().find(|pet| {
        markers.iter().any(|marker| {
            let name_matches = marker.name.is_some()
                && pet.get("name").and_then(Value::as_str) == marker.name.as_deref();
            let category_matches = marker.category_id.is_some()
                && pet.get("categoryId").and_then(Value::as_i64) == marker.category_id;
            name_matches || category_matches
        })
    });
    if let Some(pet) = found {
        return Err(Verdict::failed(
            "the refused request stores no pet",
            format!("GET /pets lists a pet made from the refused body: {pet}"),
            &exchange,
        ));
    }
    if pets.len() >= 100 {
        return Err(Verdict::inconclusive(
            "the refused request was answered as expected, but the store holds at least 100 \
             pets, so a stored pet could sit beyond the first page of GET /pets",
        ));
    }
    Ok(())
}
