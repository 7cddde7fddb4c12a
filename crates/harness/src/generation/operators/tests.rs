//! The generated request space, and the whole space held to one change per probe.

use serde_json::Value;

use super::*;
use crate::generation::space::RequestSpace;

/// A body's members, read as JSON.
fn members(bytes: &[u8]) -> Option<serde_json::Map<String, Value>> {
    match crate::json::read(bytes).ok()?.value {
        Value::Object(members) => Some(members),
        _ => None,
    }
}

fn new_pet() -> Value {
    let contract = crate::contract::Contract::built_in().unwrap();
    crate::generation::Schemas::new(&contract)
        .flatten(&contract, crate::contract::SchemaName::NewPet)
        .unwrap()
}

fn generated() -> RequestSpace {
    let operators = Operators::parse("operators.json".into(), BUILT_IN).unwrap();
    let listed = RequestSpace::built_in_listed();
    listed.with_operators(&operators, &new_pet()).unwrap()
}

/// Every position the schema names gets every operator that applies to it, each case with
/// one member changed and the answer derived: a valid NewPet accepted, else refused.
#[test]
fn every_position_gets_every_operator_it_takes() {
    let space = generated();
    let operators = Operators::parse("operators.json".into(), BUILT_IN).unwrap();
    for member in ["name", "categoryId", "status"] {
        let input = space
            .inputs
            .iter()
            .find(|i| i.input == format!("body field {member}"))
            .unwrap();
        let generated: Vec<&str> = input
            .classes
            .iter()
            .filter_map(|c| c.operator.as_deref())
            .collect();
        for operator in &operators.operators {
            let kind = match member {
                "name" => Kind::String,
                "categoryId" => Kind::Integer,
                _ => Kind::Enum,
            };
            // An operator with parameter spellings alone changes no body.
            let applies = operator.applies.contains(&kind)
                && !(operator.required_only && member == "status")
                && (!operator.spellings.is_empty() || operator.channel.is_some());
            assert_eq!(
                generated.contains(&operator.operator.as_str()),
                applies,
                "{member} × {}: {generated:?}",
                operator.operator
            );
        }
    }
    let status = space
        .inputs
        .iter()
        .find(|i| i.input == "body field status")
        .unwrap();
    let escapes = status
        .classes
        .iter()
        .find(|c| c.class == "json-escapes")
        .unwrap();
    assert_eq!(escapes.expect, Expect::Accepted);
    assert!(escapes.read_back);
    let case = sample(escapes.cases[0].body_template().unwrap()).unwrap();
    assert_eq!(members(&case).unwrap()["status"], "available");
    // Listed null stays the listed class's: not sent twice.
    let another = status
        .classes
        .iter()
        .find(|c| c.class == "another-json-type")
        .unwrap();
    assert!(another.cases.iter().all(|c| {
        !members(&sample(c.body_template().unwrap()).unwrap()).unwrap()["status"].is_null()
    }));
    let name = space
        .inputs
        .iter()
        .find(|i| i.input == "body field name")
        .unwrap();
    let padding = name.classes.iter().find(|c| c.class == "padding").unwrap();
    assert_eq!(padding.expect, Expect::Accepted);
    let bytes = name
        .classes
        .iter()
        .find(|c| c.class == "invalid-utf-8")
        .unwrap();
    assert_eq!(bytes.expect, Expect::Refused400);
    let moved = name
        .classes
        .iter()
        .find(|c| c.class == "moved-to-header")
        .unwrap();
    assert_eq!(moved.expect, Expect::Refused4xx);
    let queried = name
        .classes
        .iter()
        .find(|c| c.class == "moved-to-query")
        .unwrap();
    assert_eq!(queried.expect, Expect::Refused4xx);
    assert_eq!(queried.cases[0].query.as_deref(), Some("name=pc-moved"));
    assert!(
        !queried.cases[0]
            .body_template()
            .unwrap()
            .contains("\"name\"")
    );
}

#[test]
fn escapes_spell_the_same_string() {
    let escaped = escape_all("pé🐈");
    assert_eq!(
        serde_json::from_str::<String>(&escaped).unwrap(),
        "pé🐈".to_string()
    );
}

/// Issue 36: every probe is a valid request with one change. Each case's JSON body, its
/// placeholders filled, holds the plainest values a store accepts (the run's name, an
/// accepted or marker category, a status of PetStatus) in every member but the one its
/// input names; a member the contract does not name appears only where the input is the
/// body or its member names. A value drawn for another class (a categoryId of 19 digits
/// beside a wrong-typed name) would let a store refuse the probe for that reason.
#[test]
fn every_body_case_changes_only_its_input() {
    let space = RequestSpace::built_in();
    let mut checked = 0;
    for input in &space.inputs {
        let own = input.input.strip_prefix("body field ");
        let any_member = matches!(input.input.as_str(), "body" | "body member names");
        for class in &input.classes {
            for case in &class.cases {
                let Some(template) = case.body_template() else {
                    continue;
                };
                let text = template
                    .replace("{name-text}", "pc-x")
                    .replace("{name-escaped}", "\"pc-x\"")
                    .replace("{name}", "\"pc-x\"")
                    .replace("{category}", "1")
                    .replace("{marker}", "2")
                    .replace("{existing-id}", "3")
                    .replace("{unused-id}", "4");
                let Ok(Value::Object(members)) = serde_json::from_str::<Value>(&text) else {
                    continue; // not JSON, or not an object: the change is the body itself
                };
                checked += 1;
                for (member, value) in &members {
                    if Some(member.as_str()) == own {
                        continue;
                    }
                    let plain = match member.as_str() {
                        "name" => value == "pc-x",
                        "categoryId" => value == 1 || value == 2,
                        "status" => crate::contract::PET_STATUSES
                            .iter()
                            .any(|status| value == *status),
                        _ => any_member,
                    };
                    assert!(
                        plain,
                        "{} / {}: {member} = {value} is not the plainest value in {text}",
                        input.input, class.class
                    );
                }
            }
        }
    }
    assert!(checked > 20, "{checked} bodies checked");
}

/// Issue 36 item 4: the bodies that may leave something a store cannot read back (not UTF-8)
/// are exactly the classes that go last, and every one of them is required (a recommended one
/// would be walked early).
#[test]
fn the_bodies_that_are_not_utf_8_go_last() {
    let space = RequestSpace::built_in();
    let mut last: Vec<String> = Vec::new();
    for input in &space.inputs {
        for class in &input.classes {
            assert!(
                !class.poisons() || class.goes_last(),
                "{} / {}: not UTF-8 but recommended",
                input.input,
                class.class
            );
            if class.goes_last() {
                last.push(format!("{} / {}", input.input, class.class));
            }
        }
    }
    assert_eq!(
        last,
        [
            "body / invalid-utf-8",
            "body / other-charset",
            "body field name / invalid-utf-8",
            "body field status / invalid-utf-8"
        ]
    );
}
