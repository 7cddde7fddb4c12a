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
    if asks_gzip && shared.choices.headers.gzip {
        return gzipped(response).await;
    }
    response
}

/// The answer with its body gzipped (RFC 9110 section 8.4.1.3).
async fn gzipped(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "").into_response();
    };
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let encoded = encoder.write_all(&bytes).and_then(|()| encoder.finish());
    let Ok(encoded) = encoded else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
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
