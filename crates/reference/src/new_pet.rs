//! createPet's body: validated as NewPet (and as each fault bends it), then stored.

use super::*;

/// The request-space class of a createPet request's media type and body, if it is one the
/// space names (cases/request-space.json: `header Content-Type`, `body`).
fn media_class(content_type: Option<&str>, body: &[u8]) -> Option<(&'static str, &'static str)> {
    let empty = body.iter().all(u8::is_ascii_whitespace);
    let Some(value) = content_type else {
        return Some(if empty {
            ("body", "no-body-no-content-type")
        } else {
            ("body", "body-without-content-type")
        });
    };
    let essence = value.split(';').next().unwrap_or("");
    if lenient::FORMS
        .iter()
        .any(|form| essence.trim().eq_ignore_ascii_case(form))
    {
        return Some(("body", "form-body"));
    }
    if !essence.trim().eq_ignore_ascii_case("application/json") {
        return None;
    }
    if empty {
        return Some(("body", "content-type-without-body"));
    }
    let class = if value == "application/json" {
        return None;
    } else if value == "application/json; charset=utf-8" {
        "charset-parameter"
    } else if value.trim() != value || essence.trim() != essence {
        "optional-whitespace"
    } else if essence != "application/json" {
        "letter-case"
    } else {
        "charset-spelling"
    };
    Some(("header Content-Type", class))
}

/// A refusal: its status and message.
type Refusal = (StatusCode, String);

fn bad(message: &str) -> Refusal {
    (StatusCode::BAD_REQUEST, message.to_string())
}

/// A well-formed body whose values are wrong: 400 by the contract, 422 by a store's choice
/// (or a fault).
fn invalid(shared: &Shared, message: &str) -> Refusal {
    let status = if shared.has(Fault::InvalidValues422) {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::from_u16(shared.choices.invalid_values).unwrap_or(StatusCode::BAD_REQUEST)
    };
    (status, message.to_string())
}

/// The store's answer to a class of the request space, when it refuses.
fn refused(shared: &Shared, input: &str, class: &str, message: &str) -> Result<(), Refusal> {
    match shared.class_answer(input, class) {
        Some(Answer::Refused(status)) => Err((
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            message.to_string(),
        )),
        Some(_) | None => Ok(()),
    }
}

/// Validates a NewPet body and stores it; the error is the status and message of the refusal.
/// `length` is the whole body's (spaces at its end are counted, not kept: [`read_body`]).
pub(super) fn new_pet(
    shared: &Shared,
    headers: &HeaderMap,
    body: &[u8],
    length: usize,
) -> Result<Pet, Refusal> {
    media(shared, headers, body, length)?;
    let repaired;
    let mut poisoned = false;
    let body = if shared.has(Fault::LoneSurrogatePoisonsReads)
        && let Some(text) = lone_surrogates_replaced(body)
    {
        poisoned = true;
        repaired = text;
        repaired.as_bytes()
    } else {
        body
    };
    let decoded;
    let body = match headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    {
        Some(media) if shared.has(Fault::Latin1BodyDecoded) && media.contains("iso-8859-1") => {
            // Every Latin-1 byte is the code point of its value.
            decoded = body.iter().map(|b| char::from(*b)).collect::<String>();
            decoded.as_bytes()
        }
        _ => body,
    };
    if (shared.has(Fault::InvalidBytesPoisonReads) || shared.has(Fault::NotUtf8RefusedStored))
        && std::str::from_utf8(body).is_err()
        && let Ok(Value::Object(fields)) = serde_json::from_str(&String::from_utf8_lossy(body))
    {
        let (name, category_id) = name_and_category(&fields);
        let pet = shared.insert(name, category_id, None);
        if shared.has(Fault::NotUtf8RefusedStored) {
            // Stored as its lossy text first, then refused: a 400 that leaves the pet behind.
            return Err(bad("the body is not UTF-8"));
        }
        // Kept as bytes (a database column of bytes): every listing that shows it fails after.
        shared.store().poisoned.insert(pet.id);
        return Ok(pet);
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        if shared.has(Fault::CreateEmptyBodyAccepted) {
            return Ok(shared.insert("unnamed".into(), 0, None));
        }
        return Err(bad("the body is empty; a NewPet is required"));
    }
    let body = byte_order_mark(shared, body)?;
    if shared.has(Fault::EscapedEnumRefused) && escaped_status(body) {
        return Err(invalid(
            shared,
            "status must be one of available, pending, sold",
        ));
    }
    if shared.has(Fault::TrailingDataStored)
        && let Some(Value::Object(fields)) = lenient::before_trailing_data(body)
    {
        let (name, category_id) = name_and_category(&fields);
        shared.insert(name, category_id, None);
        return Err(bad("the body has data after its JSON document"));
    }
    // Read as RFC 8259 reads it: a lone surrogate escape is JSON, and what becomes of it is
    // the store's choice (below).
    let parsed: Value = match petstore_vocabulary::json::read(body) {
        Ok(read) if read.duplicate_names.is_empty() => read.value,
        Ok(read) => duplicate_names(shared, body, read.value)?,
        Err(e) if shared.has(Fault::CreateMalformedJson500) => {
            return Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("parser crashed: {e}"),
            ));
        }
        Err(_) if shared.has(Fault::CreateNanAccepted) && non_json_number(body).is_some() => {
            non_json_number(body).unwrap_or_default()
        }
        Err(e) => match lenient::read(shared, body) {
            Some(value) => value,
            None => return Err(bad(&format!("the body is not well-formed JSON: {e}"))),
        },
    };
    // Whether categoryId came spelled as a float (100.0, 1e2); `-0` is an integer literal.
    let literal = lenient::category_literal(body);
    let float_spelled = literal.is_some_and(|literal| literal.contains(['.', 'e', 'E']));
    if shared.has(Fault::NegativeZeroRefused) && literal == Some("-0") {
        return Err(invalid(
            shared,
            "categoryId must be an integer (-0 read as a float)",
        ));
    }
    let fields = match parsed {
        Value::Object(fields) => member_names(shared, fields)?,
        Value::Array(items) if shared.has(Fault::ArrayReadPositionally) => {
            ["name", "categoryId", "status"]
                .into_iter()
                .map(String::from)
                .zip(items)
                .collect()
        }
        Value::Array(_) if shared.has(Fault::CreateArrayBodyAccepted) => {
            return Ok(shared.insert(String::new(), 0, None));
        }
        _ => return Err(bad("the body must be a JSON object (NewPet)")),
    };
    let name = read_name(shared, &fields)?;
    let status = read_status(shared, &fields)?;
    let category_id = read_category(shared, &fields, float_spelled, &name, status.as_ref())?;
    if shared.choices.known_categories && !KNOWN_CATEGORIES.contains(&category_id) {
        return Err(invalid(
            shared,
            &format!("unknown category {category_id}: this store knows categories 1 to 10"),
        ));
    }
    store(
        shared,
        &fields,
        name,
        category_id,
        status,
        float_spelled,
        poisoned,
    )
}

/// What this store takes as a createPet body's size and media type.
fn media(shared: &Shared, headers: &HeaderMap, body: &[u8], length: usize) -> Result<(), Refusal> {
    if shared
        .choices
        .body_limit
        .is_some_and(|limit| length > limit)
    {
        return Err((
            StatusCode::from_u16(shared.choices.body_limit_status)
                .unwrap_or(StatusCode::PAYLOAD_TOO_LARGE),
            "the body is larger than this store takes".into(),
        ));
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if length == 0
        && !headers.contains_key(header::CONTENT_TYPE)
        && let Some(status) = shared.hook(|hook| match hook {
            Hook::NoBodyAnswered(status) => StatusCode::from_u16(*status).ok(),
            _ => None,
        })
    {
        return Err((status, "no body to read, and no media type".into()));
    }
    if shared.has(Fault::ContentTypeCharsetRefused)
        && headers.contains_key(header::CONTENT_TYPE)
        && content_type != "application/json"
    {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be application/json".into(),
        ));
    }
    let class = media_class(
        headers
            .contains_key(header::CONTENT_TYPE)
            .then_some(content_type),
        body,
    );
    let mut media_taken = false;
    if let Some((input, class)) = class
        && shared.class_answer(input, class).is_some()
    {
        refused(shared, input, class, "the body must be application/json")?;
        media_taken = true;
    }
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !media_taken
        && !essence.eq_ignore_ascii_case("application/json")
        && !shared.has(Fault::CreateIgnoresContentType)
    {
        return Err(bad("the body must be application/json"));
    }
    if shared.has(Fault::LargeBody500) && length >= 16 * 1024 {
        return Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "request body exceeds the proxy buffer".into(),
        ));
    }
    Ok(())
}

/// The name, as this store reads and keeps it.
fn read_name(shared: &Shared, fields: &serde_json::Map<String, Value>) -> Result<String, Refusal> {
    let reading = shared.hook(|hook| match hook {
        Hook::NameRead(reading) => Some(*reading),
        _ => None,
    });
    let spelt = fields.get("name");
    let name = match (spelt, reading.and_then(|reading| reading.takes(spelt))) {
        (Some(Value::String(name)), _) => name.clone(),
        (_, Some(taken)) => taken,
        (None, None) => return Err(bad("name is required")),
        (Some(_), None) => return Err(invalid(shared, "name must be a string")),
    };
    free_name(shared, &name)?;
    let name = if reading == Some(NameReading::Trimmed) {
        name.trim().to_string()
    } else {
        name
    };
    let lone = |c: char| petstore_vocabulary::json::lone_surrogate(c).is_some();
    Ok(match shared.choices.surrogates {
        _ if !name.chars().any(lone) => name,
        Surrogates::Refused => {
            return Err(bad("name holds a lone surrogate: not Unicode text"));
        }
        Surrogates::AsSent => name,
        Surrogates::Repaired => name
            .chars()
            .map(|c| if lone(c) { '\u{fffd}' } else { c })
            .collect(),
    })
}

/// Whether the body's status is a string spelt with a `\` escape: what an enum binder that
/// matches the raw token, not the decoded string, refuses.
fn escaped_status(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    let Some(at) = text.find("\"status\"") else {
        return false;
    };
    let rest = text[at + 8..]
        .trim_start()
        .trim_start_matches(':')
        .trim_start();
    rest.strip_prefix('"')
        .and_then(|value| value.find('"').map(|end| &value[..end]))
        .is_some_and(|value| value.contains('\\'))
}

/// The status, as this store reads it (`None`: none kept).
fn read_status(
    shared: &Shared,
    fields: &serde_json::Map<String, Value>,
) -> Result<Option<String>, Refusal> {
    Ok(match fields.get("status") {
        None => None,
        Some(Value::String(s)) if PET_STATUSES.contains(&s.as_str()) => Some(s.clone()),
        // A store that takes a status PetStatus does not hold keeps what it reads of it.
        Some(spelt)
            if let Some(kept) = shared.hook(|hook| match hook {
                Hook::StatusTaken(reading) => reading.keeps(spelt),
                _ => None,
            }) =>
        {
            kept
        }
        Some(Value::Null) if shared.has(Fault::StatusNull500) => {
            return Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                "null pointer dereference".into(),
            ));
        }
        Some(_) if shared.has(Fault::StatusValidatedAfterInsert) => {
            let name = fields.get("name").and_then(Value::as_str).unwrap_or("");
            let category_id = fields
                .get("categoryId")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            shared.insert(name.to_string(), category_id, None);
            return Err(invalid(
                shared,
                "status must be one of available, pending, sold",
            ));
        }
        Some(Value::Null) => {
            let message = "status must be one of available, pending, sold";
            refused(shared, "body field status", "null", message)?;
            return Err(invalid(shared, message));
        }
        Some(Value::String(s)) if s.is_empty() => {
            let message = "status must be one of available, pending, sold, not empty";
            refused(shared, "body field status", "empty-string", message)?;
            return Err(invalid(shared, message));
        }
        Some(_) => {
            return Err(invalid(
                shared,
                "status must be one of available, pending, sold",
            ));
        }
    })
}

/// The categoryId, as this store reads it.
fn read_category(
    shared: &Shared,
    fields: &serde_json::Map<String, Value>,
    float_spelled: bool,
    name: &str,
    status: Option<&String>,
) -> Result<i64, Refusal> {
    Ok(match fields.get("categoryId") {
        None if shared.has(Fault::CreateMissingCategoryStored) => {
            shared.insert(name.to_string(), 0, status.cloned());
            return Err(bad("categoryId is required"));
        }
        None => return Err(bad("categoryId is required")),
        Some(value) => {
            let message = "categoryId must be an integer in the int64 range";
            let class = category_class(value, float_spelled);
            if class == Some("integer-spellings") {
                refused(
                    shared,
                    "body field categoryId",
                    "integer-spellings",
                    message,
                )?;
            }
            match (category_id(shared, value), class) {
                (Some(id), _) => id,
                // Past int64 or a double: refused with the status the store chose for it.
                (None, Some(class)) => {
                    refused(shared, "body field categoryId", class, message)?;
                    return Err(invalid(shared, message));
                }
                (None, None) => return Err(invalid(shared, message)),
            }
        }
    })
}

/// Stores the pet (as each storage-level fault bends it) and returns it as answered.
fn store(
    shared: &Shared,
    fields: &serde_json::Map<String, Value>,
    name: String,
    category_id: i64,
    status: Option<String>,
    float_spelled: bool,
    poisoned: bool,
) -> Result<Pet, Refusal> {
    // Storage-level faults: they act after validation, as a database would.
    if shared.has(Fault::Create500TwoWays)
        && (name.chars().count() > 255 || category_id == i64::MAX || category_id == i64::MIN)
    {
        return Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "value out of range".into(),
        ));
    }
    let storage = shared.hook(|hook| match hook {
        Hook::NameStored(storage) => Some(*storage),
        _ => None,
    });
    let name = match storage {
        Some(NameStorage::CutAt(most)) => name.chars().take(most).collect(),
        _ => name,
    };
    if let Some(NameStorage::ColumnOf(most)) = storage
        && name.chars().count() > most
    {
        return Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("value too long for column \"name\" ({most})"),
        ));
    }
    let stored_category = if shared.has(Fault::CategoryIdTruncated32) {
        i64::from(category_id as i32)
    } else {
        category_id
    };
    if storage == Some(NameStorage::AsciiOnly) {
        let stored: String = name
            .chars()
            .map(|c| if c.is_ascii() { c } else { '?' })
            .collect();
        let mut pet = shared.insert(stored, stored_category, status);
        pet.name = name; // the answer echoes what was sent; the store keeps the altered name
        return Ok(pet);
    }
    let body_id = id_member(shared, fields)?;
    let mut pet = match body_id {
        Some(id) => insert_with_id(shared, id, name, stored_category, status),
        None => shared.insert(name, stored_category, status),
    };
    if float_spelled && shared.choices.float_echo {
        pet.category_float = true;
        let mut store = shared.store();
        if let Some(stored) = store.pets.iter_mut().find(|stored| stored.id == pet.id) {
            stored.category_float = true;
        }
    }
    if poisoned {
        shared.store().poisoned.insert(pet.id);
    }
    Ok(pet)
}

/// The categories that exist under the known-categories variant.
const KNOWN_CATEGORIES: std::ops::RangeInclusive<i64> = 1..=10;

pub(super) fn category_id(shared: &Shared, value: &Value) -> Option<i64> {
    if let Some(id) = value.as_i64() {
        return Some(id);
    }
    // A store that takes a categoryId that is no integer reads it its own way.
    if let Some(id) = shared.hook(|hook| match hook {
        Hook::CategoryTaken(reading) => reading.reads(value),
        _ => None,
    }) {
        return Some(id);
    }
    // JSON Schema counts 3.0 as an integer; accept it where it fits exactly.
    let float = value.as_f64()?;
    let fits = float.fract() == 0.0 && (-9.2e18..9.2e18).contains(&float);
    fits.then_some(float as i64)
}

/// The request-space class of a categoryId value (`body field categoryId`), if it is one the
/// space names: another spelling of an integer, or one past int64 or a double.
fn category_class(value: &Value, float_spelled: bool) -> Option<&'static str> {
    let number = value.as_number()?;
    if petstore_vocabulary::json::integer(value).is_some_and(|n| i64::try_from(n).is_ok()) {
        return float_spelled.then_some("integer-spellings");
    }
    match number.as_f64() {
        Some(f) if f.abs() == f64::MAX => Some("beyond-double"),
        Some(f) if f.fract() == 0.0 => Some("beyond-int64"),
        _ => None,
    }
}

/// The body read as JavaScript would, NaN and Infinity taken as 0: what the
/// create-nan-accepted fault parses.
fn non_json_number(body: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(body)
        .replace("-Infinity", "0")
        .replace("Infinity", "0")
        .replace("NaN", "0");
    serde_json::from_str(&text).ok()
}

/// `body` with every request header named as a NewPet member the body lacks added to it, as
/// a framework that merges every input source into one bag reads a request.
pub(super) fn headers_merged(headers: &HeaderMap, body: Vec<u8>) -> Vec<u8> {
    const MEMBERS: [&str; 3] = ["name", "categoryId", "status"];
    if !MEMBERS.iter().any(|member| headers.contains_key(*member)) {
        return body; // the body as it came (a member named twice stays twice)
    }
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(&body) else {
        return body;
    };
    for member in MEMBERS {
        if let Some(value) = headers.get(member).and_then(|v| v.to_str().ok()) {
            let value = value
                .parse::<i64>()
                .map_or_else(|_| Value::String(value.into()), Value::from);
            fields.entry(member).or_insert(value);
        }
    }
    serde_json::to_vec(&fields).unwrap_or(body)
}

/// The name and categoryId a faulty store takes from a body it should not have read.
fn name_and_category(fields: &serde_json::Map<String, Value>) -> (String, i64) {
    let name = fields.get("name").and_then(Value::as_str).unwrap_or("");
    let category_id = fields
        .get("categoryId")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    (name.to_string(), category_id)
}
