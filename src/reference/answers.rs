//! How the reference answers: JSON bodies and Error bodies, the deprecation headers of
//! getPet, and the shapes the variants give a response.

use super::*;

/// A JSON answer, with the content type the faults may spoil.
pub(super) fn answer(shared: &Shared, status: StatusCode, body: &impl Serialize) -> Response {
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

pub(super) fn error(shared: &Shared, status: StatusCode, code: &str, message: &str) -> Response {
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

/// RFC 9745 Deprecation, RFC 8594 Sunset and the successor-version link on every getPet answer.
pub(super) fn deprecation_headers(shared: &Shared, response: &mut Response) {
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

pub(super) fn insert_deprecation(response: &mut Response, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert("deprecation", value);
    }
}

/// The variants that change how an answer's head or body is spelled rather than what it says
/// (how it travels is the wire's: wire.rs).
pub(super) async fn shape(
    State(shared): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
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
    if !shared.is(Variant::PrettyReordered) {
        return Response::from_parts(parts, body);
    }
    let mut bytes = axum::body::to_bytes(body, 64 << 20)
        .await
        .unwrap_or_default();
    if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
        bytes = Bytes::from(pretty_reversed(&value, 0));
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(bytes))
}

/// Pretty-printed JSON with object keys in reverse order.
pub(super) fn pretty_reversed(value: &Value, depth: usize) -> String {
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
