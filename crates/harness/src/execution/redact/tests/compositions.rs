//! The key through what web stacks do to a text, one transform over another's output: the
//! property test and the findings it stands for.

use super::*;

/// What a careless web stack does to a text, one way each: the transforms the property test
/// composes.
#[derive(Debug, Clone, Copy)]
enum Transform {
    JsonUnicode,
    HtmlDecimal,
    HtmlHex,
    HtmlEscaped,
    PercentEvery,
    PercentForm,
    QuotedPrintable,
    HexEscapes,
    Octal,
    RustBraced,
    JsonString,
    Invisible,
    Fullwidth,
}

const TRANSFORMS: [Transform; 13] = [
    Transform::JsonUnicode,
    Transform::HtmlDecimal,
    Transform::HtmlHex,
    Transform::HtmlEscaped,
    Transform::PercentEvery,
    Transform::PercentForm,
    Transform::QuotedPrintable,
    Transform::HexEscapes,
    Transform::Octal,
    Transform::RustBraced,
    Transform::JsonString,
    Transform::Invisible,
    Transform::Fullwidth,
];

/// `text` as `transform` spells it; `seed` picks among the spellings it may give.
fn transformed(text: &str, transform: Transform, seed: usize) -> String {
    let per_byte = |spell: &dyn Fn(u8) -> String| -> String { text.bytes().map(spell).collect() };
    let per_char = |spell: &dyn Fn(usize, char) -> String| -> String {
        text.chars().enumerate().map(|(i, c)| spell(i, c)).collect()
    };
    match transform {
        Transform::JsonUnicode => per_char(&|i, c| {
            let mut units = [0u16; 2];
            c.encode_utf16(&mut units)
                .iter()
                .map(|u| match (i + seed) % 2 {
                    0 => format!("\\u{u:04x}"),
                    _ => format!("\\u{u:04X}"),
                })
                .collect()
        }),
        Transform::HtmlDecimal => per_char(&|i, c| match (i + seed) % 3 {
            0 => format!("&#{};", c as u32),
            1 => format!("&#{:05};", c as u32),
            _ => c.to_string(),
        }),
        Transform::HtmlHex => per_char(&|_, c| format!("&#x{:x};", c as u32)),
        Transform::HtmlEscaped => text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;"),
        Transform::PercentEvery => per_byte(&|b| format!("%{b:02X}")),
        Transform::PercentForm => form_urlencoded::byte_serialize(text.as_bytes()).collect(),
        Transform::QuotedPrintable => {
            let mut out = String::new();
            for (i, b) in text.bytes().enumerate() {
                if i > 0 && i % (5 + seed % 7) == 0 {
                    out.push_str("=\r\n");
                }
                out.push_str(&format!("={b:02X}"));
            }
            out
        }
        Transform::HexEscapes => per_char(&|_, c| match c.is_ascii() {
            true => format!("\\x{:02x}", c as u32),
            false => format!("\\u{{{:x}}}", c as u32),
        }),
        Transform::Octal => per_char(&|_, c| match c.is_ascii() {
            true => format!("\\{:03o}", c as u32),
            false => c.to_string(),
        }),
        Transform::RustBraced => per_char(&|_, c| format!("\\u{{{:X}}}", c as u32)),
        Transform::JsonString => {
            let quoted = serde_json::to_string(text).unwrap();
            quoted[1..quoted.len() - 1].replace('/', "\\/")
        }
        Transform::Invisible => {
            const UNSEEN: [char; 7] = [
                '\u{200b}', '\u{200d}', '\u{2060}', '\u{feff}', '\0', '\u{202e}', '\u{ad}',
            ];
            per_char(&|i, c| format!("{c}{}", UNSEEN[(i + seed) % UNSEEN.len()]))
        }
        Transform::Fullwidth => per_char(&|_, c| match c {
            '!'..='~' => char::from_u32(c as u32 + 0xfee0).unwrap().to_string(),
            c => c.to_string(),
        }),
    }
}

/// `text` as a reader decodes it, as often as it likes, written here apart from the
/// redactor's own decoder: every escape the transforms give undone, what shows nothing
/// dropped, fullwidth forms folded.
fn reader_view(text: &str) -> String {
    let mut text = text.to_string();
    // Until a decoding changes nothing: a reader undoes as many as there are.
    for _ in 0..12 {
        let before = text.clone();
        text = text.replace("=\r\n", "");
        let mut bytes: Vec<u8> = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let rest: String = chars[i..chars.len().min(i + 12)].iter().collect();
            // (characters before the digits, radix, most digits, what may close it)
            let escape = [
                ("&#x", 16, 6, ";"),
                ("&#X", 16, 6, ";"),
                ("&#", 10, 7, ";"),
                ("\\u{", 16, 6, "}"),
                ("\\u", 16, 4, ""),
                ("\\x", 16, 2, ""),
                ("%", 16, 2, ""),
                ("=", 16, 2, ""),
                ("\\", 8, 3, ""),
            ]
            .into_iter()
            .find_map(|(head, radix, most, close)| {
                let after = rest.strip_prefix(head)?;
                let digits: String = after
                    .chars()
                    .take_while(|c| c.is_digit(radix))
                    .take(most)
                    .collect();
                let fixed = ["\\u", "\\x", "%", "=", "\\"].contains(&head);
                if digits.is_empty() || (fixed && digits.len() != most) {
                    return None;
                }
                let value = u32::from_str_radix(&digits, radix).ok()?;
                let mut length = head.chars().count() + digits.len();
                if !close.is_empty() && after[digits.len()..].starts_with(close) {
                    length += 1;
                }
                Some((value, length, ["%", "=", "\\x", "\\"].contains(&head)))
            });
            match escape {
                // A byte of UTF-8 (percent, quoted-printable, `\x`, octal).
                Some((value, length, true)) if value < 256 => {
                    bytes.push(value as u8);
                    i += length;
                }
                Some((value, length, _)) if char::from_u32(value).is_some() => {
                    let mut buffer = [0u8; 4];
                    let c = char::from_u32(value).unwrap();
                    bytes.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
                    i += length;
                }
                _ => {
                    let mut buffer = [0u8; 4];
                    bytes.extend_from_slice(chars[i].encode_utf8(&mut buffer).as_bytes());
                    i += 1;
                }
            }
        }
        text = String::from_utf8_lossy(&bytes)
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"");
        // Surrogate pairs written as two `\u` escapes.
        text = char::decode_utf16(text.encode_utf16())
            .map(|c| c.unwrap_or('\u{fffd}'))
            .collect();
        // What shows nothing dropped and fullwidth forms read as ASCII at each round: an
        // escape spelled in them (`＆＃７５；`) is one the next round undoes.
        text = text
            .chars()
            .filter(|c| {
                let shown = !c.is_control() || ['\r', '\n'].contains(c);
                shown
                    && !('\u{200b}'..='\u{206f}').contains(c)
                    && !['\u{feff}', '\u{ad}'].contains(c)
            })
            .map(|c| match c {
                '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap(),
                c => c,
            })
            .collect();
        if text == before {
            break;
        }
    }
    text
}

/// Every run of `MIN_RUN` characters of `key`.
fn runs_of(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    chars
        .windows(MIN_RUN.min(chars.len()))
        .map(|run| run.iter().collect())
        .collect()
}

/// `text` in base-N as a web stack writes it: hex, base32, base64, base85.
fn encoded(text: &str, encoding: usize) -> String {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    let bytes = text.as_bytes();
    match encoding {
        1 => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        2 => bytes.iter().map(|b| format!("{b:02X}")).collect(),
        3 => STANDARD.encode(bytes),
        4 => URL_SAFE_NO_PAD.encode(format!("user:{text}"))[4..].to_string(),
        5 => {
            // RFC 4648 base32, lowercase as some write it.
            let bits: Vec<u8> = bytes
                .iter()
                .flat_map(|b| (0..8).rev().map(move |i| (b >> i) & 1))
                .collect();
            bits.chunks(5)
                .map(|chunk| {
                    let value = (0..5).fold(0, |v, i| v << 1 | chunk.get(i).copied().unwrap_or(0));
                    char::from(b"abcdefghijklmnopqrstuvwxyz234567"[value as usize])
                })
                .collect()
        }
        _ => {
            // Ascii85, the last group padded as btoa pads it.
            let mut out = String::new();
            for group in bytes.chunks(4) {
                let mut word = [0u8; 4];
                word[..group.len()].copy_from_slice(group);
                let value = u32::from_be_bytes(word);
                let digits: Vec<char> = (0..5)
                    .rev()
                    .map(|p| char::from(33 + (value / 85u32.pow(p) % 85) as u8))
                    .collect();
                out.extend(&digits[..group.len() + 1]);
            }
            out
        }
    }
}

proptest::proptest! {
    // Random seeds, as proptest draws them: each run tries other compositions.
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// The key through any composition of what a web stack does to a text (one base-N
    /// encoding or none, then up to four transforms in any order, each applied over the
    /// others' output: escapings, what the eye does not see between its characters, fullwidth
    /// forms): the redactor leaves no run of `MIN_RUN` of its characters (nor 16 characters of
    /// its base-N form) for a reader who undoes them all.
    #[test]
    fn the_key_through_any_composition_of_transforms_is_redacted(
        key in "[A-Za-z0-9/_.~-][A-Za-z0-9/_.~&<>\"'|%=é+-]{11,40}",
        encoding in 0usize..7,
        chain in proptest::collection::vec((0usize..TRANSFORMS.len(), 0usize..100), 0..5),
        before in "[ a-z:{}\"]{0,12}",
    ) {
        let redactor = Redactor::new(&key);
        let mut form = if encoding == 0 { key.clone() } else { encoded(&key, encoding) };
        for (t, seed) in &chain {
            form = transformed(&form, TRANSFORMS[*t], *seed);
        }
        let text = format!("{before}{form} end.");
        let redacted = redactor.redact_sent(&text);
        proptest::prop_assert!(redacted.contains(REDACTED), "{text:?} -> {redacted:?}");
        let seen = reader_view(&redacted).to_lowercase();
        let leaks: Vec<String> = if encoding == 0 {
            runs_of(&key).into_iter().chain(runs_of(&key.chars().rev().collect::<String>())).map(|run| run.to_lowercase()).collect()
        } else {
            let whole = encoded(&key, encoding).to_lowercase();
            let chars: Vec<char> = whole.chars().collect();
            chars.windows(16.min(chars.len())).map(|w| w.iter().collect()).collect()
        };
        for leak in leaks {
            proptest::prop_assert!(!seen.contains(&leak), "{leak:?} in {seen:?} (from {text:?} -> {redacted:?})");
        }
    }
}

/// Where `text` spells a secret, each decoding searched whole: what [`Redactor::found`]
/// finds searching a decoding only near its escapes.
fn found_searching_whole(redactor: &Redactor, text: &str) -> Vec<Range<usize>> {
    let finder = &redactor.sent;
    let mut found = finder.matches(text);
    if decoded::has_escapes(text) {
        let view = decoded::decode_deep(text);
        for depth in 1..=view.depth() {
            let whole = finder.matches(view.text(depth)).into_iter();
            found.extend(whole.map(|range| view.original(depth, range)));
        }
    }
    found.sort_by_key(|range| range.start);
    let mut joined: Vec<Range<usize>> = Vec::new();
    for range in found {
        match joined.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => joined.push(range),
        }
    }
    joined
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// A decoding is searched only near its escapes: everywhere else it copies the text it was
    /// decoded from, which was searched. The key spelled through a composition, amid text
    /// dense with escapes and with pieces of the key as they are, is found where a search of
    /// every decoding whole finds it.
    #[test]
    fn a_decoding_searched_near_its_escapes_finds_what_a_whole_search_finds(
        key in "[A-Za-z0-9/_.~-][A-Za-z0-9/_.~&<>\"'|%=é+-]{11,30}",
        chain in proptest::collection::vec((0usize..TRANSFORMS.len(), 0usize..100), 0..4),
        pieces in proptest::collection::vec(
            (0usize..5, "[ a-z:{}\"\\\\%&#;=u0-9A-Fé\u{200b}]{0,40}", 0usize..100), 0..10),
    ) {
        let redactor = Redactor::new(&key);
        let mut form = key.clone();
        for (t, seed) in &chain {
            form = transformed(&form, TRANSFORMS[*t], *seed);
        }
        let mut text = String::new();
        for (kind, filler, seed) in &pieces {
            match kind {
                0 => text.push_str(filler),
                1 => text.push_str(&form),
                2 => text.push_str(&key[..key.char_indices().nth(9).map_or(key.len(), |(i, _)| i)]),
                // Far from any escape: what a decoding copies, searched only in the text it
                // was made from.
                3 => text.push_str(&"plain words ".repeat(20 + seed)),
                _ => text.push_str(&transformed(filler, TRANSFORMS[seed % TRANSFORMS.len()], *seed)),
            }
        }
        proptest::prop_assert_eq!(
            redactor.found(&text, Source::Target),
            found_searching_whole(&redactor, &text),
            "{:?}", text
        );
    }
}

#[test]
fn a_long_text_is_searched_near_its_escapes_and_the_key_found_in_each_place() {
    let key = "kUT7q2Zx9-Rm4vLw8Np3Ya6Hd5Jc1Fg0Bs2Ek7Qt9W";
    let redactor = Redactor::new(key);
    let escaped = transformed(key, Transform::JsonUnicode, 0);
    let padding = "plain words ".repeat(400);
    // The key escaped (found in a decoding, near its escapes), then as it is far from any
    // escape (found in the text itself), then escaped again.
    let text = format!("{padding}{escaped}{padding}{key}{padding}{escaped}{padding}");
    let view = decoded::decode_deep(&text);
    let near = redactor.sent.matches_near(view.text(1), view.changed(1));
    assert!(!near.is_empty(), "the escaped key, in the decoding");
    assert_eq!(
        redactor.found(&text, Source::Target),
        found_searching_whole(&redactor, &text)
    );
    assert_eq!(redactor.redact_sent(&text).matches(REDACTED).count(), 3);
}

#[test]
fn half_a_key_a_split_key_and_every_spelling_of_the_finding_are_redacted() {
    let key = "kUT7q2Zx9-Rm4vLw8Np3Ya6Hd5Jc1Fg0Bs2Ek7Qt9W";
    let redactor = Redactor::new(key);
    let (head, tail) = key.split_at(20);
    let utf16: String = key.chars().flat_map(|c| [c, '\0']).collect();
    let zero_width: String = key.chars().map(|c| format!("{c}\u{200b}")).collect();
    let fullwidth = transformed(key, Transform::Fullwidth, 0);
    let double_percent: String = key.bytes().map(|b| format!("%25{b:02X}")).collect();
    let quoted_printable = transformed(key, Transform::QuotedPrintable, 3);
    for text in [
        format!("X-Part-One: {head}\r\nX-Part-Two: {tail}\r\n"),
        format!("half: {head}."),
        utf16,
        zero_width,
        fullwidth,
        double_percent,
        quoted_printable,
        encoded(key, 1),
        encoded(key, 2).to_uppercase(),
        encoded(key, 5),
        encoded(key, 6),
    ] {
        let redacted = redactor.redact_sent(&text);
        let seen = reader_view(&redacted).to_lowercase();
        for run in runs_of(key) {
            assert!(
                !seen.contains(&run.to_lowercase()),
                "{run} in {redacted:?} (from {text:?})"
            );
        }
        assert!(redacted.contains(REDACTED), "{text:?}");
    }
    // Seven characters of the key are ordinary text.
    assert_eq!(redactor.redact_sent("a kUT7q2Z b"), "a kUT7q2Z b");
}

#[test]
fn the_harness_own_text_keeps_its_words_and_loses_the_whole_key() {
    let key = "read-only-test-key";
    let redactor = Redactor::new(key);
    let own = "Re-run: petstore-conformance run --read-only --report-dir /tmp/only-test-keys";
    // Half a key comes from the target only: in the harness's own text it is words.
    assert_eq!(redactor.redact(own), own);
    assert_eq!(
        redactor.redact_sent("echo: --read-only"),
        format!("echo: --{REDACTED}")
    );
    // The whole key, in any spelling, is taken out of anyone's text.
    let double_percent: String = key.bytes().map(|b| format!("%25{b:02X}")).collect();
    for text in [
        format!("--api-key {key}"),
        double_percent,
        transformed(key, Transform::Fullwidth, 0),
        transformed(key, Transform::Invisible, 1),
        encoded(key, 3),
    ] {
        let redacted = redactor.redact(&text);
        assert!(redacted.contains(REDACTED), "{text:?} -> {redacted:?}");
        assert!(!reader_view(&redacted).contains(key), "{redacted:?}");
    }
}

#[test]
fn transforms_applied_over_each_other_decode_to_a_fixed_point() {
    // HTML references, made fullwidth, then quoted-printable, then percent-encoded, then a
    // JSON string: five rounds, each undoing what the one before left.
    let key = "zq9XkW-chain/KEY|7Hc2Lm";
    let redactor = Redactor::new(key);
    let mut form = key.to_string();
    for transform in [
        Transform::HtmlDecimal,
        Transform::Fullwidth,
        Transform::QuotedPrintable,
        Transform::PercentEvery,
        Transform::JsonUnicode,
    ] {
        form = transformed(&form, transform, 0);
    }
    for redacted in [redactor.redact(&form), redactor.redact_sent(&form)] {
        assert!(redacted.contains(REDACTED), "{form:?}");
        assert!(!reader_view(&redacted).contains("9XkW-ch"), "{redacted:?}");
    }
    // A base85 key HTML-escaped: `&gt;` undone with the `=6C` of the base85 text read as
    // quoted-printable would leave no base85 text; each kind undone alone leaves it.
    let key = "A\"VA~\"~a<A-a=é\"A\"-A\"i_<";
    let form = transformed(&encoded(key, 6), Transform::HtmlEscaped, 0);
    assert!(form.contains("=6C") && form.contains("&gt;"), "{form}");
    assert!(
        Redactor::new(key).redact(&form).contains(REDACTED),
        "{form}"
    );
}

#[test]
fn a_base85_key_whose_escape_a_decoder_reads_once_too_often_is_redacted() {
    // Drawn by the property test: Ascii85 holding `\@`, then `\u` escapes, quoted-printable
    // with soft breaks, and JSON-string escaping twice. Undoing every layer, the decoder reads
    // the `\@` as `@` in a last round: the whole base85 form is in no view, 25 of its
    // characters are.
    let key = "_A~a-%a%é<_<<ééWva_éé";
    let mut form = encoded(key, 6);
    assert!(form.contains("\\@"), "{form}");
    for (t, seed) in [(0, 0), (6, 17), (10, 0), (10, 0)] {
        form = transformed(&form, TRANSFORMS[t], seed);
    }
    let redacted = Redactor::new(key).redact_sent(&format!("{form} end."));
    assert!(redacted.contains(REDACTED), "{redacted}");
    let whole: Vec<char> = encoded(key, 6).to_lowercase().chars().collect();
    let view = super::super::decoded::decode_deep(&redacted);
    for depth in 1..=view.depth() {
        let seen = view.text(depth).to_lowercase();
        for window in whole.windows(16) {
            let window: String = window.iter().collect();
            assert!(!seen.contains(&window), "{window:?} in {seen:?}");
        }
    }
}
