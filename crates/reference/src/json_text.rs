//! How the reference writes JSON: every way RFC 8259 lets a text say the same value. Escapes
//! (raw UTF-8, `\u` in either case, HTML-safe, `\/`), member order and whitespace are a store's
//! choice; what the text means is not. Strings may hold lone surrogates (as `petstore_vocabulary::json`
//! keeps them), written back as the `\u` escapes they came as.

use serde_json::Value;

/// How strings are escaped, beyond what JSON requires (`"`, `\` and control characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escaping {
    /// Everything else as UTF-8 (serde_json, Rust, most servers).
    Raw,
    /// Every character past ASCII as `\u` escapes, lowercase hex, pairs for the astral ones
    /// (Python's `json.dumps`, Django's `JsonResponse`).
    AsciiLower,
    /// The same in uppercase hex (Java's and .NET's encoders).
    AsciiUpper,
    /// `<`, `>`, `&`, U+2028 and U+2029 escaped, the rest raw (Go's `encoding/json`).
    HtmlSafe,
    /// `/` written `\/` (PHP's `json_encode`).
    Slashes,
}

/// How control characters with a short escape are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controls {
    /// `\n`, `\t`, `\r`, `\b`, `\f`.
    Short,
    /// `\u000a` and the like for every control character.
    Unicode,
}

/// The order of an object's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    AsWritten,
    Reversed,
    Sorted,
    /// Shuffled by this seed (the same object, the same order).
    Shuffled(u64),
}

/// Whitespace between tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spacing {
    /// `{"a":1,"b":[2]}`.
    Compact,
    /// `{"a": 1, "b": [2]}` (Python's default).
    Spaced,
    /// One member or item a line, indented by this many spaces (Node's `JSON.stringify(v,
    /// null, 2)`), `\r\n` line ends when the flag is set.
    Pretty(usize, bool),
}

/// Every choice of how a value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub escaping: Escaping,
    pub controls: Controls,
    pub order: Order,
    pub spacing: Spacing,
}

impl Style {
    /// What serde_json writes.
    pub const PLAIN: Style = Style {
        escaping: Escaping::Raw,
        controls: Controls::Short,
        order: Order::AsWritten,
        spacing: Spacing::Compact,
    };

    pub fn describe(&self) -> String {
        format!(
            "escaping {:?}, controls {:?}, order {:?}, spacing {:?}",
            self.escaping, self.controls, self.order, self.spacing
        )
    }

    pub fn write(&self, value: &Value) -> String {
        let mut out = String::new();
        self.value(value, 0, &mut out);
        out
    }

    fn value(&self, value: &Value, depth: usize, out: &mut String) {
        match value {
            Value::Object(members) => {
                let mut entries: Vec<(&String, &Value)> = members.iter().collect();
                match self.order {
                    Order::AsWritten => {}
                    Order::Reversed => entries.reverse(),
                    Order::Sorted => entries.sort_by(|a, b| a.0.cmp(b.0)),
                    Order::Shuffled(seed) => {
                        entries.sort_by_key(|(name, _)| {
                            name.bytes().fold(seed, |h, b| {
                                petstore_vocabulary::seed::splitmix64(h ^ u64::from(b))
                            })
                        });
                    }
                }
                self.container('{', '}', entries.len(), depth, out, |n, out| {
                    let (name, item) = entries[n];
                    self.string(name, out);
                    out.push(':');
                    if self.spacing != Spacing::Compact {
                        out.push(' ');
                    }
                    self.value(item, depth + 1, out);
                });
            }
            Value::Array(items) => {
                self.container('[', ']', items.len(), depth, out, |n, out| {
                    self.value(&items[n], depth + 1, out);
                });
            }
            Value::String(text) => self.string(text, out),
            other => out.push_str(&other.to_string()),
        }
    }

    fn container(
        &self,
        open: char,
        close: char,
        len: usize,
        depth: usize,
        out: &mut String,
        mut item: impl FnMut(usize, &mut String),
    ) {
        out.push(open);
        let newline = |out: &mut String, depth: usize, indent: usize, crlf: bool| {
            out.push_str(if crlf { "\r\n" } else { "\n" });
            out.push_str(&" ".repeat(indent * depth));
        };
        for n in 0..len {
            if n > 0 {
                out.push(',');
                if self.spacing == Spacing::Spaced {
                    out.push(' ');
                }
            }
            if let Spacing::Pretty(indent, crlf) = self.spacing {
                newline(out, depth + 1, indent, crlf);
            }
            item(n, out);
        }
        if let (Spacing::Pretty(indent, crlf), true) = (self.spacing, len > 0) {
            newline(out, depth, indent, crlf);
        }
        out.push(close);
    }

    fn string(&self, text: &str, out: &mut String) {
        let upper = self.escaping == Escaping::AsciiUpper;
        let unit = |out: &mut String, unit: u32| {
            if upper {
                out.push_str(&format!("\\u{unit:04X}"));
            } else {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        };
        out.push('"');
        for c in text.chars() {
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                _ => None,
            };
            match short {
                Some(escape) if c == '"' || c == '\\' || self.controls == Controls::Short => {
                    out.push_str(escape);
                    continue;
                }
                _ => {}
            }
            if let Some(lone) = petstore_vocabulary::json::lone_surrogate(c) {
                unit(out, u32::from(lone));
                continue;
            }
            let code = c as u32;
            let escaped = code < 0x20
                || match self.escaping {
                    Escaping::Raw => false,
                    Escaping::AsciiLower | Escaping::AsciiUpper => code > 0x7e,
                    Escaping::HtmlSafe => matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}'),
                    Escaping::Slashes => false,
                };
            if c == '/' && self.escaping == Escaping::Slashes {
                out.push_str("\\/");
            } else if !escaped {
                out.push(c);
            } else if code > 0xFFFF {
                let v = code - 0x10000;
                unit(out, 0xD800 + (v >> 10));
                unit(out, 0xDC00 + (v & 0x3FF));
            } else {
                unit(out, code);
            }
        }
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn styles() -> Vec<Style> {
        let mut all = Vec::new();
        for escaping in [
            Escaping::Raw,
            Escaping::AsciiLower,
            Escaping::AsciiUpper,
            Escaping::HtmlSafe,
            Escaping::Slashes,
        ] {
            for controls in [Controls::Short, Controls::Unicode] {
                for order in [
                    Order::AsWritten,
                    Order::Reversed,
                    Order::Sorted,
                    Order::Shuffled(9),
                ] {
                    for spacing in [
                        Spacing::Compact,
                        Spacing::Spaced,
                        Spacing::Pretty(2, false),
                        Spacing::Pretty(4, true),
                    ] {
                        all.push(Style {
                            escaping,
                            controls,
                            order,
                            spacing,
                        });
                    }
                }
            }
        }
        all
    }

    #[test]
    fn every_style_writes_the_same_value() {
        let value = json!([
            {"id": -42, "name": "Rex \"</x>\" & a/b \u{0}\u{1f}\n\t\u{7f}é\u{1f415}\u{2028}", "categoryId": 9007199254740993i64, "status": "sold"},
            {"empty": {}, "list": [], "n": null, "t": true, "f": 1.5}
        ]);
        for style in styles() {
            let text = style.write(&value);
            let read = petstore_vocabulary::json::read(text.as_bytes())
                .unwrap_or_else(|e| panic!("{style:?}: {e}: {text}"));
            assert_eq!(read.value, value, "{style:?}: {text}");
        }
        assert_eq!(Style::PLAIN.write(&value), value.to_string());
    }

    #[test]
    fn escapes_are_as_chosen() {
        let value = json!({"a": "é</"});
        let style = |escaping| Style {
            escaping,
            ..Style::PLAIN
        };
        assert_eq!(
            style(Escaping::AsciiLower).write(&value),
            r#"{"a":"\u00e9</"}"#
        );
        assert_eq!(
            style(Escaping::AsciiUpper).write(&value),
            r#"{"a":"\u00E9</"}"#
        );
        assert_eq!(
            style(Escaping::HtmlSafe).write(&value),
            r#"{"a":"é\u003c/"}"#
        );
        assert_eq!(style(Escaping::Slashes).write(&value), r#"{"a":"é<\/"}"#);
    }

    #[test]
    fn a_lone_surrogate_is_written_as_it_came() {
        let read = petstore_vocabulary::json::read(br#"{"name":"x\ud800"}"#).unwrap();
        assert_eq!(Style::PLAIN.write(&read.value), r#"{"name":"x\ud800"}"#);
        let upper = Style {
            escaping: Escaping::AsciiUpper,
            ..Style::PLAIN
        };
        assert_eq!(upper.write(&read.value), r#"{"name":"x\uD800"}"#);
    }
}
