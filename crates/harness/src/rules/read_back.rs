//! Read-back of poisoned data: what createPet stored must not break the reads after it.
//!
//! A name holding a lone surrogate escape (`"\ud800"`) is well-formed JSON text (RFC 8259
//! section 7 lets an escape name any code unit), but not Unicode text: section 8.2 leaves the
//! behaviour of software receiving it unpredictable, and I-JSON (RFC 7493) forbids it. The
//! contract's `name` is "free text", so a store may refuse the body (a 4xx: 400 is the
//! contract's answer to invalid values) or store the name, repaired or as it is. Neither
//! reading lets it answer 5xx, then or afterwards: listPets answers 200 or 401, getPet 200,
//! 401 or 404. This rule runs last, so a store that a poisoned pet breaks does not take the
//! other rules' reads down with it.

use crate::engine::ctx::RuleCtx;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Checked, Exchange, Verdict};

fn server_error(exchange: &Exchange, what: &str, expected: &str) -> Option<Verdict> {
    let status = exchange.status()?;
    if !(500..600).contains(&status) || exchange.cut_by_transport() {
        return None;
    }
    Some(
        Verdict::failed(expected, exchange.summary(), exchange)
            .in_class(format!("{what} answered {status}")),
    )
}

/// A name with a lone surrogate escape is refused (4xx) or stored; either way no 5xx, then or
/// in the reads of the stored pet after it.
pub fn lone_surrogate(ctx: &RuleCtx) -> Checked {
    if ctx.deadline().is_some() {
        // Under a budget (main phase): after every rule's first pass, before the budget ends.
        ctx.wait_for_first_passes();
    }
    let prefix = ctx.pet_name("surrogate-");
    let category = ctx.categories().accepted(0);
    // Written by hand: serde_json cannot hold a lone surrogate in a string.
    let body = format!(r#"{{"name":"{prefix}\ud800","categoryId":{category}}}"#);
    let created = ctx.send(&RequestSpec::post(
        "/pets",
        Body::Raw {
            content_type: Some("application/json".into()),
            bytes: body.into_bytes().into(),
        },
    ));
    ctx.case_done();
    let mut failures = Vec::new();
    if let Some(Verdict::Failed(failure)) = server_error(
        &created,
        "createPet",
        "a 4xx refusal (a lone surrogate is not Unicode text) or 201 (the name stored); never a 5xx",
    ) {
        failures.push(*failure);
    }
    let stored = created
        .status()
        .is_some_and(|status| (200..300).contains(&status));
    if stored && created.response.is_some() && !created.cut_by_transport() {
        // Reads after it, at once: the pet by its id, the listing that may show it.
        let mut reads = vec![
            RequestSpec::get("/pets").query("limit", "100"),
            RequestSpec::get("/pets"),
        ];
        if let Some(id) = created.json().and_then(crate::engine::expect::pet_id) {
            reads.push(RequestSpec::get(format!("/pets/{id}")));
        }
        for exchange in ctx.send_all(&reads) {
            ctx.case_done();
            let what = if exchange.request.url.contains("/pets/") {
                "getPet of the pet stored"
            } else {
                "listPets after it"
            };
            if let Some(Verdict::Failed(failure)) = server_error(
                &exchange,
                what,
                "reads after a stored name with a lone surrogate answer as the contract says (200, 401, 404); never a 5xx",
            ) {
                failures.push(*failure);
            }
        }
    }
    match Verdict::failed_distinct(failures) {
        Some(verdict) => Err(verdict),
        None if created.response.is_none() || created.cut_by_transport() => {
            Err(Verdict::inconclusive(format!(
                "createPet gave no whole answer: {}",
                created.summary()
            )))
        }
        None => Ok(()),
    }
}

/// The request space's createPet bodies that are not UTF-8, last: each answered as its class
/// says (400, nothing stored), and where one was stored anyway, the listings after it answer
/// without a 5xx.
pub fn not_utf_8(ctx: &RuleCtx) -> Checked {
    // Started before the bodies are sent: after them, it tells a pet stored from one refused.
    // Before the wait below: on a crowded store finding where its ids grow takes round trips,
    // which would hold the bodies back until a budget's generators reached --max-pets.
    let watch = ctx.fixtures().watch(ctx);
    if ctx.deadline().is_some() {
        // Under a budget (main phase): after every rule's first pass, before the budget ends.
        ctx.wait_for_first_passes();
    }
    let (judged, refused) = super::inputs::walk_last(ctx);
    let reads = [
        RequestSpec::get("/pets").query("limit", "100"),
        RequestSpec::get("/pets"),
    ];
    let mut failures = Vec::new();
    // "The animal is stored and returned with an `id`": only then. A body refused (with the
    // 400 the walk judged, or another 4xx it failed) whose pet is listed after all fails; a
    // store that cannot show it (filled past a page, ids in no order) leaves the rule as the
    // answers judged it. On a store past a page, the ids past its newest are read beside the
    // listings (after them, one request at a time: the same seed sends them in one order).
    let (listings, stored) = if refused.is_empty() {
        (ctx.send_all(&reads), Ok(()))
    } else if ctx.concurrency() == 1 {
        let listings = ctx.send_all(&reads);
        let stored = watch.assert_none_listed(ctx, &refused, &listings[0]);
        (listings, stored)
    } else {
        watch.assert_none_listed_beside(ctx, &refused, || ctx.send_all(&reads))
    };
    if let Err(Verdict::Failed(failure)) = stored {
        failures.push(*failure);
    }
    for exchange in &listings {
        ctx.case_done();
        if let Some(Verdict::Failed(failure)) = server_error(
            exchange,
            "listPets after the bodies that are not UTF-8",
            "listings after bodies that are not UTF-8 answer as the contract says (200, 401); never a 5xx",
        ) {
            failures.push(*failure);
        }
    }
    match (judged, Verdict::failed_distinct(failures)) {
        (Err(verdict), _) if verdict.kind() == crate::outcome::VerdictKind::Failed => Err(verdict),
        (_, Some(verdict)) => Err(verdict),
        (judged, None) => judged,
    }
}
