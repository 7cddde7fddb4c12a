//! The store setup against a fake store, without a run: what it sends, what it creates, and
//! what it leaves for the rules, on an empty store, a crowded one and under `--read-only`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::{CreatedPets, Fixtures, POPULATION_TARGET, StoreAccess};
use crate::contract::Contract;
use crate::engine::scheduler::Scheduler;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Exchange, RecordedRequest, RecordedResponse};

/// A Pet Store in memory: lists (newest last, at most `limit`, by status), creates, reads
/// one; every request it answers is kept, as `METHOD path?query`.
struct FakeStore {
    fixtures: Fixtures,
    contract: Contract,
    pets: Mutex<Vec<Value>>,
    next_id: AtomicI64,
    sent: Mutex<Vec<String>>,
    read_only: bool,
    /// No rule beside: the setup waits on none.
    scheduler: Scheduler,
}

impl FakeStore {
    fn holding(pets: usize, read_only: bool) -> FakeStore {
        FakeStore {
            fixtures: Fixtures::new(CreatedPets::default()),
            contract: Contract::load(None).unwrap(),
            pets: Mutex::new(
                (1..=pets as i64)
                    .map(|id| json!({"id": id, "name": format!("theirs-{id}"), "status": "sold"}))
                    .collect(),
            ),
            next_id: AtomicI64::new(pets as i64 + 1),
            sent: Mutex::new(Vec::new()),
            read_only,
            scheduler: Scheduler::default(),
        }
    }

    fn sent(&self, prefix: &str) -> usize {
        let sent = self.sent.lock().unwrap();
        sent.iter().filter(|line| line.starts_with(prefix)).count()
    }

    fn answer(&self, spec: &RequestSpec) -> (u16, Value) {
        let query = |name: &str| {
            spec.query
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        let mut pets = self.pets.lock().unwrap();
        match (spec.method, spec.path.as_str()) {
            ("GET", "/pets") => {
                let limit: usize = query("limit").map_or(20, |l| l.parse().unwrap());
                let status = query("status");
                let listed: Vec<Value> = pets
                    .iter()
                    .filter(|pet| status.as_deref().is_none_or(|s| pet["status"] == s))
                    .take(limit)
                    .cloned()
                    .collect();
                (200, Value::Array(listed))
            }
            ("POST", "/pets") => {
                let Body::Json(new_pet) = &spec.body else {
                    return (400, json!({"code": 400, "message": "not JSON"}));
                };
                let mut pet = new_pet.clone();
                pet["id"] = json!(self.next_id.fetch_add(1, Ordering::SeqCst));
                pets.push(pet.clone());
                (201, pet)
            }
            ("GET", path) => {
                let id: i64 = path.trim_start_matches("/pets/").parse().unwrap();
                match pets.iter().find(|pet| pet["id"] == id) {
                    Some(pet) => (200, pet.clone()),
                    None => (404, json!({"code": 404, "message": "no such pet"})),
                }
            }
            _ => (404, json!({"code": 404, "message": "no such operation"})),
        }
    }
}

impl StoreAccess for FakeStore {
    fn send(&self, spec: &RequestSpec) -> Exchange {
        let query: Vec<String> = spec.query.iter().map(|(n, v)| format!("{n}={v}")).collect();
        self.sent.lock().unwrap().push(format!(
            "{} {}?{}",
            spec.method,
            spec.path,
            query.join("&")
        ));
        let (status, body) = self.answer(spec);
        let exchange = Exchange {
            request: RecordedRequest {
                method: spec.method.into(),
                url: format!("http://store/v1{}", spec.path),
                headers: Vec::new(),
                body: None,
                body_length: None,
                key_channel: None,
                body_escaped: false,
            },
            response: Some(RecordedResponse {
                version: "HTTP/1.1".into(),
                status,
                headers: vec![("content-type".into(), "application/json".into())],
                body: body.to_string(),
                body_truncated: false,
                body_omitted: 0,
                json: Some(std::sync::Arc::new(body.clone())),
                json_error: None,
                duplicate_names: Vec::new(),
            }),
            transport_error: None,
            elapsed_ms: 0,
            throttled: None,
            retries: None,
        };
        // As the run's recorder would: the store setup learns of every pet created.
        if spec.method == "POST" && status == 201 {
            self.fixtures.record_created("fake", &body, &exchange);
        }
        exchange
    }

    fn send_all(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        specs.iter().map(|spec| self.send(spec)).collect()
    }

    fn building<T>(&self, build: impl FnOnce() -> T) -> T {
        build()
    }

    fn created_pets(&self) -> &CreatedPets {
        &self.fixtures.created
    }

    fn contract(&self) -> &Contract {
        &self.contract
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn pet_name(&self, tag: &str) -> String {
        format!("run-{tag}")
    }

    fn accepted_category(&self) -> i64 {
        1
    }

    fn fastest_answer(&self) -> Duration {
        Duration::from_millis(1)
    }

    fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    fn stopped(&self) -> bool {
        false
    }
}

#[test]
fn on_an_empty_store_the_population_creates_a_page_and_more_of_every_status() {
    let store = FakeStore::holding(0, false);
    let population = store.fixtures.population(&store).unwrap();
    assert!(population.known_pets >= POPULATION_TARGET, "{population:?}");
    let pets = store.pets.lock().unwrap().clone();
    assert_eq!(pets.len(), population.known_pets);
    for status in crate::contract::PET_STATUSES {
        assert!(pets.iter().any(|pet| pet["status"] == *status), "{status}");
    }
    assert!(
        pets.iter()
            .all(|pet| pet["name"].as_str().unwrap().starts_with("run-"))
    );
    // Built once: a second rule asking sends nothing more.
    let sent = store.sent("");
    store.fixtures.population(&store).unwrap();
    assert_eq!(store.sent(""), sent);
}

/// The few pets of every status go while a quiet-store rule is not judged (within the room it
/// leaves, which the rule's context counts); the rest of the page only once it is. Made after
/// it, the few had gone behind the main phase's creates, and the listing rules a round trip
/// late at 50 ms.
#[test]
fn the_population_makes_its_few_of_every_status_beside_the_quiet_store_and_the_page_after() {
    use crate::engine::scheduler::Phase;
    let store = FakeStore::holding(0, false);
    store
        .scheduler
        .select([Phase::QuietStore, Phase::Main], 1, 0);
    std::thread::scope(|scope| {
        let building = scope.spawn(|| store.fixtures.population(&store));
        let waited = std::time::Instant::now();
        while store.sent("POST") < 8 && waited.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let few = store.sent("POST");
        std::thread::sleep(Duration::from_millis(150));
        let before_judged = store.sent("POST");
        store.scheduler.quiet_rule_judged();
        let population = building.join().unwrap().unwrap();
        // A status not seen listed gets two, and so do pets without one.
        assert_eq!(few, 8, "the few, before the quiet store is judged");
        assert_eq!(before_judged, 8, "the page waits for the quiet-store rule");
        assert!(population.known_pets >= POPULATION_TARGET, "{population:?}");
    });
}

#[test]
fn a_crowded_store_lends_its_own_pet_and_nothing_is_created() {
    let store = FakeStore::holding(150, false);
    assert!(store.fixtures.crowded(&store));
    let pet = store.fixtures.existing_pet(&store).unwrap();
    assert_eq!(pet["name"], "theirs-1");
    assert_eq!(store.sent("POST"), 0);
    // The first page is asked once, however many ask.
    store.fixtures.crowded(&store);
    assert_eq!(store.sent("GET /pets?limit=100"), 1);
}

#[test]
fn on_a_store_with_room_the_existing_pet_is_one_the_setup_created_and_recorded() {
    let store = FakeStore::holding(3, false);
    let pet = store.fixtures.existing_pet(&store).unwrap();
    assert_eq!(pet["name"], "run-fixture-existing");
    assert_eq!(store.sent("POST"), 1);
    let id = pet["id"].as_i64().unwrap();
    assert!(store.fixtures.seen(id) && store.fixtures.seen(1));
    assert!(!store.fixtures.seen(id + 1));
}

#[test]
fn read_only_creates_nothing_and_counts_the_store_as_it_is() {
    let store = FakeStore::holding(5, true);
    assert_eq!(store.fixtures.population(&store).unwrap().known_pets, 5);
    assert_eq!(store.fixtures.existing_pet(&store).unwrap()["id"], 1);
    assert_eq!(store.sent("POST"), 0);
}

#[test]
fn a_watch_on_a_small_store_fails_on_a_refused_body_that_was_stored() {
    let store = FakeStore::holding(4, false);
    let marker = crate::generation::Marker {
        name: Some("run-refused".into()),
        category_id: None,
    };
    let watch = store.fixtures.watch(&store);
    assert!(watch.assert_not_stored(&store, &marker).is_ok());
    store.send(&RequestSpec::post(
        "/pets",
        Body::Json(json!({"name": "run-refused"})),
    ));
    let verdict = watch.assert_not_stored(&store, &marker).unwrap_err();
    assert!(
        verdict.message().contains("run-refused"),
        "{}",
        verdict.message()
    );
}

#[test]
fn listing_room_is_the_whole_page_while_it_has_room_else_the_least_crowded_status() {
    let store = FakeStore::holding(10, false);
    assert!(matches!(
        super::listing_room(&store.fixtures, &store, 8),
        Ok(None)
    ));
    let crowded = FakeStore::holding(150, false);
    // Every pet of the crowded store is sold: any other status has the room.
    let room = super::listing_room(&crowded.fixtures, &crowded, 8).unwrap();
    assert!(room.is_some_and(|status| status != "sold"), "{room:?}");
}
