//! A listing's query as the store reads it: pair by pair, form decoded as the contract's
//! clients send a query (the WHATWG urlencoded parser: `+` is a space, `%2B` a plus). Only
//! the contract's parameters are read; a pair of any other name is ignored, whatever it holds
//! (a `+`, brackets, an escape that does not decode, the same name twice). A contract
//! parameter a form parser cannot take as it is (cases/request-space.json, `query string`: a
//! bracketed name, a raw `+`, a value that does not decode to text) is answered as the store
//! chose for its class: ignored alone (the other parameters still read), or the request
//! refused. A parameter named twice is read value by value: the last readable one wins, and
//! any value the store refuses refuses the request. The page size and status filter a listing
//! asks for are read here too ([`listing_query`]).

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

/// The page size and status filter a listing's query asks for, as this store reads them; or
/// the answer it gives instead (a refusal, or an empty page for an unknown status).
/// The query with a `limit` request header merged into it where it has no `limit`, under the
/// fault that reads one there; else as it came.
pub(super) fn header_limit_merged(shared: &Shared, headers: &HeaderMap, uri: Uri) -> Uri {
    if limit_reading(shared) != Some(LimitReading::AlsoFromHeader) {
        return uri;
    }
    let Some(limit) = headers.get("limit").and_then(|v| v.to_str().ok()) else {
        return uri;
    };
    let query = uri.query().unwrap_or_default();
    if query.split('&').any(|pair| pair.starts_with("limit=")) {
        return uri;
    }
    let joined = if query.is_empty() {
        format!("{}?limit={limit}", uri.path())
    } else {
        format!("{}?{query}&limit={limit}", uri.path())
    };
    joined.parse().unwrap_or(uri)
}

pub(super) fn listing_query(
    shared: &Shared,
    uri: &Uri,
) -> Result<(usize, Option<String>), Box<Response>> {
    let mut limit: usize = shared
        .hook(|hook| match hook {
            Hook::DefaultPage(size) => Some(size.unwrap_or(usize::MAX)),
            _ => None,
        })
        .unwrap_or(20);
    let mut explicit_limit = false;
    let mut status_filter: Option<String> = None;
    for (name, value) in contract_parameters(shared, uri)? {
        match name {
            "limit"
                if limit_reading(shared) == Some(LimitReading::HugeCrashes)
                    && value.len() > 18
                    && value.bytes().all(|b| b.is_ascii_digit()) =>
            {
                return Err(Box::new(error(
                    shared,
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "number too large",
                )));
            }
            "limit" => match parse_limit(shared, &value) {
                Ok(Some(parsed)) => {
                    limit = parsed;
                    explicit_limit = true;
                }
                Ok(None) => {}
                Err((status, message)) => {
                    // The store's own status for a class it refuses, else 400.
                    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
                    return Err(Box::new(error(shared, status, "invalid-limit", &message)));
                }
            },
            "status" => {
                let reading = filter_reading(shared);
                let value = if reading == Some(FilterReading::CaseInsensitive) {
                    value.to_ascii_lowercase()
                } else {
                    value
                };
                if !PET_STATUSES.contains(&value.as_str()) {
                    if reading == Some(FilterReading::UnknownAnsweredEmpty)
                        || shared.choices.unknown_status_empty
                    {
                        return Err(Box::new(answer(shared, StatusCode::OK, &json!([]))));
                    }
                    return Err(Box::new(error(
                        shared,
                        StatusCode::BAD_REQUEST,
                        "invalid-status",
                        "status must be one of available, pending, sold",
                    )));
                }
                if reading != Some(FilterReading::Ignored) {
                    status_filter = Some(value);
                }
            }
            _ => {}
        }
    }
    if explicit_limit
        && let Some(mistake) = shared.hook(|hook| match hook {
            Hook::PageAsked(mistake) => Some(*mistake),
            _ => None,
        })
    {
        limit = mistake.page(limit);
    }
    Ok((limit, status_filter))
}

/// How this store misreads listPets' `limit`, if it does (a fault's hook).
fn limit_reading(shared: &Shared) -> Option<LimitReading> {
    shared.hook(|hook| match hook {
        Hook::LimitRead(reading) => Some(*reading),
        _ => None,
    })
}

/// How this store misreads listPets' `status` filter, if it does (a fault's hook).
pub(super) fn filter_reading(shared: &Shared) -> Option<FilterReading> {
    shared.hook(|hook| match hook {
        Hook::StatusFilterRead(reading) => Some(*reading),
        _ => None,
    })
}

/// The request-space class of a `limit` value (cases/request-space.json, `query limit`), if it
/// is one the space names.
fn limit_class(value: &str) -> Option<&'static str> {
    let lower = value.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['-', '+']);
    if ["infinity", "nan", "inf"].contains(&unsigned) {
        return Some("non-finite-tokens");
    }
    if unsigned.starts_with("0x")
        || unsigned.starts_with("0b")
        || unsigned.starts_with("0o")
        || value.contains('_')
    {
        return Some("other-radix");
    }
    let digits = value.strip_prefix('-').unwrap_or(value);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<i64>().is_err().then_some("beyond-int64");
    }
    if value.parse::<f64>().is_ok_and(f64::is_infinite) {
        return Some("beyond-double");
    }
    let integral = petstore_vocabulary::json::read(value.trim().as_bytes())
        .ok()
        .and_then(|read| petstore_vocabulary::json::integer(&read.value))
        .is_some();
    integral.then_some("integer-spellings")
}

/// `limit` as the store reads it: `Ok(None)`: leave the default; `Err`: the status of the
/// refusal (400, or the one the store chose for the value's class) and its message.
pub(super) fn parse_limit(shared: &Shared, value: &str) -> Result<Option<usize>, (u16, String)> {
    let refused = || {
        (
            400,
            format!("limit must be an integer from 1 to 100, not {value:?}"),
        )
    };
    let reading = limit_reading(shared);
    if reading == Some(LimitReading::NonFiniteUnbounded)
        && value.parse::<f64>().is_ok_and(|n| !n.is_finite())
    {
        return Ok(Some(usize::MAX));
    }
    if reading == Some(LimitReading::BoundsUnchecked) {
        return Ok(match value.parse::<i128>() {
            Ok(n) if n < 0 => Some(usize::MAX),
            Ok(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Err(_) => None,
        });
    }
    let class = limit_class(value);
    let read = match class.and_then(|class| shared.class_answer("query limit", class)) {
        Some(answer) => match answer {
            Answer::Refused(status) => return Err((status, refused().1)),
            // A spelling of an integer taken as that integer; anything else read as the
            // store's policy for a value out of range (at most 100 pets whatever it is).
            Answer::Accepted | Answer::FirstWins | Answer::LastWins => {
                petstore_vocabulary::json::read(value.trim().as_bytes())
                    .ok()
                    .and_then(|read| petstore_vocabulary::json::integer(&read.value))
                    .map_or(Err(()), |n| i64::try_from(n).map_err(|_| ()))
            }
        },
        None => value.parse::<i64>().map_err(|_| ()),
    };
    // A class the store answered is read by its policy for values out of range; any other
    // value that is no integer from 1 to 100 is refused unless the store clamps or ignores.
    let answered = class.is_some() && shared.config.faults.is_empty();
    match read {
        Ok(1) if reading == Some(LimitReading::MinimumRefused) => Err(refused()),
        Ok(n) if (1..=100).contains(&n) => Ok(Some(n as usize)),
        Ok(n) => match shared.choices.limit {
            LimitPolicy::Refused if !answered => Err(refused()),
            LimitPolicy::Ignored => Ok(None),
            _ => Ok(Some(n.clamp(1, 100) as usize)),
        },
        Err(()) => match shared.choices.limit {
            LimitPolicy::Refused if !answered => Err(refused()),
            LimitPolicy::Clamped if value.trim_start().starts_with('-') => Ok(Some(1)),
            _ => Ok(None),
        },
    }
}

#[cfg(test)]
mod tests;
