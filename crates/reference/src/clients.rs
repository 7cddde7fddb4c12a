//! What a client sends besides the contract's inputs: the headers a browser, curl or an SDK
//! adds (cases/request-space.json, `headers`). The store gzips an answer when asked and it
//! chose to, and under a fault refuses a client's headers. (Its queries: `queries.rs`.)

use std::io::Write;

use super::*;

/// Whether the URL in header `name` (`Referer`, `Origin`) names a host other than the one
/// the request was sent to.
fn from_another_host(headers: &HeaderMap, name: header::HeaderName) -> bool {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let named_host = headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .and_then(|url| url.split_once("://"))
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""));
    matches!((host, named_host), (Some(host), Some(from)) if !from.eq_ignore_ascii_case(host))
}

/// A client's headers, around every operation: the faults that refuse them, and gzip when the
/// client asks for it and the store chose to (the answer is the same, encoded).
pub(super) async fn client_headers(
    State(shared): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers().clone();
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if shared.hooks().any(|hook| match hook {
        Hook::AcceptRefused(form) => form.describes(accept),
        _ => false,
    }) {
        return error(
            &shared,
            StatusCode::NOT_ACCEPTABLE,
            "not-acceptable",
            "only application/json is served",
        );
    }
    let refuses = |site: SiteHeader| {
        shared
            .hooks()
            .any(|hook| *hook == Hook::ForeignSiteRefused(site))
    };
    if refuses(SiteHeader::Origin) && from_another_host(&headers, header::ORIGIN) {
        let mut refused = (StatusCode::FORBIDDEN, "Invalid CORS request").into_response();
        refused
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        return refused;
    }
    let response = next.run(request).await;
    if refuses(SiteHeader::Referer) && from_another_host(&headers, header::REFERER) {
        // After the operation acted: the pet a create refuses is stored all the same.
        let mut refused = (StatusCode::FORBIDDEN, "Forbidden").into_response();
        refused
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        return refused;
    }
    let mut response = response;
    with_filler_fields(&mut response, shared.choices.headers.filler_fields);
    let asks_gzip = headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| p.trim().replace(' ', "") == "q=0");
            name.eq_ignore_ascii_case("gzip") && !refused
        });
    let chosen = &shared.choices.headers;
    if asks_gzip && chosen.gzip {
        return coded(response, "gzip", |bytes| gzip(bytes, chosen.gzip_members)).await;
    }
    // No Accept-Encoding at all: any coding is acceptable (RFC 9110 section 12.5.3).
    if !headers.contains_key(header::ACCEPT_ENCODING) {
        match chosen.unasked {
            Unasked::Identity => {}
            Unasked::Brotli => return coded(response, "br", super::codings::brotli_stored).await,
            Unasked::Zstd => return coded(response, "zstd", super::codings::zstd).await,
        }
    }
    response
}

/// Fields of no meaning, as a gateway's tracing adds them, on every answer.
fn with_filler_fields(response: &mut Response, count: usize) {
    for n in 1..=count {
        let name = format!("x-trace-{n}");
        if let (Ok(name), Ok(value)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&format!(
                "{:016x}",
                petstore_vocabulary::seed::splitmix64(n as u64)
            )),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
}

/// `bytes` gzipped in `members` members (RFC 1952 section 2.2: a gzip file is a series of
/// members; its body cut in as many parts).
fn gzip(bytes: &[u8], members: usize) -> Vec<u8> {
    let part = bytes.len().div_ceil(members.max(1)).max(1);
    let mut out = Vec::new();
    for chunk in bytes.chunks(part) {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        if encoder.write_all(chunk).is_ok()
            && let Ok(member) = encoder.finish()
        {
            out.extend(member);
        }
    }
    out
}

/// The answer with its body in `coding` (RFC 9110 section 8.4.1); a body-less answer stays
/// as it is.
async fn coded(
    response: Response,
    coding: &'static str,
    encode: impl Fn(&[u8]) -> Vec<u8>,
) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "").into_response();
    };
    if bytes.is_empty() {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let encoded = encode(&bytes);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
    parts
        .headers
        .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    Response::from_parts(parts, Body::from(encoded))
}
