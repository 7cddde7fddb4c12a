//! listPets: `GET /pets` with its `limit` bounds and `status` filter.

use serde_json::Value;

use crate::engine::ctx::RuleCtx;
use crate::engine::property::SentAhead;
use crate::engine::{expect, property};
use crate::outcome::{Checked, Verdict};
use proptest::prelude::*;

use crate::contract::{SchemaName, limit_parameter};
use crate::generation;
use crate::generation::request::RequestSpec;

/// "200 | array of Pet | Success."
pub fn ok(ctx: &RuleCtx) -> Checked {
    // The default page and the largest, at once: the largest shows more of what the store
    // holds (a pet another request stored wrongly, say) in the same round trip.
    let specs = [
        RequestSpec::get("/pets"),
        RequestSpec::get("/pets").query("limit", "100"),
    ];
    for exchange in ctx.send_all(&specs) {
        ctx.case_done();
        expect::status(&exchange, &[200], "200 with an array of Pet")?;
        expect::pets(ctx.contract(), &exchange)?;
    }
    Ok(())
}

/// The listing has at most `max` pets.
fn at_most(ctx: &RuleCtx, spec: &RequestSpec, max: usize) -> Checked {
    let exchange = ctx.send(spec);
    let pets = expect::listing(&exchange)?;
    if pets.len() > max {
        return Err(Verdict::failed(
            format!("200 with at most {max} pets"),
            format!("{} pets", pets.len()),
            &exchange,
        ));
    }
    Ok(())
}

/// Without `limit`, the default of 20 applies; a `header` sent besides (`limit: 100`: the
/// parameter moved out of the query) changes nothing of it. A store may refuse a header it
/// does not know: only a 200 is counted then, the oracles judge any other answer.
pub fn default_at_most(ctx: &RuleCtx, max: u64, header: Option<&str>) -> Checked {
    let max = max as usize;
    ctx.fixtures().population(ctx)?;
    ctx.case_done();
    let mut spec = RequestSpec::get("/pets");
    let Some((name, value)) = header.and_then(|header| header.split_once(": ")) else {
        return at_most(ctx, &spec, max);
    };
    spec.headers.push((name.to_string(), value.to_string()));
    let exchange = ctx.send(&spec);
    if exchange.cut_by_transport() {
        return Err(expect::cut(&exchange));
    }
    if exchange.status() != Some(200) {
        return Ok(());
    }
    let pets = expect::listing(&exchange)?;
    if pets.len() > max {
        return Err(Verdict::failed(
            format!(
                "200 with at most {max} pets: `{name}: {value}` is a header, not the query's `{name}`"
            ),
            format!("{} pets", pets.len()),
            &exchange,
        ));
    }
    Ok(())
}

/// Limits inside the bounds, from the parameter's schema: its boundary values and a strategy.
fn limits() -> Result<(Vec<i64>, BoxedStrategy<i64>), Verdict> {
    let schema = limit_parameter();
    let boundary = generation::boundaries(&schema)
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    let strategy = generation::strategy(&schema)
        .map_err(|e| Verdict::skipped(e.to_string()))?
        .prop_map(|limit| limit.as_i64().unwrap_or(1))
        .boxed();
    Ok((boundary, strategy))
}

/// Any `limit` in 1..=100 is accepted and caps the listing.
pub fn limit_property(ctx: &RuleCtx) -> Checked {
    ctx.fixtures().population(ctx)?;
    let (boundary, strategy) = limits()?;
    let request = |limit: &i64| RequestSpec::get("/pets").query("limit", limit.to_string());
    property::check_all_sent_ahead(
        ctx,
        boundary,
        strategy,
        |limit| format!("GET /pets?limit={limit}"),
        SentAhead::first(&|limit| Some(request(limit))),
        |limit| at_most(ctx, &request(limit), *limit as usize),
    )
}

/// A bound of `limit` is accepted and caps the listing.
pub fn limit_accepted(ctx: &RuleCtx, limit: &str) -> Checked {
    let max: usize = limit
        .parse()
        .map_err(|_| Verdict::skipped("limit param is not a number"))?;
    ctx.fixtures().population(ctx)?;
    ctx.case_done();
    at_most(ctx, &RequestSpec::get("/pets").query("limit", limit), max)
}

/// With more pets stored than the page size, the page is full.
pub fn fills_page(ctx: &RuleCtx, expected: u64, limit: Option<&str>) -> Checked {
    let expected = expected as usize;
    let population = ctx.fixtures().population(ctx)?;
    let mut spec = RequestSpec::get("/pets");
    if let Some(limit) = limit {
        spec = spec.query("limit", limit);
    }
    let exchange = ctx.send(&spec);
    ctx.case_done();
    let pets = expect::listing(&exchange)?;
    if pets.len() != expected {
        return Err(Verdict::failed(
            format!(
                "exactly {expected} pets, since the store holds at least {} pets",
                population.known_pets
            ),
            format!("{} pets", pets.len()),
            &exchange,
        ));
    }
    Ok(())
}

/// An out-of-range or malformed `limit` is refused with 400 and an Error body.
pub fn limit_refused(ctx: &RuleCtx, limit: &str) -> Checked {
    let exchange = ctx.send(&RequestSpec::get("/pets").query("limit", limit));
    ctx.case_done();
    expect::status(
        &exchange,
        &[400],
        "400 (limit must be an integer from 1 to 100)",
    )?;
    expect::error_body(ctx.contract(), &exchange)
}

/// Whatever the answer to an out-of-range `limit`, a 200 never carries more than 100 pets.
pub fn out_of_range_capped(ctx: &RuleCtx, limits: &[String]) -> Checked {
    let population = ctx.fixtures().population(ctx)?;
    let specs: Vec<RequestSpec> = limits
        .iter()
        .map(|limit| RequestSpec::get("/pets").query("limit", limit.as_str()))
        .collect();
    for (limit, exchange) in limits.iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        if exchange.cut_by_transport() {
            return Err(expect::cut(&exchange)); // no whole answer whose length to count
        }
        if exchange.status() != Some(200) {
            continue;
        }
        if let Some(Value::Array(pets)) = exchange.json()
            && pets.len() > 100
        {
            return Err(Verdict::failed(
                format!(
                    "at most 100 pets (the maximum), with {} or more stored",
                    population.known_pets
                ),
                format!("200 with {} pets for limit={limit}", pets.len()),
                &exchange,
            ));
        }
    }
    Ok(())
}

/// `limit` beside parameters the contract does not name (`limit=2&note=a+b`): the store may
/// ignore them or refuse the request, but a 200 still holds at most `limit` pets. All sent at
/// once, each judged.
pub fn limit_beside(ctx: &RuleCtx, limit: &str, besides: &[String]) -> Checked {
    let max: usize = limit
        .parse()
        .map_err(|_| Verdict::skipped("limit param is not a number"))?;
    let population = ctx.fixtures().population(ctx)?;
    let queries: Vec<String> = besides
        .iter()
        .map(|beside| format!("limit={limit}&{beside}"))
        .collect();
    let specs: Vec<RequestSpec> = queries
        .iter()
        .map(|query| RequestSpec::get("/pets").raw_query(query.as_str()))
        .collect();
    for (query, exchange) in queries.iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        if exchange.cut_by_transport() {
            return Err(expect::cut(&exchange)); // no whole answer whose length to count
        }
        if exchange.status() != Some(200) {
            continue; // a refusal shows nothing of the page size
        }
        if let Some(Value::Array(pets)) = exchange.json()
            && pets.len() > max
        {
            return Err(Verdict::failed(
                format!(
                    "at most {max} pets (limit={limit}), whatever else the query holds, with {} or more stored",
                    population.known_pets
                ),
                format!("200 with {} pets for ?{query}", pets.len()),
                &exchange,
            ));
        }
    }
    Ok(())
}

/// Every pet of `GET /pets?status=S` has status S.
///
/// The filter is judged on the pets listed, whatever their ids: the population fixture makes
/// pets of every status likely, but it counts distinct ids, and a store that hands out one id
/// to every pet (a mock) never reaches its count. Its listings still show whether the filter
/// holds, so the rule goes on without it, and is inconclusive only when no listing showed a
/// pet at all.
pub fn status_property(ctx: &RuleCtx) -> Checked {
    let population = ctx.fixtures().population(ctx).err();
    let listed = std::sync::atomic::AtomicUsize::new(0);
    // Statuses from PetStatus.json; the boundary asks each one for a full page.
    let statuses: Vec<String> =
        generation::boundaries(ctx.contract().document(SchemaName::PetStatus))
            .iter()
            .filter_map(|status| status.as_str().map(String::from))
            .collect();
    let boundary: Vec<(String, Option<i64>)> = statuses
        .iter()
        .map(|status| (status.clone(), Some(100)))
        .collect();
    let (_, limit) = limits()?;
    let strategy = (
        proptest::sample::select(statuses),
        proptest::option::of(limit),
    );
    let request = |(status, limit): &(String, Option<i64>)| {
        let spec = RequestSpec::get("/pets").query("status", status.as_str());
        match limit {
            Some(limit) => spec.query("limit", limit.to_string()),
            None => spec,
        }
    };
    property::check_all_sent_ahead(
        ctx,
        boundary,
        strategy,
        |(status, limit)| match limit {
            Some(limit) => format!("GET /pets?status={status}&limit={limit}"),
            None => format!("GET /pets?status={status}"),
        },
        SentAhead::first(&|case| Some(request(case))),
        |case| {
            let (status, _) = case;
            let exchange = ctx.send(&request(case));
            let pets = expect::listing(&exchange)?;
            listed.fetch_add(pets.len(), std::sync::atomic::Ordering::Relaxed);
            if let Some(other) = pets
                .iter()
                .find(|pet| pet.get("status").and_then(Value::as_str) != Some(status.as_str()))
            {
                return Err(Verdict::failed(
                    format!("only pets with status {status}"),
                    format!("a pet of another status among {}: {other}", pets.len()),
                    &exchange,
                ));
            }
            Ok(())
        },
    )?;
    if listed.into_inner() == 0 {
        return Err(Verdict::inconclusive(format!(
            "no listing under a status filter showed a pet, so the filter was not seen at work{}",
            population.map_or(String::new(), |why| format!(" ({})", why.message()))
        )));
    }
    Ok(())
}

/// A `status` filter value that is not a PetStatus is refused with 400.
pub fn status_refused(ctx: &RuleCtx, status: &str) -> Checked {
    let exchange = ctx.send(&RequestSpec::get("/pets").query("status", status));
    ctx.case_done();
    expect::status(
        &exchange,
        &[400],
        "400 (status must be one of available, pending, sold)",
    )?;
    expect::error_body(ctx.contract(), &exchange)
}

/// "The 200 body is a plain array of Pet", also when nothing matches: `[]`, never `null` or
/// an object. Each status filter is asked at once, first in the run (before the run stores
/// pets of its own with a status); a filter that matches nothing shows the empty state. On a
/// store whose every status holds pets (a shared one) there is no empty result to look at:
/// not decidable, since the contract states no filter sure to match nothing.
pub fn empty_is_array(ctx: &RuleCtx) -> Checked {
    let mut empty = 0;
    let mut counts = Vec::new();
    for (status, exchange) in crate::contract::PET_STATUSES
        .iter()
        .zip(ctx.fixtures().first_status_pages(ctx))
    {
        ctx.case_done();
        if expect::response(&exchange)?.status != 200 {
            continue; // which status a listing gets is list-pets/success/pets-array's business
        }
        expect::truncated(&exchange)?;
        match exchange.json() {
            Some(Value::Array(pets)) => {
                empty += usize::from(pets.is_empty());
                counts.push(format!("{status} {}", pets.len()));
            }
            _ => {
                return Err(Verdict::failed(
                    "200 with an array of Pet: [] when no pet matches the filter",
                    format!("for status={status}: {}", exchange.summary()),
                    &exchange,
                ));
            }
        }
    }
    if empty == 0 {
        return Err(Verdict::not_decidable(format!(
            "every status filter matched pets on this store ({}): no empty result to look at",
            counts.join(", ")
        )));
    }
    Ok(())
}
