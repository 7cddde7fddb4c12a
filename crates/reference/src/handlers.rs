//! The operations: listPets, createPet, getPet, the store orders, and what answers an
//! unknown path or method.

use super::*;

pub(super) fn query_pairs(uri: &Uri) -> Vec<(String, String)> {
    form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

pub(super) async fn list_pets(
    State(shared): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if let Some(response) = query_answer(&shared, &uri) {
        return response;
    }
    let uri = super::queries::header_limit_merged(&shared, &headers, uri);
    let (mut limit, status_filter) = match listing_query(&shared, &uri) {
        Ok(read) => read,
        Err(instead) => return *instead,
    };
    if let Some(cap) = shared.choices.page_cap {
        limit = limit.min(cap);
    }
    let filtered_first = match filter_reading(&shared) {
        Some(FilterReading::FirstOnly(first)) => first,
        _ => usize::MAX,
    };
    let store = shared.store();
    if shared
        .hook(|hook| match hook {
            Hook::ListingFailsPast(rows) => Some(*rows),
            _ => None,
        })
        .is_some_and(|rows| store.pets.len() > rows)
    {
        drop(store);
        return error(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "too many SQL variables",
        );
    }
    let pets: Vec<Value> = store
        .pets
        .iter()
        .enumerate()
        .filter(|(position, pet)| match &status_filter {
            _ if *position >= filtered_first => true,
            Some(wanted) => pet.status.as_deref() == Some(wanted.as_str()),
            None => true,
        })
        .map(|(_, pet)| pet)
        .take(limit)
        .map(|pet| {
            let mut value = shared.pet_value(pet);
            if shared.has(Fault::ListPetsInvalidPet) {
                value["id"] = Value::String(pet.id.to_string());
            }
            value
        })
        .collect();
    let poisoned = (shared.has(Fault::LoneSurrogatePoisonsReads)
        || shared.has(Fault::InvalidBytesPoisonReads))
        && pets.iter().any(|pet| {
            pet.get("id")
                .and_then(Value::as_i64)
                .is_some_and(|id| store.poisoned.contains(&id))
        });
    drop(store);
    if poisoned {
        return error(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "invalid UTF-16 in a stored name",
        );
    }
    if pets.is_empty() && status_filter.is_some() && shared.has(Fault::EmptyListNull) {
        return answer(&shared, StatusCode::OK, &Value::Null);
    }
    let mut response = answer(&shared, StatusCode::OK, &pets);
    if shared
        .hooks()
        .any(|hook| *hook == Hook::DeprecatedAlso(Route::ListPets))
    {
        insert_deprecation(&mut response, &format!("@{DEPRECATED_SINCE_UNIX}"));
    }
    response
}

/// Creates at once (in flight together, or arriving while one holds its read id) from which
/// the concurrency faults act ("under load"): the harness's
/// distinct-ids rule sends a burst of 16 at once (a race needs two; a server of a few workers
/// takes 16 connections where 64 at once would overflow its backlog or its cap); other rules'
/// creates reach this many now and then (the faults' `may_break`).
pub(super) const LOAD: usize = 16;

/// Django's default `DATA_UPLOAD_MAX_MEMORY_SIZE` (2.5 MB), for the body-limit-html fault.
const DJANGO_LIMIT: usize = 2_621_440;

/// How long a lone create under a concurrency fault holds its read id.
const LONE_HOLD: std::time::Duration = std::time::Duration::from_millis(2);

/// How long a create under a concurrency fault holds its read id: long enough for a burst
/// of new connections to be all in flight at once.
const RACE_WINDOW: std::time::Duration = std::time::Duration::from_millis(50);

/// The body's JSON object with the query's parameters added where it lacks them (numbers as
/// numbers), as a framework that merges every input into one map reads it.
fn query_merged(uri: &Uri, body: Vec<u8>) -> Vec<u8> {
    let pairs = query_pairs(uri);
    if pairs.is_empty() {
        return body; // the body as it came (a member named twice stays twice)
    }
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(&body) else {
        return body;
    };
    for (name, value) in pairs {
        let value = value
            .parse::<i64>()
            .map_or(Value::String(value), Value::from);
        fields.entry(name).or_insert(value);
    }
    serde_json::to_vec(&fields).unwrap_or(body)
}

pub(super) async fn create_pet(
    State(shared): State<AppState>,
    mut headers: HeaderMap,
    uri: Uri,
    body: axum::body::Body,
) -> Response {
    let Ok((mut body, length)) = read_body(body).await else {
        return error(
            &shared,
            StatusCode::BAD_REQUEST,
            "unreadable-body",
            "the body could not be read to its end",
        );
    };
    let merges = |channel: Channel| {
        shared
            .hooks()
            .any(|hook| *hook == Hook::MembersAlsoFrom(channel))
    };
    if merges(Channel::Form)
        && let Some(fields) = lenient::form_as_json(&headers, &body)
    {
        body = fields;
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    if merges(Channel::Query) {
        body = query_merged(&uri, body);
    }
    if merges(Channel::Header) {
        body = super::new_pet::headers_merged(&headers, body);
    }
    if shared.has(Fault::BodyLimitHtml) && length > DJANGO_LIMIT {
        let page = "<!DOCTYPE html><html><body><h1>Request Entity Too Large</h1></body></html>";
        let mut response = (StatusCode::PAYLOAD_TOO_LARGE, page).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        return response;
    }
    let arrived_with = shared.creates_in_flight.fetch_add(1, Ordering::SeqCst);
    let arrivals_before = shared.creates_arrived.fetch_add(1, Ordering::SeqCst);
    let racy = shared.has(Fault::RacyIdCounter);
    let lossy = shared.has(Fault::LostWriteUnderLoad);
    // The id a racy counter reads before it writes, and the window in which others read it too:
    // long among concurrent creates, short for a lone one (a shrinking chain stays fast), but
    // long enough that the next of a burst finds it in flight.
    let read_id = shared.store().next_id;
    if racy || lossy {
        let hold = if arrived_with > 0 {
            RACE_WINDOW
        } else {
            LONE_HOLD
        };
        tokio::time::sleep(hold).await;
    }
    // The creates this one overlapped: those in flight when it came, and those that came while
    // it held its read id.
    let overlapped = arrived_with
        + shared
            .creates_arrived
            .load(Ordering::SeqCst)
            .saturating_sub(arrivals_before + 1);
    let loaded = overlapped + 1 >= LOAD;
    let mut created = new_pet(&shared, &headers, &body, length);
    if let Ok(pet) = &mut created
        && loaded
    {
        let mut store = shared.store();
        if racy && let Some(stored) = store.pets.iter_mut().find(|p| p.id == pet.id) {
            stored.id = read_id + 1;
            pet.id = read_id + 1;
            store.next_id = read_id + 1;
        }
        if lossy {
            store.pets.retain(|p| p.id != pet.id);
        }
    }
    shared.creates_in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut response = match created {
        Ok(pet) => {
            let status = if shared.has(Fault::CreateReturns200) {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            if shared.has(Fault::UnescapedNameJson) {
                let status_field = pet
                    .status
                    .as_ref()
                    .map(|s| format!(",\"status\":\"{s}\""))
                    .unwrap_or_default();
                let text = format!(
                    "{{\"id\":{},\"name\":\"{}\",\"categoryId\":{}{status_field}}}",
                    pet.id, pet.name, pet.category_id
                );
                let mut response = (status, text).into_response();
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                return response;
            }
            let mut value = shared.pet_value(&pet);
            if shared.has(Fault::CreateDropsStatus)
                && let Some(fields) = value.as_object_mut()
            {
                fields.remove("status");
            }
            answer(&shared, status, &value)
        }
        Err((status, message)) => error(&shared, status, "invalid-pet", &message),
    };
    if shared
        .hooks()
        .any(|hook| *hook == Hook::DeprecatedAlso(Route::CreatePet))
    {
        insert_deprecation(&mut response, &format!("@{DEPRECATED_SINCE_UNIX}"));
    }
    response
}

pub(super) async fn get_pet(
    State(shared): State<AppState>,
    uri: Uri,
    request_headers: HeaderMap,
) -> Response {
    let segment = uri.path().trim_start_matches("/v1/pets/");
    if shared.has(Fault::EncodedSlashHtml) && segment.to_ascii_uppercase().contains("%2F") {
        let page =
            "<!doctype html><html><body><h1>HTTP Status 400 – Bad Request</h1></body></html>";
        let mut response = (StatusCode::BAD_REQUEST, page).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html;charset=utf-8"),
        );
        return response;
    }
    // A percent-encoded character is the character (RFC 3986 section 6.2.2.2).
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    let reading = shared.hook(|hook| match hook {
        Hook::PetIdRead(reading) => Some(*reading),
        _ => None,
    });
    let raw_id = if reading == Some(PetIdReading::PercentEncodingIgnored) {
        segment
    } else {
        decoded.as_ref()
    };
    let overflows = raw_id
        .trim_start_matches('-')
        .bytes()
        .all(|b| b.is_ascii_digit())
        && !raw_id.trim_start_matches('-').is_empty();
    let mut response = match raw_id.parse::<i64>() {
        Err(_) if overflows && reading == Some(PetIdReading::OverflowCrashes) => error(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "integer overflow",
        ),
        Err(_) if reading == Some(PetIdReading::NonIntegerCrashes) => error(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "could not parse petId",
        ),
        Err(_) => error(
            &shared,
            StatusCode::from_u16(shared.choices.non_integer_pet_id)
                .unwrap_or(StatusCode::BAD_REQUEST),
            "invalid-pet-id",
            "petId must be an int64 integer",
        ),
        Ok(id) => {
            let store = shared.store();
            // A replica that has not caught up yet: a pet stored a moment ago is not found.
            let lagging = store
                .stored_at
                .get(&id)
                .is_some_and(|at| at.elapsed() < std::time::Duration::from_millis(100));
            let looked_up = reading.map_or(id, |reading| reading.looked_up(id));
            let found = store
                .pets
                .iter()
                .find(|pet| pet.id == looked_up && !lagging)
                .cloned();
            drop(store);
            let poisoned = shared.has(Fault::LoneSurrogatePoisonsReads)
                && found
                    .as_ref()
                    .is_some_and(|pet| shared.store().poisoned.contains(&pet.id));
            match found {
                Some(_) if poisoned => error(
                    &shared,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "invalid UTF-16 in a stored name",
                ),
                Some(mut pet) => {
                    if shared.has(Fault::GetPetAltersCategory) {
                        pet.category_id = 0;
                    }
                    answer(&shared, StatusCode::OK, &shared.pet_value(&pet))
                }
                None => match shared.hook(|hook| match hook {
                    Hook::UnknownPetAnswered(answered) => Some(*answered),
                    _ => None,
                }) {
                    Some(UnknownPetAnswer::EmptyObject) => {
                        answer(&shared, StatusCode::OK, &json!({}))
                    }
                    Some(UnknownPetAnswer::Mock) if id == i64::MAX => error(
                        &shared,
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid-pet-id",
                        "petId exceeds the largest safe integer",
                    ),
                    Some(UnknownPetAnswer::EchoedId) => answer(
                        &shared,
                        StatusCode::OK,
                        &json!({"id": id, "name": "doggie", "categoryId": 1, "status": "available"}),
                    ),
                    Some(UnknownPetAnswer::Mock) => answer(
                        &shared,
                        StatusCode::OK,
                        &json!({"id": 0, "name": "doggie", "categoryId": 1, "status": "available"}),
                    ),
                    None => error(
                        &shared,
                        StatusCode::NOT_FOUND,
                        "pet-not-found",
                        &format!("no pet has id {id}"),
                    ),
                },
            }
        }
    };
    let host = request_headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok());
    deprecation_headers(&shared, &mut response, host);
    response
}

pub(super) async fn list_store_orders(State(shared): State<AppState>) -> Response {
    if shared.has(Fault::StoreOrdersMissing) {
        return not_found(State(shared)).await;
    }
    answer(&shared, StatusCode::OK, &json!([]))
}

pub(super) async fn not_found(State(shared): State<AppState>) -> Response {
    error(
        &shared,
        StatusCode::NOT_FOUND,
        "not-found",
        "no such resource",
    )
}

pub(super) async fn method_not_allowed(State(shared): State<AppState>) -> Response {
    if shared.choices.undeclared_method == 404 {
        return not_found(State(shared)).await;
    }
    error(
        &shared,
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "method not allowed on this resource",
    )
}

/// A path ending in a slash, before routing and authentication: under the
/// trailing-slash-redirect variant, a body-less 307 to the same path without the slash (what
/// Starlette's router answers by default); under the trailing-slash-500 fault, a 500.
pub(super) async fn trailing_slash(
    State(shared): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if path.len() <= 1 || !path.ends_with('/') {
        return next.run(request).await;
    }
    if shared.has(Fault::TrailingSlash500) {
        return error(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "unhandled route",
        );
    }
    match shared.choices.trailing_slash {
        TrailingSlash::NotFound => return next.run(request).await,
        TrailingSlash::SameAsWithout => {
            // Routed as the path without it (Express's default).
            let trimmed = path.trim_end_matches('/').to_string();
            let (mut parts, body) = request.into_parts();
            let query = parts
                .uri
                .query()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            if let Ok(uri) = format!("{trimmed}{query}").parse::<Uri>() {
                parts.uri = uri;
            }
            return next.run(Request::from_parts(parts, body)).await;
        }
        TrailingSlash::Redirect => {}
    }
    let query = request
        .uri()
        .query()
        .map(|query| format!("?{query}"))
        .unwrap_or_default();
    let target = format!("{}{query}", path.trim_end_matches('/'));
    // Starlette redirects to the absolute URL, from the Host the request named.
    let location = match request
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
    {
        Some(host) => format!("http://{host}{target}"),
        None => target,
    };
    let mut response = StatusCode::TEMPORARY_REDIRECT.into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}
