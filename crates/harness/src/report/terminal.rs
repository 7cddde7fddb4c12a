//! Text from a report (rule ids, reasons, what a target sent) as a terminal may be given it:
//! control characters and bidirectional overrides written as escapes, so that no escape
//! sequence in a report recolours, clears or retitles the terminal, and no override shows a
//! line other than it is.

/// Whether `c` reorders the text around it when shown (Unicode's bidirectional controls).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// `text` for one line of a terminal: every control character (a newline too) and every
/// bidirectional control escaped as `\u{..}`.
pub fn line(text: &str) -> String {
    escape(text, false)
}

/// `text` for a terminal, its lines kept: as [`line`], but newlines and tabs stay.
pub fn lines(text: &str) -> String {
    escape(text, true)
}

fn escape(text: &str, keep_lines: bool) -> String {
    if !text.chars().any(|c| c.is_control() || is_bidi_control(c)) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\t' if keep_lines => out.push(c),
            c if c.is_control() || is_bidi_control(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` broken at spaces into lines of at most `width` columns, every line after the first
/// starting with `indent`; ANSI colour sequences take no column. A word longer than a line
/// (a path, a URL) stays whole on a line of its own.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    fn columns(word: &str) -> usize {
        let mut count = 0;
        let mut chars = word.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                // CSI: ESC [ parameters, then a final letter.
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                count += 1;
            }
        }
        count
    }
    let indented = columns(indent);
    let mut out = String::with_capacity(text.len() + 8);
    let mut used = 0;
    for (i, word) in text.split(' ').enumerate() {
        let wide = columns(word);
        if i > 0 {
            if used > indented && used + 1 + wide > width {
                out.push('\n');
                out.push_str(indent);
                used = indented;
            } else {
                out.push(' ');
                used += 1;
            }
        }
        out.push_str(word);
        used += wide;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_fit_and_continue_indented() {
        let text = "petstore-conformance: \u{1b}[1;31mDOES NOT CONFORM\u{1b}[0m against \
            http://127.0.0.1:34065/v1 (seed 5): 105 rules: 97 passed, 6 failed";
        let wrapped = wrap(text, 40, "  ");
        for line in wrapped.lines() {
            let shown: String = line.replace("\u{1b}[1;31m", "").replace("\u{1b}[0m", "");
            assert!(shown.chars().count() <= 40, "{line:?}");
        }
        assert!(
            wrapped.lines().skip(1).all(|l| l.starts_with("  ")),
            "{wrapped}"
        );
        assert_eq!(wrapped.replace("\n  ", " "), text, "only breaks are added");
        assert_eq!(wrap("short line", 80, "  "), "short line");
        // A word past the width is kept whole.
        let long = format!("wrote /{}", "d".repeat(60));
        assert_eq!(
            wrap(&long, 20, "  "),
            format!("wrote\n  /{}", "d".repeat(60))
        );
    }

    #[test]
    fn escape_sequences_and_overrides_are_written_out() {
        assert_eq!(
            line("rule/\u{1b}[2J\u{1b}]0;title\u{7}x\u{202e}cba\r\nfake"),
            "rule/\\u{1b}[2J\\u{1b}]0;title\\u{7}x\\u{202e}cba\\u{d}\\u{a}fake"
        );
        assert_eq!(lines("a\n\tb\u{9b}c"), "a\n\tb\\u{9b}c");
        assert_eq!(
            line("list-pets/limit/above-maximum"),
            "list-pets/limit/above-maximum"
        );
    }
}
