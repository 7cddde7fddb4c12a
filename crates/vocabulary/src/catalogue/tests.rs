use super::*;

#[test]
fn built_in_catalogue_loads_with_unique_path_like_ids() {
    let catalogue = Catalogue::built_in().expect("catalogue loads");
    assert!(catalogue.rules.len() > 50, "{}", catalogue.rules.len());
    assert!(catalogue.get("list-pets/limit/above-maximum").is_some());
}

#[test]
fn committed_cases_match_the_built_in_copy() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    let from_disk = Catalogue::load_dir(&dir).expect("cases/ loads");
    assert_eq!(from_disk.rules, Catalogue::built_in().unwrap().rules);
}

/// A rule serializes as its case file writes it, its group flattened (`params` `{}` where
/// it has none): the catalogue's digest in reports is of this form, whatever the Rust
/// types behind it and however the rules are grouped.
#[test]
fn every_rule_serializes_as_its_case_file_writes_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
    let mut written = Vec::new();
    for file in CASE_FILES {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap();
        for rule in ungroup(json["rules"].as_array().unwrap().clone()) {
            let mut rule = rule.unwrap();
            rule.as_object_mut()
                .unwrap()
                .entry("params")
                .or_insert_with(|| serde_json::json!({}));
            written.push(rule);
        }
    }
    let rules = Catalogue::load_dir(&dir).unwrap().rules;
    assert_eq!(serde_json::to_value(&rules).unwrap(), Value::Array(written));
}

#[test]
fn case_files_are_validated_against_their_schema() {
    let text = r#"{"area":"auth","description":"x","rules":[{"id":"auth/x","title":"t",
        "level":"must","ruling":"Required: x","operation":"listPets",
        "citation":{"section":"s","quote":"q"},"check":"c","writes":false}]}"#;
    let err = Catalogue::from_texts(
        [(PathBuf::from("cases/auth.json"), text.into())],
        "t".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cases/auth.json") && err.contains("/rules/0/level"),
        "{err}"
    );
    for file in CASE_FILES {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cases");
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        Catalogue::from_texts([(PathBuf::from(file), text)], "t".into())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

#[test]
fn a_group_gives_its_rules_what_they_share_and_nothing_twice() {
    let group = |member: &str| {
        format!(
            r#"{{"area":"list-pets","description":"x","rules":[{{"check":"list-limit-refused",
            "level":"required","ruling":"Required: \"Maximum number of animals to return.\"",
            "operation":"listPets","citation":{{"section":"s","quote":"q"}},
            "writes":false,"rules":[{{"id":"list-pets/a","title":"a","params":{{"limit":"0"}}}},
            {member}]}}]}}"#
        )
    };
    let load = |text: String| {
        Catalogue::from_texts([(PathBuf::from("cases/list-pets.json"), text)], "t".into())
    };
    let catalogue = load(group(
        r#"{"id":"list-pets/b","title":"b","params":{"limit":"101"}}"#,
    ))
    .unwrap();
    let ids: Vec<&str> = catalogue.rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["list-pets/a", "list-pets/b"]);
    assert_eq!(
        catalogue.rules[1].check,
        Check::ListLimitRefused {
            limit: "101".into()
        }
    );
    assert_eq!(catalogue.rules[1].operation, Operation::ListPets);
    let err = load(group(
        r#"{"id":"list-pets/b","title":"b","writes":true,"params":{"limit":"1"}}"#,
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cases/list-pets.json")
            && err.contains("list-pets/b")
            && err.contains("writes: given by both its group and the rule"),
        "{err}"
    );
    let err = load(group(
        r#"{"id":"list-pets/b","title":"b","check":"list-ok"}"#,
    ))
    .unwrap_err()
    .to_string();
    assert!(err.contains("/rules/0/rules/1"), "{err}");
}

#[test]
fn bad_case_files_name_the_file_and_rule() {
    let text = r#"{"area":"auth","description":"x","rules":[{"id":"auth/Bad","title":"t",
        "level":"required","ruling":"Required: \"Maximum number of animals to return.\"",
        "operation":"listPets","citation":{"section":"s","quote":"q"},
        "check":"c","writes":false}]}"#;
    let err = Catalogue::from_texts(
        [(PathBuf::from("cases/auth.json"), text.into())],
        "t".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cases/auth.json") && err.contains("auth/Bad"),
        "{err}"
    );
    let text = r#"{"area":"auth","description":"x","rules":[{"id":"auth/x","level":"must"}]}"#;
    let err = Catalogue::from_texts(
        [(PathBuf::from("cases/auth.json"), text.into())],
        "t".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("cases/auth.json"), "{err}");
}

#[test]
fn a_required_rule_resting_on_an_rfc_alone_does_not_load() {
    let rule = |level: &str, ruling: &str| {
        let text = format!(
            r#"{{"area":"list-pets","description":"x","rules":[{{"id":"list-pets/x",
            "title":"t","level":"{level}","ruling":{ruling:?},"operation":"listPets",
            "citation":{{"section":"s","quote":"q"}},"check":"list-ok","writes":false}}]}}"#
        );
        Catalogue::from_texts([(PathBuf::from("cases/list-pets.json"), text)], "t".into())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let rfc_only = r#"Required: RFC 9110 section 8.3.1 says "The type and subtype tokens are case-insensitive.""#;
    let err = rule("required", rfc_only).unwrap_err();
    assert!(
        err.contains("list-pets/x") && err.contains("quotes no statement of the contract"),
        "{err}"
    );
    // The same reading as a recommendation loads, and a required rule quoting the contract.
    rule(
        "recommended",
        &rfc_only.replace("Required:", "Recommended:"),
    )
    .unwrap();
    rule(
        "required",
        r#"Required: "The 200 body is a plain array of Pet.""#,
    )
    .unwrap();
    // A ruling that says another level than the rule's does not.
    assert!(
        rule(
            "recommended",
            r#"Required: "The 200 body is a plain array of Pet.""#
        )
        .is_err()
    );
}
