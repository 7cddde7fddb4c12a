//! What the request space's createPet cases stored: an accepted case is read back (the Pet
//! answered and getPet of its id hold what the body spells under the contract's member
//! names, and a pet whose id the body named is as it was), and a refused body stores nothing
//! (`inputs/create-pet/stores-nothing`, before the store fills: one listing, or the ids past
//! a crowded store's newest).

use serde_json::{Map, Value};

use super::auth::marker_category;
use super::get_pet;
use crate::catalogue::Level;
use crate::contract::{Operation, SchemaName};
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::engine::store_setup::Marker;
use crate::generation::request::{Body, RequestSpec};
use crate::generation::space::{Case, Class, Expect, Fill, Input};
use crate::outcome::Exchange;
use crate::outcome::{Checked, Verdict};

/// An id no pet is likely to have: past 2^60, below the ids of stores that count from 2^62,
/// and drawn from the rule's seed (a store of random ids gives it one time in 2^63).
pub fn unused_id(ctx: &RuleCtx) -> i64 {
    ((ctx.seed >> 4) as i64) | (1 << 60)
}

/// Whether the run may send a case: one whose body spells a categoryId of its own is sent
/// only where the run accepts that category (`--category-ids`).
pub fn may_send(ctx: &RuleCtx, case: &Case) -> bool {
    let accepted = &ctx.categories().0;
    case.spells_category
        .is_none_or(|id| accepted.is_empty() || accepted.contains(&id))
}

/// Whether the request space's cases may spell the run's marker category (issue 36 item 1: a
/// baseline the store accepts, then one change). A run told its store's categories
/// (`--category-ids`) spells one of those, unasked; otherwise the plainest NewPet with the
/// marker is created once, and where it is refused, the cases spell an accepted category
/// instead: a store that keeps a list of categories would refuse every probe for its category
/// alone, whatever the probe's own change. No answer at all keeps the marker.
fn marker_taken(ctx: &RuleCtx) -> bool {
    if !ctx.categories().0.is_empty() {
        return false;
    }
    if ctx.read_only() {
        return true; // nothing is created, so nothing is asked
    }
    *ctx.marker_taken().get_or_init(|| {
        let Ok(mut baseline) = super::auth::request_for(ctx, Operation::CreatePet) else {
            return true;
        };
        baseline.body = Body::Json(serde_json::json!({
            "name": ctx.pet_name("baseline"),
            "categoryId": marker_category(ctx),
        }));
        // A fixture the request space's rules wait on, quiet-store ones among them.
        let exchange = ctx.building(|| ctx.send(&baseline));
        match exchange.status() {
            Some(status) if !exchange.cut_by_transport() => (200..300).contains(&status),
            _ => true,
        }
    })
}

/// The placeholders of the `index`th case of the space, for a case named `name`; `{existing-id}`
/// asks the run's fixture for a pet that exists (only a case that names it).
pub fn fill<'n>(
    ctx: &RuleCtx,
    case: &Case,
    index: usize,
    name: &'n str,
) -> Result<Fill<'n>, Verdict> {
    let existing_id = if case
        .body_template()
        .is_some_and(|t| t.contains("{existing-id}"))
    {
        let pet = ctx.fixtures().existing_pet(ctx)?;
        Some(expect::pet_id(&pet).ok_or_else(|| {
            Verdict::inconclusive(format!("the existing pet has no integer id: {pet}"))
        })?)
    } else {
        None
    };
    // Asked only for a case that spells the marker (a listing's case creates nothing).
    let spells_marker = case.body_template().is_some_and(|t| t.contains("{marker}"));
    let own = !spells_marker || marker_taken(ctx);
    let category = ctx.categories().accepted(1);
    Ok(Fill {
        name,
        category,
        marker: if own {
            // +0 is the baseline's own (`marker_taken`): a case's pet is never taken for it.
            marker_category(ctx) + 1 + index as i64
        } else {
            category
        },
        marker_is_own: own,
        existing_id,
        unused_id: unused_id(ctx),
    })
}

/// The NewPet members a body spells, read as RFC 8259 reads it (a leading byte-order mark,
/// which a parser may ignore, skipped): what an accepted case must store.
fn spelled(spec: &RequestSpec) -> Option<Map<String, Value>> {
    let bytes: Vec<u8> = match &spec.body {
        Body::Json(value) => serde_json::to_vec(value).ok()?,
        Body::Raw { bytes, .. } => bytes.to_vec(),
        _ => return None,
    };
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match crate::json::read(text).ok()?.value {
        Value::Object(members) => Some(members),
        _ => None,
    }
}

/// Whether `pet` holds the members `sent` spells: `name` and `categoryId` (as integers, whatever
/// their spelling), and `status` where it was sent; the first that differs, in words.
fn differs(sent: &Map<String, Value>, pet: &Value) -> Option<String> {
    for field in ["name", "categoryId", "status"] {
        let Some(value) = sent.get(field) else {
            continue; // "No default is stated": any status, or none, may come back
        };
        let got = pet.get(field).unwrap_or(&Value::Null);
        let same = match (crate::json::integer(value), crate::json::integer(got)) {
            (Some(a), Some(b)) => a == b,
            _ => value == got,
        };
        if !same {
            return Some(format!(
                "{field} = {got}, where the body sent {field} = {value}"
            ));
        }
    }
    None
}

/// An accepted case read back: the Pet answered holds what the body spells, getPet of its id
/// holds it too, and a pet whose id the body named (`existing`) is as it was, its id not given
/// again.
pub fn read_back(
    ctx: &RuleCtx,
    spec: &RequestSpec,
    created: &Exchange,
    existing: Option<&Value>,
) -> Checked {
    let Some(sent) = spelled(spec) else {
        return Ok(()); // no NewPet to compare with (the class says what else to expect)
    };
    let what = "the pet stored is the NewPet the body spells under the contract's member \
                names (`name`, `categoryId`, `status`)";
    let pet = expect::body(ctx.contract(), created, SchemaName::Pet)?;
    if let Some(difference) = differs(&sent, pet) {
        return Err(Verdict::failed(
            what,
            format!("the Pet answered has {difference}"),
            created,
        ));
    }
    let id = expect::pet_id(pet).unwrap_or_default();
    let existing_id = existing.and_then(expect::pet_id);
    if existing_id == Some(id) {
        return Err(Verdict::failed(
            "an id of the service's choosing: \"Unique identifier, assigned by the service on \
             creation.\"",
            format!("the new pet got id {id}, the id of the existing pet the body named"),
            created,
        ));
    }
    let answers = ctx.send_all(&reads_of(id, existing_id));
    let fetched = &answers[0];
    expect::status(
        fetched,
        &[200],
        "200 with the pet just added (found by the id it got)",
    )?;
    let stored = expect::body(ctx.contract(), fetched, SchemaName::Pet)?;
    if let Some(difference) = differs(&sent, stored) {
        return Err(Verdict::failed(
            what,
            format!("getPet of it has {difference}"),
            fetched,
        ));
    }
    if let (Some(before), Some(after)) = (existing, answers.get(1)) {
        expect::status(after, &[200], "200 with the existing pet, as it was")?;
        let now = expect::body(ctx.contract(), after, SchemaName::Pet)?;
        get_pet::same_pet(before, now, after).map_err(|verdict| match verdict {
            Verdict::Failed(mut failure) => {
                failure.expected = format!(
                    "the existing pet unchanged by a NewPet that named its id ({})",
                    failure.expected
                );
                Verdict::Failed(failure)
            }
            other => other,
        })?;
    }
    Ok(())
}

/// What [`read_back`] fetches of an accepted case, known from the create's answer: none
/// where it fetches nothing (no NewPet spelled, no id answered, the existing pet's id given
/// again).
pub fn read_back_requests(
    spec: &RequestSpec,
    created: &Exchange,
    existing: Option<&Value>,
) -> Vec<RequestSpec> {
    let id = created.json().and_then(expect::pet_id);
    let existing_id = existing.and_then(expect::pet_id);
    match id {
        Some(id) if spelled(spec).is_some() && existing_id != Some(id) => reads_of(id, existing_id),
        _ => Vec::new(),
    }
}

/// getPet of the pet created, then of the existing pet the body named.
fn reads_of(id: i64, existing_id: Option<i64>) -> Vec<RequestSpec> {
    let mut reads = vec![RequestSpec::get(format!("/pets/{id}"))];
    reads.extend(existing_id.map(|id| RequestSpec::get(format!("/pets/{id}"))));
    reads
}

/// The request space's createPet classes that expect a refusal, with their input, at both
/// levels: the bodies a store must not store.
fn refused_classes<'r>(ctx: &RuleCtx<'r>) -> Vec<(&'r Input, &'r Class)> {
    let space = ctx.space();
    let mut classes = space.classes(Operation::CreatePet, Level::Required);
    classes.extend(space.classes(Operation::CreatePet, Level::Recommended));
    // Not the bodies that are not UTF-8: sent here, before anything fills the store, a store
    // that kept one could break every read of the run (they go last: `inputs::walk_last`).
    classes.retain(|(_, class)| {
        class.expect != Expect::Accepted && class.expect != Expect::Answered && !class.goes_last()
    });
    classes
}

/// "The animal is stored and returned with an `id`": only then. Every body of the request
/// space a store must refuse, sent at once; each one refused (a 4xx) leaves no pet with its
/// name or its marker category.
pub fn stores_nothing(ctx: &RuleCtx) -> Checked {
    let valid = super::auth::request_for(ctx, Operation::CreatePet)?;
    // Each case in words, and what its pet would carry (its name, its marker category).
    let mut sent: Vec<(String, Marker)> = Vec::new();
    let mut specs = Vec::new();
    let mut index = 0;
    for (input, class) in refused_classes(ctx) {
        for (n, case) in class.cases.iter().enumerate() {
            index += 1;
            if !case.sends_body() || !may_send(ctx, case) {
                continue;
            }
            // The index makes it the case's own: two inputs may name a class alike.
            let name = ctx.pet_name(&format!("stored-{index}-{}-{n}", class.class));
            let fill = fill(ctx, case, index, &name)?;
            let (name, category_id) = case.marker(&fill);
            if name.is_none() && category_id.is_none() {
                continue; // nothing in the body would tell its pet from another
            }
            let marker = Marker { name, category_id };
            specs.push(
                case.apply_filled(&valid, &fill)
                    .refused_by_contract(class.requires_refusal()),
            );
            sent.push((
                format!(
                    "class {} of {}: {}",
                    class.class,
                    input.input,
                    case.describe()
                ),
                marker,
            ));
        }
    }
    let watch = ctx.fixtures().watch(ctx);
    let mut markers = Vec::new();
    let mut refused = Vec::new();
    for ((what, marker), exchange) in sent.into_iter().zip(ctx.send_all(&specs)) {
        ctx.case_done();
        // What the answer should be is the walk's business; here, only what is stored.
        let refusal = exchange.status().is_some_and(|s| (400..500).contains(&s));
        if !refusal || exchange.cut_by_transport() {
            continue;
        }
        refused.push((what, marker.name.clone(), marker.category_id));
        markers.push(marker);
    }
    if markers.is_empty() {
        return Err(Verdict::inconclusive(
            "no body of the request space was refused",
        ));
    }
    watch
        .assert_none_stored(ctx, &markers)
        .map_err(|verdict| match verdict {
            Verdict::Failed(mut failure) => {
                // Which case's pet it is: its name or its marker category is in what was seen.
                let seen = &failure.observed;
                let case = refused.iter().find(|(_, name, category)| {
                    name.as_ref()
                        .is_some_and(|name| seen.contains(name.as_str()))
                        || category.is_some_and(|c| seen.contains(&c.to_string()))
                });
                if let Some((what, _, _)) = case {
                    failure.expected = format!("{} ({what})", failure.expected);
                }
                Verdict::Failed(failure)
            }
            other => other,
        })
}
