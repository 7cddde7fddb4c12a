use super::*;

#[test]
fn failures_are_told_apart_by_status_and_statement_not_by_the_values_quoted() {
    let failure = |expected: &str| Failure {
        expected: expected.into(),
        observed: String::new(),
        exchange: None,
        counterexample: None,
        steps: Vec::new(),
        class: None,
        more: Vec::new(),
        intermittent: None,
    };
    assert_eq!(
        failure("201 (the animal was added) with the Pet").class_key(),
        "no status: 201 with the Pet"
    );
    // An aside about the input (a confused body's fields) is the input's class, not the
    // failure's: a shrunk input still fails the same way.
    assert_eq!(
        failure("a 4xx refusal (categoryId an array, name an array)").class_key(),
        failure("a 4xx refusal (status an integer)").class_key()
    );
    assert_eq!(
        failure("200 with at most 20 pets").class_key(),
        failure("200 with at most 25 pets").class_key()
    );
    assert_eq!(
        failure("the Pet echoes name = \"a\"").class_key(),
        failure("the Pet echoes name = \"b\"").class_key()
    );
    assert_ne!(
        failure("the Pet echoes name = 1").class_key(),
        failure("the Pet echoes status = 1").class_key()
    );
    let mut first = failure("a");
    first.more.push(failure("b"));
    assert_eq!(first.distinct(), 2);
    let verdict = Verdict::failed_distinct((0..12).map(|_| failure("x")).collect());
    let Some(Verdict::Failed(kept)) = verdict else {
        panic!("failures give a failure");
    };
    assert_eq!(kept.distinct(), MAX_DISTINCT_FAILURES);
}

#[test]
fn curl_line_reads_the_key_from_the_environment() {
    let exchange = Exchange {
        request: RecordedRequest {
            method: "POST".into(),
            url: "http://127.0.0.1:1/v1/pets".into(),
            headers: vec![
                ("Authorization".into(), format!("Bearer {REDACTED}")),
                ("Content-Type".into(), "application/json".into()),
            ],
            body: Some(r#"{"name":"O'Brien"}"#.into()),
            body_length: None,
            key_channel: None,
            body_escaped: false,
        },
        response: None,
        transport_error: None,
        elapsed_ms: 0,
        throttled: None,
        retries: None,
    };
    let curl = exchange.curl("PETSTORE_API_KEY");
    assert!(
        curl.contains(r#"-H "Authorization: Bearer ${PETSTORE_API_KEY}""#),
        "{curl}"
    );
    assert!(curl.contains(r#"'{"name":"O'\''Brien"}'"#), "{curl}");
    assert!(!curl.contains(REDACTED));
}

#[test]
fn the_ranking_holds_every_verdict_once_failures_first_passes_last() {
    let all = [
        VerdictKind::Passed,
        VerdictKind::Failed,
        VerdictKind::Inconclusive,
        VerdictKind::Skipped,
        VerdictKind::KnownFailure,
        VerdictKind::NotDecidable,
    ];
    let mut ranks: Vec<usize> = all.iter().map(|kind| kind.rank()).collect();
    ranks.sort();
    assert_eq!(ranks, (0..all.len()).collect::<Vec<_>>());
    assert_eq!(VerdictKind::Failed.rank(), 0);
    assert_eq!(VerdictKind::Passed.rank(), all.len() - 1);
    // A pass over parts of which one was not run is no pass: skipped comes before passed.
    assert!(VerdictKind::Skipped.rank() < VerdictKind::Passed.rank());
    assert!(VerdictKind::Inconclusive.rank() < VerdictKind::Skipped.rank());
}
