//! What the reference makes of a createPet body's bytes and members where the request space
//! names a class (cases/request-space.json): a byte-order mark, a member named twice or in
//! another letter case, an `id`, an empty or blank name; each answered as the store's choices
//! say (the conforming generator draws them from the class's `allows`), or as a fault bends it.
//! And the body itself, read a frame at a time.

use super::*;

/// Refused with the status the store chose for a class, or not.
fn refusal(
    shared: &Shared,
    input: &str,
    class: &str,
    message: &str,
) -> Result<(), (StatusCode, String)> {
    match shared.class_answer(input, class) {
        Some(Answer::Refused(status)) => Err((
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            message.to_string(),
        )),
        _ => Ok(()),
    }
}

/// The body after a byte-order mark, where the store ignores one (RFC 8259 section 8.1: a
/// parser MAY); the reference reads the mark as no JSON (refused below, as the grammar says).
pub(super) fn byte_order_mark<'b>(
    shared: &Shared,
    body: &'b [u8],
) -> Result<&'b [u8], (StatusCode, String)> {
    let Some(rest) = body.strip_prefix(b"\xEF\xBB\xBF") else {
        return Ok(body);
    };
    let message = "the body starts with a byte-order mark: not a JSON text (RFC 8259 section 8.1)";
    refusal(shared, "body", "byte-order-mark", message)?;
    let skipped =
        shared.class_answer("body", "byte-order-mark").is_some() || shared.has(Fault::BomSkipped);
    Ok(if skipped { rest } else { body })
}

/// A body whose object names a member twice: refused (the reference: RFC 8259 leaves its
/// meaning open), or read from the first or the last value, as the store chose.
pub(super) fn duplicate_names(
    shared: &Shared,
    body: &[u8],
    last_wins: Value,
) -> Result<Value, (StatusCode, String)> {
    let message = "a member is named twice (RFC 8259 section 4: names SHOULD be unique)";
    match shared.class_answer("body", "duplicate-names") {
        Some(Answer::Refused(status)) => Err((
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            message.into(),
        )),
        Some(Answer::FirstWins) => Ok(lenient::first_wins(body).unwrap_or(last_wins)),
        Some(_) => Ok(last_wins),
        None if shared.has(Fault::DuplicateNamesLastWins) => Ok(last_wins),
        None => Err((StatusCode::BAD_REQUEST, message.into())),
    }
}

/// The NewPet members a store reads: the contract's names exactly. A member in another letter
/// case beside the real one is ignored or refused, as the store chose (or, under a fault,
/// read in its place).
pub(super) fn member_names(
    shared: &Shared,
    mut fields: serde_json::Map<String, Value>,
) -> Result<serde_json::Map<String, Value>, (StatusCode, String)> {
    const FIELDS: [&str; 3] = ["name", "categoryId", "status"];
    let other_case = |fields: &serde_json::Map<String, Value>, field: &str| {
        fields
            .iter()
            .find(|(name, _)| name.as_str() != field && name.eq_ignore_ascii_case(field))
            .map(|(_, value)| value.clone())
    };
    let beside = FIELDS
        .iter()
        .any(|field| fields.contains_key(*field) && other_case(&fields, field).is_some());
    if beside {
        let message = "a member is named in another letter case than NewPet's";
        refusal(shared, "body member names", "letter-case-beside", message)?;
    }
    let folding = shared.hook(|hook| match hook {
        Hook::MemberCaseFolded(fold) => Some(*fold),
        _ => None,
    });
    for field in FIELDS {
        let fold = folding.is_some_and(|fold| fold.folds(fields.contains_key(field)));
        if fold && let Some(value) = other_case(&fields, field) {
            fields.insert(field.to_string(), value);
        }
    }
    Ok(fields)
}

/// An empty or blank name: taken (the reference: it is free text) or refused, as the store
/// chose; a name that reads as another JSON value, refused under a fault.
pub(super) fn free_name(shared: &Shared, name: &str) -> Result<(), (StatusCode, String)> {
    if name.trim().is_empty() {
        let message = "name may not be blank";
        refusal(shared, "body field name", "empty-or-blank", message)?;
        if shared.has(Fault::BlankNameRefused) {
            return Err((StatusCode::BAD_REQUEST, message.into()));
        }
    }
    if shared.has(Fault::NameLiteralRefused) && serde_json::from_str::<Value>(name).is_ok() {
        return Err((
            StatusCode::BAD_REQUEST,
            format!("name must be a string, not {name}"),
        ));
    }
    Ok(())
}

/// A NewPet's `id` (the service assigns ids): ignored (the reference) or refused, as the store
/// chose; `Some` where a fault lets it name the stored pet.
pub(super) fn id_member(
    shared: &Shared,
    fields: &serde_json::Map<String, Value>,
) -> Result<Option<i64>, (StatusCode, String)> {
    let Some(value) = fields.get("id") else {
        return Ok(None);
    };
    let id = value.as_i64();
    let exists = id.is_some_and(|id| shared.store().pets.iter().any(|pet| pet.id == id));
    let class = if exists { "existing-id" } else { "unused-id" };
    let message = "id is assigned by the service: a NewPet carries none";
    refusal(shared, "body field id", class, message)?;
    let honoured = match id_taking(shared) {
        Some(IdTaking::Overwrites) => true,
        Some(IdTaking::StoredNotAnswered) => !exists,
        None => false,
    };
    Ok(id.filter(|_| honoured))
}

/// A pet stored under the `id` its body named, as a store that copies the body onto its
/// record does: the pet of that id overwritten, or a new one given it (or, under
/// id-member-stored-not-answered, given it while the answer carries the counter's id).
pub(super) fn insert_with_id(
    shared: &Shared,
    id: i64,
    name: String,
    category_id: i64,
    status: Option<String>,
) -> Pet {
    let mut store = shared.store();
    if let Some(pet) = store.pets.iter_mut().find(|pet| pet.id == id) {
        pet.name = name;
        pet.category_id = category_id;
        pet.status = status;
        return pet.clone();
    }
    drop(store);
    let pet = shared.insert(name, category_id, status);
    let mut store = shared.store();
    if let Some(stored) = store.pets.iter_mut().find(|stored| stored.id == pet.id) {
        stored.id = id;
    }
    if id_taking(shared) == Some(IdTaking::StoredNotAnswered) {
        return pet;
    }
    Pet { id, ..pet }
}

/// How this store takes a NewPet's `id`, if it does (a fault's hook).
fn id_taking(shared: &Shared) -> Option<IdTaking> {
    shared.hook(|hook| match hook {
        Hook::IdMemberTaken(taking) => Some(*taking),
        _ => None,
    })
}

/// The request body, a frame at a time: a frame of nothing but spaces is counted, not kept,
/// until more of the body follows it (then the spaces are put back), so a body padded with
/// megabytes of whitespace (the body ladder's) costs its length, not its memory. Returns what
/// was kept (the body less the spaces at its end, insignificant in JSON) and the whole length.
pub(super) async fn read_body(body: axum::body::Body) -> Result<(Vec<u8>, usize), axum::Error> {
    use futures_util::StreamExt;
    let mut frames = body.into_data_stream();
    let mut kept = Vec::new();
    let mut spaces = 0usize;
    let mut length = 0usize;
    while let Some(frame) = frames.next().await {
        let frame = frame?;
        length += frame.len();
        if frame.iter().all(|&byte| byte == b' ') {
            spaces += frame.len();
            continue;
        }
        kept.resize(kept.len() + spaces, b' ');
        spaces = 0;
        kept.extend_from_slice(&frame);
    }
    Ok((kept, length))
}
