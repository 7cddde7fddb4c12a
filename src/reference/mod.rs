//! The built-in reference server: an in-memory Pet Store that honours every statement of the
//! contract, unless told to break one with a [`Fault`].
//!
//! Every answer, refusals included, is a JSON body with `application/json`; axum's built-in
//! extractors are avoided on purpose, because their rejections answer in text/plain.

mod faults;
mod variants;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde_json::{Value, json};

pub use faults::{FAULTS, Fault, FaultInfo};
pub use variants::{VARIANTS, Variant, VariantInfo};

use crate::contract::{DEPRECATED_SINCE_UNIX, PET_STATUSES, SUNSET_HTTP_DATE};

/// How to run the reference server.
#[derive(Debug, Clone)]
pub struct ReferenceConfig {
    pub api_key: String,
    pub faults: BTreeSet<Fault>,
    pub variants: BTreeSet<Variant>,
    /// Added before every answer, so a remote target can be seen without a proxy.
    pub latency: std::time::Duration,
}

impl ReferenceConfig {
    pub fn new(api_key: impl Into<String>) -> ReferenceConfig {
        ReferenceConfig {
            api_key: api_key.into(),
            faults: BTreeSet::new(),
            variants: BTreeSet::new(),
            latency: std::time::Duration::ZERO,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct Pet {
    id: i64,
    name: String,
    #[serde(rename = "categoryId")]
    category_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
}

#[derive(Default)]
struct Store {
    pets: Vec<Pet>,
    next_id: i64,
    /// When each pet was stored, kept only under the read-after-write-lag fault.
    stored_at: std::collections::HashMap<i64, std::time::Instant>,
}

struct Shared {
    config: ReferenceConfig,
    store: Mutex<Store>,
    /// createPet requests being handled right now.
    creates_in_flight: std::sync::atomic::AtomicUsize,
    /// Under the throttled variant: the current 100 ms window and the requests it let in.
    throttle_window: Mutex<(std::time::Instant, u32)>,
}

impl Shared {
    fn has(&self, fault: Fault) -> bool {
        self.config.faults.contains(&fault)
    }

    fn is(&self, variant: Variant) -> bool {
        self.config.variants.contains(&variant)
    }

    /// A pet as the service answers it (with extra fields under a variant).
    fn pet_value(&self, pet: &Pet) -> Value {
        let mut value = serde_json::to_value(pet).unwrap_or(Value::Null);
        if self.is(Variant::ExtraFields) {
            value["createdAt"] = json!("2026-11-21T00:00:00Z");
            value["tags"] = json!(["reference", {"kind": "extra"}]);
        }
        value
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        // A panic while holding the lock cannot leave the Vec half-updated in a way that
        // matters here, so a poisoned lock is used as is.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn insert(&self, name: String, category_id: i64, status: Option<String>) -> Pet {
        let mut store = self.store();
        store.next_id += 1;
        let mut id = store.next_id;
        if self.is(Variant::ZeroBasedIds) {
            id -= 1;
        } else if self.is(Variant::NegativeIds) {
            id = -id;
        }
        if self.has(Fault::DuplicateIds) && id % 2 == 0 {
            id -= 1;
        }
        if self.is(Variant::HugeIds) {
            id += 1 << 62;
        } else if self.is(Variant::RandomIds) {
            id = crate::seed::splitmix64(id as u64) as i64;
        }
        let status = if status.is_none() && self.is(Variant::StatusDefaultAvailable) {
            Some("available".to_string())
        } else {
            status
        };
        let pet = Pet {
            id,
            name,
            category_id,
            status,
        };
        store.pets.push(pet.clone());
        if self.has(Fault::ReadAfterWriteLag) {
            store.stored_at.insert(pet.id, std::time::Instant::now());
        }
        pet
    }
}

type AppState = Arc<Shared>;

/// A reference server running on 127.0.0.1; stops when dropped.
pub struct ReferenceServer {
    pub base_url: String,
    pub addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for ReferenceServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

impl ReferenceServer {
    /// Binds 127.0.0.1:`port` (0 = ephemeral) and serves on the current tokio runtime.
    pub async fn start(config: ReferenceConfig, port: u16) -> std::io::Result<ReferenceServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = router(config);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(ReferenceServer {
            base_url: format!("http://{addr}/v1"),
            addr,
            shutdown: Some(shutdown),
        })
    }
}

pub fn router(config: ReferenceConfig) -> Router {
    let state: AppState = Arc::new(Shared {
        config,
        store: Mutex::new(Store::default()),
        creates_in_flight: std::sync::atomic::AtomicUsize::new(0),
        throttle_window: Mutex::new((std::time::Instant::now(), 0)),
    });
    if state.is(Variant::CrowdedStore) {
        for n in 0..3000 {
            let status = [Some("available"), Some("pending"), Some("sold"), None][n % 4];
            state.insert(
                format!("resident {n}"),
                (n % 7) as i64,
                status.map(String::from),
            );
        }
    }
    Router::new()
        .route("/v1/pets", get(list_pets).post(create_pet))
        .route("/v1/pets/{pet_id}", get(get_pet))
        .route("/v1/store/orders", get(list_store_orders))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(middleware::from_fn_with_state(state.clone(), shape))
        .layer(middleware::from_fn_with_state(state.clone(), delay))
        .with_state(state)
}

/// The configured latency, before anything else: every answer, refusals included, waits.
async fn delay(State(shared): State<AppState>, request: Request, next: Next) -> Response {
    if !shared.config.latency.is_zero() {
        tokio::time::sleep(shared.config.latency).await;
    }
    if shared.is(Variant::Throttled) && over_rate(&shared) {
        // A gateway in front of the service: 429 with Retry-After, as a staging one answers.
        let mut response = error(
            &shared,
            StatusCode::TOO_MANY_REQUESTS,
            "throttled",
            "too many requests",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    }
    next.run(request).await
}

/// Requests let in per 100 ms window under the throttled variant (300 per second).
const THROTTLE_PER_WINDOW: u32 = 30;

fn over_rate(shared: &Shared) -> bool {
    let mut window = shared
        .throttle_window
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if window.0.elapsed() >= std::time::Duration::from_millis(100) {
        *window = (std::time::Instant::now(), 0);
    }
    window.1 += 1;
    window.1 > THROTTLE_PER_WINDOW
}

/// A JSON answer, with the content type the faults may spoil.
fn answer(shared: &Shared, status: StatusCode, body: &impl Serialize) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut response = (status, bytes).into_response();
    let content_type = if status.is_client_error() && shared.has(Fault::ErrorTextPlain) {
        "text/plain"
    } else {
        "application/json"
    };
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn error(shared: &Shared, status: StatusCode, code: &str, message: &str) -> Response {
    let status_field = if shared.has(Fault::ErrorStatusMismatch) {
        400
    } else {
        status.as_u16()
    };
    answer(
        shared,
        status,
        &json!({"code": code, "message": message, "status": status_field}),
    )
}

/// Bearer authentication on every operation, before routing, so that an unknown path or a
/// malformed body without a key still answers 401.
async fn authenticate(State(shared): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let method = request.method().clone();
    let skipped =
        (path == "/v1/pets" && method == Method::GET && shared.has(Fault::AuthSkippedListPets))
            || (path == "/v1/pets"
                && method == Method::POST
                && shared.has(Fault::AuthSkippedCreatePet))
            || (path.starts_with("/v1/pets/") && shared.has(Fault::AuthSkippedGetPet))
            || (path == "/v1/store/orders" && shared.has(Fault::AuthSkippedStoreOrders));
    if skipped || authorized(&shared, request.headers()) {
        return next.run(request).await;
    }
    // Faults that look at the request before the key: a refusal for what else is wrong wins.
    let read_only_first = (path == "/v1/pets"
        && method == Method::GET
        && shared.has(Fault::QueryValidatedBeforeAuth))
        || (path.starts_with("/v1/pets/") && shared.has(Fault::NotFoundBeforeAuth));
    if read_only_first {
        let response = next.run(request).await;
        if response.status().is_client_error() {
            return response;
        }
        return unauthorized(&shared);
    }
    let request = if path == "/v1/pets"
        && method == Method::POST
        && shared.has(Fault::ValidationBeforeAuth)
    {
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20)
            .await
            .unwrap_or_default();
        if let Some(message) = invalid_new_pet(&parts.headers, &body) {
            return error(&shared, StatusCode::BAD_REQUEST, "invalid-pet", &message);
        }
        Request::from_parts(parts, Body::from(body))
    } else {
        request
    };
    if shared.has(Fault::RefusedCreateStillStored) && path == "/v1/pets" && method == Method::POST {
        let body = axum::body::to_bytes(request.into_body(), 1 << 20)
            .await
            .unwrap_or_default();
        if let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&body) {
            let name = fields.get("name").and_then(Value::as_str).unwrap_or("");
            let category_id = fields
                .get("categoryId")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let status = fields
                .get("status")
                .and_then(Value::as_str)
                .map(String::from);
            shared.insert(name.to_string(), category_id, status);
        }
    }
    unauthorized(&shared)
}

/// What is wrong with a createPet body, checked without storing anything (for the fault that
/// validates before authenticating).
fn invalid_new_pet(headers: &HeaderMap, body: &[u8]) -> Option<String> {
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    if !json_type {
        return Some("the body must be application/json".into());
    }
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) else {
        return Some("the body must be a JSON object".into());
    };
    let name_ok = fields.get("name").is_some_and(Value::is_string);
    let category_ok = fields
        .get("categoryId")
        .is_some_and(|v| v.as_i64().is_some());
    let status_ok = match fields.get("status") {
        None => true,
        Some(Value::String(status)) => PET_STATUSES.contains(&status.as_str()),
        Some(_) => false,
    };
    (!(name_ok && category_ok && status_ok)).then(|| "invalid NewPet".into())
}

/// The 401 of a request without a valid key.
fn unauthorized(shared: &Shared) -> Response {
    if shared.has(Fault::UnauthorizedWithoutBody) {
        let mut response = (StatusCode::UNAUTHORIZED, Body::empty()).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        return response;
    }
    let mut response = error(
        shared,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "missing or invalid API key",
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"petstore\""),
    );
    response
}

fn authorized(shared: &Shared, headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    let token = token.trim_start_matches(' ');
    let scheme_ok = if shared.has(Fault::AuthAnyScheme) {
        true
    } else if shared.has(Fault::AuthSchemeCaseSensitive) {
        scheme == "Bearer"
    } else {
        // RFC 9110 section 11.1: the scheme name is case-insensitive.
        scheme.eq_ignore_ascii_case("bearer")
    };
    let key = shared.config.api_key.as_str();
    let token_ok = token == key
        || (token.is_empty() && shared.has(Fault::AuthEmptyTokenAccepted))
        || (shared.has(Fault::AuthCaseInsensitive) && token.eq_ignore_ascii_case(key))
        || (shared.has(Fault::AuthPrefixMatch) && token.starts_with(key))
        || (shared.has(Fault::AuthOneCharShort)
            && !token.is_empty()
            && key.starts_with(token)
            && token.len() + 1 >= key.len())
        || (shared.has(Fault::AuthIgnoresFirstChar)
            && token.len() + 1 >= key.len()
            && key.get(1..).is_some_and(|rest| token.ends_with(rest)));
    scheme_ok && token_ok
}

fn query_pairs(uri: &Uri) -> Vec<(String, String)> {
    form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

async fn list_pets(State(shared): State<AppState>, uri: Uri) -> Response {
    let mut limit: usize = if shared.has(Fault::DefaultLimitTen) {
        10
    } else {
        20
    };
    let mut explicit_limit = false;
    if shared.has(Fault::DefaultLimitIgnored) {
        limit = usize::MAX;
    }
    let mut status_filter: Option<String> = None;
    for (name, value) in query_pairs(&uri) {
        match name.as_str() {
            "limit"
                if shared.has(Fault::LimitHuge500)
                    && value.len() > 18
                    && value.bytes().all(|b| b.is_ascii_digit()) =>
            {
                return error(
                    &shared,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "number too large",
                );
            }
            "limit" => match parse_limit(&shared, &value) {
                Ok(Some(parsed)) => {
                    limit = parsed;
                    explicit_limit = true;
                }
                Ok(None) => {}
                Err(message) => {
                    return error(&shared, StatusCode::BAD_REQUEST, "invalid-limit", &message);
                }
            },
            "status" => {
                let value = if shared.has(Fault::StatusCaseInsensitive) {
                    value.to_ascii_lowercase()
                } else {
                    value
                };
                if !PET_STATUSES.contains(&value.as_str()) {
                    if shared.has(Fault::StatusFilterUnknownAccepted) {
                        return answer(&shared, StatusCode::OK, &json!([]));
                    }
                    return error(
                        &shared,
                        StatusCode::BAD_REQUEST,
                        "invalid-status",
                        "status must be one of available, pending, sold",
                    );
                }
                if !shared.has(Fault::StatusFilterIgnored) {
                    status_filter = Some(value);
                }
            }
            _ => {}
        }
    }
    if explicit_limit {
        if shared.has(Fault::LimitIgnored) {
            limit = 20;
        } else if shared.has(Fault::LimitOffByOne) {
            limit = limit.saturating_add(1);
        } else if shared.has(Fault::LimitMaximumReturns99) && limit == 100 {
            limit = 99;
        }
    }
    let store = shared.store();
    let pets: Vec<Value> = store
        .pets
        .iter()
        .enumerate()
        .filter(|(position, pet)| match &status_filter {
            _ if *position >= 50 && shared.has(Fault::StatusFilterFirst50) => true,
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
    drop(store);
    let mut response = answer(&shared, StatusCode::OK, &pets);
    if shared.has(Fault::DeprecationOnListPets) {
        insert_deprecation(&mut response, &format!("@{DEPRECATED_SINCE_UNIX}"));
    }
    response
}

/// `Ok(None)`: leave the default; `Err`: the 400 message.
fn parse_limit(shared: &Shared, value: &str) -> Result<Option<usize>, String> {
    let refused = || format!("limit must be an integer from 1 to 100, not {value:?}");
    if shared.has(Fault::LimitBoundsUnchecked) {
        return Ok(match value.parse::<i128>() {
            Ok(n) if n < 0 => Some(usize::MAX),
            Ok(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Err(_) => None,
        });
    }
    match value.parse::<i64>() {
        Ok(1) if shared.has(Fault::LimitMinimumRefused) => Err(refused()),
        Ok(n) if (1..=100).contains(&n) => Ok(Some(n as usize)),
        _ => Err(refused()),
    }
}

/// Creates in flight from which the concurrency faults act ("under load"): more than the
/// harness's other rules ever have in flight (8 trials, fixtures in batches of 8), as many as
/// its concurrent-create rule sends at once.
const LOAD: usize = 16;

async fn create_pet(State(shared): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    shared.creates_in_flight.fetch_add(1, Ordering::SeqCst);
    let racy = shared.has(Fault::RacyIdCounter);
    let lossy = shared.has(Fault::LostWriteUnderLoad);
    // The id a racy counter reads before it writes, and the window in which others read it too.
    let read_id = shared.store().next_id;
    if racy || lossy {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let loaded = shared.creates_in_flight.load(Ordering::SeqCst) >= LOAD;
    let mut created = new_pet(&shared, &headers, &body);
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
    if shared.has(Fault::DeprecationOnCreatePet) {
        insert_deprecation(&mut response, &format!("@{DEPRECATED_SINCE_UNIX}"));
    }
    response
}

/// Validates a NewPet body and stores it; the error is the status and message of the refusal.
fn new_pet(shared: &Shared, headers: &HeaderMap, body: &[u8]) -> Result<Pet, (StatusCode, String)> {
    let bad = |message: &str| (StatusCode::BAD_REQUEST, message.to_string());
    // A well-formed body whose values are wrong: 400 by the contract, 422 under a fault.
    let invalid = |message: &str| {
        let status = if shared.has(Fault::InvalidValues422) || shared.is(Variant::Unprocessable422)
        {
            StatusCode::UNPROCESSABLE_ENTITY
        } else {
            StatusCode::BAD_REQUEST
        };
        (status, message.to_string())
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json")
        && !shared.has(Fault::CreateIgnoresContentType)
    {
        return Err(bad("the body must be application/json"));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        if shared.has(Fault::CreateEmptyBodyAccepted) {
            return Ok(shared.insert("unnamed".into(), 0, None));
        }
        return Err(bad("the body is empty; a NewPet is required"));
    }
    let parsed: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) if shared.has(Fault::CreateMalformedJson500) => {
            return Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("parser crashed: {e}"),
            ));
        }
        Err(e) => return Err(bad(&format!("the body is not well-formed JSON: {e}"))),
    };
    let fields = match parsed {
        Value::Object(fields) => fields,
        Value::Array(_) if shared.has(Fault::CreateArrayBodyAccepted) => {
            return Ok(shared.insert(String::new(), 0, None));
        }
        _ => return Err(bad("the body must be a JSON object (NewPet)")),
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) => name.clone(),
        None if shared.has(Fault::CreateMissingNameAccepted) => String::new(),
        None => return Err(bad("name is required")),
        Some(other) if shared.has(Fault::CreateNameCoerced) => other.to_string(),
        Some(Value::Array(parts)) if shared.has(Fault::NameArrayJoined) => parts
            .iter()
            .map(|part| part.as_str().map_or_else(|| part.to_string(), String::from))
            .collect::<Vec<_>>()
            .join(","),
        Some(_) => return Err(invalid("name must be a string")),
    };
    let status = match fields.get("status") {
        None => None,
        Some(Value::String(s)) if PET_STATUSES.contains(&s.as_str()) => Some(s.clone()),
        Some(Value::String(s)) if shared.has(Fault::CreateUnknownStatusAccepted) => Some(s.clone()),
        Some(Value::String(s))
            if shared.has(Fault::StatusCaseInsensitiveCreate)
                && PET_STATUSES.contains(&s.to_ascii_lowercase().as_str()) =>
        {
            Some(s.to_ascii_lowercase())
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
            return Err(invalid("status must be one of available, pending, sold"));
        }
        Some(_) => return Err(invalid("status must be one of available, pending, sold")),
    };
    let category_id = match fields.get("categoryId") {
        None if shared.has(Fault::CreateMissingCategoryStored) => {
            shared.insert(name, 0, status);
            return Err(bad("categoryId is required"));
        }
        None => return Err(bad("categoryId is required")),
        Some(Value::Null) if shared.has(Fault::CreateCategoryIdNullAccepted) => 0,
        Some(value) => category_id(shared, value)
            .ok_or_else(|| invalid("categoryId must be an integer in the int64 range"))?,
    };
    // Storage-level faults: they act after validation, as a database would.
    if shared.has(Fault::LongName500) && name.chars().count() > 255 {
        return Err((
            StatusCode::INTERNAL_SERVER_ERROR,
            "value too long for column \"name\" (255)".into(),
        ));
    }
    let stored_category = if shared.has(Fault::CategoryIdTruncated32) {
        i64::from(category_id as i32)
    } else {
        category_id
    };
    if shared.has(Fault::NonAsciiNameAltered) {
        let stored: String = name
            .chars()
            .map(|c| if c.is_ascii() { c } else { '?' })
            .collect();
        let mut pet = shared.insert(stored, stored_category, status);
        pet.name = name; // the answer echoes what was sent; the store keeps the altered name
        return Ok(pet);
    }
    Ok(shared.insert(name, stored_category, status))
}

fn category_id(shared: &Shared, value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => {
            if let Some(id) = n.as_i64() {
                return Some(id);
            }
            let float = n.as_f64()?;
            if shared.has(Fault::CreateCategoryIdSaturates) && float.fract() == 0.0 {
                return Some(float as i64);
            }
            if shared.has(Fault::CreateCategoryIdTruncated) && float.abs() < 9.0e18 {
                return Some(float.trunc() as i64);
            }
            // JSON Schema counts 3.0 as an integer; accept it where it fits exactly.
            let fits = float.fract() == 0.0 && (-9.2e18..9.2e18).contains(&float);
            fits.then_some(float as i64)
        }
        Value::String(text) if shared.has(Fault::CreateCategoryIdCoerced) => text.parse().ok(),
        Value::Bool(flag) if shared.has(Fault::CategoryIdBoolCoerced) => Some(i64::from(*flag)),
        _ => None,
    }
}

async fn get_pet(State(shared): State<AppState>, uri: Uri) -> Response {
    let segment = uri.path().trim_start_matches("/v1/pets/");
    // A percent-encoded character is the character (RFC 3986 section 6.2.2.2).
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    let raw_id = if shared.has(Fault::PetIdPercentEncodingIgnored) {
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
        Err(_) if overflows && shared.has(Fault::PetIdOverflow500) => error(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "integer overflow",
        ),
        Err(_) if shared.has(Fault::GetPetNonInteger500) => error(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "could not parse petId",
        ),
        Err(_) => error(
            &shared,
            StatusCode::BAD_REQUEST,
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
            let found = store
                .pets
                .iter()
                .find(|pet| pet.id == id && !lagging)
                .cloned();
            drop(store);
            match found {
                Some(mut pet) => {
                    if shared.has(Fault::GetPetAltersCategory) {
                        pet.category_id = 0;
                    }
                    answer(&shared, StatusCode::OK, &shared.pet_value(&pet))
                }
                None if shared.has(Fault::GetPetUnknown200) => {
                    answer(&shared, StatusCode::OK, &json!({}))
                }
                None => error(
                    &shared,
                    StatusCode::NOT_FOUND,
                    "pet-not-found",
                    &format!("no pet has id {id}"),
                ),
            }
        }
    };
    deprecation_headers(&shared, &mut response);
    response
}

/// RFC 9745 Deprecation, RFC 8594 Sunset and the successor-version link on every getPet answer.
fn deprecation_headers(shared: &Shared, response: &mut Response) {
    if shared.has(Fault::DeprecationLegacyTrue) {
        insert_deprecation(response, "true");
    } else if shared.has(Fault::DeprecationAfterSunset) {
        insert_deprecation(response, "@1956528000"); // 1 January 2032
    } else if !shared.has(Fault::NoDeprecationHeader) {
        insert_deprecation(response, &format!("@{DEPRECATED_SINCE_UNIX}"));
    }
    let headers = response.headers_mut();
    if shared.has(Fault::SunsetWrongDate) {
        headers.insert(
            "sunset",
            HeaderValue::from_static("Wed, 05 Dec 2029 00:00:00 GMT"),
        );
    } else if !shared.has(Fault::NoSunsetHeader) {
        headers.insert("sunset", HeaderValue::from_static(SUNSET_HTTP_DATE));
    }
    if !shared.has(Fault::NoSuccessorLink) {
        headers.insert(
            header::LINK,
            HeaderValue::from_static("</v1/pets>; rel=\"successor-version\""),
        );
    }
}

fn insert_deprecation(response: &mut Response, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert("deprecation", value);
    }
}

/// The variants that change how an answer travels rather than what it says.
async fn shape(State(shared): State<AppState>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    if shared.is(Variant::LowercaseChallenge) && parts.status == StatusCode::UNAUTHORIZED {
        parts.headers.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("bearer realm=\"petstore\""),
        );
    }
    if shared.is(Variant::Charset) {
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
    }
    if shared.is(Variant::ConnectionClose) {
        parts
            .headers
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    if !shared.is(Variant::PrettyReordered) && !shared.is(Variant::Chunked) {
        return Response::from_parts(parts, body);
    }
    let mut bytes = axum::body::to_bytes(body, 64 << 20)
        .await
        .unwrap_or_default();
    if shared.is(Variant::PrettyReordered)
        && let Ok(value) = serde_json::from_slice::<Value>(&bytes)
    {
        bytes = Bytes::from(pretty_reversed(&value, 0));
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    if shared.is(Variant::Chunked) {
        let chunks: Vec<Result<Bytes, std::io::Error>> = bytes
            .chunks(7)
            .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
            .collect();
        return Response::from_parts(parts, Body::from_stream(futures_util::stream::iter(chunks)));
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// Pretty-printed JSON with object keys in reverse order.
fn pretty_reversed(value: &Value, depth: usize) -> String {
    let indent = "    ".repeat(depth + 1);
    let close = "    ".repeat(depth);
    match value {
        Value::Object(fields) => {
            let items: Vec<String> = fields
                .iter()
                .rev()
                .map(|(key, value)| {
                    format!(
                        "{indent}{} : {}",
                        json!(key),
                        pretty_reversed(value, depth + 1)
                    )
                })
                .collect();
            format!("{{\n{}\n{close}}}", items.join(",\n"))
        }
        Value::Array(items) if !items.is_empty() => {
            let items: Vec<String> = items
                .iter()
                .map(|item| format!("{indent}{}", pretty_reversed(item, depth + 1)))
                .collect();
            format!("[\n{}\n{close}]", items.join(",\n"))
        }
        other => other.to_string(),
    }
}

async fn list_store_orders(State(shared): State<AppState>) -> Response {
    if shared.has(Fault::StoreOrdersMissing) {
        return not_found(State(shared)).await;
    }
    answer(&shared, StatusCode::OK, &json!([]))
}

async fn not_found(State(shared): State<AppState>) -> Response {
    error(
        &shared,
        StatusCode::NOT_FOUND,
        "not-found",
        "no such resource",
    )
}

async fn method_not_allowed(State(shared): State<AppState>) -> Response {
    error(
        &shared,
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "method not allowed on this resource",
    )
}
