//! How the reference answers: JSON bodies and Error bodies, the deprecation headers of
//! getPet, and the shapes the variants give a response.

use super::*;

/// A JSON answer, written as the store writes JSON, with its content type (which the faults
/// may spoil).
pub(super) fn answer(shared: &Shared, status: StatusCode, body: &impl Serialize) -> Response {
    let value = serde_json::to_value(body).unwrap_or(Value::Null);
    let text = shared.choices.text.write(&value);
    let mut response = (status, text).into_response();
    let content_type = if status.is_client_error() && shared.has(Fault::ErrorTextPlain) {
        "text/plain"
    } else {
        shared.choices.content_type
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

/// RFC 9745 Deprecation, RFC 8594 Sunset and the successor-version link on every getPet
/// answer, as many of them as the store chose to send, written as it chose; `host` is the Host
/// the request named (for a link written as an absolute URL).
pub(super) fn deprecation_headers(shared: &Shared, response: &mut Response, host: Option<&str>) {
    let signals = shared.choices.signals;
    if signals == Signals::None {
        return;
    }
    let chosen = &shared.choices.headers;
    let deprecation = sent(
        shared,
        |hook| match hook {
            Hook::DeprecationSent(value) => Some(value),
            _ => None,
        },
        || Some(format!("@{}", chosen.deprecated_since)),
    );
    if let Some(value) = deprecation {
        insert_deprecation(response, &value);
    }
    if signals == Signals::DeprecationOnly {
        return;
    }
    let sunset = sent(
        shared,
        |hook| match hook {
            Hook::SunsetSent(value) => Some(value),
            _ => None,
        },
        || Some(chosen.sunset.clone()),
    );
    let link = sent(
        shared,
        |hook| match hook {
            Hook::SuccessorLinkSent(value) => Some(value),
            _ => None,
        },
        || (signals == Signals::All).then(|| chosen.link_value(host)),
    );
    let headers = response.headers_mut();
    for (name, value) in [
        (header::HeaderName::from_static("sunset"), sunset),
        (header::LINK, link),
    ] {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
            headers.insert(name, value);
        }
    }
}

/// A deprecation header's value: the one a fault of the store sends (`pick` finds its hook;
/// `None` in it: no header), else the store's own (`own`).
fn sent(
    shared: &Shared,
    pick: impl Fn(&'static Hook) -> Option<&'static Option<String>>,
    own: impl FnOnce() -> Option<String>,
) -> Option<String> {
    shared.hook(pick).map_or_else(own, Clone::clone)
}

pub(super) fn insert_deprecation(response: &mut Response, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert("deprecation", value);
    }
}
