//! A store filled past common row limits (`--fill-store PETS`). A store built on SQL meets the
//! limits of its database or driver only as its table grows: 999 bound variables in SQLite
//! before 3.32, an `IN` list of 1,000 in Oracle, 32,767 parameters in some drivers. A listing
//! that binds a parameter per stored row (a category fetched for every pet, the page cut
//! after) answers 500 past them, which a run of a few hundred pets never shows.

use serde_json::json;

use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Checked, Verdict};

/// Creates sent at once while the store is filled: the client still holds them to the level
/// the target has shown it serves.
const FILL_BATCH: u64 = 256;

/// listPets on a store holding more pets than each of `past`: the run fills it (only under
/// `--fill-store`) to one more than each row limit below the fill, and to the fill, and lists
/// there: the default page, the largest, and the largest of one status.
pub fn crowded(ctx: &RuleCtx, past: &[u64]) -> Checked {
    // Without --fill-store (or under --read-only), the runner leaves the rule out unrun.
    let fill = ctx
        .fill_store()
        .ok_or_else(|| Verdict::skipped("no --fill-store"))?;
    if ctx.deadline().is_some() {
        // Under a budget (main phase): after every rule's first pass, before the budget ends.
        ctx.wait_for_first_passes();
    }
    let mut stops: Vec<u64> = past
        .iter()
        .map(|rows| rows + 1)
        .filter(|stop| *stop < fill)
        .chain([fill])
        .collect();
    stops.sort_unstable();
    stops.dedup();
    for stop in stops {
        let held = fill_to(ctx, stop)?;
        listings_answered(ctx, held)?;
    }
    Ok(())
}

/// Creates the plainest NewPets until the run has made `stop` pets (the store holds at least
/// as many: the contract has no delete); returns how many it has made. A create not answered
/// 201 ends the fill: the rule is then undecided, and the response oracles judge the answer.
fn fill_to(ctx: &RuleCtx, stop: u64) -> Result<u64, Verdict> {
    let made = || ctx.fixtures().created.count();
    while made() < stop {
        let batch = (stop - made()).min(FILL_BATCH);
        let from = made();
        let specs: Vec<RequestSpec> = (0..batch)
            .map(|n| {
                let pet = json!({
                    "name": ctx.pet_name(&format!("crowd-{}", from + n)),
                    "categoryId": ctx.categories().accepted(0),
                });
                RequestSpec::post("/pets", Body::Json(pet))
            })
            .collect();
        for exchange in ctx.send_all(&specs) {
            ctx.case_done();
            if exchange.status() != Some(201) {
                return Err(Verdict::inconclusive(format!(
                    "the store was to be filled to {stop} pets of this run; at {}, a create was answered {}",
                    made(),
                    exchange.summary()
                )));
            }
        }
    }
    Ok(made())
}

/// The default page, the largest and the largest of one status, at once: each 200 with a
/// Pets array of at most its limit.
fn listings_answered(ctx: &RuleCtx, held: u64) -> Checked {
    let listings = [
        (RequestSpec::get("/pets"), 20),
        (RequestSpec::get("/pets").query("limit", "100"), 100),
        (
            RequestSpec::get("/pets")
                .query("status", "available")
                .query("limit", "100"),
            100,
        ),
    ];
    let specs: Vec<RequestSpec> = listings.iter().map(|(spec, _)| spec.clone()).collect();
    for (exchange, (_, limit)) in ctx.send_all(&specs).iter().zip(&listings) {
        ctx.case_done();
        let expected = format!(
            "200 with a Pets array of at most {limit} pets, the store holding {held} pets of this run or more"
        );
        expect::status(exchange, &[200], &expected)?;
        expect::pets(ctx.contract(), exchange)?;
        let pets = expect::listing(exchange)?;
        if pets.len() > *limit {
            return Err(Verdict::failed(
                expected,
                format!("{} pets", pets.len()),
                exchange,
            ));
        }
    }
    Ok(())
}
