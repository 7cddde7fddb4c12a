//! The "Re-run" line of a report: one command that sends and judges what this run did. It
//! walks the run's options (`options.rs`) in the order declared: each option that changes
//! what is sent or judged is on it unless it is the default; options that change only where
//! the files go or how fast requests overlap are left out; the target and the regressions
//! file are spelled as the run resolved them. Values are quoted for a POSIX shell.

pub use super::options::shell_word;
use super::options::{OnRerun, RunOptions};
use super::settings::{KeySource, RunConfig, Target};

pub fn command(config: &RunConfig) -> String {
    let defaults: Vec<Option<String>> = RunOptions::default()
        .fields()
        .iter()
        .map(|field| field.value.toml())
        .collect();
    let flags = RunOptions::flags();
    let mut words: Vec<String> = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    for (field, default) in config.options.fields().iter().zip(defaults) {
        match field.on_rerun {
            OnRerun::Left => {}
            OnRerun::Resolved => words.extend(resolved(config, field.name)),
            OnRerun::Repeated if field.value.toml() == default => {}
            OnRerun::Repeated => match flags.get(field.name) {
                Some(Some(flag)) => words.extend(field.value.words(flag)),
                // A positional (the filter) goes last, without a flag.
                Some(None) => positional.extend(
                    field
                        .value
                        .words("")
                        .into_iter()
                        .filter(|word| !word.is_empty()),
                ),
                // A profile's own (its list of known failures) says where it came from.
                None => words.extend(field.value.words("")),
            },
        }
    }
    words.extend(positional);
    // The key is read from the variable it came from; a file is named, the key never.
    let prefix = match (&config.target, &config.key_source) {
        (Target::External { .. }, KeySource::Variable(name)) => format!("{name}=... "),
        _ => String::new(),
    };
    format!("{prefix}petstore-conformance run {}", words.join(" "))
}

/// The words of an option the run resolved: the target it reached (the reference's faults
/// and variants, or the base URL), and where counterexamples went (none, or another file
/// than the default).
fn resolved(config: &RunConfig, name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut option = |flag: &str, value: String| {
        words.push(flag.to_string());
        words.push(shell_word(&value));
    };
    match (name, &config.target) {
        ("reference_faults", Target::Reference(built_in)) => {
            for fault in &built_in.faults {
                option("--reference-fault", fault.clone());
            }
        }
        ("reference_variants", Target::Reference(built_in)) => {
            for variant in &built_in.variants {
                option("--reference-variant", variant.clone());
            }
        }
        ("base_url", Target::External { base_url, .. }) => {
            option("--base-url", base_url.to_string());
        }
        ("regressions", _) => match &config.regressions {
            None => words.push("--no-regressions".into()),
            Some(path)
                if path.as_path() != std::path::Path::new(super::regressions::DEFAULT_FILE) =>
            {
                option("--regressions", path.display().to_string())
            }
            Some(_) => {}
        },
        _ => {}
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Gate;
    use crate::runner::options::Seconds;

    #[test]
    fn a_run_under_a_budget_does_not_repeat_the_unbounded_case_count() {
        let mut config = RunConfig::reference(7, super::super::built_in::not_embedded());
        config.options.time_budget = Some(Seconds(20));
        config.options.gate = Gate::All;
        config.options.category_ids = vec![1, 2];
        config.options.filter = Some("list-pets/limit".into());
        config.options.skip = vec!["deprecation".into()];
        let line = command(&config);
        assert_eq!(
            line,
            "petstore-conformance run --seed 7 --time-budget 20s --gate all --category-ids 1,2 --no-regressions --skip deprecation list-pets/limit"
        );
    }

    #[test]
    fn an_option_declared_once_is_on_the_line_the_client_and_a_profile() {
        let mut config = RunConfig::reference(7, super::super::built_in::not_embedded());
        let line = command(&config);
        assert!(!line.contains("--connect-timeout"), "the default: {line}");
        assert_eq!(
            config.client_settings().connect_timeout,
            std::time::Duration::from_secs(5)
        );
        config.options = toml::from_str("connect_timeout = \"20s\"").unwrap();
        config.options.seed = Some(7);
        assert!(command(&config).contains("--connect-timeout 20s"));
        assert_eq!(
            config.client_settings().connect_timeout,
            std::time::Duration::from_secs(20)
        );
    }

    #[test]
    fn a_secret_header_is_read_from_its_own_variable_on_the_line() {
        let mut config = RunConfig::reference(7, super::super::built_in::not_embedded());
        config.options.headers = vec![
            "X-Gateway-Token: gw-secret-value-123".parse().unwrap(),
            "X-Tenant: acme".parse().unwrap(),
        ];
        let line = command(&config);
        assert!(
            line.contains(r#"--header "X-Gateway-Token: ${PETSTORE_HEADER_X_GATEWAY_TOKEN}""#),
            "{line}"
        );
        assert!(line.contains("--header 'X-Tenant: acme'"), "{line}");
        assert!(!line.contains("gw-secret-value-123"), "{line}");
    }

    #[test]
    fn the_target_and_where_the_files_go_are_spelled_as_the_run_resolved_them() {
        let mut config = RunConfig::reference(3, super::super::built_in::not_embedded());
        config.target = Target::External {
            base_url: "https://staging.example/v1".parse().unwrap(),
            api_key: "a-key-not-on-the-line".into(),
        };
        config.key_source = KeySource::Variable("STAGING_KEY".into());
        config.options.api_key_env = "STAGING_KEY".into();
        config.options.report_dir = Some("elsewhere".into());
        config.options.concurrency = 4;
        config.regressions = Some("saved.json".into());
        let line = command(&config);
        assert_eq!(
            line,
            "STAGING_KEY=... petstore-conformance run --base-url https://staging.example/v1 --api-key-env STAGING_KEY --seed 3 --regressions saved.json"
        );
        config.key_source = KeySource::File("key.txt".into());
        config.options.api_key_file = Some("key.txt".into());
        let line = command(&config);
        assert!(
            line.starts_with("petstore-conformance run --base-url"),
            "{line}"
        );
        assert!(line.contains("--api-key-file key.txt"), "{line}");
        assert!(!line.contains("a-key-not-on-the-line"), "{line}");
    }
}
