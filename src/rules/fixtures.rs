//! What rules need to find on the target before they can decide: a pet that exists, a store
//! with more than 100 pets of every status. Built once per run, on first use, by creating
//! pets named with the run's prefix (none when the store already holds enough). Every pet the
//! run creates is streamed to a file as it is created (not kept in memory: a night-long run
//! creates millions), and counted.
//!
//! On a crowded store (a first page of 100 pets or more), listPets cannot show that a refused
//! body was not stored: the contract states no order, so it could sit past any page. Where the
//! store's ids are sequential, the newest id before the refused request is found with getPet
//! (no pet created for it), and getPet on the ids after it, up to a run of unused ids, finds a
//! stored pet by its unique name ([`Watch`]).

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

    fn record(&self, pet: CreatedPet, exchange: &Exchange) {
        self.count.fetch_add(1, Ordering::Relaxed);
        if let Some(sink) = &self.sink
            && let Ok(line) = serde_json::to_string(&pet)
        {
            let line = match &self.redactor {
                Some(redactor) => redactor.redact(&line),
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

/// Where a crowded store with sequential ids puts its next pet: past `id`, going `step` (+1 or
/// -1). `id` was given before any refused request of the run was sent.
#[derive(Debug, Clone, Copy)]
struct Frontier {
    id: i64,
    step: i64,
}

#[derive(Default)]
pub struct Fixtures {
    pub created: CreatedPets,
    population: Mutex<Option<Result<Population, String>>>,
    existing: Mutex<Option<Result<Value, String>>>,
    /// The ids of the first `GET /pets?limit=100` of the run, before the run filled the
    /// store; `None` until asked, `Some(None)` when the listing did not answer.
    first_page: Mutex<Option<Option<Vec<i64>>>>,
    /// On a crowded store: where its ids grow, found once, before any refused request.
    frontiers: Mutex<Option<Result<Vec<Frontier>, Verdict>>>,
    /// Each status's first page, asked before any rule of the run stores a pet with a
    /// status: where an empty result shows (list-pets/status/empty-is-array).
    first_status_pages: Mutex<Option<Vec<Exchange>>>,
}

impl Fixtures {
    pub fn new(created: CreatedPets) -> Fixtures {
        Fixtures {
            created,
            ..Fixtures::default()
        }
    }

    /// Each status's first page (`status_pages`) as the store was before the run stored a pet
    /// with a status: the first rule to ask sends them, a rule about to store such pets asks
    /// first (it waits at most for the answers in flight).
    pub fn first_status_pages(&self, ctx: &RuleCtx) -> Vec<Exchange> {
        let mut slot = self
            .first_status_pages
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| {
            ctx.send_all(&status_pages())
                .iter()
                .map(Exchange::evidence)
                .collect()
        })
        .clone()
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
            // A crowded store holds pets enough: one of them is read, none created.
            *slot = Some(if ctx.run.read_only || self.crowded(ctx) {
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

    /// The ids of the store's first page before the run filled it (at most 100), once per
    /// run; `None` when the listing got no usable answer.
    fn first_page(&self, ctx: &RuleCtx) -> Option<Vec<i64>> {
        let mut slot = self.first_page.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| {
            let listing = ctx.send(&RequestSpec::get("/pets").query("limit", "100"));
            match listing.json() {
                Some(Value::Array(pets)) if listing.status() == Some(200) => Some(
                    pets.iter()
                        .filter_map(|pet| pet.get("id").and_then(Value::as_i64))
                        .collect(),
                ),
                _ => None,
            }
        })
        .clone()
    }

    /// Whether the store showed a full first page before the run created anything.
    pub fn crowded(&self, ctx: &RuleCtx) -> bool {
        self.first_page(ctx).is_some_and(|ids| ids.len() >= 100)
    }

    /// Where the crowded store's ids grow now: found once per run (see [`frontiers`]), then
    /// moved past the ids given since (by the run, or by other clients of a shared store), so
    /// that a rule reads only what was given after it started.
    fn frontiers(&self, ctx: &RuleCtx) -> Result<Vec<Frontier>, Verdict> {
        let mut slot = self.frontiers.lock().unwrap_or_else(|e| e.into_inner());
        let found = slot
            .get_or_insert_with(|| frontiers(ctx, &self.first_page(ctx).unwrap_or_default()))
            .clone();
        let moved = found.and_then(|frontiers| {
            frontiers
                .into_iter()
                .map(|frontier| {
                    walk(ctx, &[], frontier, MAX_CATCH_UP).map(|id| Frontier { id, ..frontier })
                })
                .collect::<Result<Vec<_>, _>>()
        });
        if moved.is_ok() {
            *slot = Some(moved.clone());
        }
        moved
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
    let exchange = ctx.send(&create_request(ctx, name, status));
    if exchange.cut_by_transport() {
        // The answer naming the pet was cut; the pet may be stored all the same. A fixture
        // only needs a pet, so one more is created rather than the rules left without.
        return created(&ctx.send(&create_request(ctx, name, status)));
    }
    created(&exchange)
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

/// The ids and statuses of the pets a listing shows.
fn collect(
    exchange: &Exchange,
    known: &mut BTreeSet<i64>,
    statuses: &mut BTreeSet<Option<String>>,
) {
    if let (Some(200), Some(Value::Array(pets))) = (exchange.status(), exchange.json()) {
        for pet in pets {
            if let Some(id) = pet.get("id").and_then(Value::as_i64) {
                known.insert(id);
                statuses.insert(pet.get("status").and_then(Value::as_str).map(String::from));
            }
        }
    }
}

/// The first page (100 pets) of each status, one listPets each.
fn status_pages() -> Vec<RequestSpec> {
    PET_STATUSES
        .iter()
        .map(|status| {
            RequestSpec::get("/pets")
                .query("status", *status)
                .query("limit", "100")
        })
        .collect()
}

fn populate(ctx: &RuleCtx) -> Result<Population, String> {
    let mut known: BTreeSet<i64> = BTreeSet::new();
    let mut seen: BTreeSet<Option<String>> = BTreeSet::new();
    let listing = ctx.send(&RequestSpec::get("/pets").query("limit", "100"));
    collect(&listing, &mut known, &mut seen);
    if known.len() >= 100 {
        // A full first page: each status's own first page shows whether more than 100 pets
        // are listable, and of which statuses, so a crowded store needs no page-filling pets.
        let specs = status_pages();
        for exchange in ctx.send_all(&specs) {
            collect(&exchange, &mut known, &mut seen);
        }
    }
    if ctx.run.read_only {
        // Nothing is created: the rules see the store as it is.
        return Ok(Population {
            known_pets: known.len(),
        });
    }
    // A few pets of every status not seen listed (and some without one, unless seen), then
    // enough to pass 100.
    let all: Vec<Option<&str>> = PET_STATUSES
        .iter()
        .map(|s| Some(*s))
        .chain([None])
        .collect();
    let missing: Vec<Option<&str>> = all
        .iter()
        .copied()
        .filter(|status| !seen.contains(&status.map(String::from)))
        .collect();
    let statuses = if missing.is_empty() {
        all
    } else {
        missing.clone()
    };
    let few = 3 * missing.len();
    let mut made = 0usize;
    while made < few || known.len() < POPULATION_TARGET {
        // In batches sent at once: a remote store answers a batch in one round trip.
        let wanted = few
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
            if exchange.cut_by_transport() {
                continue; // whether it was stored is unknown: the next batch makes up for it
            }
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

/// Ids read at once, and the run of unused ids past which a sequential store has given none:
/// a stored pet sits within this many ids of the previous one.
const WINDOW: i64 = 64;

/// Ids a rule reads past a frontier at most; a store that gave more since is too busy to look.
const MAX_READ: usize = 1024;

/// Ids read at most to bring the run's frontier up to date before a refused request.
const MAX_CATCH_UP: usize = 8192;

/// What getPet of `id` shows: `Some(pet)` for a 200 with the pet of that id, `None` for a 404;
/// anything else (another body, another status, no answer) decides nothing.
fn fetched(id: i64, exchange: &Exchange) -> Result<Option<&Value>, Verdict> {
    let truncated = exchange.response.as_ref().is_some_and(|r| r.body_truncated);
    match (exchange.status(), exchange.json()) {
        (Some(200), Some(pet))
            if !truncated && pet.get("id").and_then(Value::as_i64) == Some(id) =>
        {
            Ok(Some(pet))
        }
        (Some(404), _) => Ok(None),
        _ => Err(Verdict::inconclusive(format!(
            "could not tell whether id {id} is given (where a pet stored from the refused body \
             would be): GET /pets/{id} answered {}",
            exchange.summary()
        ))),
    }
}

/// Whether a pet has `id`.
fn exists(ctx: &RuleCtx, id: i64) -> Result<bool, Verdict> {
    let exchange = ctx.send(&RequestSpec::get(format!("/pets/{id}")));
    fetched(id, &exchange).map(|pet| pet.is_some())
}

/// From a given id, the last given id going `step`: galloping, then bisecting, then looking a
/// few windows further in case a run of unused ids hid the end.
fn frontier_from(ctx: &RuleCtx, start: i64, step: i64) -> Result<i64, Verdict> {
    let mut given = start;
    for _ in 0..4 {
        let mut stride: i64 = 1;
        let mut unused = None;
        while let Some(probe) = given.checked_add(step.saturating_mul(stride)) {
            if exists(ctx, probe)? {
                given = probe;
                stride = stride.saturating_mul(2);
            } else {
                unused = Some(probe);
                break;
            }
        }
        if let Some(mut unused) = unused {
            while (i128::from(unused) - i128::from(given)).abs() > 1 {
                let middle = ((i128::from(given) + i128::from(unused)) / 2) as i64;
                if exists(ctx, middle)? {
                    given = middle;
                } else {
                    unused = middle;
                }
            }
        }
        let mut further = None;
        for power in 0..12 {
            let Some(probe) = given.checked_add(step.saturating_mul(WINDOW << power)) else {
                break;
            };
            if exists(ctx, probe)? {
                further = Some(probe);
                break;
            }
        }
        match further {
            Some(probe) => given = probe,
            None => break,
        }
    }
    Ok(given)
}

/// How many of the [`WINDOW`] ids up to `frontier` (coming from the other side) are given: a
/// sequential store gives nearly all of them.
fn given_before(ctx: &RuleCtx, frontier: Frontier) -> Result<i64, Verdict> {
    let ids: Vec<i64> = (0..WINDOW)
        .filter_map(|n| frontier.id.checked_sub(frontier.step * n))
        .collect();
    let specs: Vec<RequestSpec> = ids
        .iter()
        .map(|id| RequestSpec::get(format!("/pets/{id}")))
        .collect();
    let mut given = 0;
    for (id, exchange) in ids.iter().zip(ctx.send_all(&specs)) {
        if fetched(*id, &exchange)?.is_some() {
            given += 1;
        }
    }
    Ok(given)
}

/// Where a crowded store's ids grow: from the highest and the lowest id of its first page, the
/// last given id each way, kept where nearly every id before it is given (sequential ids). An
/// end at -1, 0 or 1 is where the ids started, when the other end is sequential too.
fn frontiers(ctx: &RuleCtx, listed: &[i64]) -> Result<Vec<Frontier>, Verdict> {
    let (Some(&high), Some(&low)) = (listed.iter().max(), listed.iter().min()) else {
        return Err(Verdict::inconclusive(
            "the store's first page could not be read",
        ));
    };
    let mut sequential = Vec::new();
    let mut seen = Vec::new();
    for (start, step) in [(high, 1), (low, -1)] {
        let frontier = Frontier {
            id: frontier_from(ctx, start, step)?,
            step,
        };
        let given = given_before(ctx, frontier)?;
        seen.push(format!("{given} of the {WINDOW} ids up to {}", frontier.id));
        if given * 4 >= WINDOW * 3 {
            sequential.push(frontier);
        }
    }
    if sequential.len() > 1 {
        sequential.retain(|frontier| frontier.id.unsigned_abs() > 1);
    }
    if sequential.is_empty() {
        return Err(Verdict::not_decidable(format!(
            "the store lists 100 pets or more, and its ids are not sequential ({} are given): \
             listPets states no order and no operation finds a pet by name, so a pet stored \
             from the refused body cannot be looked for",
            seen.join("; ")
        )));
    }
    Ok(sequential)
}

/// Whether a listed or fetched pet was made from one of the refused bodies.
fn made_from<'m>(pet: &Value, markers: &'m [Marker]) -> Option<&'m Marker> {
    markers.iter().find(|marker| {
        let name_matches = marker.name.is_some()
            && pet.get("name").and_then(Value::as_str) == marker.name.as_deref();
        let category_matches = marker.category_id.is_some()
            && pet.get("categoryId").and_then(Value::as_i64) == marker.category_id;
        name_matches || category_matches
    })
}

/// Watches the store around refused requests: started before they are sent, it says after
/// them whether one was stored anyway.
pub struct Watch {
    /// On a store crowded before the run: where its ids grow (or why that is not known).
    frontiers: Option<Result<Vec<Frontier>, Verdict>>,
}

impl Watch {
    /// Call before sending the refused requests.
    pub fn start(ctx: &RuleCtx) -> Watch {
        let crowded = !ctx.run.read_only && ctx.run.fixtures.crowded(ctx);
        Watch {
            frontiers: crowded.then(|| ctx.run.fixtures.frontiers(ctx)),
        }
    }

    /// Passes when no pet carries the marker; fails when one does.
    pub fn assert_not_stored(&self, ctx: &RuleCtx, marker: &Marker) -> Checked {
        self.assert_none_stored(ctx, std::slice::from_ref(marker))
    }

    /// [`Watch::assert_not_stored`] for several refused requests at once. On a store that
    /// shows all its pets in one listing, that listing decides; on a crowded one with
    /// sequential ids, the ids given since the watch started.
    pub fn assert_none_stored(&self, ctx: &RuleCtx, markers: &[Marker]) -> Checked {
        let exchange = ctx.send(&RequestSpec::get("/pets").query("limit", "100"));
        super::expect::response(&exchange)?; // a cut listing shows nothing absent
        super::expect::truncated(&exchange)?;
        let Some(Value::Array(pets)) = exchange.json().filter(|_| exchange.status() == Some(200))
        else {
            return Err(Verdict::inconclusive(format!(
                "could not list pets to see that nothing was stored: GET /pets answered {}",
                exchange.summary()
            )));
        };
        if let Some(pet) = pets.iter().find(|pet| made_from(pet, markers).is_some()) {
            return Err(Verdict::failed(
                "the refused request stores no pet",
                format!("GET /pets lists a pet made from the refused body: {pet}"),
                &exchange,
            ));
        }
        if pets.len() < 100 {
            return Ok(());
        }
        match &self.frontiers {
            Some(Ok(frontiers)) => {
                for frontier in frontiers {
                    past(ctx, markers, *frontier)?;
                }
                Ok(())
            }
            Some(Err(verdict)) => Err(verdict.clone()),
            None => Err(Verdict::inconclusive(
                "the refused request was answered as expected, but the store filled to 100 \
                 pets or more while the rule ran, so a stored pet could sit beyond the first \
                 page of GET /pets",
            )),
        }
    }
}

/// Reads the ids given past the frontier, a window at a time, until a whole window is unused:
/// a pet stored from a refused body got one of them, the store's ids being sequential. The
/// run's own pets are known to be given and are not read.
fn past(ctx: &RuleCtx, markers: &[Marker], frontier: Frontier) -> Checked {
    walk(ctx, markers, frontier, MAX_READ).map(|_| ())
}

/// Walks the ids past `frontier` a window at a time until a whole window is unused; fails on a
/// pet made from one of `markers`. Returns the last given id: the store's frontier now.
fn walk(
    ctx: &RuleCtx,
    markers: &[Marker],
    frontier: Frontier,
    max_read: usize,
) -> Result<i64, Verdict> {
    let created = &ctx.run.fixtures.created;
    let mut last_given = frontier.id;
    let mut read = 0usize;
    loop {
        let window: Vec<i64> = (1..=WINDOW)
            .filter_map(|n| last_given.checked_add(frontier.step * n))
            .collect();
        if window.is_empty() {
            return Ok(last_given); // the end of int64: no id left to give
        }
        let before_window = last_given;
        let unknown: Vec<i64> = window
            .iter()
            .copied()
            .filter(|id| !created.knows(*id))
            .collect();
        if let Some(&own) = window.iter().rev().find(|id| created.knows(**id)) {
            last_given = own;
        }
        read += unknown.len();
        if read > max_read {
            return Err(Verdict::not_decidable(format!(
                "the store lists 100 pets or more, and gave more than {max_read} ids past {} \
                 while the rule ran: listPets states no order, so a pet stored from the refused \
                 body cannot be looked for",
                frontier.id
            )));
        }
        let specs: Vec<RequestSpec> = unknown
            .iter()
            .map(|id| RequestSpec::get(format!("/pets/{id}")))
            .collect();
        for (id, exchange) in unknown.iter().zip(ctx.send_all(&specs)) {
            let Some(pet) = fetched(*id, &exchange)? else {
                continue; // unused
            };
            if made_from(pet, markers).is_some() {
                return Err(Verdict::failed(
                    "the refused request stores no pet",
                    format!(
                        "GET /pets/{id}, an id given after {} (the store's newest id before the \
                         refused request), holds a pet made from the refused body: {pet}",
                        frontier.id
                    ),
                    &exchange,
                ));
            }
            let beyond = (i128::from(*id) - i128::from(last_given)) * i128::from(frontier.step);
            if beyond > 0 {
                last_given = *id;
            }
        }
        if last_given == before_window {
            return Ok(last_given); // a whole window unused: no id given past these yet
        }
    }
}

/// Where `wanted` pets created now can all be seen in one listing: the whole store's first
/// page (`None`) if it has room for them, else the least crowded status's. Not decidable when
/// every status already fills a page: listPets states no order.
pub fn listing_room(ctx: &RuleCtx, wanted: usize) -> Result<Option<&'static str>, Verdict> {
    let count = |exchange: &Exchange| -> Result<usize, Verdict> {
        super::expect::listing(exchange).map(Vec::len)
    };
    let whole = count(&ctx.send(&RequestSpec::get("/pets").query("limit", "100")))?;
    if whole + wanted < 100 {
        return Ok(None);
    }
    let specs = status_pages();
    let mut counts = Vec::new();
    for (status, exchange) in PET_STATUSES.iter().zip(ctx.send_all(&specs)) {
        counts.push((count(&exchange)?, *status));
    }
    match counts.iter().min() {
        Some((listed, status)) if listed + wanted < 100 => Ok(Some(status)),
        _ => Err(Verdict::not_decidable(format!(
            "no listing has room to show {wanted} pets created now: of the 100 places of a \
             page, {whole} are taken in all and, by status, {}; listPets states no order, so a \
             created pet past the first 100 that match cannot be shown listed",
            counts
                .iter()
                .map(|(listed, status)| format!("{status} {listed}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
