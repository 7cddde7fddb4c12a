//! The "Re-run" line of a report: one command that sends and judges what this run did. Every
//! option that changes what is sent or judged is on it (the seed, the cases, the budget, the
//! gate, the filters, the known failures, the store's categories, the limits an answer is
//! judged under, the target and how it is reached); options that change only where the files
//! go or how fast requests overlap are left out. Values are quoted for a POSIX shell.

use super::settings::{DEFAULT_CASES, Gate, KeySource, RunConfig, Target};
use crate::execution::{ClientSettings, ProxySetting};
use crate::report::Cases;

/// `value` as one word of a POSIX shell command.
pub fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

pub fn command(config: &RunConfig) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut option = |name: &str, value: Option<String>| {
        words.push(name.to_string());
        if let Some(value) = value {
            words.push(shell_word(&value));
        }
    };
    let prefix = match &config.target {
        Target::Reference { faults, variants } => {
            for fault in faults {
                option("--reference-fault", Some(fault.name().to_string()));
            }
            for variant in variants {
                option("--reference-variant", Some(variant.name().to_string()));
            }
            if !config.reference_latency.is_zero() {
                option(
                    "--reference-latency",
                    Some(humantime::format_duration(config.reference_latency).to_string()),
                );
            }
            String::new()
        }
        Target::External { base_url, .. } => {
            option("--base-url", Some(base_url.to_string()));
            match &config.key_source {
                KeySource::Variable(name) => format!("{name}=... "),
                // The file is named; the key is not.
                KeySource::File(_) => String::new(),
            }
        }
    };
    if let (Target::External { .. }, KeySource::File(path)) = (&config.target, &config.key_source) {
        option("--api-key-file", Some(path.display().to_string()));
    } else if config.api_key_env != "PETSTORE_API_KEY" {
        option("--api-key-env", Some(config.api_key_env.clone()));
    }
    option("--seed", Some(config.seed.to_string()));
    // Under a budget with no --cases, the budget decides: no case count to repeat.
    if let Cases::Count(cases) = config.cases
        && cases != DEFAULT_CASES
    {
        option("--cases", Some(cases.to_string()));
    }
    if let Some(budget) = config.time_budget {
        option(
            "--time-budget",
            Some(humantime::format_duration(budget).to_string()),
        );
    }
    if config.gate != Gate::Required {
        option("--gate", Some(config.gate.as_str().to_string()));
    }
    if config.read_only {
        option("--read-only", None);
    }
    if !config.category_ids.is_empty() {
        let ids: Vec<String> = config.category_ids.iter().map(i64::to_string).collect();
        option("--category-ids", Some(ids.join(",")));
    }
    if let Some(path) = &config.known_failures {
        option("--known-failures", Some(path.display().to_string()));
    }
    if !config.known_failures_listed.is_empty() {
        // Listed in a profile: the line cannot carry them; say where they came from.
        option("--known-failures", Some("<the profile's list>".into()));
    }
    match &config.regressions {
        None => option("--no-regressions", None),
        Some(path) if path.as_path() != std::path::Path::new(super::regressions::DEFAULT_FILE) => {
            option("--regressions", Some(path.display().to_string()))
        }
        Some(_) => {}
    }
    if let Some(dir) = &config.schemas {
        option("--schemas", Some(dir.display().to_string()));
    }
    if let Some(dir) = &config.cases_dir {
        option("--cases-dir", Some(dir.display().to_string()));
    }
    if config.max_transport_failures != crate::engine::run::DEFAULT_MAX_TRANSPORT_FAILURES {
        option(
            "--max-transport-failures",
            Some(config.max_transport_failures.to_string()),
        );
    }
    if let Some(partition) = config.partition {
        option("--partition", Some(partition.to_string()));
    }
    client_options(&config.client, &mut option);
    let libtest = &config.libtest;
    for skip in &libtest.skip {
        option("--skip", Some(skip.clone()));
    }
    if libtest.exact {
        option("--exact", None);
    }
    if let Some(filter) = &libtest.filter {
        words.push(shell_word(filter));
    }
    format!("{prefix}petstore-conformance run {}", words.join(" "))
}

/// The client's settings that change what is sent or how an answer is judged.
fn client_options(client: &ClientSettings, option: &mut impl FnMut(&str, Option<String>)) {
    let defaults = ClientSettings::default();
    if client.timeout != defaults.timeout {
        option(
            "--timeout",
            Some(humantime::format_duration(client.timeout).to_string()),
        );
    }
    if client.body_cap != defaults.body_cap {
        option("--body-cap", Some(client.body_cap.to_string()));
    }
    if client.insecure {
        option("--insecure", None);
    }
    if client.http2_prior_knowledge {
        option("--http2-prior-knowledge", None);
    }
    if let Some(rate) = client.rate {
        option("--rate", Some(rate.to_string()));
    }
    if client.max_throttle_wait != defaults.max_throttle_wait {
        option(
            "--max-throttle-wait",
            Some(humantime::format_duration(client.max_throttle_wait).to_string()),
        );
    }
    for (name, value) in &client.extra_headers {
        if crate::execution::looks_like_credential(name, value) {
            // A credential's value is never on the line: it is read from a variable of its
            // own, in double quotes so that the shell expands it (the option and its value go
            // as one word written here; a header name holds no quote or `$`).
            let variable = crate::outcome::header_variable(name);
            option(&format!("--header \"{name}: ${{{variable}}}\""), None);
        } else {
            option("--header", Some(format!("{name}: {value}")));
        }
    }
    if let ProxySetting::Explicit(url) = &client.proxy {
        option("--proxy", Some(url.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_spaces_or_quotes_are_quoted_for_a_shell() {
        assert_eq!(shell_word("list-pets/limit"), "list-pets/limit");
        assert_eq!(shell_word("X-Tenant: a b"), "'X-Tenant: a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn a_run_under_a_budget_does_not_repeat_the_unbounded_case_count() {
        let mut config = RunConfig::reference(7);
        config.time_budget = Some(std::time::Duration::from_secs(20));
        config.cases = Cases::UntilDeadline;
        config.gate = Gate::All;
        config.category_ids = vec![1, 2];
        config.libtest.filter = Some("list-pets/limit".into());
        config.libtest.skip = vec!["deprecation".into()];
        let line = command(&config);
        assert_eq!(
            line,
            "petstore-conformance run --seed 7 --time-budget 20s --gate all --category-ids 1,2 --no-regressions --skip deprecation list-pets/limit"
        );
    }

    #[test]
    fn a_secret_header_is_read_from_its_own_variable_on_the_line() {
        let mut config = RunConfig::reference(7);
        config.client.extra_headers = vec![
            ("X-Gateway-Token".into(), "gw-secret-value-123".into()),
            ("X-Tenant".into(), "acme".into()),
        ];
        let line = command(&config);
        assert!(
            line.contains(r#"--header "X-Gateway-Token: ${PETSTORE_HEADER_X_GATEWAY_TOKEN}""#),
            "{line}"
        );
        assert!(line.contains("--header 'X-Tenant: acme'"), "{line}");
        assert!(!line.contains("gw-secret-value-123"), "{line}");
    }
}
