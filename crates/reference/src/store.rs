//! The reference's store: pets in memory, the ids it hands out, and the state every
//! handler shares.

use super::*;

#[derive(Debug, Clone, Serialize)]
pub(super) struct Pet {
    pub(super) id: i64,
    pub(super) name: String,
    #[serde(rename = "categoryId")]
    pub(super) category_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) status: Option<String>,
    /// The categoryId came as a float spelling (`100.0`) and is echoed as one.
    #[serde(skip)]
    pub(super) category_float: bool,
}

#[derive(Default)]
pub(super) struct Store {
    pub(super) pets: Vec<Pet>,
    pub(super) next_id: i64,
    /// When each pet was stored, kept only under the read-after-write-lag fault.
    pub(super) stored_at: std::collections::HashMap<i64, std::time::Instant>,
    /// Pets stored from a lone surrogate escape, under the lone-surrogate-poisons-reads fault.
    pub(super) poisoned: std::collections::HashSet<i64>,
}

/// Pets of other clients in the crowded store.
pub(super) const CROWD: usize = 5000;

/// How often other clients store a pet under the busy-store variant (50 a second).
pub(super) const OTHER_CLIENTS_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

pub(super) struct Shared {
    pub(super) config: ReferenceConfig,
    /// Every choice the contract leaves the store (the variants', or a drawn store's).
    pub(super) choices: Choices,
    /// Whether an answer went out yet (a drawn store's first one may be slow).
    pub(super) answered: std::sync::atomic::AtomicBool,
    pub(super) store: Mutex<Store>,
    /// createPet requests being handled right now.
    pub(super) creates_in_flight: std::sync::atomic::AtomicUsize,
    /// Creates that ever arrived (for the overlap a concurrency fault measures).
    pub(super) creates_arrived: std::sync::atomic::AtomicUsize,
    /// When the service opened, and the pets other clients stored since (busy-store variant).
    pub(super) opened: std::time::Instant,
    pub(super) others_stored: std::sync::atomic::AtomicU64,
    /// Requests that came in (busy-store variant): other clients store at most one pet for
    /// every two of them.
    pub(super) requests_seen: std::sync::atomic::AtomicU64,
    /// Under the throttled variant: the current 100 ms window and the requests it let in.
    pub(super) throttle_window: Mutex<(std::time::Instant, u32)>,
}

impl Shared {
    pub(super) fn has(&self, fault: Fault) -> bool {
        self.config.faults.contains(&fault)
    }

    /// The hooks of the faults this store runs with (see [`crate::faults::Hook`]).
    pub(super) fn hooks(&self) -> impl Iterator<Item = &'static crate::faults::Hook> + '_ {
        self.config
            .faults
            .iter()
            .filter_map(|fault| fault.info().hook.as_ref())
    }

    /// The first hook of this store's faults that `pick` takes, as it reads it.
    pub(super) fn hook<T>(
        &self,
        pick: impl Fn(&'static crate::faults::Hook) -> Option<T>,
    ) -> Option<T> {
        self.hooks().find_map(pick)
    }

    /// The store's answer to a class of the request space; `None` under a fault, which bends
    /// the reference's own logic (whose answers are among those each class allows).
    pub(super) fn class_answer(&self, input: &str, class: &str) -> Option<Answer> {
        self.config
            .faults
            .is_empty()
            .then(|| self.choices.answer(input, class))
    }

    /// A pet as the service answers it (with extra fields, a float categoryId, as chosen).
    pub(super) fn pet_value(&self, pet: &Pet) -> Value {
        let mut value = serde_json::to_value(pet).unwrap_or(Value::Null);
        if pet.category_float
            && let Some(float) = serde_json::Number::from_f64(pet.category_id as f64)
            && float.as_f64() == Some(pet.category_id as f64)
            && (pet.category_id as f64) as i64 == pet.category_id
        {
            value["categoryId"] = Value::Number(float);
        }
        if self.choices.extra_fields {
            value["createdAt"] = json!("2026-11-21T00:00:00Z");
            value["tags"] = json!(["reference", {"kind": "extra"}]);
        }
        value
    }

    pub(super) fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        // A panic while holding the lock cannot leave the Vec half-updated in a way that
        // matters here, so a poisoned lock is used as is.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Under the busy-store variant, other clients store a pet every [`OTHER_CLIENTS_EVERY`],
    /// whatever the run does: the ones due are stored as a request comes in. At most one for
    /// every two requests, so that a run slowed by its machine (a test binary running hundreds
    /// of runs on two cores) meets the store as busy as a run at its own pace does, not a
    /// store that gave a thousand ids while one rule waited for the CPU.
    pub(super) fn other_clients_act(&self) {
        if !self.choices.busy {
            return;
        }
        let seen = self
            .requests_seen
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let due = ((self.opened.elapsed().as_millis() / OTHER_CLIENTS_EVERY.as_millis()) as u64)
            .min(seen / 2);
        let stored = self
            .others_stored
            .fetch_max(due, std::sync::atomic::Ordering::Relaxed);
        for _ in stored..due {
            let mut store = self.store();
            store.next_id += 1;
            let id = store.next_id;
            store.pets.push(Pet {
                id,
                name: format!("other client {id}"),
                category_id: id % 7,
                status: Some(PET_STATUSES[(id % 3) as usize].to_string()),
                category_float: false,
            });
        }
    }

    /// Fills the store with [`CROWD`] pets of other clients, of every status and none.
    pub(super) fn crowd(&self) {
        for n in 0..CROWD {
            let status = [Some("available"), Some("pending"), Some("sold"), None][n % 4];
            self.insert(
                format!("resident {n}"),
                (n % 7) as i64,
                status.map(String::from),
            );
        }
    }

    /// `count` plain pets of another client, all available (the other statuses left empty).
    pub(super) fn plain(&self, count: usize) {
        for n in 0..count {
            self.insert(
                format!("resident {n}"),
                (n % 7) as i64,
                Some("available".into()),
            );
        }
    }

    /// Pets of every shape other clients leave in a shared store: every status and none,
    /// names in other scripts, with escapes, empty, long, with a lone surrogate where the store
    /// keeps them, categories at the ends of int64.
    pub(super) fn others_left(&self, count: usize) {
        let lone = petstore_vocabulary::json::standing_for(0xDC00);
        for n in 0..count {
            let name = match n % 8 {
                0 => format!("resident {n}"),
                1 => String::new(),
                2 => format!("Ünïcødé 🐕 {n} \"quoted\" </script> \u{0}"),
                3 => "x".repeat(300 + n),
                4 if self.choices.surrogates == Surrogates::AsSent => format!("odd {lone} {n}"),
                4 => format!("repaired \u{fffd} {n}"),
                5 => format!("tab\tnew\nline {n}"),
                6 => format!("{n}"),
                _ => format!("r\u{202e}evers {n}"),
            };
            let category = match n % 5 {
                0 => i64::MAX,
                1 => i64::MIN,
                2 => 0,
                _ => n as i64,
            };
            let status = [Some("available"), Some("pending"), Some("sold"), None][n % 4];
            self.insert(name, category, status.map(String::from));
        }
    }

    pub(super) fn insert(&self, name: String, category_id: i64, status: Option<String>) -> Pet {
        let mut store = self.store();
        store.next_id += 1;
        let n = store.next_id;
        let mut id = match self.choices.ids {
            IdScheme::Counting { start, step } => start.wrapping_add((n - 1).wrapping_mul(step)),
            IdScheme::Random => petstore_vocabulary::seed::splitmix64(n as u64) as i64,
        };
        if self.has(Fault::DuplicateIds) && id % 2 == 0 {
            id -= 1;
        }
        let status = status.or_else(|| self.choices.status_default.map(String::from));
        let pet = Pet {
            id,
            name,
            category_id,
            status,
            category_float: false,
        };
        store.pets.push(pet.clone());
        if self.has(Fault::ReadAfterWriteLag) {
            store.stored_at.insert(pet.id, std::time::Instant::now());
        }
        pet
    }
}

pub(super) type AppState = Arc<Shared>;

/// The body with each lone surrogate escape (`\ud800` not part of a pair) replaced by
/// `\ufffd`, as a lenient parser stores it; `None` when it holds none.
pub(super) fn lone_surrogates_replaced(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let unit = |at: usize| -> Option<u16> {
        let escape = text.get(at..at + 6)?;
        let hex = escape.strip_prefix("\\u")?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut out = String::with_capacity(text.len());
    let mut found = false;
    let mut at = 0;
    while at < text.len() {
        match unit(at) {
            Some(0xD800..=0xDBFF)
                if unit(at + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) =>
            {
                out.push_str(&text[at..at + 12]);
                at += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.push_str("\\ufffd");
                found = true;
                at += 6;
            }
            _ => {
                let c = text[at..].chars().next()?;
                out.push(c);
                at += c.len_utf8();
            }
        }
    }
    found.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::lone_surrogates_replaced;

    #[test]
    fn a_lone_surrogate_escape_is_replaced_and_a_pair_is_kept() {
        let lone = br#"{"name":"a\ud800b","categoryId":1}"#;
        assert_eq!(
            lone_surrogates_replaced(lone).as_deref(),
            Some(r#"{"name":"a\ufffdb","categoryId":1}"#)
        );
        assert_eq!(
            lone_surrogates_replaced(br#"{"name":"\ud83d\udc15"}"#),
            None
        );
        assert!(lone_surrogates_replaced(br#"{"name":"\udc15x"}"#).is_some());
        assert_eq!(lone_surrogates_replaced(br#"{"name":"plain"}"#), None);
    }
}
