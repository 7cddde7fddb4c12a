use super::*;

mod compositions;

#[test]
fn redacts_every_occurrence() {
    let redactor = Redactor::new("s3cret");
    assert_eq!(
        redactor.redact("Bearer s3cret and s3cret"),
        "Bearer [REDACTED] and [REDACTED]"
    );
    assert_eq!(redactor.redact("nothing here"), "nothing here");
    assert!(!format!("{redactor:?}").contains("s3cret"));
}

const HARD_KEYS: [&str; 6] = [
    "k&y|with\"<all>\\of/them'",
    "plain-key-0123456789",
    "a/b/c/d/e/f/g/h",
    "pipe|pipe|pipe|pipe",
    "amp&amp&amp&amp",
    "quote\"quote\"quote",
];

#[test]
fn escaped_spellings_are_redacted() {
    for key in HARD_KEYS {
        let redactor = Redactor::new(key);
        let json_string = serde_json::to_string(key).unwrap();
        let slash_escaped = json_string.replace('/', "\\/");
        let unicode_escaped: String = format!(
            "\"{}\"",
            key.chars()
                .map(|c| format!("\\u{:04x}", c as u32))
                .collect::<String>()
        );
        let xml = key
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&apos;");
        let markdown = key.replace('|', "\\|");
        let nested = serde_json::to_string(&format!("message: {json_string}")).unwrap();
        for text in [
            format!("{{\"message\":{json_string}}}"),
            format!("{{\"message\":{slash_escaped}}}"),
            format!("{{\"message\":{unicode_escaped}}}"),
            format!("<failure message=\"{xml}\"/>"),
            format!("| {markdown} |"),
            nested,
            key.to_uppercase(),
            format!("x{key}x"),
        ] {
            let redacted = redactor.redact(&text);
            let decoded = serde_json::from_str::<Value>(&redacted)
                .map(|v| v.to_string())
                .unwrap_or_default();
            for haystack in [&redacted, &decoded] {
                assert!(
                    !haystack.to_lowercase().contains(&key.to_lowercase()),
                    "{key:?} survives in {haystack:?} (from {text:?})"
                );
            }
            assert!(redacted.contains(REDACTED), "{text:?} -> {redacted:?}");
        }
    }
}

#[test]
fn html_escaped_spellings_are_redacted() {
    for key in HARD_KEYS {
        let redactor = Redactor::new(key);
        let html = |text: &str| {
            text.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&#39;")
        };
        let json_inner = serde_json::to_string(key).unwrap();
        let json_inner = &json_inner[1..json_inner.len() - 1];
        for spelled in [
            html(key),
            html(key).replace("&#39;", "&#x27;"),
            html(key).replace("&#39;", "&#X27;"),
            html(json_inner),
        ] {
            let text = format!("<pre class=\"body\">{{&quot;m&quot;:&quot;{spelled}&quot;}}</pre>");
            let redacted = redactor.redact(&text);
            assert!(
                !redacted.to_lowercase().contains(&spelled.to_lowercase()),
                "{key:?}: {spelled:?} survives in {redacted:?}"
            );
            assert!(redacted.contains(REDACTED), "{text:?} -> {redacted:?}");
        }
    }
}

#[test]
fn near_misses_of_a_long_key_are_redacted() {
    let key = "sk-live-9f8e7d6c5b4a";
    let redactor = Redactor::new(key);
    for near in [&key[1..], &key[..key.len() - 1], &key.to_uppercase()[..]] {
        assert_eq!(redactor.redact(&format!("got {near}!")), "got [REDACTED]!");
    }
    // A short key's near misses are not taken out of every text.
    assert_eq!(Redactor::new("abc").redact("ab bc"), "ab bc");
}

#[test]
fn a_prefix_left_at_a_cut_is_redacted() {
    let key = "sk-live-9f8e7d6c5b4a";
    let redactor = Redactor::new(key);
    assert_eq!(redactor.redact_cut("body: sk-l"), "body: [REDACTED]");
    assert_eq!(redactor.redact_cut("body: sk-live-9f"), "body: [REDACTED]");
    assert_eq!(redactor.redact_cut("body: sk-"), "body: sk-");
    assert_eq!(redactor.redact_cut("body: ok"), "body: ok");
    let json_cut = "{\"m\":\"k&y|with\\\"<al";
    let redactor = Redactor::new(HARD_KEYS[0]);
    assert!(redactor.redact_cut(json_cut).ends_with(REDACTED));
}

#[test]
fn json_values_are_redacted_in_strings_and_names() {
    let redactor = Redactor::new("s3cret-key");
    let value = serde_json::json!({"a": ["x s3cret-key"], "S3CRET-KEY": 1, "n": 2});
    let redacted = redactor.redact_json(&value).to_string();
    assert!(
        !redacted.to_lowercase().contains("s3cret-key"),
        "{redacted}"
    );
}

fn escaped(text: &str, upper: bool) -> String {
    text.chars()
        .map(|c| match upper {
            true => format!("\\u{:04X}", c as u32),
            false => format!("\\u{:04x}", c as u32),
        })
        .collect()
}

#[test]
fn what_a_careless_target_echoes_is_redacted() {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let key = "zq9XkW-echo/KEY|7Hc2Lm";
    let redactor = Redactor::new(key);
    let every_byte: String = key.bytes().map(|b| format!("%{b:02x}")).collect();
    for text in [
        format!("{{\"m\":\"seen {}", escaped(key, false)),
        format!("{{\"m\":\"seen {} and more", escaped(key, true)),
        serde_json::to_string(&format!("{{\"inner\":\"{}\"}}", escaped(key, true))).unwrap(),
        every_byte.clone(),
        every_byte.to_uppercase(),
        STANDARD.encode(key),
        STANDARD.encode(format!("u:{key}")),
        URL_SAFE.encode(format!("us:{key}")),
    ] {
        let redacted = redactor.redact(&text);
        assert!(redacted.contains(REDACTED), "{text} -> {redacted}");
        assert!(!redacted.contains("zq9"), "{text} -> {redacted}");
    }
    // \u-escaped, cut after the key's seventh character (and inside the eighth's escape).
    let cut = format!("{{\"m\":\"{}\\u00", escaped(&key[..7], false));
    let redacted = redactor.redact_cut(&cut);
    assert!(!redacted.contains("\\u007a"), "{cut} -> {redacted}");
    assert!(redacted.ends_with(REDACTED), "{cut} -> {redacted}");
    // Text without the key is left as it was, escapes and all.
    let clean = "{\"m\":\"caf\\u00e9 \\u00";
    assert_eq!(redactor.redact_cut(clean), clean);
    assert_eq!(redactor.redact(clean), clean);
}

#[test]
fn a_url_is_shown_without_userinfo_or_query_values() {
    assert_eq!(
        url_for_display("https://u:secret@h.example/v1?api_key=secret&x#frag"),
        "https://[REDACTED]@h.example/v1?api_key=[REDACTED]&[REDACTED]#[REDACTED]"
    );
    assert_eq!(
        url_for_display("h.example/v1?k=s"),
        "h.example/v1?k=[REDACTED]"
    );
    assert_eq!(url_for_display("http://h/v1"), "http://h/v1");
}

/// Each character of `key` spelled by `spell`, as a target may spell it.
fn spelled(key: &str, spell: impl Fn(usize, char) -> String) -> String {
    key.chars().enumerate().map(|(i, c)| spell(i, c)).collect()
}

#[test]
fn character_references_and_escapes_anywhere_and_the_reversed_key_are_redacted() {
    for key in HARD_KEYS.into_iter().chain(["Zq9-xK7&w3\\Lm/Vt\u{e9}"]) {
        let redactor = Redactor::new(key);
        let reversed: String = key.chars().rev().collect();
        let forms = [
            spelled(key, |_, c| format!("&#{};", c as u32)),
            spelled(key, |_, c| format!("&#x{:X};", c as u32)),
            spelled(key, |_, c| format!("&#x{:06x};", c as u32)),
            spelled(key, |_, c| format!("&#{:07}", c as u32)),
            // Mixed: every other character spelled another way, some left as they are.
            spelled(key, |i, c| match i % 4 {
                0 => format!("&#{};", c as u32),
                1 => format!("\\u{:04X}", c as u32),
                2 => format!("&#X{:x};", c as u32),
                _ => c.to_string(),
            }),
            // \u escapes outside any JSON string (a text/plain body, a header).
            spelled(key, |_, c| format!("\\u{:04x}", c as u32)),
            reversed.clone(),
            spelled(&reversed, |_, c| format!("&#{};", c as u32)),
            serde_json::to_string(&reversed).unwrap(),
        ];
        for form in forms {
            for text in [
                format!("seen: {form}."),
                format!("<p>{form}</p>"),
                format!("{{\"m\":\"{form}\"}}"),
            ] {
                let redacted = redactor.redact(&text);
                assert!(redacted.contains(REDACTED), "{key:?}: {text:?}");
                let decoded = super::decoded::decode(&redacted, super::decoded::EVERY_KIND)
                    .text
                    .to_lowercase();
                for secret in [key.to_lowercase(), reversed.to_lowercase()] {
                    assert!(
                        !decoded.contains(&secret),
                        "{key:?} survives in {redacted:?} (from {text:?})"
                    );
                }
                assert!(redacted.starts_with(&text[..3]), "{redacted:?}");
            }
        }
    }
    // Text that only looks like an escape stays as it is.
    let redactor = Redactor::new("plain-key-0123456789");
    for text in ["&#75; &#x4B; \\u004B &amp; \\/", "a & b \\q"] {
        assert_eq!(redactor.redact(text), text);
    }
}

#[test]
fn a_proxy_password_is_a_secret_and_its_user_name_is_not() {
    let secrets = userinfo_secrets("http://ops:s3cr%40t-pr0xy-pass@proxy.example:3128/x?y");
    assert_eq!(
        secrets,
        [
            "ops:s3cr%40t-pr0xy-pass",
            "s3cr%40t-pr0xy-pass",
            "s3cr@t-pr0xy-pass"
        ]
    );
    let redactor = secrets
        .iter()
        .fold(Redactor::new("the-api-key-0123"), |r, s| r.also(s));
    let redacted = redactor.redact("via ops:s3cr@t-pr0xy-pass and ops");
    assert!(!redacted.contains("pr0xy"), "{redacted}");
    assert!(redacted.ends_with("and ops"), "{redacted}");
    assert!(userinfo_secrets("http://ops@proxy.example").is_empty());
    assert!(userinfo_secrets("proxy.example:3128").is_empty());
}

/// A text is decoded only where a decoding would change it: `has_escapes` says so exactly
/// (an `=` or `%` that starts no escape, as in `charset=utf-8`, is searched as it is), and
/// the key behind a real escape is still found.
#[test]
fn only_texts_a_decoding_changes_are_decoded() {
    for (text, changes) in [
        ("application/json; charset=utf-8", false),
        ("100% of {\"name\": \"é\"}", false),
        ("&zz; =zz %zz \\q", false),
        ("%4B", true),
        ("=4B", true),
        ("a=\r\nb", true),
        ("&amp;", true),
        ("\\u004B", true),
        ("a\u{200b}b", true),
    ] {
        assert_eq!(decoded::has_escapes(text), changes, "{text:?}");
        let deep = decoded::decode_deep(text);
        assert_eq!(deep.depth() > 0, changes, "{text:?}");
    }
    let redactor = Redactor::new("s3cret");
    assert_eq!(
        redactor.redact("charset=utf-8; key=%73%33cret"),
        "charset=utf-8; key=[REDACTED]"
    );
}
