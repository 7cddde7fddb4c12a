//! What stands before the handlers: latency and a throttling gateway (variants), and bearer
//! authentication on every operation, before routing.

use super::*;

/// The configured latency, before anything else: every answer, refusals included, waits.
pub(super) async fn delay(
    State(shared): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if !shared.config.latency.is_zero() {
        tokio::time::sleep(shared.config.latency).await;
    }
    if shared.choices.first_answer_delay_ms > 0 && !shared.answered.swap(true, Ordering::SeqCst) {
        // A cold start: the first request waits for the service to come up.
        tokio::time::sleep(std::time::Duration::from_millis(
            shared.choices.first_answer_delay_ms,
        ))
        .await;
    }
    shared.other_clients_act();
    if let Some(per_window) = throttle_per_window(&shared)
        && over_rate(&shared, per_window)
    {
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

/// Requests let in per 100 ms window by the store's gateway: 300 per second (throttled), 40
/// per second (slow-gateway); `None`: no gateway.
fn throttle_per_window(shared: &Shared) -> Option<u32> {
    shared.choices.throttle
}

pub(super) fn over_rate(shared: &Shared, per_window: u32) -> bool {
    let mut window = shared
        .throttle_window
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if window.0.elapsed() >= std::time::Duration::from_millis(100) {
        *window = (std::time::Instant::now(), 0);
    }
    window.1 += 1;
    window.1 > per_window
}

/// Bearer authentication on every operation, before routing, so that an unknown path or a
/// malformed body without a key still answers 401.
pub(super) async fn authenticate(
    State(shared): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_string();
    let method = request.method().clone();
    let skipped = shared.hooks().any(|hook| match hook {
        Hook::KeyNotChecked(route) => route.holds(&method, &path),
        _ => false,
    });
    if skipped || authorized(&shared, request.headers(), request.uri()) {
        return next.run(request).await;
    }
    // Stores (and faults) that look at the request before the key: a refusal for what else is
    // wrong wins. The contract orders neither; authenticating first is recommended.
    let validate_first = shared.choices.precedence == Precedence::ValidateFirst;
    let before_key = |route: Route| {
        route.holds(&method, &path)
            && (validate_first || shared.hooks().any(|h| *h == Hook::CheckedBeforeKey(route)))
    };
    let read_only_first = before_key(Route::ListPets) || before_key(Route::GetPet);
    if read_only_first {
        let response = next.run(request).await;
        if response.status().is_client_error() {
            return response;
        }
        return unauthorized(&shared);
    }
    let request = if before_key(Route::CreatePet) {
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
pub(super) fn invalid_new_pet(headers: &HeaderMap, body: &[u8]) -> Option<String> {
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

/// The 401 of a request without a valid key, with the store's challenge.
pub(super) fn unauthorized(shared: &Shared) -> Response {
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
    let challenge = match shared.choices.challenge {
        Challenge::Bearer => "Bearer realm=\"petstore\"",
        Challenge::LowercaseBearer => "bearer realm=\"petstore\"",
        Challenge::None => return response,
    };
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

/// The request-space class of an `Authorization` value that carries the key, if it is one of
/// the spellings the space names (cases/request-space.json, `header Authorization`).
fn credential_class(value: &str, key: &str) -> Option<&'static str> {
    let rest = value.strip_prefix("Bearer")?;
    if rest == key {
        return Some("no-separator");
    }
    if rest.trim().is_empty() {
        return Some("scheme-alone");
    }
    if rest.strip_prefix('\t') == Some(key) {
        return Some("tab-separator");
    }
    let spaces = rest.len() - rest.trim_start_matches(' ').len();
    (spaces > 1 && rest.trim_start_matches(' ') == key).then_some("several-spaces")
}

/// Under the faults that take the key from elsewhere: whether a header, the query or a cookie
/// carries it (the contract's one credential is the Authorization header's).
fn key_elsewhere(shared: &Shared, headers: &HeaderMap, uri: &Uri) -> bool {
    let key = shared.config.api_key.as_str();
    let query = query_pairs(uri);
    shared.hooks().any(|hook| match hook {
        Hook::KeyAlsoIn(place) => place.carries(headers, &query, key),
        _ => false,
    })
}

pub(super) fn authorized(shared: &Shared, headers: &HeaderMap, uri: &Uri) -> bool {
    if key_elsewhere(shared, headers, uri) {
        return true;
    }
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let key = shared.config.api_key.as_str();
    // A lax guard that finds the key in another spelling of the value takes it.
    if shared.hooks().any(|hook| match hook {
        Hook::KeyReadFrom(reading) => reading.takes(value, key),
        _ => false,
    }) {
        return true;
    }
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    let token = token.trim_start_matches(' ');
    let scheme_ok = match shared.hook(|hook| match hook {
        Hook::SchemeMatched(matching) => Some(*matching),
        _ => None,
    }) {
        Some(matching) => matching.takes(scheme),
        // RFC 9110 section 11.1: the scheme name is case-insensitive.
        None => scheme.eq_ignore_ascii_case("bearer"),
    };
    let class = credential_class(value, key).or((value == key).then_some("key-alone"));
    if let Some(answer) = class.and_then(|class| shared.class_answer("header Authorization", class))
    {
        return answer == Answer::Accepted;
    }
    let token_ok = token == key
        || shared.hooks().any(|hook| match hook {
            Hook::TokenTaken(matching) => matching.takes(token, key),
            _ => false,
        });
    scheme_ok && token_ok
}
