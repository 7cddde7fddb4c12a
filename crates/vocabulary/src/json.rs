//! JSON as RFC 8259's grammar defines it, and nothing narrower: the one reader of every body a
//! target sends (and of every body the reference is sent).
//!
//! A text is JSON when the grammar takes it; then it is read whole, with what common parsers
//! refuse although the grammar allows it:
//! - a `\u` escape of a lone surrogate (section 7 lets an escape name any code unit). A Rust
//!   string cannot hold one, so it is kept as a code point of its own: the surrogate
//!   `0xD800 + k` as U+10F800 + k, the last 2048 code points of plane 16 (private use). The
//!   harness never sends those 2048 code points (generation leaves them out), so in its own
//!   traffic the reading is one to one and strings compare as their code units do; a store
//!   would have to turn one of them into a lone surrogate (or back) for two different strings
//!   to read alike, which can only hide a finding, never make one up.
//! - numbers of any size and precision. Every spelling of a 64-bit integer (`100`, `100.0`,
//!   `1e2`, `-0`) is read as that integer, exactly; any other number as the nearest double,
//!   kept out of the 64-bit integers when it is not one (a fraction that rounds to a whole
//!   double past 2^53 is the only case a double cannot tell apart: it reads as an integer,
//!   which can hide a finding, never make one up).
//! - member names given twice: the last value is kept, as most parsers do, and the names are
//!   noted (section 4: names "SHOULD be unique"; a recommendation, not the grammar).
//!
//! Nesting deeper than [`MAX_DEPTH`] is not refused as "not JSON" (the grammar has no bound):
//! it is [`Unread::TooDeep`], which judges nothing; nor is a text whose values would hold more
//! than [`MAX_HELD`] bytes ([`Unread::TooLarge`]: values cost many times their text, 1 MiB of
//! `[{"":0},...]` is a hundred MiB of maps). The reader keeps no stack of its own calls, so no
//! body can overflow it.

use serde_json::{Map, Number, Value};

/// Arrays and objects nested deeper than this are not read (RFC 8259 section 9 lets a parser
/// set a limit; the contract's bodies nest two deep).
pub const MAX_DEPTH: usize = 512;

/// What the values of one text may hold, about (RFC 8259 section 9 lets a parser set limits
/// on a text's size): 1 MiB of the shortest valid pets (30,000 of them) holds about 27 MiB,
/// so every listing within the default `--body-cap` is read.
pub const MAX_HELD: usize = 32 << 20;

/// What a value costs where it is kept (an array's slot, a member's value).
const VALUE_BYTES: usize = std::mem::size_of::<Value>();

/// What an object's first member costs beyond its value: a map's node, room for 11.
const OBJECT_BYTES: usize = 640;

/// What each member costs beyond its value and its name's bytes: the name's place in a node.
const MEMBER_BYTES: usize = 56;

/// Member names noted as given twice, at most (the rest are counted).
const MAX_NOTED: usize = 8;

/// First code point standing for a lone surrogate (see the module's note).
pub const LONE_SURROGATE_BASE: u32 = 0x10_F800;

/// A JSON text, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    pub value: Value,
    /// Member names given more than once in one object (at most [`MAX_NOTED`]).
    pub duplicate_names: Vec<String>,
    /// Strings held lone surrogate escapes (kept as described in the module's note).
    pub lone_surrogates: bool,
}

/// Why a body was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// RFC 8259's grammar does not take it: where and why.
    NotJson(String),
    /// Nested past [`MAX_DEPTH`]: maybe JSON, but not read, so nothing in it is judged.
    TooDeep,
    /// Its values would hold more than [`MAX_HELD`] bytes: maybe JSON, but not read.
    TooLarge,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::NotJson(reason) => f.write_str(reason),
            Unread::TooDeep => write!(f, "nested deeper than {MAX_DEPTH} levels: not read"),
            Unread::TooLarge => write!(
                f,
                "its values would hold more than {} MiB: not read",
                MAX_HELD >> 20
            ),
        }
    }
}

/// Reads `bytes` as one JSON text (RFC 8259 section 2: `ws value ws`, UTF-8, no byte-order mark).
pub fn read(bytes: &[u8]) -> Result<Read, Unread> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Unread::NotJson(format!(
            "not UTF-8 (RFC 8259 section 8.1) at byte {}",
            e.valid_up_to()
        ))
    })?;
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
        duplicate_names: Vec::new(),
        lone_surrogates: false,
        held: 0,
    };
    let value = reader.document()?;
    Ok(Read {
        value,
        duplicate_names: reader.duplicate_names,
        lone_surrogates: reader.lone_surrogates,
    })
}

/// The string as JSON escapes it, lone surrogates (as this module keeps them) written back as
/// the `\u` escapes they came as: for showing a string, and for the reference's answers.
pub fn escape_str(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => match lone_surrogate(c) {
                Some(unit) => out.push_str(&format!("\\u{unit:04x}")),
                None => out.push(c),
            },
        }
    }
}

/// The lone surrogate code unit `c` stands for, if it stands for one.
pub fn lone_surrogate(c: char) -> Option<u16> {
    let n = c as u32;
    (n >= LONE_SURROGATE_BASE).then(|| (0xD800 + (n - LONE_SURROGATE_BASE)) as u16)
}

/// The character that stands for the lone surrogate `unit` (0xD800..=0xDFFF).
pub fn standing_for(unit: u16) -> char {
    char::from_u32(LONE_SURROGATE_BASE + u32::from(unit - 0xD800)).unwrap_or('\u{fffd}')
}

/// The integer a JSON number is, exactly, whatever its spelling; `None` for a fraction or a
/// number past the 64-bit integers.
pub fn integer(value: &Value) -> Option<i128> {
    let number = value.as_number()?;
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}

enum Frame {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

struct Reader<'t> {
    text: &'t [u8],
    at: usize,
    duplicate_names: Vec<String>,
    lone_surrogates: bool,
    /// What the values read so far hold, about (see [`MAX_HELD`]).
    held: usize,
}

impl Reader<'_> {
    /// Counts `bytes` more held; past [`MAX_HELD`] the text is not read on.
    fn hold(&mut self, bytes: usize) -> Result<(), Unread> {
        self.held += bytes;
        if self.held > MAX_HELD {
            return Err(Unread::TooLarge);
        }
        Ok(())
    }

    fn fail<T>(&self, what: &str) -> Result<T, Unread> {
        let found = match self.text.get(self.at) {
            None => "the end".to_string(),
            Some(byte) if byte.is_ascii_graphic() => format!("'{}'", *byte as char),
            Some(byte) => format!("byte 0x{byte:02x}"),
        };
        Err(Unread::NotJson(format!(
            "{what} expected at byte {}, found {found}",
            self.at
        )))
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn document(&mut self) -> Result<Value, Unread> {
        let value = self.value()?;
        self.skip_ws();
        if self.at != self.text.len() {
            return self.fail("the end of the text");
        }
        Ok(value)
    }

    /// One value, its nesting kept on a stack of frames rather than of calls.
    fn value(&mut self) -> Result<Value, Unread> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            let mut done = match self.peek() {
                Some(b'[') => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(Unread::TooDeep);
                    }
                    self.at += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.at += 1;
                        Value::Array(Vec::new())
                    } else {
                        self.hold(VALUE_BYTES)?;
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(Unread::TooDeep);
                    }
                    self.at += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.at += 1;
                        Value::Object(Map::new())
                    } else {
                        let name = self.member_name()?;
                        self.hold(VALUE_BYTES + OBJECT_BYTES + MEMBER_BYTES + name.len())?;
                        stack.push(Frame::Object(Map::new(), name));
                        continue 'value;
                    }
                }
                Some(b'"') => Value::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
                Some(b't') => self.literal("true", Value::Bool(true))?,
                Some(b'f') => self.literal("false", Value::Bool(false))?,
                Some(b'n') => self.literal("null", Value::Null)?,
                _ => return self.fail("a value"),
            };
            self.hold(VALUE_BYTES + done.as_str().map_or(0, str::len))?;
            // Close every container the value ends.
            loop {
                let Some(frame) = stack.pop() else {
                    return Ok(done);
                };
                self.skip_ws();
                done = match frame {
                    Frame::Array(mut items) => {
                        items.push(done);
                        match self.peek() {
                            Some(b',') => {
                                self.at += 1;
                                stack.push(Frame::Array(items));
                                continue 'value;
                            }
                            Some(b']') => {
                                self.at += 1;
                                // Grown by doubling: up to half of a large array's room is
                                // for nothing, held for as long as its parse is kept.
                                if items.capacity() - items.len() > 1024 {
                                    items.shrink_to_fit();
                                }
                                Value::Array(items)
                            }
                            _ => return self.fail("',' or ']'"),
                        }
                    }
                    Frame::Object(mut members, name) => {
                        if members.contains_key(&name) && self.duplicate_names.len() < MAX_NOTED {
                            self.duplicate_names.push(name.clone());
                        }
                        members.insert(name, done);
                        match self.peek() {
                            Some(b',') => {
                                self.at += 1;
                                self.skip_ws();
                                let next = self.member_name()?;
                                self.hold(MEMBER_BYTES + next.len())?;
                                stack.push(Frame::Object(members, next));
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.at += 1;
                                Value::Object(members)
                            }
                            _ => return self.fail("',' or '}'"),
                        }
                    }
                };
            }
        }
    }

    /// A member's name and the `:` after it.
    fn member_name(&mut self) -> Result<String, Unread> {
        if self.peek() != Some(b'"') {
            return self.fail("a member name");
        }
        let name = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return self.fail("':'");
        }
        self.at += 1;
        Ok(name)
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, Unread> {
        if self.text[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            self.fail(word)
        }
    }

    fn hex4(&mut self) -> Result<u16, Unread> {
        let digits = self.text.get(self.at..self.at + 4);
        let unit = digits
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u16::from_str_radix(d, 16).ok());
        match unit {
            Some(unit) => {
                self.at += 4;
                Ok(unit)
            }
            None => self.fail("four hex digits"),
        }
    }

    fn string(&mut self) -> Result<String, Unread> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            // The run of characters that need nothing done (the text is UTF-8 already).
            let start = self.at;
            while let Some(&byte) = self.text.get(self.at) {
                if byte == b'"' || byte == b'\\' || byte < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(std::str::from_utf8(&self.text[start..self.at]).unwrap_or_default());
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.at += 1;
                            let unit = self.hex4()?;
                            out.push(self.code_unit(unit)?);
                            continue;
                        }
                        _ => return self.fail("an escape (one of \"\\/bfnrtu)"),
                    };
                    self.at += 1;
                    out.push(escaped);
                }
                Some(_) => return self.fail("a control character escaped"),
                None => return self.fail("'\"'"),
            }
        }
    }

    /// The character of a `\u` escape: a pair of surrogate escapes makes one character; a lone
    /// surrogate is kept as its own (see the module's note).
    fn code_unit(&mut self, unit: u16) -> Result<char, Unread> {
        match unit {
            0xD800..=0xDBFF => {
                let rest = &self.text[self.at..];
                if rest.starts_with(b"\\u") {
                    let save = self.at;
                    self.at += 2;
                    let low = self.hex4()?;
                    if (0xDC00..=0xDFFF).contains(&low) {
                        let n = 0x10000
                            + ((u32::from(unit) - 0xD800) << 10)
                            + (u32::from(low) - 0xDC00);
                        return Ok(char::from_u32(n).unwrap_or('\u{fffd}'));
                    }
                    self.at = save;
                }
                self.lone_surrogates = true;
                Ok(standing_for(unit))
            }
            0xDC00..=0xDFFF => {
                self.lone_surrogates = true;
                Ok(standing_for(unit))
            }
            _ => Ok(char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}')),
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, read as the module's note says.
    fn number(&mut self) -> Result<Number, Unread> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits = |reader: &mut Self| {
            let from = reader.at;
            while reader.peek().is_some_and(|b| b.is_ascii_digit()) {
                reader.at += 1;
            }
            from..reader.at
        };
        let whole = match self.peek() {
            Some(b'0') => {
                self.at += 1;
                self.at - 1..self.at
            }
            Some(b'1'..=b'9') => digits(self),
            _ => return self.fail("a digit"),
        };
        let mut fraction = self.at..self.at;
        if self.peek() == Some(b'.') {
            self.at += 1;
            fraction = digits(self);
            if fraction.is_empty() {
                return self.fail("a digit after '.'");
            }
        }
        let mut exponent: i64 = 0;
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            let sign = match self.peek() {
                Some(b'-') => {
                    self.at += 1;
                    -1
                }
                Some(b'+') => {
                    self.at += 1;
                    1
                }
                _ => 1,
            };
            let range = digits(self);
            if range.is_empty() {
                return self.fail("a digit in the exponent");
            }
            // Past a few thousand the number is far outside anything read exactly.
            let text = std::str::from_utf8(&self.text[range]).unwrap_or("0");
            let magnitude = text.parse::<i64>().unwrap_or(i64::MAX).min(100_000);
            exponent = sign * magnitude;
        }
        let literal = std::str::from_utf8(&self.text[start..self.at]).unwrap_or("0");
        let whole = &self.text[whole];
        let fraction = &self.text[fraction];
        if let Some(n) = exact_integer(negative, whole, fraction, exponent) {
            return Ok(n);
        }
        let double: f64 = literal.parse().unwrap_or(f64::NAN);
        let double = if double.is_finite() {
            double
        } else if negative {
            f64::MIN
        } else {
            f64::MAX
        };
        let integral_literal = is_integral(whole, fraction, exponent);
        // A fraction the double rounded to a whole number below 2^53 is nudged off it, so it
        // still reads as what it is: not an integer.
        let double = if !integral_literal && double.fract() == 0.0 && double.abs() < 9.007e15 {
            // One unit in the last place further from zero (the sign is its own bit).
            let nudged = f64::from_bits(double.to_bits() + 1);
            if nudged.fract() == 0.0 {
                double
            } else {
                nudged
            }
        } else {
            double
        };
        Number::from_f64(double).map_or_else(|| self.fail("a finite number"), Ok)
    }
}

/// Whether `whole.fraction × 10^exponent` is a whole number.
fn is_integral(whole: &[u8], fraction: &[u8], exponent: i64) -> bool {
    let digits: Vec<u8> = whole.iter().chain(fraction).copied().collect();
    // The value is digits × 10^(exponent − fraction.len()); trailing zeros move the point.
    let shift = exponent - fraction.len() as i64;
    let trailing_zeros = digits.iter().rev().take_while(|d| **d == b'0').count() as i64;
    digits.iter().all(|d| *d == b'0') || shift + trailing_zeros >= 0
}

/// The 64-bit integer a number literal's parts spell, if it spells one.
fn exact_integer(negative: bool, whole: &[u8], fraction: &[u8], exponent: i64) -> Option<Number> {
    if !is_integral(whole, fraction, exponent) {
        return None;
    }
    let mut digits: Vec<u8> = whole.iter().chain(fraction).copied().collect();
    let shift = exponent - fraction.len() as i64;
    if shift >= 0 {
        if digits.iter().all(|d| *d == b'0') {
            return Some(Number::from(0u64));
        }
        if shift > 20 {
            return None;
        }
        digits.extend(std::iter::repeat_n(b'0', shift as usize));
    } else {
        let cut = digits.len().saturating_sub((-shift) as usize);
        digits.truncate(cut);
    }
    let first = digits
        .iter()
        .position(|d| *d != b'0')
        .unwrap_or(digits.len());
    let digits = &digits[first..];
    if digits.is_empty() {
        return Some(Number::from(0u64));
    }
    if digits.len() > 20 {
        return None;
    }
    let magnitude: u128 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    if negative {
        let value = -i128::try_from(magnitude).ok()?;
        i64::try_from(value).ok().map(Number::from)
    } else {
        u64::try_from(magnitude).ok().map(Number::from)
    }
}

#[cfg(test)]
mod tests;
