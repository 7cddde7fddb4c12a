//! Known failures: a baseline of rules a team knows fail on its target, each with a reason, a
//! link and an expiry date. A known failure is reported as `known-failure` and does not fail
//! the gate; a known failure that passes says it can be removed; an expired entry gates again.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::error::RunError;
use crate::catalogue::Catalogue;
pub use crate::report::KnownFailure;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownFailuresFile {
    known_failures: Vec<KnownFailure>,
}

/// The known failures by rule id.
pub type KnownFailures = BTreeMap<String, KnownFailure>;

/// A TOML error in one line that names the line and what is wrong, never echoing the file:
/// a line (or a value quoted in the message) may hold a secret someone put there by mistake.
pub fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let mut message = String::new();
    let mut quoted = false;
    for c in error.message().chars() {
        match c {
            '"' if quoted => {
                quoted = false;
                message.push_str("(value not shown)\"");
            }
            '"' => {
                quoted = true;
                message.push('"');
            }
            _ if quoted => {}
            '\n' => message.push(' '),
            c => message.push(c),
        }
    }
    if quoted {
        message.push_str("(value not shown)");
    }
    let message = message.trim().to_string();
    match error.span() {
        Some(span) => {
            let line = text
                .get(..span.start)
                .map_or(0, |before| before.matches('\n').count())
                + 1;
            format!("line {line}: {message}")
        }
        None => message,
    }
}

/// Reads `known_failures = [{ rule, reason, link, expires }, ...]` from a TOML file; every rule
/// must be in the catalogue and every date a `YYYY-MM-DD`.
pub fn load(path: &Path, catalogue: &Catalogue) -> Result<KnownFailures, RunError> {
    let fail =
        |reason: String| RunError::Config(format!("--known-failures {}: {reason}", path.display()));
    let text = crate::execution::files::read_text(path, crate::execution::files::SETTINGS_CAP)
        .map_err(|e| fail(e.to_string()))?;
    let file: KnownFailuresFile = toml::from_str(&text).map_err(|e| fail(toml_error(&text, &e)))?;
    checked(file.known_failures, catalogue).map_err(fail)
}

/// The entries by rule id, each rule in the catalogue and each date a `YYYY-MM-DD`; the
/// error says which entry is wrong.
pub fn checked(entries: Vec<KnownFailure>, catalogue: &Catalogue) -> Result<KnownFailures, String> {
    let mut known = KnownFailures::new();
    for entry in entries {
        if catalogue.get(&entry.rule).is_none() {
            return Err(format!(
                "rule {:?} is not in the catalogue (`petstore-conformance rules` lists them)",
                entry.rule
            ));
        }
        if let Some(date) = &entry.expires
            && !is_date(date)
        {
            return Err(format!(
                "rule {:?}: expires {date:?} is not a YYYY-MM-DD date",
                entry.rule
            ));
        }
        known.insert(entry.rule.clone(), entry);
    }
    Ok(known)
}

/// Whether `date` is a day of the calendar written `YYYY-MM-DD`: the shape alone let
/// `2027-13-45` through, and as it sorts after every real date it excused a failure for ever.
/// Once the day is real, comparing the text compares the dates (`KnownFailure::expired`).
fn is_date(date: &str) -> bool {
    let shaped = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    shaped && humantime::parse_rfc3339(&format!("{date}T00:00:00Z")).is_ok()
}

/// Today, as `YYYY-MM-DD` (UTC).
pub fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .chars()
        .take(10)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_date;

    #[test]
    fn a_date_is_a_day_of_the_calendar_not_its_shape() {
        for date in ["2027-01-31", "2028-02-29", "1999-12-31"] {
            assert!(is_date(date), "{date}");
        }
        for date in [
            "2027-13-45",
            "9999-99-99",
            "2027-02-29",
            "2027-04-31",
            "2027-00-10",
            "2027-1-5",
            "27-01-01",
        ] {
            assert!(!is_date(date), "{date}");
        }
    }
}
