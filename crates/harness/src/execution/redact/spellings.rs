//! The spellings of the key a renderer or a target may give it: escaped for JSON, XML,
//! Markdown and HTML, percent-encoded, in hex, base32, base64 and base85.

/// Near misses (the key less one character at either end) are redacted only from this length
/// on: shorter ones are too common a substring to take out of every text.
pub(super) const MIN_NEAR_MISS: usize = 8;

/// The ways a renderer or a target may spell `secret`: as is, JSON-escaped (with or without
/// `/` escaped), XML-escaped, Markdown-table-escaped, HTML-escaped (as is or JSON-escaped, the
/// way report.html shows a body), percent-encoded, in hex; and, for a `whole` secret (not a
/// run of 8 of its characters), in base32, base64 and base85 at every alignment. The first
/// are transforms character by character, so a run of the key spelled so is a run of the
/// spelled key; a base-N group mixes neighbouring bytes, so only a whole secret has them.
pub(super) fn spellings(secret: &str, whole: bool) -> Vec<String> {
    // A JSON string's contents: its encoding less the quotes.
    let inner = |text: &str| {
        let quoted = serde_json::to_string(text).unwrap_or_default();
        quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default()
            .to_string()
    };
    let json = inner(secret);
    let xml = secret
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;");
    let xml_numeric = secret.replace('"', "&#34;").replace('\'', "&#39;");
    // HTML has no `&apos;` of its own: renderers write `&#39;` (report.html) or `&#x27;`.
    let html = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    let mut forms = vec![
        secret.to_string(),
        json.replace('/', "\\/"),
        inner(&json),
        xml.clone(),
        xml_numeric,
        html(secret),
        html(secret).replace("&#39;", "&#x27;"),
        html(&json),
        json,
        xml.replace('|', "\\|"),
        secret.replace('|', "\\|"),
        form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
        form_urlencoded::byte_serialize(secret.as_bytes())
            .collect::<String>()
            .replace('+', "%20"),
    ];
    forms.extend(percent_encodings(secret));
    forms.push(secret.bytes().map(|b| format!("{b:02x}")).collect());
    if whole {
        forms.extend(base64_spellings(secret));
        forms.extend(base32_spellings(secret));
        forms.extend(base85_spellings(secret));
    }
    forms.retain(|form| !form.is_empty());
    forms
}

/// Characters of a whole secret's base-N form taken out of the target's text wherever they
/// stand (see [`base_n_windows`]): 13 spell 8 bytes of it at least, as a run of `MIN_RUN`.
const BASE_N_WINDOW: usize = 13;

/// Windows of a whole secret's base32/64/85 spellings, for the target's text only. A decoder
/// may read one character of a long base-N text otherwise (an escape in it undone once too
/// often: Ascii85's `\@` read as `@`), which leaves the rest of the form but not the whole.
/// One window at every fourth character: any 16 characters of the form hold one, so none of
/// them is left whole.
pub(super) fn base_n_windows(secret: &str) -> Vec<String> {
    let forms = base64_spellings(secret)
        .into_iter()
        .chain(base32_spellings(secret))
        .chain(base85_spellings(secret));
    forms
        .flat_map(|form| {
            let chars: Vec<char> = form.chars().collect();
            (0..chars.len().saturating_sub(BASE_N_WINDOW - 1))
                .step_by(4)
                .map(|at| chars[at..at + BASE_N_WINDOW].iter().collect::<String>())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// RFC 3986 percent-encodings a target may give the key besides the form one: every byte
/// encoded, or all but the unreserved characters (hex digits of either case are matched, as
/// matching ignores ASCII case).
fn percent_encodings(secret: &str) -> Vec<String> {
    let every: String = secret.bytes().map(|b| format!("%{b:02X}")).collect();
    let unreserved: String = secret
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    vec![every, unreserved]
}

/// The key base64-encoded (standard and URL-safe alphabets) at each of the three alignments
/// it can have inside a longer encoded text (`Basic base64(user:KEY)`): the characters
/// that depend on the key's bytes alone.
fn base64_spellings(secret: &str) -> Vec<String> {
    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let mut forms = Vec::new();
    // A short key's few encoded characters are too common a substring to take out.
    if secret.len() < MIN_NEAR_MISS {
        return forms;
    }
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret.as_bytes());
        let first = (8 * offset).div_ceil(6);
        let last = 8 * bytes.len() / 6;
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&bytes);
            if let Some(part) = encoded.get(first..last) {
                forms.push(part.to_string());
            }
        }
    }
    forms
}

/// The key in base32 (RFC 4648; matching ignores case, so its lowercase use too) at each of
/// the five alignments a longer encoded text can give it: the characters of its bits alone.
fn base32_spellings(secret: &str) -> Vec<String> {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    if secret.len() < MIN_NEAR_MISS {
        return Vec::new();
    }
    (0..5usize)
        .map(|offset| {
            let mut bytes = vec![0u8; offset];
            bytes.extend_from_slice(secret.as_bytes());
            let bits = |at: usize| (bytes[at / 8] >> (7 - at % 8)) & 1;
            let first = (8 * offset).div_ceil(5);
            let last = 8 * bytes.len() / 5;
            (first..last)
                .map(|n| {
                    let value = (0..5).fold(0usize, |v, i| v << 1 | usize::from(bits(5 * n + i)));
                    char::from(ALPHABET[value])
                })
                .collect()
        })
        .collect()
}

/// The key in base85 (Ascii85 as btoa and PDF write it, RFC 1924's alphabet as Python's
/// `b85encode` and git write it, and ZeroMQ's Z85) at each of the four alignments: the groups
/// of four bytes that are the key's alone (base85 mixes a group's bytes in all its characters).
fn base85_spellings(secret: &str) -> Vec<String> {
    const RFC1924: &[u8; 85] =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
    const Z85: &[u8; 85] =
        b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
    let ascii85: Vec<u8> = (33u8..118).collect();
    let mut forms = Vec::new();
    if secret.len() < MIN_NEAR_MISS {
        return forms;
    }
    for skip in 0..4usize {
        let groups: Vec<u32> = secret.as_bytes()[skip..]
            .chunks_exact(4)
            .map(|group| u32::from_be_bytes([group[0], group[1], group[2], group[3]]))
            .collect();
        for alphabet in [&ascii85[..], &RFC1924[..], &Z85[..]] {
            let form: String = groups
                .iter()
                .flat_map(|group| {
                    (0..5u32).rev().map(move |place| {
                        char::from(alphabet[(group / 85u32.pow(place) % 85) as usize])
                    })
                })
                .collect();
            forms.push(form);
        }
    }
    forms
}
