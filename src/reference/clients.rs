//! What a client sends besides the contract's inputs: query strings that do not decode, and
//! the headers a browser, curl or an SDK adds (cases/request-space.json, `query string` and
//! `headers`). The store answers each query class as its drawn choice says, gzips an answer
//! when asked and it chose to, and under a fault refuses a client's headers.

use std::io::Write;

use super::*;

/// The request-space class of a raw query string (`query string`), if it is one.
pub(super) fn query_class(raw: &str) -> Option<&'static str> {
    let bytes = raw.as_bytes();
    let bad_escape = bytes.iter().enumerate().any(|(at, b)| {
        *b == b'%'
            && !(bytes.get(at + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit))
    });
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
    if bad_escape || decoded.contains(&0) || std::str::from_utf8(&decoded).is_err() {
        return Some("undecodable");
    }
    let bracketed = raw.split('&').any(|pair| {
        pair.split('=')
            .next()
            .is_some_and(|name| name.contains('['))
    });
    (bracketed || raw.contains('+')).then_some("brackets-and-plus")
}

/// listPets' answer to a query of a class, when the store (or a fault) answers it apart from
/// its parameters: `None` reads the parameters as usual.
pub(super) fn query_answer(shared: &Shared, uri: &Uri) -> Option<Response> {
    let class = query_class(uri.query()?)?;
    if class == "undecodable" && shared.has(Fault::UndecodableQueryTextBody) {
        // Sinatra's 400: text under the JSON media type.
        let mut response = (StatusCode::BAD_REQUEST, "Bad Request: invalid query").into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return Some(response);
    }
    if shared.has(Fault::BracketedQuery500) && uri.query().is_some_and(|q| q.contains('[')) {
        return Some(error(
            shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "expected a string, got an array",
        ));
    }
    Some(match shared.class_answer("query string", class)? {
        // The parameters it cannot read ignored: the default page (a query class names no
        // member twice, so the first-wins and last-wins readings are the plain one).
        Answer::Accepted | Answer::FirstWins | Answer::LastWins => {
            let pets: Vec<Value> = shared
                .store()
                .pets
                .iter()
                .take(shared.choices.page_cap.unwrap_or(20).min(20))
                .map(|pet| shared.pet_value(pet))
                .collect();
            answer(shared, StatusCode::OK, &pets)
        }
        Answer::Refused(status) => error(
            shared,
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            "invalid-query",
            "the query string does not decode",
        ),
    })
}

/// Whether `Referer` names a host other than the one the request was sent to.
fn cross_site(headers: &HeaderMap) -> bool {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let referer_host = headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .and_then(|referer| referer.split_once("://"))
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""));
    matches!((host, referer_host), (Some(host), Some(from)) if !from.eq_ignore_ascii_case(host))
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
    if (shared.has(Fault::WildcardAccept406) && accept.trim() == "*/*")
        || (shared.has(Fault::WeightedAccept406) && accept.contains(";q="))
    {
        return error(
            &shared,
            StatusCode::NOT_ACCEPTABLE,
            "not-acceptable",
            "only application/json is served",
        );
    }
    let response = next.run(request).await;
    if shared.has(Fault::CrossSiteRefererRefused) && cross_site(&headers) {
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
            HeaderValue::from_str(&format!("{:016x}", crate::seed::splitmix64(n as u64))),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_classes() {
        for raw in [
            "limit=%zz",
            "limit=%",
            "limit=5%2",
            "limit=%00",
            "limit=%FF",
        ] {
            assert_eq!(query_class(raw), Some("undecodable"), "{raw}");
        }
        for raw in ["limit[]=2", "status[]=available", "limit=+", "limit=+5"] {
            assert_eq!(query_class(raw), Some("brackets-and-plus"), "{raw}");
        }
        for raw in [
            "limit=5",
            "limit=%2B5",
            "status=available&limit=%37",
            "limit=%C3%A9",
        ] {
            assert_eq!(query_class(raw), None, "{raw}");
        }
    }
}
