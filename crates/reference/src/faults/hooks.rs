//! Typed hooks: where a family of faults makes the same kind of mistake with another value,
//! the fault is data (`faults.json`: its `hook` and the value), and the handlers ask the hook
//! once for every fault of the family. A new fault of a family is one entry of the file (and
//! its name in [`super::Fault`]); only a new kind of mistake needs code.

use axum::http::{HeaderMap, Method, header};

pub use super::readings::*;

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
    /// This operation looks at the request before the key: a refusal for what else is wrong
    /// (an invalid query or body, an unknown pet) wins over 401.
    CheckedBeforeKey(Route),
    /// An Authorization value that is not `Bearer <key>` is taken for the key, read this way.
    KeyReadFrom(KeyReading),
    /// The Authorization scheme is matched this way, not as RFC 9110 matches it (in any case).
    SchemeMatched(SchemeMatch),
    /// listPets' `limit` is read this way, not as the contract says.
    LimitRead(LimitReading),
    /// listPets' `status` filter is read this way, not as the contract says.
    StatusFilterRead(FilterReading),
    /// A createPet status that is none of PetStatus's values is taken, read this way.
    StatusTaken(StatusReading),
    /// A createPet categoryId that is no integer is taken, read this way.
    CategoryTaken(CategoryReading),
    /// listPets answers 500 once the store holds more than this many pets: its query binds a
    /// parameter per stored row (a category fetched for every pet, the page cut after), past
    /// what its database takes.
    ListingFailsPast(usize),
    /// A createPet body that is not JSON is read as a lenient parser reads it.
    JsonReadLeniently(Leniency),
    /// createPet's members are also taken from another channel than the JSON body.
    MembersAlsoFrom(Channel),
    /// A request from a page on another host (its header naming that host) is refused 403 in
    /// plain text.
    ForeignSiteRefused(SiteHeader),
    /// getPet's petId is read this way, not as the contract's int64.
    PetIdRead(PetIdReading),
    /// getPet answers an id no pet has this way, not 404.
    UnknownPetAnswered(UnknownPetAnswer),
    /// createPet's `name` is read this way, not as NewPet's required string.
    NameRead(NameReading),
    /// A name is stored this way, not as sent (a column's limits, its character set).
    NameStored(NameStorage),
    /// A member named in another letter case than NewPet's is folded into it this way.
    MemberCaseFolded(MemberFold),
    /// A NewPet's `id` is taken this way.
    IdMemberTaken(IdTaking),
    /// A createPet with no body and no Content-Type is answered with this status.
    NoBodyAnswered(u16),
}

/// The header a cross-site protection reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteHeader {
    /// `Origin` (a CORS filter that refuses the request itself), before the operation acts.
    Origin,
    /// `Referer` (Sinatra's protection), after the operation acted: a refused create is
    /// stored all the same.
    Referer,
}

/// How a lax guard finds the key in an Authorization value that is not `Bearer <key>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyReading {
    /// The value split on spaces, the second word taken (`Bearer <key> junk`).
    SecondWord,
    /// The value searched for `Bearer `, the word after it taken (`Basic x, Bearer <key>`).
    SchemeSearched,
    /// A Basic credential whose user name or password is the key.
    BasicHalves,
    /// The key straight after the scheme, no space between (`Bearer<key>`).
    NoSeparator,
}

impl KeyReading {
    /// Whether a guard that reads this way takes `value` for `key`.
    pub fn takes(self, value: &str, key: &str) -> bool {
        match self {
            KeyReading::SecondWord => {
                let mut words = value.split(' ');
                words.next() == Some("Bearer") && words.next() == Some(key)
            }
            KeyReading::SchemeSearched => value.find("Bearer ").is_some_and(|at| {
                value[at + "Bearer ".len()..].split([',', ' ']).next() == Some(key)
            }),
            KeyReading::BasicHalves => {
                basic_halves(value).is_some_and(|(user, password)| user == key || password == key)
            }
            KeyReading::NoSeparator => value.strip_prefix("Bearer") == Some(key),
        }
    }
}

/// The user name and password of a Basic credential, decoded.
fn basic_halves(value: &str) -> Option<(String, String)> {
    use base64::Engine;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// How a guard matches the Authorization scheme where it parts from RFC 9110 section 11.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchemeMatch {
    /// Any scheme, or none, before the key.
    Any,
    /// `Bearer` in exactly that case.
    CaseSensitive,
}

impl SchemeMatch {
    /// Whether a guard that matches this way takes `scheme`.
    pub fn takes(self, scheme: &str) -> bool {
        match self {
            SchemeMatch::Any => true,
            SchemeMatch::CaseSensitive => scheme == "Bearer",
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
    use serde_json::Value;

    /// Each name reading takes its own mistake and leaves the others to the contract's refusal.
    #[test]
    fn each_name_reading_takes_only_its_own_spelling() {
        use serde_json::json;
        let array = json!(["a", 7]);
        let number = json!(42);
        let takes = |reading: NameReading, spelt: Option<&Value>| reading.takes(spelt);
        assert_eq!(
            takes(NameReading::MissingAsEmpty, None),
            Some(String::new())
        );
        assert_eq!(takes(NameReading::MissingAsEmpty, Some(&number)), None);
        assert_eq!(
            takes(NameReading::AnyKindAsText, Some(&number)),
            Some("42".into())
        );
        assert_eq!(takes(NameReading::AnyKindAsText, None), None);
        assert_eq!(
            takes(NameReading::ArrayJoined, Some(&array)),
            Some("a,7".into())
        );
        assert_eq!(takes(NameReading::ArrayJoined, Some(&number)), None);
        for reading in [
            NameReading::MissingAsEmpty,
            NameReading::AnyKindAsText,
            NameReading::ArrayJoined,
            NameReading::Trimmed,
        ] {
            // A string is no mistake to take: the caller reads it as the contract does.
            assert_eq!(takes(reading, Some(&json!(" x "))), None);
        }
    }

    /// A fold takes the other-case member only where its own reading says: over the member
    /// of the right name, or in place of it; `null` as a category is 0 only to its reading.
    #[test]
    fn a_fold_and_a_null_category_are_taken_only_by_their_own_reading() {
        assert!(MemberFold::Overwrites.folds(true) && !MemberFold::Overwrites.folds(false));
        assert!(MemberFold::Fallback.folds(false) && !MemberFold::Fallback.folds(true));
        assert_eq!(CategoryReading::NullAsZero.reads(&Value::Null), Some(0));
        assert_eq!(CategoryReading::FromBool.reads(&Value::Null), None);
        assert_eq!(CategoryReading::NullAsZero.reads(&Value::Bool(true)), None);
    }

    /// An int32 column finds a stored pet for an id 2^32 past it, and no other reading
    /// looks up another id than the one asked for.
    #[test]
    fn only_the_int32_reading_looks_up_another_id() {
        let stored = 42_i64;
        assert_eq!(
            PetIdReading::Truncated32.looked_up(stored + (1 << 32)),
            stored
        );
        assert_eq!(PetIdReading::Truncated32.looked_up(stored), stored);
        for reading in [
            PetIdReading::PercentEncodingIgnored,
            PetIdReading::OverflowCrashes,
            PetIdReading::NonIntegerCrashes,
        ] {
            assert_eq!(reading.looked_up(stored + (1 << 32)), stored + (1 << 32));
        }
    }

    /// Each fault of a family names its value in faults.json: the file reads into the typed
    /// hooks, one fault per value.
    #[test]
    fn the_families_of_this_file_read_from_faults_json() {
        let hooks: Vec<&Hook> = crate::FAULTS
            .iter()
            .filter_map(|info| info.hook.as_ref())
            .collect();
        let leniencies = hooks
            .iter()
            .filter(|hook| matches!(hook, Hook::JsonReadLeniently(_)))
            .count();
        assert_eq!(leniencies, 8);
        for hook in [
            Hook::MembersAlsoFrom(Channel::Form),
            Hook::MembersAlsoFrom(Channel::Query),
            Hook::MembersAlsoFrom(Channel::Header),
            Hook::ForeignSiteRefused(SiteHeader::Origin),
            Hook::ForeignSiteRefused(SiteHeader::Referer),
            Hook::PetIdRead(PetIdReading::Truncated32),
            Hook::UnknownPetAnswered(UnknownPetAnswer::Mock),
            Hook::ListingFailsPast(999),
        ] {
            assert_eq!(hooks.iter().filter(|h| ***h == hook).count(), 1, "{hook:?}");
        }
    }

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

    /// Each way of taking a status keeps what its store keeps, and refuses the rest as the
    /// contract does.
    #[test]
    fn each_status_reading_keeps_only_its_own() {
        use serde_json::json;
        let kept = |reading: StatusReading, spelt: Value| reading.keeps(&spelt);
        assert_eq!(
            kept(StatusReading::AnyString, json!("lost")),
            Some(Some("lost".into()))
        );
        assert_eq!(kept(StatusReading::AnyString, json!(null)), None);
        assert_eq!(
            kept(StatusReading::AnyCase, json!("SOLD")),
            Some(Some("sold".into()))
        );
        assert_eq!(kept(StatusReading::AnyCase, json!("lost")), None);
        assert_eq!(kept(StatusReading::NullAsNone, json!(null)), Some(None));
        assert_eq!(kept(StatusReading::NullAsNone, json!("")), None);
        assert_eq!(kept(StatusReading::EmptyAsNone, json!("")), Some(None));
        assert_eq!(kept(StatusReading::EmptyAsNone, json!(" ")), None);
        assert_eq!(
            kept(StatusReading::Coerced, json!(" sold")),
            Some(Some("sold".into()))
        );
        assert_eq!(
            kept(StatusReading::Coerced, json!(1)),
            Some(Some("pending".into()))
        );
        assert_eq!(
            kept(StatusReading::Coerced, json!("0")),
            Some(Some("available".into()))
        );
        assert_eq!(kept(StatusReading::Coerced, json!(3)), None);
    }

    #[test]
    fn each_category_reading_takes_only_its_own() {
        use serde_json::json;
        let read = |reading: CategoryReading, value: Value| reading.reads(&value);
        assert_eq!(
            read(CategoryReading::Saturates, json!(1e300)),
            Some(i64::MAX)
        );
        assert_eq!(read(CategoryReading::Saturates, json!(1.5)), None);
        assert_eq!(read(CategoryReading::Truncated, json!(1.5)), Some(1));
        assert_eq!(read(CategoryReading::Truncated, json!(1e300)), None);
        assert_eq!(read(CategoryReading::FromString, json!("12")), Some(12));
        assert_eq!(read(CategoryReading::FromString, json!(12.5)), None);
        assert_eq!(read(CategoryReading::FromBool, json!(true)), Some(1));
        assert_eq!(read(CategoryReading::FromBool, json!("true")), None);
    }

    /// Each lax reading of the Authorization value takes its own spelling of the key and not
    /// the others' (a search for `Bearer ` also finds the key before a trailing word).
    #[test]
    fn each_key_reading_takes_only_its_own() {
        use base64::Engine;
        let key = "k3y";
        let basic = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("user:k3y")
        );
        let spellings = [
            (KeyReading::SecondWord, "Bearer k3y junk".to_string()),
            (
                KeyReading::SchemeSearched,
                "Basic x, Bearer k3y".to_string(),
            ),
            (KeyReading::BasicHalves, basic),
            (KeyReading::NoSeparator, "Bearerk3y".to_string()),
        ];
        for (reading, _) in &spellings {
            for (own, value) in &spellings {
                let also = (*reading, *own) == (KeyReading::SchemeSearched, KeyReading::SecondWord);
                assert_eq!(
                    reading.takes(value, key),
                    reading == own || also,
                    "{reading:?} {value}"
                );
            }
            assert!(!reading.takes("Bearer other", key), "{reading:?}");
        }
        assert!(SchemeMatch::Any.takes("Token"));
        assert!(SchemeMatch::CaseSensitive.takes("Bearer"));
        assert!(!SchemeMatch::CaseSensitive.takes("bearer"));
    }
}
