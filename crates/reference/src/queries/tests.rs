use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use tower_service::Service;

use super::*;
use crate::{ReferenceConfig, router};

#[test]
fn query_classes() {
    for raw in [
        "limit=%zz",
        "limit=%",
        "limit=5%2",
        "limit=%00",
        "limit=%FF",
        "limit=%2B5&note=%zz",
    ] {
        assert_eq!(query_class(raw), Some("undecodable"), "{raw}");
    }
    for raw in [
        "limit[]=2",
        "status[]=available",
        "limit=+",
        "limit=+5",
        "limit%5B%5D=2",
    ] {
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

#[test]
fn a_pair_names_a_contract_parameter_by_its_decoded_name() {
    let read: Vec<(Option<&str>, bool, Option<&str>, String)> =
        pairs("limit=2&note=a+b&%6Cimit=3&limit[]=4&&status=%2Bx&a+b=c&limit")
            .map(|pair| (pair.parameter, pair.bracketed, pair.class, pair.value))
            .collect();
    assert_eq!(
        read,
        [
            (Some("limit"), false, None, "2".into()),
            (None, false, Some("brackets-and-plus"), "a b".into()),
            (Some("limit"), false, None, "3".into()),
            (Some("limit"), true, Some("brackets-and-plus"), "4".into()),
            (Some("status"), false, None, "+x".into()),
            (None, false, Some("brackets-and-plus"), "c".into()),
            (Some("limit"), false, None, String::new()),
        ]
    );
}

const KEY: &str = "queries-test-key";
const STATUSES: [&str; 3] = ["available", "pending", "sold"];
/// Pets the test stores of each status.
const EACH: usize = 12;

/// A store served in-process (its router called directly), with the pets the test stored.
struct Store {
    app: axum::Router,
    runtime: tokio::runtime::Runtime,
    choices: Choices,
}

impl Store {
    fn new(conforming: Option<u64>) -> Store {
        let mut config = ReferenceConfig::new(KEY);
        config.conforming = conforming;
        let choices = config.choices();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let mut store = Store {
            app: router(config),
            runtime,
            choices,
        };
        for n in 0..EACH {
            for status in STATUSES {
                let body = json!({"name": format!("q{n}"), "categoryId": 1, "status": status});
                let (code, _) = store.send("POST", "", Some(body.to_string()));
                assert_eq!(code, 201, "{:?}", store.choices.seed);
            }
        }
        store
    }

    /// The status and JSON body of `method /v1/pets{target}`.
    fn send(&mut self, method: &str, target: &str, body: Option<String>) -> (u16, Value) {
        let mut request = axum::http::Request::builder()
            .method(method)
            .uri(format!("/v1/pets{target}"))
            .header(header::HOST, "t")
            .header(header::AUTHORIZATION, format!("Bearer {KEY}"))
            .header(header::ACCEPT_ENCODING, "identity");
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Body::from(body.unwrap_or_default()))
            .expect("a request");
        let app = &mut self.app;
        self.runtime.block_on(async {
            let response = app.call(request).await.expect("infallible");
            let code = response.status().as_u16();
            let bytes = axum::body::to_bytes(response.into_body(), 64 << 20)
                .await
                .expect("a body");
            let json = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!("{method} {target}: not JSON ({e}): {bytes:?}");
            });
            (code, json)
        })
    }
}

/// A listing's query: the contract's parameters (valid ones, and at times one the contract
/// refuses) among parameters it does not name, in a random order.
#[derive(Debug, Clone)]
struct Listing {
    limit: Option<usize>,
    status: Option<&'static str>,
    refused: Option<&'static str>,
    /// Every pair as sent, and whether it is one of the contract's.
    pairs: Vec<(String, bool)>,
}

impl Listing {
    fn query(&self, contract_only: bool) -> String {
        let pairs: Vec<&str> = self
            .pairs
            .iter()
            .filter(|(_, contract)| *contract || !contract_only)
            .map(|(pair, _)| pair.as_str())
            .collect();
        match pairs.is_empty() {
            true => String::new(),
            false => format!("?{}", pairs.join("&")),
        }
    }
}

/// Parameters the contract does not name: with `+`, `%2B`, spaces, brackets, escapes that do
/// not decode, names that decode to another's, any of them twice.
fn other_pair() -> impl Strategy<Value = String> {
    let names = [
        "note",
        "q",
        "tag",
        "tag[]",
        "tag%5B%5D",
        "a+b",
        "a%2Bb",
        "limits",
        "status_",
        "x%20y",
    ];
    let tokens = [
        "a",
        "+",
        "%2B",
        "%20",
        "%zz",
        "%00",
        "%FF",
        "[",
        "]",
        "=",
        "available",
        "2",
        "%26",
        "",
    ];
    (
        proptest::sample::select(names.to_vec()),
        proptest::collection::vec(proptest::sample::select(tokens.to_vec()), 0..4),
    )
        .prop_map(|(name, value)| format!("{name}={}", value.concat()))
}

fn listing() -> impl Strategy<Value = Listing> {
    let refused = ["limit=0", "limit=101", "limit=ten", "status=lost"];
    (
        proptest::option::of(1usize..=100),
        proptest::option::of(proptest::sample::select(STATUSES.to_vec())),
        proptest::option::weighted(0.2, proptest::sample::select(refused.to_vec())),
        proptest::collection::vec(other_pair(), 0..5),
    )
        .prop_flat_map(|(limit, status, refused, others)| {
            let mut pairs: Vec<(String, bool)> = others.into_iter().map(|o| (o, false)).collect();
            pairs.extend(limit.map(|limit| (format!("limit={limit}"), true)));
            pairs.extend(status.map(|status| (format!("status={status}"), true)));
            pairs.extend(refused.map(|pair| (pair.to_string(), true)));
            Just(pairs).prop_shuffle().prop_map(move |pairs| Listing {
                limit,
                status,
                refused,
                pairs,
            })
        })
}

/// What the contract says of `listing`'s answer on `store`, from its valid parameters.
fn judge(store: &mut Store, listing: &Listing) -> Result<(), TestCaseError> {
    let query = listing.query(false);
    let (code, body) = store.send("GET", &query, None);
    // The other parameters change nothing: the answer is the contract's parameters' alone.
    let plain = store.send("GET", &listing.query(true), None);
    prop_assert_eq!(
        &(code, &body),
        &(plain.0, &plain.1),
        "{} against its contract parameters alone",
        query
    );
    let choices = &store.choices;
    if let Some(refused) = listing.refused {
        let refuses = match refused.starts_with("limit") {
            true => choices.limit == LimitPolicy::Refused,
            false => !choices.unknown_status_empty,
        };
        if refuses {
            prop_assert_eq!(code, 400, "{}: {}", query, body);
            prop_assert_eq!(body.get("status"), Some(&json!(400)), "{}", query);
            prop_assert!(body.get("code").is_some_and(Value::is_string), "{}", query);
            prop_assert!(
                body.get("message").is_some_and(Value::is_string),
                "{}",
                query
            );
        }
        return Ok(());
    }
    prop_assert_eq!(code, 200, "{}: {}", query, body);
    let pets = body.as_array().expect("an array of Pet");
    let limit = listing.limit.unwrap_or(20);
    prop_assert!(pets.len() <= limit, "{}: {} pets", query, pets.len());
    if let Some(status) = listing.status {
        prop_assert!(
            pets.iter().all(|pet| pet["status"] == status),
            "{}: a pet of another status",
            query
        );
    }
    // A store that held nothing before the test and caps no page fills it.
    if choices.stored == Stored::Empty && choices.page_cap.is_none() {
        let held = listing.status.map_or(EACH * STATUSES.len(), |_| EACH);
        prop_assert_eq!(pets.len(), limit.min(held), "{}", query);
    }
    Ok(())
}

/// The reference and stores drawn from seeds read the contract's parameters of a listing
/// whatever else its query holds: at most `limit` pets (exactly, where the store holds more),
/// of the status asked, and a JSON 400 Error where the store refuses a parameter's value.
#[test]
fn a_listing_reads_its_parameters_whatever_else_the_query_holds() {
    let mut tried: BTreeMap<Option<u64>, u32> = BTreeMap::new();
    for conforming in [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)] {
        let mut store = Store::new(conforming);
        let mut runner = TestRunner::new(Config {
            cases: 64,
            failure_persistence: None,
            ..Config::default()
        });
        let store = std::cell::RefCell::new(&mut store);
        let cases = std::cell::Cell::new(0);
        let result = runner.run(&listing(), |listing| {
            cases.set(cases.get() + 1);
            judge(&mut store.borrow_mut(), &listing)
        });
        tried.insert(conforming, cases.get());
        if let Err(failure) = result {
            panic!(
                "conforming seed {conforming:?}: {failure}\nits choices:\n{}",
                store.borrow().choices.describe()
            );
        }
    }
    assert!(tried.values().all(|n| *n >= 64), "{tried:?}");
}

/// A parameter named twice is read value by value: the last wins, and a value the store
/// refuses refuses the request wherever it stands.
#[test]
fn a_repeated_parameter_is_read_to_its_last_value() {
    let mut store = Store::new(None);
    let (code, pets) = store.send("GET", "?limit=5&limit=2", None);
    assert_eq!((code, pets.as_array().map(Vec::len)), (200, Some(2)));
    let (code, pets) = store.send("GET", "?status=sold&status=pending", None);
    assert_eq!(code, 200);
    assert!(
        pets.as_array()
            .unwrap()
            .iter()
            .all(|pet| pet["status"] == "pending")
    );
    for query in [
        "?limit=0&limit=2",
        "?limit=2&limit=0",
        "?status=lost&status=sold",
    ] {
        assert_eq!(store.send("GET", query, None).0, 400, "{query}");
    }
}

/// A contract parameter the store cannot take as it is gets the store's choice for its
/// class, and that parameter alone: ignored, the others still read; or the request refused.
#[test]
fn an_unreadable_contract_parameter_is_ignored_alone_or_refused() {
    let mut store = Store::new(None); // brackets-and-plus: ignored; undecodable: 400
    for query in [
        "?limit=2&status[]=sold",
        "?status[]=sold&limit=2",
        "?limit=2&status=so+ld",
    ] {
        let (code, pets) = store.send("GET", query, None);
        assert_eq!(
            (code, pets.as_array().map(Vec::len)),
            (200, Some(2)),
            "{query}"
        );
    }
    let (code, pets) = store.send("GET", "?limit=+5&status=sold", None);
    assert_eq!(code, 200);
    let pets = pets.as_array().unwrap();
    assert_eq!(
        pets.len(),
        EACH,
        "the default page of 20, of the {EACH} sold"
    );
    assert!(pets.iter().all(|pet| pet["status"] == "sold"));
    assert_eq!(store.send("GET", "?limit=0&status=a+b", None).0, 400);
    assert_eq!(store.send("GET", "?limit=2&status=%zz", None).0, 400);
    assert_eq!(store.send("GET", "?limit=2&note=%zz", None).0, 200);
    // A drawn store that refuses the class refuses the request, whatever else it holds.
    let seed = (0..200)
        .find(|seed| {
            matches!(
                Choices::draw(*seed).answer("query string", "brackets-and-plus"),
                Answer::Refused(_)
            )
        })
        .expect("a seed refuses brackets and +");
    let mut store = Store::new(Some(seed));
    let Answer::Refused(status) = store.choices.answer("query string", "brackets-and-plus") else {
        unreachable!()
    };
    assert_eq!(store.send("GET", "?limit=2&status[]=sold", None).0, status);
    assert_eq!(store.send("GET", "?limit=2&tag[]=x&note=a+b", None).0, 200);
}
