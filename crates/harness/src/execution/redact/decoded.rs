//! A text as a reader decodes it, character by character, wherever the escapes stand, with
//! what the eye does not see left out. Decoded: HTML character references (`&#75;`, `&#x4B;`,
//! with leading zeros, with or without the `;` a browser forgives), the five named ones XML
//! and HTML share, backslash escapes (`\u004B`, `\u{4B}`, `\x4B`, octal `\113`, `\/`, `\"`,
//! `\\`) inside a JSON string or not, percent-encoding (`%4B`) and
//! quoted-printable (`=4B`, its soft line breaks), each once per decoding. Left out: NUL and the other controls,
//! zero-width and bidirectional characters, the soft hyphen, variation selectors. Folded:
//! fullwidth forms (`Ｋ`) to ASCII. A target can spell each character of the key its own way,
//! and a web stack encodes what another encoded: no list of whole spellings covers the mixes;
//! the text decoded again until a decoding changes nothing (a fixed point, within
//! [`MAX_ROUNDS`] and [`MAX_HELD`]) does, whatever order the transforms were applied in.

/// Decodings applied one over another at most: each undoes one transform a web stack applied
/// over another's output (HTML references made fullwidth, then quoted-printable, then
/// percent-encoded is three, and the base-N text under them is searched as it is). No reader
/// undoes more by hand; a text still changing after this many is searched as far as it went.
pub(super) const MAX_ROUNDS: usize = 8;

/// Bytes the decodings of one text may hold together (their texts and where their escapes
/// stood): past it no further round is made. Each round's text is no longer than the one it
/// decoded (an escape is longer than what it spells), so a round costs at most the text's
/// length; this bounds a large body spelled in escapes within escapes (a 1 MiB body of `%41`
/// holds 6 MiB in its first decoding, and is then plain).
pub(super) const MAX_HELD: usize = 16 << 20;

/// The decoded text, and where its escapes stood in the original.
pub(super) struct Decoded {
    pub(super) text: String,
    /// `(offset in text, offset in the original)` at the start and at the end of each escape;
    /// between two, the texts run alike.
    marks: Vec<(usize, usize)>,
}

impl Decoded {
    /// The bytes this decoding holds.
    fn held(&self) -> usize {
        self.text.len() + self.marks.len() * std::mem::size_of::<(usize, usize)>()
    }

    /// Notes that the original's `original` is the decoded text's `decoded`; a run of dropped
    /// characters (NULs, zero-width ones: nothing decoded between them) is one mark, not one
    /// per character, and an escape that starts where the last ended adds none.
    fn mark(&mut self, decoded: usize, original: usize) {
        let n = self.marks.len();
        let last = self.marks.last().copied();
        let before = n.checked_sub(2).map(|i| self.marks[i].0);
        match last {
            Some(last) if last == (decoded, original) => {}
            Some(last) if last.0 == decoded && before == Some(decoded) => {
                self.marks[n - 1].1 = original;
            }
            _ => self.marks.push((decoded, original)),
        }
    }

    /// The original's offset of the decoded offset `at` (a character boundary): where what
    /// spells it ends, or with `first`, where it starts (before the characters dropped there:
    /// a range's edges take in what shows nothing around it).
    fn original_at(&self, at: usize, first: bool) -> usize {
        if first {
            let index = self.marks.partition_point(|(decoded, _)| *decoded < at);
            if let Some((decoded, original)) = self.marks.get(index)
                && *decoded == at
            {
                return *original;
            }
        }
        let index = self.marks.partition_point(|(decoded, _)| *decoded <= at);
        match index.checked_sub(1).and_then(|i| self.marks.get(i)) {
            Some((decoded, original)) => original + (at - decoded),
            None => at,
        }
    }

    /// The original's bytes that spell `text[range]` (a range of whole characters).
    pub(super) fn original(&self, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.original_at(range.start, true)..self.original_at(range.end, false)
    }
}

/// A text decoded again and again: each decoding made from the original or from another.
pub(super) struct Deep {
    /// Each decoding, and the one it was made from (`None`: the original).
    layers: Vec<(Decoded, Option<usize>)>,
}

impl Deep {
    /// How many decodings there are.
    pub(super) fn depth(&self) -> usize {
        self.layers.len()
    }

    /// The text as the `depth`th decoding (from 1) left it. Each is searched: a decoding
    /// further may undo what was no escape (a base85 text's `=4F`).
    pub(super) fn text(&self, depth: usize) -> &str {
        self.layers
            .get(depth.wrapping_sub(1))
            .map_or("", |(layer, _)| layer.text.as_str())
    }

    /// Where the `depth`th decoding changed the text it was made from: the offsets, in it,
    /// where each escape's decoding starts and ends, in order.
    pub(super) fn changed(&self, depth: usize) -> impl Iterator<Item = usize> + '_ {
        self.layers
            .get(depth.wrapping_sub(1))
            .into_iter()
            .flat_map(|(layer, _)| layer.marks.iter().map(|(decoded, _)| *decoded))
    }

    /// The original's bytes that spell `text(depth)[range]`.
    pub(super) fn original(
        &self,
        depth: usize,
        mut range: std::ops::Range<usize>,
    ) -> std::ops::Range<usize> {
        let mut at = depth.checked_sub(1);
        while let Some((layer, from)) = at.and_then(|i| self.layers.get(i)) {
            range = layer.original(range);
            at = *from;
        }
        range
    }

    /// Adds `layer`, made from the `from`th (`None`: the original); its bytes held.
    fn push(&mut self, layer: Decoded, from: Option<usize>) -> usize {
        let held = layer.held();
        self.layers.push((layer, from));
        held
    }
}

/// The kinds of escape [`decode`] undoes, one bit each.
const REFERENCES: u8 = 1;
const BACKSLASHES: u8 = 2;
const PERCENT: u8 = 4;
const QUOTED_PRINTABLE: u8 = 8;
const UNSEEN: u8 = 16;
pub(super) const EVERY_KIND: u8 = 31;

/// `text` decoded again and again until a decoding changes nothing (what the last one left
/// holds no escape), within [`MAX_ROUNDS`] rounds and [`MAX_HELD`] bytes. Each round joins the
/// lines quoted-printable's soft breaks cut first, as its decoder does: a break may stand
/// inside an escape of another kind (`&#0=\r\n0233;`), which would read as another escape.
/// A round undoes every kind of escape at once (the next round's text), and where the text
/// holds more than one kind, each kind alone too (searched, not decoded further): the
/// characters one transform left as they were may read as another's escapes (a base85
/// text's `=6C`, HTML-escaped: `&gt;` and `=6C` undone together leave no base85 text).
pub(super) fn decode_deep(text: &str) -> Deep {
    let mut deep = Deep { layers: Vec::new() };
    let mut current: Option<usize> = None;
    let mut held = 0;
    for _ in 0..MAX_ROUNDS {
        let input = current.map_or(text, |i| deep.layers[i].0.text.as_str());
        if held >= MAX_HELD || !has_escapes(input) {
            break;
        }
        let joined = soft_breaks_joined(input);
        let input = joined.as_ref().map_or(input, |joined| joined.text.as_str());
        let kinds = kinds_in(input);
        let whole = decode(input, EVERY_KIND);
        let alone: Vec<Decoded> = match kinds.count_ones() {
            0 | 1 => Vec::new(),
            _ => (0..5)
                .map(|bit| 1u8 << bit)
                .filter(|kind| kinds & kind != 0)
                .map(|kind| decode(input, kind))
                .filter(|layer| !layer.marks.is_empty())
                .collect(),
        };
        let changed = !whole.marks.is_empty();
        let from = match joined {
            Some(joined) => {
                held += deep.push(joined, current);
                Some(deep.depth() - 1)
            }
            None => current,
        };
        for layer in alone {
            held += deep.push(layer, from);
        }
        if !changed {
            break;
        }
        held += deep.push(whole, from);
        current = Some(deep.depth() - 1);
    }
    deep
}

/// The kinds of escape `text` holds: those [`decode`] would undo somewhere in it, each
/// alone. A kind whose starting byte stands only where no escape does (a `=` in
/// `charset=utf-8`, a letter that is not ASCII) is none: decoded alone, it would copy the
/// text unchanged, and a JSON listing has all five such bytes.
fn kinds_in(text: &str) -> u8 {
    let bytes = text.as_bytes();
    let mut kinds = 0;
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(starts_escape) {
        at += offset;
        let kind = match bytes[at] {
            b'&' => REFERENCES,
            b'\\' => BACKSLASHES,
            b'%' => PERCENT,
            b'=' => QUOTED_PRINTABLE,
            _ => UNSEEN,
        };
        if kinds & kind == 0 && escape_at(text, at, kind).is_some() {
            kinds |= kind;
            if kinds == EVERY_KIND {
                break;
            }
        }
        at += 1;
        while at < bytes.len() && !text.is_char_boundary(at) {
            at += 1;
        }
    }
    kinds
}

/// `text` with quoted-printable's soft line breaks (`=` at a line's end) left out, if it has
/// any.
fn soft_breaks_joined(text: &str) -> Option<Decoded> {
    if !text.contains("=\n") && !text.contains("=\r\n") {
        return None;
    }
    let mut joined = Decoded {
        text: String::with_capacity(text.len()),
        marks: Vec::new(),
    };
    let mut plain = 0;
    for (at, _) in text.match_indices('=') {
        let length = match &text.as_bytes()[at + 1..] {
            [b'\n', ..] => 2,
            [b'\r', b'\n', ..] => 3,
            _ => continue,
        };
        joined.text.push_str(&text[plain..at]);
        let end = joined.text.len();
        joined.mark(end, at);
        joined.mark(end, at + length);
        plain = at + length;
    }
    joined.text.push_str(&text[plain..]);
    Some(joined)
}

/// Whether `text` holds anything [`decode_deep`] changes (an escape [`decode`] undoes, or a
/// soft line break): then it is worth its copies. Most texts hold none: plain JSON, ASCII, and
/// an `=` or `%` that starts no escape (`charset=utf-8`) are searched as they are only.
pub(super) fn has_escapes(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(starts_escape) {
        at += offset;
        if escape_at(text, at, EVERY_KIND).is_some()
            || text[at..].starts_with("=\n")
            || text[at..].starts_with("=\r\n")
        {
            return true;
        }
        at += 1;
        while at < bytes.len() && !text.is_char_boundary(at) {
            at += 1;
        }
    }
    false
}

/// A byte an escape of [`decode`] may start at.
fn starts_escape(b: &u8) -> bool {
    matches!(b, b'&' | b'\\' | b'%' | b'=' | 0xc0..=0xff | 0..=0x1f | 0x7f)
}

/// The escape of `kinds` at `text[i..]`, if one starts there: what it spells (`None`: a
/// character left out) and its length.
fn escape_at(text: &str, i: usize, kinds: u8) -> Option<(Option<char>, usize)> {
    let kind = |kind: u8| kinds & kind != 0;
    match text.as_bytes()[i] {
        b'&' if kind(REFERENCES) => reference(&text[i..]).map(|(c, n)| (unseen(c), n)),
        b'\\' if kind(BACKSLASHES) => backslash(&text[i..]).map(|(c, n)| (unseen(c), n)),
        b'%' if kind(PERCENT) => percent(&text[i..]).map(|(c, n)| (unseen(c), n)),
        b'=' if kind(QUOTED_PRINTABLE) => quoted_printable(&text[i..]),
        0xc0..=0xff | 0..=0x1f | 0x7f if kind(UNSEEN) => text[i..].chars().next().and_then(|c| {
            let seen = unseen(c);
            (seen != Some(c)).then_some((seen, c.len_utf8()))
        }),
        _ => None,
    }
}

/// `text` with the escapes of `kinds` decoded, with where each escape stood.
pub(super) fn decode(text: &str, kinds: u8) -> Decoded {
    let bytes = text.as_bytes();
    let mut decoded = Decoded {
        text: String::with_capacity(text.len()),
        marks: Vec::new(),
    };
    let mut plain = 0;
    let mut i = 0;
    while let Some(offset) = bytes[i..].iter().position(starts_escape) {
        i += offset;
        let Some((c, length)) = escape_at(text, i, kinds) else {
            i += 1;
            continue;
        };
        decoded.text.push_str(&text[plain..i]);
        let at = decoded.text.len();
        decoded.mark(at, i);
        if let Some(c) = c {
            decoded.text.push(c);
        }
        i += length;
        plain = i;
        let at = decoded.text.len();
        decoded.mark(at, i);
    }
    decoded.text.push_str(&text[plain..]);
    decoded
}

/// `c` as the eye reads it: nothing for a character that shows nothing (or acts instead of
/// showing: a control), ASCII for a fullwidth form.
fn unseen(c: char) -> Option<char> {
    match c {
        '\t' | '\n' | '\r' => Some(c),
        c if c.is_control() => None,
        '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{180e}' => None,
        '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' => None,
        '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}' => None,
        '\u{e0000}'..='\u{e007f}' => None,
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0),
        '\u{3000}' => Some(' '),
        c => Some(c),
    }
}

/// `%HH` at the start of `text`, and a character's UTF-8 bytes encoded so one after another
/// (`%254B`, encoded twice, is `%4B` here, and `K` at the next decoding).
fn percent(text: &str) -> Option<(char, usize)> {
    escaped_bytes(text, '%')
}

/// Quoted-printable at the start of `text`: `=HH` a byte (a character's UTF-8 bytes one after
/// another), `=` at a line's end a soft line break, which is nothing.
fn quoted_printable(text: &str) -> Option<(Option<char>, usize)> {
    if text.starts_with("=\r\n") {
        return Some((None, 3));
    }
    if text.starts_with("=\n") {
        return Some((None, 2));
    }
    escaped_bytes(text, '=').map(|(c, length)| (unseen(c), length))
}

/// A character as `mark` and two hex digits per byte of its UTF-8 (`%C3%A9`, `=C3=A9`).
fn escaped_bytes(text: &str, mark: char) -> Option<(char, usize)> {
    let byte_at = |at: usize| -> Option<u8> {
        let hex = text.get(at..at + 3)?.strip_prefix(mark)?;
        hex.bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| u8::from_str_radix(hex, 16).ok())
            .flatten()
    };
    let first = byte_at(0)?;
    let count = match first {
        0..=0x7f => return Some((char::from(first), 3)),
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return None,
    };
    let utf8: Option<Vec<u8>> = (0..count).map(|n| byte_at(3 * n)).collect();
    let c = std::str::from_utf8(&utf8?).ok()?.chars().next()?;
    Some((c, 3 * count))
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
    if text[end..].starts_with(';') {
        return Some((c, end + 1));
    }
    // Without its `;`, a reference cut by another transform's spelling (a soft line break
    // quoted-printable added, then escaped: `&#46=\r\n;`) waits for the round that undoes
    // it: read now, it would be a shorter reference than the one written.
    let next = text[end..].chars().next();
    let cut = next.is_some_and(|n| matches!(n, '=' | '%' | '\\') || unseen(n) != Some(n));
    (!cut).then_some((c, end))
}

/// A backslash escape at the start of `text`: `\uXXXX` (a surrogate pair as one character),
/// or one of JSON's short escapes.
fn backslash(text: &str) -> Option<(char, usize)> {
    // One backslash: `\\u0041` (a target's `\u0041` as report.json writes it) is an escaped
    // backslash, which the next round reads with what follows it. Read through at once, a run
    // of them (`\\\\u0041`, escaped twice) would be split wrongly: `\\` then `\\u0041`.
    let unit = |at: usize| {
        let slashes = text.get(at..)?.bytes().take_while(|b| *b == b'\\').count();
        let escape = text.get(at + slashes..at + slashes + 5)?;
        (slashes == 1
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
    if let Some(found) = other_backslash(text) {
        return Some(found);
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

/// The backslash escapes of C, Python, Rust and shells: `\xHH`, `\u{H..}`, octal `\NNN`.
fn other_backslash(text: &str) -> Option<(char, usize)> {
    let rest = text.get(1..)?;
    let (digits, radix, skip, close) = if let Some(braced) = rest.strip_prefix("u{") {
        (
            braced.find('}').filter(|end| (1..=6).contains(end))?,
            16,
            3,
            1,
        )
    } else if rest.starts_with(['x', 'X']) {
        (2, 16, 2, 0)
    } else if rest.starts_with(['0', '1', '2', '3']) {
        (3, 8, 1, 0)
    } else {
        return None;
    };
    let number = rest.get(skip - 1..skip - 1 + digits)?;
    if !number.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let c = char::from_u32(u32::from_str_radix(number, radix).ok()?)?;
    Some((c, skip + digits + close))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_character_decodes_to_it() {
        let text = r"K&#75;&#075;&#x4B;&#X04b;&#75&#x4B;\u004b&amp;\/\uD83D\uDE00é.";
        let decoded = decode(text, EVERY_KIND);
        assert_eq!(decoded.text, "KKKKKKKK&/\u{1F600}é.");
        // Escaped once more, as report.html, junit.xml and report.json write a target's text:
        // an escaped backslash is read with what follows it at the next round.
        let again = r"&amp;#75;&amp;amp;#x4B;\\u004B&amp;&amp;lt;";
        assert_eq!(decode(again, EVERY_KIND).text, r"KK\u004B&<");
        let deep = decode_deep(again);
        assert_eq!(deep.text(deep.depth()), "KKK&<");
        // A reference without its `;` that another spelling cuts waits for the next round.
        assert_eq!(decode(r"&#75\u004B", EVERY_KIND).text, "&#75K");
        let deep = decode_deep("&#7=\n5;&#75=\n;");
        assert_eq!(deep.text(deep.depth()), "KK");
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
            let decoded = decode(&text, EVERY_KIND);
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
            assert_eq!(decode(text, EVERY_KIND).text, text, "{text}");
        }
    }
}
