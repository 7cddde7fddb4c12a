//! A finding: one cause (what the target did) and the failed rules that share it, as every
//! format shows it; `causes.rs` matches the failures to their causes.

use serde::{Deserialize, Serialize};

/// One cause and the failed rules that share it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The deviation in words: "answered 200 where 201 was expected".
    pub cause: String,
    /// The requests that got it ("POST /pets"), in the order first seen.
    pub requests: Vec<String>,
    /// The rules it broke, gated failures first, each once.
    pub rules: Vec<String>,
    /// Whether any of the rules fails the run.
    pub gated: bool,
}

impl Finding {
    /// "answered 200 where 201 was expected (POST /pets): 6 rules"
    pub fn headline(&self) -> String {
        format!(
            "{} ({}): {}{}",
            self.cause,
            self.requests.join(", "),
            match self.rules.len() {
                1 => "1 rule".to_string(),
                n => format!("{n} rules"),
            },
            if self.gated { "" } else { ", not gated" }
        )
    }

    /// The rule ids, each through `shown` (a code span, a link), at most `limit` of them and
    /// how many more: "a, b and 4 more".
    pub fn rules_shown(&self, limit: usize, shown: impl Fn(&str) -> String) -> String {
        let mut words: Vec<String> = self.rules.iter().take(limit).map(|id| shown(id)).collect();
        let more = self.rules.len().saturating_sub(limit);
        if more > 0 {
            words.push(format!("{more} more"));
        }
        match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            Some((last, _)) => last.clone(),
            None => String::new(),
        }
    }

    /// "N findings" as a heading says it.
    pub fn count(findings: &[Finding]) -> String {
        match findings.len() {
            1 => "1 finding".into(),
            n => format!("{n} findings"),
        }
    }
}
