//! Where a text spells a secret: every pattern at once, in one automaton.

use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// Patterns (lowercased) and the automaton that finds them.
#[derive(Clone)]
pub(super) struct Finder {
    pub(super) patterns: Vec<String>,
    /// The longest pattern's length, in bytes.
    longest: usize,
    /// All of `patterns` in one automaton, ASCII case ignored: most texts hold no spelling of
    /// the key, and one pass over them, with no lowercased copy and no search per spelling,
    /// says so (every request and response passes here). Overlapping matches, so that the runs
    /// of a key's part add up to the whole part. `None` only if the automaton cannot be built:
    /// then each pattern is searched for.
    automaton: Option<AhoCorasick>,
}

impl Finder {
    pub(super) fn of(patterns: Vec<String>) -> Finder {
        Finder {
            automaton: automaton(&patterns),
            longest: patterns.iter().map(String::len).max().unwrap_or(0),
            patterns,
        }
    }

    /// [`Finder::matches`] in a decoding of a text already searched, whose escapes stood at
    /// `changed` (offsets in `text`, in order): only the matches that take in one of them. One
    /// that does not runs within what the decoding copied as it was, so the text it was
    /// decoded from holds it too, and its search found it there. Near each escape, then, not
    /// the whole text: a listing of 100 pets (34 kB) decodes into five texts, and searched
    /// whole they took a third of the CPU of a run's busiest phase.
    pub(super) fn matches_near(
        &self,
        text: &str,
        changed: impl Iterator<Item = usize>,
    ) -> Vec<Range<usize>> {
        let reach = self.longest;
        let mut windows: Vec<Range<usize>> = Vec::new();
        for at in changed {
            let window = at.saturating_sub(reach)..(at + reach).min(text.len());
            match windows.last_mut() {
                Some(last) if window.start <= last.end => last.end = last.end.max(window.end),
                _ => windows.push(window),
            }
        }
        let covered: usize = windows.iter().map(|window| window.len()).sum();
        if covered * 2 >= text.len() {
            return self.matches(text);
        }
        let mut found = Vec::new();
        for window in windows {
            let start = floor_char_boundary(text, window.start);
            let end = ceil_char_boundary(text, window.end);
            found.extend(
                self.matches(&text[start..end])
                    .into_iter()
                    .map(|range| range.start + start..range.end + start),
            );
        }
        found
    }

    /// Every match of a pattern in `text`, overlapping ones too, ASCII case ignored.
    pub(super) fn matches(&self, text: &str) -> Vec<Range<usize>> {
        if let Some(automaton) = &self.automaton {
            return automaton
                .find_overlapping_iter(text)
                .map(|found| found.range())
                .collect();
        }
        let lower = text.to_ascii_lowercase();
        // ASCII lowercasing keeps byte offsets, so positions found in `lower` hold in `text`.
        self.patterns
            .iter()
            .flat_map(|form| {
                lower
                    .match_indices(form.as_str())
                    .map(|(start, _)| start..start + form.len())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Whether `text` holds a pattern as it is (escapes not decoded), ASCII case ignored.
    pub(super) fn is_match(&self, text: &str) -> bool {
        match &self.automaton {
            Some(automaton) => automaton.is_match(text),
            None => !self.matches(text).is_empty(),
        }
    }
}

/// One automaton for `patterns` (lowercased), ASCII case ignored. A contiguous NFA: 14 kB for
/// a 31-character key's spellings where a DFA took 250 kB, and as fast on a 13 kB listing
/// (0.23 against 0.27 µs: the prefilter does the work). Standard matching, which reports
/// overlapping matches: the runs of a key's part, joined, are the part. `None` only if it
/// cannot be built (or there is nothing to find): then each pattern is searched for.
fn automaton(patterns: &[String]) -> Option<AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .build(patterns)
        .ok()
}

/// The character boundary at or before `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The character boundary at or after `at` (within the text).
fn ceil_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
