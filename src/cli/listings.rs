//! The command line's own words beside the options: `--list` (which rules the filter,
//! `--skip` and `--exact` select, as text or JSON), and `--version`. libtest's flags that do
//! nothing here (`--bench`, `--ignored`, `--nocapture`, `-Z`, ...) are not offered.

use petstore_conformance::catalogue::{Catalogue, Rule};
use petstore_conformance::runner::options::RunOptions;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    #[default]
    Text,
    Json,
}

/// Whether the rule `id` is selected by the options' filter and `--skip` (as the engine's
/// trials are filtered).
fn selects(options: &RunOptions, id: &str) -> bool {
    let matches = |pattern: &str| {
        if options.exact {
            id == pattern
        } else {
            id.contains(pattern)
        }
    };
    options.filter.as_deref().is_none_or(matches) && !options.skip.iter().any(|skip| matches(skip))
}

/// `run --list`: the selected rules, as text or JSON, on stdout.
pub fn list(options: &RunOptions, format: ListFormat, catalogue: &Catalogue) -> String {
    listing(
        catalogue
            .rules
            .iter()
            .filter(|rule| selects(options, &rule.id)),
        format,
    )
}

/// Rules as `rules` and `run --list` print them: one a line, or one JSON array.
pub fn listing<'a>(rules: impl Iterator<Item = &'a Rule>, format: ListFormat) -> String {
    match format {
        ListFormat::Text => rules.map(rule_line).collect(),
        ListFormat::Json => {
            let listed: Vec<serde_json::Value> = rules
                .map(|rule| {
                    serde_json::json!({
                        "id": rule.id,
                        "level": rule.level.as_str(),
                        "operation": rule.operation.name(),
                        "title": rule.title,
                        "writes": rule.writes,
                    })
                })
                .collect();
            format!(
                "{}\n",
                serde_json::to_string_pretty(&listed).unwrap_or_default()
            )
        }
    }
}

/// One rule as `rules` and `run --list` print it.
pub fn rule_line(rule: &Rule) -> String {
    format!(
        "{:<52} {:<11} {:<15} {}\n",
        rule.id,
        rule.level.as_str(),
        rule.operation.name(),
        rule.title
    )
}

/// `--version`: the suite's, the contract's and the built-in rule catalogue's.
pub fn version() -> String {
    let catalogue = Catalogue::load(None)
        .map(|c| {
            let digest = c.sha256();
            format!(
                "{} rules, sha256 {}",
                c.rules.len(),
                &digest[..digest.len().min(16)]
            )
        })
        .unwrap_or_else(|e| format!("cannot load: {e}"));
    format!(
        "{}\ncontract {} (Pet Store interface)\ncatalogue {catalogue}",
        petstore_conformance::SUITE_VERSION,
        petstore_conformance::contract::CONTRACT_VERSION
    )
}
