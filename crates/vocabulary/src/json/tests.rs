use super::*;
use serde_json::json;

fn value(text: &str) -> Value {
    read(text.as_bytes())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .value
}

fn not_json(text: &[u8]) -> bool {
    matches!(read(text), Err(Unread::NotJson(_)))
}

#[test]
fn what_the_grammar_takes_reads_as_serde_json_reads_it() {
    for text in [
        r#"{"id":1,"name":"Rex","categoryId":-7,"status":"sold"}"#,
        r#"[ {"a" : [1, 2.5, -0.125e-3, true, false, null]} , "x\"\\\/\b\f\n\r\t\u00e9" ]"#,
        "  \t\r\n[]  ",
        r#""\ud83d\udc15""#,
        "0",
        "-12",
        "1.5",
    ] {
        let ours = value(text);
        let theirs: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs, "{text}");
    }
}

#[test]
fn what_the_grammar_refuses_is_not_json() {
    for text in [
        "",
        " ",
        "{",
        "[1,]",
        "{\"a\":1,}",
        "{'a':1}",
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "+1",
        "NaN",
        "Infinity",
        "-Infinity",
        "{\"a\":1}x",
        "{} {}",
        "[1] [2]",
        "/*c*/{}",
        "{\"a\":1 /*c*/}",
        "\"a\u{1}\"",
        "\"\\x41\"",
        "\"\\u12\"",
        "tru",
        "nul",
        "{\"a\" 1}",
        "{1:2}",
        "[1 2]",
        "\u{feff}{}",
        "\"abc",
    ] {
        assert!(not_json(text.as_bytes()), "{text:?} read as JSON");
    }
    // Bytes that are not UTF-8: a lone 0xFF, an overlong '/', an encoded surrogate.
    for bytes in [&b"\"\xff\""[..], b"\"\xc0\xaf\"", b"\"\xed\xa0\x80\""] {
        assert!(not_json(bytes), "{bytes:?}");
    }
}

#[test]
fn lone_surrogates_are_kept_as_code_units() {
    let read_back = read(br#"{"name":"a\ud800b\uDC15","pair":"\ud83d\udc15"}"#).unwrap();
    assert!(read_back.lone_surrogates);
    let name = read_back.value["name"].as_str().unwrap();
    let units: Vec<Option<u16>> = name.chars().map(lone_surrogate).collect();
    assert_eq!(units, [None, Some(0xD800), None, Some(0xDC15)]);
    assert_eq!(read_back.value["pair"], "\u{1f415}");
    // Two different lone surrogates are two different strings; the same one, written in either
    // case of hex, is one.
    assert_ne!(value(r#""\ud800""#), value(r#""\ud801""#));
    assert_eq!(value(r#""\ud800""#), value(r#""\uD800""#));
    // U+FFFD (a store's repair) is not the lone surrogate.
    assert_ne!(value(r#""\ud800""#), value(r#""\ufffd""#));
    // A high surrogate before an escape that is not a low one stays lone, and the escape after
    // it is read too.
    assert_eq!(
        value(r#""\ud800\u0041""#),
        json!(format!("{}A", standing_for(0xD800)))
    );
    // Written back as it came.
    let mut out = String::new();
    escape_str(name, &mut out);
    assert_eq!(out, r"a\ud800b\udc15");
}

#[test]
fn every_spelling_of_a_64_bit_integer_reads_as_that_integer() {
    for (text, n) in [
        ("100", 100i128),
        ("100.0", 100),
        ("0.1e1", 1),
        ("1e2", 100),
        ("1E+2", 100),
        ("10000e-2", 100),
        ("1.00e2", 100),
        ("-0", 0),
        ("-0.0e5", 0),
        ("0e-7", 0),
        ("9007199254740993", 9_007_199_254_740_993),
        ("9007199254740993.000", 9_007_199_254_740_993),
        ("9.007199254740993e15", 9_007_199_254_740_993),
        ("9223372036854775807", i64::MAX as i128),
        ("-9223372036854775808", i64::MIN as i128),
        ("18446744073709551615", u64::MAX as i128),
    ] {
        assert_eq!(integer(&value(text)), Some(n), "{text}");
    }
}

#[test]
fn other_numbers_are_not_integers() {
    for text in [
        "1.5",
        "100.000000000000001",
        "-9223372036854775809",
        "18446744073709551616",
        "1e400",
        "-1e400",
        "1e-400",
    ] {
        let read = value(text);
        assert!(read.is_number(), "{text}");
        assert_eq!(integer(&read), None, "{text}");
    }
    // A fraction that a double would round to a whole number stays a fraction.
    let almost = value("100.000000000000001");
    assert_ne!(almost.as_f64().unwrap().fract(), 0.0);
    // Past any double: kept beyond every integer, not turned into an error.
    assert_eq!(value("1e400").as_f64(), Some(f64::MAX));
}

#[test]
fn duplicate_names_are_noted_not_refused() {
    let read = read(br#"{"name":"a","name":"b","x":{"y":1,"y":2}}"#).unwrap();
    assert_eq!(read.value["name"], "b");
    assert_eq!(read.duplicate_names, ["name", "y"]);
}

#[test]
fn deep_nesting_is_not_read_and_cannot_overflow() {
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(read(deep.as_bytes()), Err(Unread::TooDeep));
    let at_bound = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(read(at_bound.as_bytes()).is_ok());
    // Far past it, unclosed: no stack to overflow, and the bound is met before the end.
    let huge = "[{\"a\":".repeat(1_000_000);
    assert_eq!(read(huge.as_bytes()), Err(Unread::TooDeep));
}

#[test]
fn a_text_whose_values_would_hold_too_much_is_not_read() {
    // 1 MiB of one-member objects: each a map's node of its own, a hundred MiB in all.
    let mut maps = b"[{\"\":0}".to_vec();
    while maps.len() < 1 << 20 {
        maps.extend_from_slice(b",{\"\":0}");
    }
    maps.push(b']');
    assert_eq!(read(&maps), Err(Unread::TooLarge));
    // A small text of the same kind is read, and a large one the grammar refuses before the
    // bound is still not JSON.
    assert!(read(b"[{\"\":0},{\"\":0}]").is_ok());
    maps[1] = b'x';
    assert!(not_json(&maps));
}

#[test]
fn a_megabyte_of_valid_pets_is_read_whole_and_a_large_array_holds_no_spare_room() {
    // The shortest valid pets, as many as 1 MiB holds.
    let mut pets = String::from("[");
    let mut id = 0;
    while pets.len() < (1 << 20) - 64 {
        id += 1;
        pets.push_str(&format!(r#"{{"id":{id},"name":"","categoryId":1}},"#));
    }
    pets.push_str(r#"{"id":0,"name":"","categoryId":1}]"#);
    let read = read(pets.as_bytes()).unwrap();
    let Value::Array(items) = &read.value else {
        panic!("not an array")
    };
    assert_eq!(items.len(), id + 1);
    assert!(items.len() > 25_000, "{}", items.len());
    // Grown by doubling, then trimmed.
    assert!(
        items.capacity() - items.len() <= 1024,
        "{}",
        items.capacity()
    );
}
