//! A listing's query as the store reads it: pair by pair, form decoded as the contract's
//! clients send a query (the WHATWG urlencoded parser: `+` is a space, `%2B` a plus). Only
//! the contract's parameters are read; a pair of any other name is ignored, whatever it holds
//! (a `+`, brackets, an escape that does not decode, the same name twice). A contract
//! parameter a form parser cannot take as it is (cases/request-space.json, `query string`: a
//! bracketed name, a raw `+`, a value that does not decode to text) is answered as the store
//! chose for its class: ignored alone (the other parameters still read), or the request
//! refused. A parameter named twice is read value by value: the last readable one wins, and
//! any value the store refuses refuses the request.

use super::*;

/// listPets' query parameters, as the contract names them.
const PARAMETERS: [&str; 2] = ["limit", "status"];

/// Whether a raw (still percent-encoded) text does not decode to text: a `%` not followed by
/// two hex digits, a NUL, bytes that are not UTF-8 (RFC 3986 section 2.1).
fn undecodable(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let bad_escape = bytes.iter().enumerate().any(|(at, b)| {
        *b == b'%'
            && !(bytes.get(at + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(at + 2).is_some_and(u8::is_ascii_hexdigit))
    });
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
    bad_escape || decoded.contains(&0) || std::str::from_utf8(&decoded).is_err()
}

/// The request-space class of a whole raw query (`query string`), if any pair of it has one
/// whatever its name: what a parser that reads the whole query first (Rack, qs) trips on.
pub(super) fn query_class(raw: &str) -> Option<&'static str> {
    pairs(raw)
        .map(|pair| pair.class)
        .fold(None, |found, class| match (found, class) {
            (Some("undecodable"), _) | (_, None) => found,
            (_, class) => class,
        })
}

/// One `name=value` of a raw query: its name and value form decoded, the contract parameter it
/// names (`limit[]` names `limit`, as a qs-style parser reads it), and its request-space class.
pub(super) struct Pair {
    pub(super) name: String,
    pub(super) value: String,
    pub(super) parameter: Option<&'static str>,
    pub(super) bracketed: bool,
    pub(super) class: Option<&'static str>,
}

/// The pairs of a raw query, in order (empty ones skipped, as form decoding skips them).
pub(super) fn pairs(raw: &str) -> impl Iterator<Item = Pair> + '_ {
    raw.split('&').filter(|pair| !pair.is_empty()).map(|pair| {
        let (raw_name, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let (name, value) = form_urlencoded::parse(pair.as_bytes())
            .next()
            .map(|(name, value)| (name.into_owned(), value.into_owned()))
            .unwrap_or_default();
        let base = name.split('[').next().unwrap_or("");
        let parameter = PARAMETERS.into_iter().find(|p| *p == base);
        let bracketed = name.contains('[');
        let class = if undecodable(raw_name) || undecodable(raw_value) {
            Some("undecodable")
        } else if bracketed || pair.contains('+') {
            Some("brackets-and-plus")
        } else {
            None
        };
        Pair {
            name,
            value,
            parameter,
            bracketed,
            class,
        }
    })
}

/// The contract's parameters of a listing's query, `(name, value)` in order, as this store
/// reads them; or the answer it gives instead (a class it refuses; under a fault, a 500).
pub(super) fn contract_parameters(
    shared: &Shared,
    uri: &Uri,
) -> Result<Vec<(&'static str, String)>, Box<Response>> {
    let mut read = Vec::new();
    for pair in pairs(uri.query().unwrap_or("")) {
        let Some(parameter) = pair.parameter else {
            continue; // a name the contract does not give: nothing to read
        };
        if pair.bracketed && shared.has(Fault::BracketedQuery500) {
            return Err(Box::new(error(
                shared,
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "expected a string, got an array",
            )));
        }
        match pair
            .class
            .and_then(|class| shared.class_answer("query string", class))
        {
            // The store's choice: this parameter ignored, the others read.
            Some(Answer::Accepted | Answer::FirstWins | Answer::LastWins) => continue,
            Some(Answer::Refused(status)) => {
                return Err(Box::new(error(
                    shared,
                    StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
                    "invalid-query",
                    &format!("the query parameter {parameter} cannot be read"),
                )));
            }
            // No class, or a fault's store: read as form decoding gives it (a bracketed name
            // is not the parameter's own).
            None if pair.bracketed || pair.name != parameter => continue,
            None => read.push((parameter, pair.value)),
        }
    }
    Ok(read)
}

/// listPets' answer to a whole query under a fault that answers it apart from its parameters;
/// `None` reads the parameters.
pub(super) fn query_answer(shared: &Shared, uri: &Uri) -> Option<Response> {
    let raw = uri.query()?;
    if shared.has(Fault::UndecodableQueryTextBody) && query_class(raw) == Some("undecodable") {
        // Sinatra's 400 (Rack parses the whole query first): text under the JSON media type.
        let mut response = (StatusCode::BAD_REQUEST, "Bad Request: invalid query").into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return Some(response);
    }
    if shared.has(Fault::PlusQueryDefaultPage) && raw.contains('+') {
        // The whole query taken for one it cannot read: the default page, whatever it asked.
        let pets: Vec<Value> = shared
            .store()
            .pets
            .iter()
            .take(20)
            .map(|pet| shared.pet_value(pet))
            .collect();
        return Some(answer(shared, StatusCode::OK, &pets));
    }
    None
}

#[cfg(test)]
mod tests;
