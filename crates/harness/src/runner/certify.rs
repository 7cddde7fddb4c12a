//! `--gate certify` needs every required rule decided, and some cannot be on the store as it
//! is: a store whose every status already holds pets shows no empty listing, so
//! list-pets/status/empty-is-array is not decidable there (the contract states no filter sure
//! to match nothing). That is known from the preflight's reads, before the run creates
//! anything: the run stops there (exit 2), saying which rule, why, and what store to certify
//! on, instead of ending undetermined on a vendor's second run on the same instance.

use super::error::RunError;
use super::settings::RunConfig;
use crate::catalogue::{Catalogue, Check, Gate, Level};
use crate::contract::PET_STATUSES;
use crate::generation::request::RequestSpec;
use crate::outcome::Exchange;

/// Under `--gate certify`, an error naming each selected required rule the store, as the
/// preflight `answers` show it (the first page, then each status's), leaves no way to decide.
pub(super) fn check_decidable(
    config: &RunConfig,
    catalogue: &Catalogue,
    answers: &[(RequestSpec, Exchange)],
) -> Result<(), RunError> {
    if config.options.gate != Gate::Certify {
        return Ok(());
    }
    let selection = config.libtest_args();
    let matches = |id: &str, pattern: &str| {
        if selection.exact {
            id == pattern
        } else {
            id.contains(pattern)
        }
    };
    // As the trials are filtered: the filter, then `--skip`.
    let selected = |id: &str| {
        selection
            .filter
            .as_deref()
            .is_none_or(|filter| matches(id, filter))
            && !selection.skip.iter().any(|skip| matches(id, skip))
    };
    let mut undecidable = Vec::new();
    for rule in &catalogue.rules {
        if rule.level != Level::Required || !selected(&rule.id) {
            continue;
        }
        if let (Check::ListEmptyIsArray {}, Some(why)) = (&rule.check, every_status_holds(answers))
        {
            undecidable.push(format!("{}: {why}", rule.id));
        }
    }
    if undecidable.is_empty() {
        return Ok(());
    }
    Err(RunError::Config(format!(
        "--gate certify: this store cannot be certified, a required rule cannot be decided on it (nothing was created): {}. Certify on a fresh instance (an empty store, or one where some status holds no pet), or run without --gate certify (the rule is then reported not decidable, not gated)",
        undecidable.join("; ")
    )))
}

/// Why no status filter can show an empty result: every status's first page listed pets
/// (with the counts); `None` when one did not, or did not answer with a listing.
fn every_status_holds(answers: &[(RequestSpec, Exchange)]) -> Option<String> {
    let pages = answers.get(1..=PET_STATUSES.len())?;
    let mut counts = Vec::new();
    for (status, (_, exchange)) in PET_STATUSES.iter().zip(pages) {
        if exchange.status() != Some(200) || exchange.cut_by_transport() {
            return None;
        }
        match exchange.json() {
            Some(serde_json::Value::Array(pets)) if !pets.is_empty() => {
                let more = if pets.len() >= 100 { " or more" } else { "" };
                counts.push(format!("{status} {}{more}", pets.len()));
            }
            _ => return None,
        }
    }
    Some(format!(
        "every status filter already matches pets on this store ({}), so no listing shows the empty result the rule looks at",
        counts.join(", ")
    ))
}
