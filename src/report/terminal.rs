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

#[cfg(test)]
mod tests {
    use super::*;

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
