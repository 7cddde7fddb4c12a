//! The population fixture: a store with more than a page of pets, some of every status, made
//! of what it holds, what the rules beside store, and, for the rest, pets of its own.

use std::collections::BTreeSet;

use super::access::StoreAccess;
use super::creating::{create_request, created_id};
use crate::contract::PET_STATUSES;
use crate::generation::request::RequestSpec;

/// How many pets the harness knows the store holds, at least.
#[derive(Debug, Clone, Copy)]
pub struct Population {
    pub known_pets: usize,
}

/// Pets needed to tell "limit=100 returns exactly 100" from "returns what there is".
pub const POPULATION_TARGET: usize = 101;

/// Pets the population fixture creates at once, at most: all it needs on an empty store, so
/// that a remote store fills in one round trip (the client keeps within the concurrency).
const POPULATION_BATCH: usize = POPULATION_TARGET + 12;

/// More than [`POPULATION_TARGET`] pets the harness knows of: the store's before the run, the
/// run's own (every rule's, by id), and what this creates. First a few of every status not
/// seen listed (and some without one); by the time they are answered, the rules running
/// beside are storing theirs, and only what is still short once their number stops growing is
/// created (on an empty store with every rule selected, nothing more).
pub(super) fn populate(
    ctx: &impl StoreAccess,
    mut known: BTreeSet<i64>,
    seen: &BTreeSet<Option<String>>,
) -> Result<Population, String> {
    let created = ctx.created_pets();
    let known_now = |known: &BTreeSet<i64>| known.len() + created.distinct_not_in(known);
    if ctx.read_only() {
        // Nothing is created: the rules see the store as it is.
        return Ok(Population {
            known_pets: known.len(),
        });
    }
    // A pet without a status is seen only on the first page, whose statuses are not kept:
    // a few without one are made whenever some are made.
    let missing: Vec<Option<&str>> = PET_STATUSES
        .iter()
        .map(|s| Some(*s))
        .filter(|status| !seen.contains(&status.map(String::from)))
        .chain([None])
        .collect();
    let few = if missing.len() > 1 {
        2 * missing.len()
    } else {
        0
    };
    let mut made = 0usize;
    let mut waited = false;
    // The rules that store many pets make the page: waited for while they are on their first
    // pass (a rule queued behind this one is not waited for), a few of every status made
    // meanwhile.
    let mut storing = true;
    while made < few || known_now(&known) < POPULATION_TARGET {
        if made >= few && storing {
            storing = false;
            // The rules beside start with this one, a thread may reach them late: a moment
            // for them to start, or the page was made of its own pets (79 in a run in five).
            ctx.scheduler()
                .wait_for_storing_to_start(std::time::Duration::from_millis(100));
            ctx.scheduler()
                .wait_while_storing(&|| known_now(&known) >= POPULATION_TARGET || ctx.stopped());
            continue;
        }
        if made >= few && !waited {
            // The pets the rules beside create may make up the rest: waited for while their
            // number grows, an answer's time at a time, two at most.
            waited = true;
            let answer = ctx.fastest_answer().min(std::time::Duration::from_secs(1));
            let started = std::time::Instant::now();
            let mut created = ctx.scheduler().pets_created();
            let (mut seen, mut grew) = (known_now(&known), started);
            while seen < POPULATION_TARGET
                && grew.elapsed() < answer
                && started.elapsed() < answer * 2
            {
                // Woken by the next pet created, or when the wait is over.
                let until = (grew + answer).min(started + answer * 2);
                ctx.scheduler().wait_for_a_pet_after(created, until);
                created = ctx.scheduler().pets_created();
                let now = known_now(&known);
                if now > seen {
                    (seen, grew) = (now, std::time::Instant::now());
                }
            }
            continue;
        }
        // A page of pets fills the store past what the quiet-store rules list whole: after them.
        // The few of every status go beside them, within the room those rules leave in the
        // page (see `RuleCtx::room_for`): made only once they were judged, they went behind
        // the main phase's creates and held the listing rules a round trip (at 50 ms).
        if made >= few {
            ctx.scheduler().wait_for_quiet_store(&|| ctx.stopped());
        }
        // In batches sent at once: a remote store answers a batch in one round trip.
        let wanted = if made < few {
            few - made
        } else {
            POPULATION_TARGET.saturating_sub(known_now(&known))
        }
        .min(POPULATION_BATCH);
        let specs: Vec<RequestSpec> = (made..made + wanted)
            .map(|n| {
                let name = ctx.pet_name(&format!("fixture-population-{n}"));
                create_request(ctx, &name, missing[n % missing.len()])
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
                known_now(&known)
            ));
        }
    }
    Ok(Population {
        known_pets: known_now(&known),
    })
}
