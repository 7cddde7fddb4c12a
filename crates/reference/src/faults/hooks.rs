//! Typed hooks: where a family of faults makes the same kind of mistake with another value,
//! the fault is data (`faults.json`: its `hook` and the value), and the handlers ask the hook
//! once for every fault of the family. A new fault of a family is one entry of the file (and
//! its name in [`super::Fault`]); only a new kind of mistake needs code.

use axum::http::{HeaderMap, Method, header};

/// One kind of mistake, with the value that makes it one fault.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Hook {
    /// The key is taken from another place than the Authorization header, beside it.
    KeyAlsoIn(KeyPlace),
    /// A Bearer token that is not the key is taken for it.
    TokenTaken(TokenMatch),
    /// One operation does not check the key at all.
    KeyNotChecked(Route),
    /// An Accept header of this form, though it takes JSON, is answered 406.
    AcceptRefused(AcceptForm),
    /// A page asked for without `limit` holds at most this many pets (`null`: every pet).
    DefaultPage(Option<usize>),
    /// A page asked for with `limit` holds another number of pets than asked.
    PageAsked(PageMistake),
    /// getPet's Deprecation header is sent with this value, verbatim (`null`: not at all).
    DeprecationSent(Option<String>),
    /// getPet's Sunset header is sent with this value, verbatim (`null`: not at all).
    SunsetSent(Option<String>),
    /// getPet's successor-version link is this Link value, verbatim (`null`: none).
    SuccessorLinkSent(Option<String>),
    /// Another operation than getPet says it is deprecated.
    DeprecatedAlso(Route),
}

/// How a store miscounts a page asked for with `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageMistake {
    /// The default page whatever `limit` says (20).
    Ignored,
    /// One pet more than asked.
    OneMore,
    /// 99 pets where 100 were asked.
    HundredShortOne,
}

impl PageMistake {
    /// The page size this store gives for `limit`.
    pub fn page(self, limit: usize) -> usize {
        match self {
            PageMistake::Ignored => 20,
            PageMistake::OneMore => limit.saturating_add(1),
            PageMistake::HundredShortOne if limit == 100 => 99,
            PageMistake::HundredShortOne => limit,
        }
    }
}

/// An operation of the contract (and the store orders' listing), by its method and path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    ListPets,
    CreatePet,
    GetPet,
    StoreOrders,
}

impl Route {
    /// Whether a request of `method` to `path` is this operation's.
    pub fn holds(self, method: &Method, path: &str) -> bool {
        match self {
            Route::ListPets => path == "/v1/pets" && method == Method::GET,
            Route::CreatePet => path == "/v1/pets" && method == Method::POST,
            Route::GetPet => path.starts_with("/v1/pets/"),
            Route::StoreOrders => path == "/v1/store/orders",
        }
    }
}

/// A form of the Accept header that takes application/json, which a strict negotiation refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcceptForm {
    /// `*/*` alone (curl's, and many SDKs').
    Wildcard,
    /// Media ranges with weights (`application/json;q=0.9, */*;q=0.1`, browsers').
    Weighted,
}

impl AcceptForm {
    /// Whether `accept` is of this form.
    pub fn describes(self, accept: &str) -> bool {
        match self {
            AcceptForm::Wildcard => accept.trim() == "*/*",
            AcceptForm::Weighted => accept.contains(";q="),
        }
    }
}

/// Where a store that takes the key from elsewhere finds it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum KeyPlace {
    /// A request header of this name (matched as HTTP matches names: in any letter case).
    Header(String),
    /// A query parameter of this name.
    Query(String),
    /// A cookie of this name.
    Cookie(String),
}

impl KeyPlace {
    /// Whether this place of the request carries `key` (`query`: the query's decoded pairs).
    pub fn carries(&self, headers: &HeaderMap, query: &[(String, String)], key: &str) -> bool {
        match self {
            KeyPlace::Header(name) => headers
                .get(name.as_str())
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v == key),
            KeyPlace::Query(name) => query.iter().any(|(n, v)| n == name && v == key),
            KeyPlace::Cookie(name) => headers
                .get_all(header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(';'))
                .any(|pair| pair.trim().split_once('=') == Some((name.as_str(), key))),
        }
    }
}

/// How a lax comparison takes a token for the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenMatch {
    /// An empty token (a guard that checks only that the header is there).
    Empty,
    /// The key in any letter case.
    CaseInsensitive,
    /// Any token that starts with the key.
    Prefix,
    /// The key with its last character dropped (a comparison one character short).
    OneCharShort,
    /// Anything in the key's first character's place (a comparison from the second).
    FirstCharIgnored,
}

impl TokenMatch {
    /// Whether this comparison takes `token` for `key`.
    pub fn takes(self, token: &str, key: &str) -> bool {
        match self {
            TokenMatch::Empty => token.is_empty(),
            TokenMatch::CaseInsensitive => token.eq_ignore_ascii_case(key),
            TokenMatch::Prefix => token.starts_with(key),
            TokenMatch::OneCharShort => {
                !token.is_empty() && key.starts_with(token) && token.len() + 1 >= key.len()
            }
            TokenMatch::FirstCharIgnored => {
                token.len() + 1 >= key.len()
                    && key.get(1..).is_some_and(|rest| token.ends_with(rest))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each comparison takes its near miss of the key, and none takes a token unlike it.
    #[test]
    fn each_token_match_takes_its_own_near_miss() {
        let key = "secret-key-123";
        let misses = [
            (TokenMatch::Empty, ""),
            (TokenMatch::CaseInsensitive, "SECRET-KEY-123"),
            (TokenMatch::Prefix, "secret-key-123x"),
            (TokenMatch::OneCharShort, "secret-key-12"),
            (TokenMatch::FirstCharIgnored, "xecret-key-123"),
        ];
        for (matching, token) in misses {
            assert!(matching.takes(token, key), "{matching:?} refused {token:?}");
            assert!(
                !matching.takes("other", key),
                "{matching:?} took another token"
            );
        }
    }

    #[test]
    fn a_place_carries_the_key_only_under_its_name() {
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", "k".parse().unwrap());
        headers.insert(header::COOKIE, "a=b; api_key=k".parse().unwrap());
        let query = crate::handlers::query_pairs(&"/v1/pets?api_key=k".parse().unwrap());
        assert!(KeyPlace::Header("X-API-Key".into()).carries(&headers, &query, "k"));
        assert!(!KeyPlace::Header("api_key".into()).carries(&headers, &query, "k"));
        assert!(KeyPlace::Cookie("api_key".into()).carries(&headers, &query, "k"));
        assert!(KeyPlace::Query("api_key".into()).carries(&headers, &query, "k"));
        assert!(!KeyPlace::Query("key".into()).carries(&headers, &query, "k"));
    }
}
