//! A text as a reader decodes it, character by character, wherever the escapes stand: HTML
//! character references (`&#75;`, `&#x4B;`, with leading zeros, with or without the `;` a
//! browser forgives), the five named ones XML and HTML share, and backslash escapes (`\u004B`,
//! `\/`, `\"`, `\\`) inside a JSON string or not. A target can spell each character of the key
//! its own way; no list of whole spellings covers the mixes, the decoded text does.

/// The decoded text, and where its escapes stood in the original.
pub(super) struct Decoded {
    pub(super) text: String,
    /// `(offset in text, offset in the original)` at the start and at the end of each escape;
    /// between two, the texts run alike.
    marks: Vec<(usize, usize)>,
}

impl Decoded {
    /// The original's offset of the decoded offset `at` (a character boundary).
    fn original_at(&self, at: usize) -> usize {
        let index = self.marks.partition_point(|(decoded, _)| *decoded <= at);
        match index.checked_sub(1).and_then(|i| self.marks.get(i)) {
            Some((decoded, original)) => original + (at - decoded),
            None => at,
        }
    }

    /// The original's bytes that spell `text[range]` (a range of whole characters).
    pub(super) fn original(&self, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.original_at(range.start)..self.original_at(range.end)
    }
}

/// Whether `text` holds an escape that can spell any character (`&#...;`, `\uXXXX`): then
/// [`decode`] is worth its copy. The named references and JSON's short escapes alone are
/// whole spellings the redactor lists.
pub(super) fn has_escapes(text: &str) -> bool {
    text.contains("&#") || text.contains("amp;#") || text.contains("\\u") || text.contains("\\U")
}

/// `text` decoded, with where each escape stood.
pub(super) fn decode(text: &str) -> Decoded {
    let bytes = text.as_bytes();
    let mut decoded = Decoded {
        text: String::with_capacity(text.len()),
        marks: Vec::new(),
    };
    let mut plain = 0;
    let mut i = 0;
    while i < bytes.len() {
        let escape = match bytes[i] {
            b'&' => reference(&text[i..]),
            b'\\' => backslash(&text[i..]),
            _ => None,
        };
        let Some((c, length)) = escape else {
            i += 1;
            continue;
        };
        decoded.text.push_str(&text[plain..i]);
        decoded.marks.push((decoded.text.len(), i));
        decoded.text.push(c);
        i += length;
        plain = i;
        decoded.marks.push((decoded.text.len(), i));
    }
    decoded.text.push_str(&text[plain..]);
    decoded
}

/// An HTML character reference at the start of `text`: the character and its length. One
/// that was itself escaped (`&amp;#75;`: a target's reference as report.html and junit.xml
/// write it, shown to a reader as `&#75;`) is read through.
fn reference(text: &str) -> Option<(char, usize)> {
    let bytes = text.as_bytes();
    // Bytes, not characters: whatever follows `&` may be any character.
    let starts = |at: usize, word: &str| {
        bytes
            .get(at..at + word.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(word.as_bytes()))
    };
    let mut at = 1;
    while starts(at, "amp;") {
        at += 4;
    }
    if let Some((c, length)) = one_reference(&text[at..]) {
        return Some((c, at + length));
    }
    (at > 1).then_some(('&', 5))
}

/// A reference that follows an `&` (`text` starts after it), not escaped again.
fn one_reference(text: &str) -> Option<(char, usize)> {
    for (name, c) in [("lt;", '<'), ("gt;", '>'), ("quot;", '"'), ("apos;", '\'')] {
        let head = text.as_bytes().get(..name.len());
        if head.is_some_and(|head| head.eq_ignore_ascii_case(name.as_bytes())) {
            return Some((c, name.len()));
        }
    }
    let rest = text.strip_prefix('#')?;
    let (radix, digits_at) = match rest.as_bytes().first() {
        Some(b'x' | b'X') => (16, 2),
        _ => (10, 1),
    };
    let digits = text[digits_at..]
        .bytes()
        .take_while(|b| char::from(*b).is_digit(radix))
        .count();
    // Leading zeros as many as a target likes; the value itself within a character's range.
    let value = u32::from_str_radix(&text[digits_at..digits_at + digits], radix).ok()?;
    let c = char::from_u32(value)?;
    let end = digits_at + digits;
    let end = if text[end..].starts_with(';') {
        end + 1
    } else {
        end
    };
    Some((c, end))
}

/// A backslash escape at the start of `text`: `\uXXXX` (a surrogate pair as one character),
/// or one of JSON's short escapes.
fn backslash(text: &str) -> Option<(char, usize)> {
    // `\\u0041` too: a target's `\u0041` as report.json writes it, which a reader decoding
    // the JSON sees as `\u0041`.
    let unit = |at: usize| {
        let slashes = text.get(at..)?.bytes().take_while(|b| *b == b'\\').count();
        let escape = text.get(at + slashes..at + slashes + 5)?;
        ((1..=2).contains(&slashes)
            && (escape.starts_with('u') || escape.starts_with('U'))
            && escape[1..].bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u32::from_str_radix(&escape[1..], 16).ok())
        .flatten()
        .map(|value| (value, slashes + 5))
    };
    if let Some((first, length)) = unit(0) {
        if let Some(c) = char::from_u32(first) {
            return Some((c, length));
        }
        // A surrogate pair: a high one, then a low one.
        let (low, second) = unit(length).filter(|(low, _)| (0xdc00..0xe000).contains(low))?;
        if !(0xd800..0xdc00).contains(&first) {
            return None;
        }
        let value = 0x10000 + ((first - 0xd800) << 10) + (low - 0xdc00);
        return char::from_u32(value).map(|c| (c, length + second));
    }
    let c = match text.as_bytes().get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'\'' => '\'',
        b'n' => '\n',
        b't' => '\t',
        b'r' => '\r',
        _ => return None,
    };
    Some((c, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_character_decodes_to_it() {
        let text = r"K&#75;&#075;&#x4B;&#X04b;&#75\u004B\u004b&amp;\/\uD83D\uDE00é.";
        let decoded = decode(text);
        assert_eq!(decoded.text, "KKKKKKKK&/\u{1F600}é.");
        // Escaped once more, as report.html, junit.xml and report.json write a target's text.
        let again = r"&amp;#75;&amp;amp;#x4B;\\u004B&amp;&amp;lt;";
        assert_eq!(decode(again).text, "KKK&<");
        // Each decoded character names the bytes that spelled it.
        let at = decoded.text.find('&').unwrap();
        assert_eq!(&text[decoded.original(at..at + 1)], "&amp;");
        let at = decoded.text.find('é').unwrap();
        assert_eq!(&text[decoded.original(at..decoded.text.len())], "é.");
        assert_eq!(&text[decoded.original(1..3)], "&#75;&#075;");
        assert_eq!(decoded.original(0..decoded.text.len()), 0..text.len());
    }

    proptest::proptest! {
        /// A target's bytes are any text: decoding never panics, and maps the whole text.
        #[test]
        fn any_text_decodes_and_maps_back(text in "(&|#|x|;|\\\\|u|[0-9a-fA-F]|\\PC){0,40}") {
            let decoded = decode(&text);
            proptest::prop_assert_eq!(decoded.original(0..decoded.text.len()), 0..text.len());
            for (at, _) in decoded.text.char_indices() {
                let range = decoded.original(at..decoded.text.len());
                proptest::prop_assert!(text.is_char_boundary(range.start));
            }
        }
    }

    #[test]
    fn what_is_no_escape_stays_as_it_is() {
        for text in [
            "&#;",
            "&#xZZ;",
            "\\q",
            "a & b",
            "&#1114112;",
            "\\u12",
            "\\uD800x",
            "\\u+123",
        ] {
            assert_eq!(decode(text).text, text, "{text}");
        }
    }
}
