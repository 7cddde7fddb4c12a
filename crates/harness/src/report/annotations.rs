//! GitHub workflow-command annotations, one per failed rule: `::error` for a failure the gate
//! counts, `::warning` for one it does not (a recommended rule, a known failure), each titled
//! with the rule and carrying its contract citation, so a pull request shows what broke and
//! which sentence of the contract says so. The GitHub Action prints them after a run.

use super::model::{Report, RuleReport};
use crate::outcome::VerdictKind;

/// The annotations of `report`, one line each.
pub fn render(report: &Report) -> String {
    report
        .rules_failures_first()
        .into_iter()
        .filter(|rule| {
            matches!(
                rule.verdict,
                VerdictKind::Failed | VerdictKind::KnownFailure
            )
        })
        .map(line)
        .collect()
}

fn line(rule: &RuleReport) -> String {
    let command = if rule.gated { "error" } else { "warning" };
    let what = match (rule.verdict, rule.gated) {
        (VerdictKind::KnownFailure, _) => "known failure",
        (_, true) => "failed",
        (_, false) => "failed, not gated",
    };
    let message = rule
        .failure
        .as_ref()
        .map(|failure| failure.message())
        .unwrap_or_default();
    let text = format!(
        "{message}\nContract, {}: \"{}\"",
        rule.citation.section,
        super::citation::plain(&rule.citation.quote)
    );
    // No `file=`: the contract is not a file of the repository the workflow runs in (an
    // annotation on a path it does not have points nowhere); the message carries the section
    // and the sentence, and the title the rule.
    format!(
        "::{command} title={}::{}\n",
        property(&format!("{} [{}] {what}", rule.id, rule.level.as_str())),
        data(&text)
    )
}

/// A workflow command's message: `%`, CR and LF escaped, so a target's text cannot end the
/// line and start a command of its own.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`, which end a property.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::{data, property};

    #[test]
    fn a_target_text_cannot_start_a_command_of_its_own() {
        let hostile = "observed 500\n::error::forged\r100%";
        let escaped = data(hostile);
        assert!(!escaped.contains('\n') && !escaped.contains('\r'));
        assert_eq!(escaped, "observed 500%0A::error::forged%0D100%25");
        assert_eq!(property("a, b: c"), "a%2C b%3A c");
    }
}
