//! What a response body costs the run in memory, bounded by bytes rather than by what the
//! target sends. A parsed body is many times its bytes (a 1 MiB array of `{}` is 11 MiB of
//! values), and a run holds dozens of exchanges at once (a burst of 72 creates, 128 places in
//! flight), so:
//! - the bytes of large bodies held at once, read or being read until their exchange is
//!   recorded, are at most [`HELD`]: a large body waits for room before it is read on (the
//!   rest waits in the socket, not in the run), where 128 answers of 1 MiB held 128 MiB;
//! - large bodies are redacted and parsed one at a time, which bounds the passing peak (the
//!   body's text, its lowercase copy, the parse growing);
//! - identical large bodies share one parse, and the last one stays (a target answering the
//!   same listing, or the same blob, to every request costs one parse, not one per exchange);
//! - the recorded body text keeps its first [`BODY_KEPT`] bytes (the parse is of all of it),
//!   and once recorded the characters reports show ([`crate::outcome::BODY_SHOWN`]).
//!
//! The recorded text is the body read in its declared charset (UTF-16 and UTF-32 found by
//! their byte order mark or their NULs when none is declared), so that the redactor sees the
//! characters a reader sees: a key echoed in UTF-16 is `k\0U\0...` as bytes, which no spelling
//! of the key matches.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::redact::Redactor;
pub use crate::outcome::BODY_KEPT;
use crate::outcome::NoJson;

/// Bodies from this size on are parsed under a permit, held under [`HELD`] and shared when
/// identical.
pub const LARGE: usize = 64 << 10;

/// Bytes of large bodies held at once (four of 1 MiB, the default `--body-cap`): one is
/// parsed at a time, so more read ahead would only wait, held.
pub const HELD: usize = 4 << 20;

/// Large bodies parsed at once: the parse is CPU work, so more would not go faster, only hold
/// more memory (a parse grows to many times its body).
const PARSING: usize = 1;

/// Large parses remembered for sharing.
const REMEMBERED: usize = 8;

/// The parses of large bodies, the permits to make one, and the room to hold one.
pub struct Bodies {
    parsing: Semaphore,
    /// [`HELD`] in units of [`LARGE`] bytes.
    held: Semaphore,
    /// Recent large bodies (their bytes, key-free) and their parse while an exchange holds it.
    recent: Mutex<VecDeque<Remembered>>,
    /// The last large parse, kept when no exchange holds it: the next identical body shares
    /// it rather than parsing again (at most one parse, a body's worth of values).
    last: Mutex<Option<Arc<Value>>>,
}

impl Default for Bodies {
    fn default() -> Bodies {
        Bodies {
            parsing: Semaphore::new(PARSING),
            held: Semaphore::new(HELD / LARGE),
            recent: Mutex::new(VecDeque::new()),
            last: Mutex::new(None),
        }
    }
}

/// Room for a large body's bytes: they count against [`HELD`] until it is dropped.
pub struct Room<'b> {
    /// Held only to be let go when the room is dropped.
    _permit: Option<SemaphorePermit<'b>>,
    bytes: usize,
}

impl Room<'_> {
    /// Room for nothing: a small body needs none.
    pub fn none() -> Room<'static> {
        Room {
            _permit: None,
            bytes: 0,
        }
    }

    /// The bytes this room was taken for (a body larger than [`HELD`] takes all of it).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A body as recorded: its text (redacted, cut to [`BODY_KEPT`] bytes), the characters cut,
/// and its parse or why there is none.
pub struct Parsed {
    pub text: String,
    pub omitted: usize,
    pub json: Option<Arc<Value>>,
    pub json_error: Option<NoJson>,
    /// Member names given twice in one object.
    pub duplicate_names: Vec<String>,
}

/// A large body's bytes, its parse while an exchange holds it, and the names it gave twice.
type Remembered = (Vec<u8>, Weak<Value>, Vec<String>);

/// A body's parse, or why there is none, and the member names it gave twice.
type Reading = (Option<Arc<Value>>, Option<NoJson>, Vec<String>);

impl Bodies {
    /// Room to hold a body of `bytes` bytes (none below [`LARGE`]): waits while the large
    /// bodies held take [`HELD`]. Whoever holds room only reads on, redacts and parses (CPU
    /// work; the permits to parse are never waited for while room is wanted), so the wait
    /// ends. A room is all wanted at once (one held can only be let go, never grown), so no
    /// two bodies each hold part of what the other waits for.
    pub async fn room(&self, bytes: usize) -> Room<'_> {
        if bytes < LARGE {
            return Room::none();
        }
        let units = bytes.div_ceil(LARGE).min(HELD / LARGE);
        // Never closed, so the permit always comes.
        let permit = self
            .held
            .acquire_many(u32::try_from(units).unwrap_or(u32::MAX))
            .await
            .ok();
        Room {
            _permit: permit,
            bytes: units * LARGE,
        }
    }

    /// Redacts and parses `bytes`; `cut` when the body did not arrive whole (the end of the
    /// text may hold the start of the key), `unparsed` when it must not be parsed (and why);
    /// `content_type` names its charset, if the target gave one.
    pub async fn record(
        &self,
        bytes: &[u8],
        cut: bool,
        unparsed: Option<String>,
        content_type: Option<&str>,
        redactor: &Redactor,
    ) -> Parsed {
        let whole = !cut && unparsed.is_none();
        if whole
            && bytes.len() >= LARGE
            && let Some((json, duplicate_names)) = self.shared(bytes, true)
        {
            // The very bytes of a body already found key-free: nothing to redact, nothing to
            // parse, and no wait for a permit while holding them.
            let (text, omitted) = kept(&text_of(bytes, content_type));
            return Parsed {
                text,
                omitted,
                json: Some(json),
                json_error: None,
                duplicate_names,
            };
        }
        // Never closed, so the permit always comes; held over CPU work only (the body is all
        // read), so a wait here never runs into the request's timeout.
        let _permit = if bytes.len() < LARGE {
            None
        } else {
            self.parsing.acquire().await.ok()
        };
        let raw = text_of(bytes, content_type);
        let text = if cut {
            redactor.redact_sent_cut(&raw)
        } else {
            redactor.redact_sent(&raw)
        };
        // The key appears in no string of the body (redacting its text changed nothing), so
        // the parse needs no redacting: no copy of it is made.
        let clean = text == raw;
        drop(raw);
        let (json, json_error, duplicate_names): Reading = match unparsed {
            Some(reason) => (None, Some(NoJson::NotRead(reason)), Vec::new()),
            None if bytes.len() < LARGE => parse(bytes),
            None => match self.shared(bytes, clean) {
                Some((json, duplicates)) => (Some(json), None, duplicates),
                None => {
                    let parsed = parse(bytes);
                    if let (Some(json), true) = (&parsed.0, clean) {
                        self.remember(bytes, json, &parsed.2);
                    }
                    parsed
                }
            },
        };
        let (text, omitted) = kept(&text);
        Parsed {
            text,
            omitted,
            json,
            json_error,
            duplicate_names,
        }
    }

    /// The parse of these very bytes, if an exchange still holds it.
    fn shared(&self, bytes: &[u8], clean: bool) -> Option<(Arc<Value>, Vec<String>)> {
        if !clean {
            return None;
        }
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent
            .iter()
            .filter(|(seen, _, _)| seen.as_slice() == bytes)
            .find_map(|(_, json, duplicates)| Some((json.upgrade()?, duplicates.clone())))
    }

    fn remember(&self, bytes: &[u8], json: &Arc<Value>, duplicates: &[String]) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.retain(|(_, json, _)| json.strong_count() > 0);
        if recent.len() >= REMEMBERED {
            recent.pop_front();
        }
        recent.push_back((bytes.to_vec(), Arc::downgrade(json), duplicates.to_vec()));
        drop(recent);
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(json));
    }
}

/// The body as received: rules judge it whatever the key is (a short key spelled in a pet's
/// name must not change a verdict). Nothing parsed is written as is: verdicts are redacted
/// before they are shown, and every file is redacted as a whole.
/// Read as RFC 8259's grammar reads it ([`crate::json`]): "not JSON" only where the grammar
/// refuses the text.
fn parse(bytes: &[u8]) -> Reading {
    match crate::json::read(bytes) {
        Ok(read) => (Some(Arc::new(read.value)), None, read.duplicate_names),
        Err(unread) => (None, Some(unread.into()), Vec::new()),
    }
}

/// `bytes` as text, read in the charset `content_type` declares: UTF-8 (and what is not
/// UTF-8 in it as U+FFFD), UTF-16 and UTF-32 of either order, or a single-byte charset as
/// Latin-1 (its letters may differ, its controls are the same). Without a charset, a byte
/// order mark or the NULs of a UTF-16 or UTF-32 text (RFC 4627's detection, every other byte
/// NUL) say which; an unknown charset is read as UTF-8.
pub fn text_of<'a>(bytes: &'a [u8], content_type: Option<&str>) -> Cow<'a, str> {
    let declared = content_type.and_then(|value| {
        value.split(';').skip(1).find_map(|parameter| {
            let (name, value) = parameter.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
        })
    });
    let wide = match declared.as_deref() {
        Some("utf-16le") => Some((2, false)),
        Some("utf-16be") => Some((2, true)),
        Some("utf-32le") => Some((4, false)),
        Some("utf-32be") => Some((4, true)),
        Some("utf-16" | "utf-32") | None => detected(bytes),
        Some("iso-8859-1" | "latin1" | "iso_8859-1" | "windows-1252" | "cp1252" | "us-ascii") => {
            return Cow::Owned(bytes.iter().map(|b| char::from(*b)).collect());
        }
        Some(_) => None,
    };
    match wide {
        Some((width, big_endian)) => Cow::Owned(wide_text(bytes, width, big_endian)),
        None => String::from_utf8_lossy(bytes),
    }
}

/// The width and byte order a byte order mark or the NULs of the first four bytes show
/// (`None`: UTF-8).
fn detected(bytes: &[u8]) -> Option<(usize, bool)> {
    match bytes {
        [0, 0, 0xfe, 0xff, ..] => Some((4, true)),
        [0xff, 0xfe, 0, 0, ..] => Some((4, false)),
        [0xfe, 0xff, ..] => Some((2, true)),
        [0xff, 0xfe, ..] => Some((2, false)),
        [0, 0, 0, a, ..] if *a != 0 => Some((4, true)),
        [a, 0, 0, 0, ..] if *a != 0 => Some((4, false)),
        [0, a, 0, b, ..] if *a != 0 && *b != 0 => Some((2, true)),
        [a, 0, b, 0, ..] if *a != 0 && *b != 0 => Some((2, false)),
        _ => None,
    }
}

/// UTF-16 or UTF-32 `bytes` as text (a byte order mark dropped, what is not a character as
/// U+FFFD, an odd last byte too).
fn wide_text(bytes: &[u8], width: usize, big_endian: bool) -> String {
    let units = bytes.chunks(width).map(|unit| {
        let mut value = 0u32;
        for n in 0..width {
            let byte = u32::from(unit.get(n).copied().unwrap_or(0));
            value |= if big_endian {
                byte << (8 * (width - 1 - n))
            } else {
                byte << (8 * n)
            };
        }
        (value, unit.len() == width)
    });
    let mut text = String::with_capacity(bytes.len() / width);
    if width == 4 {
        for (value, whole) in units {
            let c = char::from_u32(value).filter(|_| whole);
            text.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
        }
    } else {
        let units: Vec<u16> = units
            .map(|(value, whole)| if whole { value as u16 } else { 0xfffd })
            .collect();
        text.extend(char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)));
    }
    text.strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text)
}

/// The first [`BODY_KEPT`] bytes of `text` (at a character boundary), and how many characters
/// were left out.
fn kept(text: &str) -> (String, usize) {
    if text.len() <= BODY_KEPT {
        return (text.to_string(), 0);
    }
    let mut end = BODY_KEPT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), text[end..].chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(bodies: &Bodies, bytes: &[u8], redactor: &Redactor) -> Parsed {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(bodies.record(bytes, false, None, None, redactor))
    }

    #[test]
    fn identical_large_bodies_share_one_parse_while_it_is_held() {
        let bodies = Bodies::default();
        let redactor = Redactor::new("bodies-test-key");
        let blob = format!("[{}{{}}]", "{},".repeat(100_000));
        let first = record(&bodies, blob.as_bytes(), &redactor);
        let second = record(&bodies, blob.as_bytes(), &redactor);
        let (a, b) = (first.json.unwrap(), second.json.unwrap());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.as_array().map(Vec::len), Some(100_001));
        // The text keeps its start and counts the rest.
        assert_eq!(first.text.len(), BODY_KEPT);
        assert_eq!(first.text.len() + first.omitted, blob.len());
        // Another body is parsed on its own.
        let other = blob.replacen("{}", "{\"a\":1}", 1);
        let third = record(&bodies, other.as_bytes(), &redactor).json.unwrap();
        assert!(!Arc::ptr_eq(&a, &third));
        assert_eq!(third[0]["a"], 1);
    }

    #[test]
    fn the_last_large_parse_is_kept_for_the_next_identical_body() {
        let bodies = Bodies::default();
        let redactor = Redactor::new("bodies-test-key");
        let blob = format!("[{}{{}}]", "{},".repeat(100_000));
        let first = record(&bodies, blob.as_bytes(), &redactor).json.unwrap();
        let weak = Arc::downgrade(&first);
        drop(first);
        // No exchange holds it, and the next identical body is not parsed again.
        let again = record(&bodies, blob.as_bytes(), &redactor).json.unwrap();
        assert!(std::ptr::eq(weak.as_ptr(), Arc::as_ptr(&again)));
        // Another large body takes its place: one parse kept, not one per body seen.
        let other = blob.replacen("{}", "[]", 1);
        drop(again);
        let _other = record(&bodies, other.as_bytes(), &redactor);
        assert!(weak.upgrade().is_none());
    }

    #[test]
    fn large_bodies_wait_for_room_while_what_is_held_is_at_its_bound() {
        use futures_util::FutureExt;
        let bodies = Bodies::default();
        // A small body needs no room.
        assert_eq!(bodies.room(LARGE - 1).now_or_never().unwrap().bytes(), 0);
        let one = 1 << 20;
        let held: Vec<Room> = (0..HELD / one)
            .map(|_| {
                bodies
                    .room(one)
                    .now_or_never()
                    .expect("room while under the bound")
            })
            .collect();
        assert!(held.iter().all(|room| room.bytes() == one));
        assert!(bodies.room(LARGE).now_or_never().is_none());
        assert_eq!(bodies.room(LARGE - 1).now_or_never().unwrap().bytes(), 0);
        drop(held);
        // Room is counted in units of LARGE, and a body past the bound takes all of it (so it
        // waits for everything held, and is not refused).
        let small = bodies.room(LARGE + 1).now_or_never().unwrap();
        assert_eq!(small.bytes(), 2 * LARGE);
        assert!(bodies.room(HELD * 4).now_or_never().is_none());
        drop(small);
        assert_eq!(bodies.room(HELD * 4).now_or_never().unwrap().bytes(), HELD);
    }

    #[test]
    fn a_body_holding_the_key_is_judged_as_received_shown_redacted_and_not_shared() {
        let bodies = Bodies::default();
        let key = "bodies-test-key";
        let redactor = Redactor::new(key);
        let blob = format!("[{}\"{key}\"]", "{},".repeat(100_000));
        let first = record(&bodies, blob.as_bytes(), &redactor);
        let second = record(&bodies, blob.as_bytes(), &redactor);
        let (a, b) = (first.json.unwrap(), second.json.unwrap());
        assert!(!Arc::ptr_eq(&a, &b));
        // Rules judge what came; what is shown (the text) is redacted.
        assert_eq!(a[100_000], key);
        assert!(!first.text.contains(key));
        // A small body too.
        let small = record(
            &bodies,
            format!("{{\"m\":\"{key}\"}}").as_bytes(),
            &redactor,
        );
        assert_eq!(small.json.unwrap()["m"], key);
        assert!(!small.text.contains(key));
    }

    #[test]
    fn a_body_is_read_in_its_charset_and_redacted_as_read() {
        let key = "zq9XkW-in-another-charset";
        let redactor = Redactor::new(key);
        let text = format!("{{\"m\":\"seen {key} \u{e9}\"}}");
        let utf16le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let utf16be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let utf32be: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_be_bytes())
            .collect();
        let bom: Vec<u8> = [0xff, 0xfe].into_iter().chain(utf16le.clone()).collect();
        for (bytes, content_type) in [
            (&utf16le, Some("application/json; charset=utf-16le")),
            (&utf16le, Some("application/json")),
            (&utf16be, Some("text/plain; charset=\"UTF-16BE\"")),
            (&utf16be, None),
            (&utf32be, Some("application/json;charset=utf-32")),
            (&bom, Some("application/json; charset=utf-16")),
        ] {
            assert_eq!(text_of(bytes, content_type), text, "{content_type:?}");
            let recorded = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(Bodies::default().record(bytes, false, None, content_type, &redactor));
            assert_eq!(recorded.text, "{\"m\":\"seen [REDACTED] \u{e9}\"}");
        }
        assert_eq!(
            text_of(b"caf\xe9", Some("text/plain; charset=ISO-8859-1")),
            "caf\u{e9}"
        );
        assert_eq!(text_of(b"caf\xc3\xa9", None), "caf\u{e9}");
        assert_eq!(
            text_of(b"\xff", Some("text/plain; charset=klingon")),
            "\u{fffd}"
        );
    }

    #[test]
    fn a_key_straddling_the_kept_text_leaves_no_prefix() {
        let bodies = Bodies::default();
        let key = "zq9XkW-straddles-the-kept-end";
        let redactor = Redactor::new(key);
        // The key starts 6 bytes before the end of what is kept.
        let head = format!("{{\"pad\":\"{}\",\"echo\":\"", "a".repeat(BODY_KEPT - 24));
        assert_eq!(head.len(), BODY_KEPT - 6);
        let body = format!("{head}{key}\",\"tail\":\"{}\"}}", "b".repeat(100_000));
        let recorded = record(&bodies, body.as_bytes(), &redactor);
        assert!(
            !recorded.text.contains("zq9XkW"),
            "{}",
            &recorded.text[head.len() - 10..]
        );
        // Judged as received; only what is shown is redacted.
        assert_eq!(recorded.json.unwrap()["echo"], key);
    }
}
