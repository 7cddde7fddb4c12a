//! The parts of `run`'s command line that are this tool's own words: which rules (a filter,
//! `--skip`, `--exact`, `--list`), durations as people write them (`20s`, `2m`, or a bare
//! number of seconds), extra headers, and `--version`. libtest's flags that do nothing here
//! (`--bench`, `--ignored`, `--nocapture`, `-Z`, ...) are not offered.

use clap::Args;

use petstore_conformance::catalogue::{Catalogue, Rule};

/// Which rules run, and `--list`.
#[derive(Args, Debug, Clone, Default)]
pub struct Selection {
    /// Run only the rules whose id contains FILTER (`list-pets/limit`: the limit rules).
    #[arg(value_name = "FILTER", env = "PETSTORE_FILTER")]
    pub filter: Option<String>,
    /// Leave out the rules whose id contains FILTER (repeatable, or comma-separated).
    #[arg(
        long,
        value_name = "FILTER",
        env = "PETSTORE_SKIP",
        value_delimiter = ','
    )]
    pub skip: Vec<String>,
    /// FILTER and --skip name whole rule ids, not parts of them.
    #[arg(long, env = "PETSTORE_EXACT")]
    pub exact: bool,
    /// List the selected rules (id, level, operation, title) and stop; nothing is sent.
    #[arg(long)]
    pub list: bool,
    /// How --list prints: `text`, one rule a line, or `json`, one array.
    #[arg(long, value_enum, default_value = "text", requires = "list")]
    pub format: ListFormat,
    /// Rules judged at once (1 to 1024) [default: 32].
    #[arg(long, env = "PETSTORE_TEST_THREADS")]
    pub test_threads: Option<usize>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    #[default]
    Text,
    Json,
}

impl Selection {
    fn matches(&self, pattern: &str, id: &str) -> bool {
        if self.exact {
            id == pattern
        } else {
            id.contains(pattern)
        }
    }

    /// Whether the rule `id` is selected (as the engine's trials are filtered).
    pub fn selects(&self, id: &str) -> bool {
        self.filter
            .as_deref()
            .is_none_or(|filter| self.matches(filter, id))
            && !self.skip.iter().any(|skip| self.matches(skip, id))
    }

    /// The engine runs trials through libtest-mimic: the selection in its terms.
    pub fn to_libtest(&self) -> libtest_mimic::Arguments {
        libtest_mimic::Arguments {
            filter: self.filter.clone().filter(|f| !f.is_empty()),
            skip: self
                .skip
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect(),
            exact: self.exact,
            test_threads: self.test_threads,
            ..libtest_mimic::Arguments::default()
        }
    }

    /// `--list`: the selected rules, as text or JSON, on stdout.
    pub fn list(&self, catalogue: &Catalogue) -> String {
        listing(
            catalogue.rules.iter().filter(|rule| self.selects(&rule.id)),
            self.format,
        )
    }
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

/// A duration in whole seconds: `20s`, `2m`, `1h 30m`, or a bare number of seconds.
pub fn seconds(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(seconds);
    }
    let duration = humantime::parse_duration(text)
        .map_err(|e| format!("{e} (write e.g. 20s, 2m, 1h, or a number of seconds)"))?;
    if duration.subsec_nanos() != 0 {
        return Err(format!("{text}: whole seconds only"));
    }
    Ok(duration.as_secs())
}

/// `Name: value`, as curl's `-H` takes it. The headers the rules set themselves are refused:
/// the key goes in Authorization from its variable or file, never from a header option.
pub fn header(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once(':') else {
        // Not echoed: a value with no name may be the key, given where a header belongs.
        return Err("no header name (the value is not shown): write 'Name: value'".into());
    };
    let (name, value) = (name.trim(), value.trim());
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(
            "the text before ':' is not a header name (not shown): write 'Name: value'".into(),
        );
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(format!("{name}: a header value holds no control character"));
    }
    const OWN: [&str; 6] = [
        "authorization",
        "content-type",
        "content-length",
        "accept",
        "host",
        "transfer-encoding",
    ];
    if OWN.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "{name}: set by the suite itself (the key comes from --api-key-env or --api-key-file)"
        ));
    }
    Ok((name.to_string(), value.to_string()))
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

/// A listing command (`rules`, `run --list`, `--list-faults`) whose reader went away
/// (`rules | head`) ends quietly, as `ls` does; a run never does this (its reports come first).
pub fn quiet_on_closed_pipe() {
    // SAFETY: restores the default action of one signal, before any thread writes.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_people_write_them() {
        assert_eq!(seconds("20"), Ok(20));
        assert_eq!(seconds("20s"), Ok(20));
        assert_eq!(seconds("2m"), Ok(120));
        assert_eq!(seconds("1h 30m"), Ok(5400));
        assert!(seconds("1500ms").is_err());
        assert!(seconds("soon").is_err());
    }

    #[test]
    fn headers_are_name_colon_value_and_never_the_suites_own() {
        assert_eq!(
            header("X-Tenant: acme"),
            Ok(("X-Tenant".into(), "acme".into()))
        );
        assert!(header("no colon").is_err());
        assert!(header("Authorization: Bearer x").is_err());
        assert!(header("Bad Name: x").is_err());
        assert!(header("X-A: a\r\nX-B: b").is_err());
    }
}
