//! Sound by construction: the whole catalogue against conforming stores drawn from seeds
//! (`serve-reference --conforming-seed N`), each choice of each store from every answer the
//! contract and HTTP allow. No required rule may fail any of them, and every recommended
//! failure must be one the store's drawn choices predict. A failing seed prints the store it
//! drew: `petstore-conformance serve-reference --conforming-seed N` serves it again.
//!
//! CI runs [`CI_SEEDS`] seeds; `PETSTORE_CONFORMING_SEEDS=200 cargo test --test conformance
//! conforming::` runs more (the README gives the last such figure).

use std::collections::BTreeSet;

use libtest_mimic::Failed;
use petstore_conformance::catalogue::Level;
use petstore_conformance::outcome::VerdictKind;
use petstore_conformance::reference::{ReferenceConfig, ReferenceServer};
use petstore_conformance::report::left_out_by_option;
use petstore_conformance::runner::Target;

/// Seeds the default `cargo test` draws.
pub const CI_SEEDS: u64 = 16;

/// How many seeds to run: `PETSTORE_CONFORMING_SEEDS`, or [`CI_SEEDS`].
pub fn seeds() -> u64 {
    std::env::var("PETSTORE_CONFORMING_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CI_SEEDS)
}

/// The predictions are the catalogue's: every rule `predictions.json` names is a recommended
/// rule of it (a required one may never fail a conforming store), and the seeds CI runs draw
/// most of its choices (each choice the generator names must be in the file, or that seed
/// stops on it).
pub fn predictions_name_recommended_rules() -> Result<(), Failed> {
    use petstore_conformance::catalogue::Catalogue;
    use petstore_conformance::reference::PREDICTIONS;
    let catalogue = Catalogue::built_in().map_err(|e| e.to_string())?;
    let mut wrong = Vec::new();
    for (choice, rules) in PREDICTIONS.iter() {
        for id in rules {
            match catalogue.get(id) {
                None => wrong.push(format!("{choice}: {id} is no rule of the catalogue")),
                Some(rule) if rule.level != Level::Recommended => {
                    wrong.push(format!("{choice}: {id} is {:?}", rule.level))
                }
                Some(_) => {}
            }
        }
    }
    let predicted: BTreeSet<String> = (0..CI_SEEDS)
        .flat_map(|seed| {
            let mut reference = ReferenceConfig::new("k");
            reference.conforming = Some(seed);
            reference.choices().may_fail()
        })
        .collect();
    if predicted.len() < 10 {
        wrong.push(format!("the CI seeds predict only {predicted:?}"));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("\n").into())
    }
}

/// Among the seeds CI runs, a store that echoes lone surrogate escapes as they came, one that
/// repairs them, and one that refuses them.
pub fn seeds_cover_surrogates() -> Result<(), Failed> {
    use petstore_conformance::reference::Surrogates;
    for wanted in [
        Surrogates::AsSent,
        Surrogates::Repaired,
        Surrogates::Refused,
    ] {
        let found = (0..CI_SEEDS).any(|seed| {
            let mut reference = ReferenceConfig::new("k");
            reference.conforming = Some(seed);
            reference.choices().surrogates == wanted
        });
        if !found {
            return Err(
                format!("no CI seed draws a store whose lone surrogates are {wanted:?}").into(),
            );
        }
    }
    Ok(())
}

/// Among the seeds CI runs, stores whose answers HTTP allows and a careless client misreads:
/// gzip in two members, brotli and zstd to requests that asked no coding, a successor link
/// percent-encoded or among quoted titles, 120 header fields, a Sunset as an ISO 8601 day.
pub fn seeds_cover_readings() -> Result<(), Failed> {
    use petstore_conformance::reference::{Choices, LinkForm, Signals, Unasked};
    let drawn: Vec<Choices> = (0..CI_SEEDS)
        .map(|seed| {
            let mut reference = ReferenceConfig::new("k");
            reference.conforming = Some(seed);
            reference.choices()
        })
        .collect();
    let link =
        |form: LinkForm| move |c: &Choices| c.signals == Signals::All && c.headers.link == form;
    type Drew = Box<dyn Fn(&Choices) -> bool>;
    let wanted: [(&str, Drew); 7] = [
        (
            "gzip in two members",
            Box::new(|c| c.headers.gzip && c.headers.gzip_members == 2),
        ),
        (
            "unasked brotli",
            Box::new(|c| c.headers.unasked == Unasked::Brotli),
        ),
        (
            "unasked zstd",
            Box::new(|c| c.headers.unasked == Unasked::Zstd),
        ),
        (
            "a percent-encoded link",
            Box::new(move |c| link(LinkForm::PercentEncoded)(c) || link(LinkForm::QuotedTitles)(c)),
        ),
        ("quoted link titles", Box::new(link(LinkForm::QuotedTitles))),
        (
            "120 header fields",
            Box::new(|c| c.headers.filler_fields == 120),
        ),
        (
            "a Sunset as an ISO 8601 day",
            Box::new(|c| {
                c.headers.sunset_iso && matches!(c.signals, Signals::All | Signals::WithoutLink)
            }),
        ),
    ];
    for (what, drew) in wanted {
        if !drawn.iter().any(&drew) {
            return Err(format!("no CI seed draws a store with {what}").into());
        }
    }
    Ok(())
}

/// The default run against the store drawn from `seed`.
pub fn store_conforms(seed: u64) -> Result<(), Failed> {
    let mut reference = ReferenceConfig::new(format!("conforming-key-{seed:016x}"));
    reference.conforming = Some(seed);
    let choices = reference.choices();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let server = runtime
        .block_on(ReferenceServer::start(reference.clone(), 0))
        .map_err(|e| e.to_string())?;
    let mut config = petstore_conformance::embedded::reference_config(seed);
    config.libtest = super::quiet_args();
    // One seed in four is filled past the row limits: the crowded-store rule judged on
    // conforming stores (each fill costs about a third of a second).
    if seed % 4 == 3 {
        config.options.fill_store = Some(super::FILLED);
    }
    config.target = Target::External {
        base_url: server.base_url.parse()?,
        api_key: reference.api_key.clone(),
    };
    let outcome = super::execute(config)?;
    drop(server);
    let exit_code = outcome.exit_code;
    let report = outcome.report.ok_or("no report")?;
    let may_fail: BTreeSet<String> = choices.may_fail().into_iter().collect();
    let wrong: Vec<String> = report
        .rules
        .iter()
        .filter(|rule| match rule.verdict {
            VerdictKind::Failed => rule.level == Level::Required || !may_fail.contains(&rule.id),
            // No evidence either way is no false alarm, but a required rule left undecided on
            // a conforming store makes the gate undetermined (exit 3) where it conforms.
            VerdictKind::Inconclusive => rule.level == Level::Required,
            // Unless the run's options left it out (no --fill-store).
            VerdictKind::Skipped => {
                rule.level == Level::Required && !left_out_by_option(rule.reason.as_deref())
            }
            _ => false,
        })
        .map(|rule| {
            let detail = rule
                .failure
                .as_ref()
                .map(|f| f.message())
                .or_else(|| rule.reason.clone())
                .unwrap_or_default();
            format!(
                "  {} [{:?} {}]: {detail}",
                rule.id, rule.level, rule.verdict
            )
        })
        .collect();
    if wrong.is_empty() && exit_code == 0 {
        return Ok(());
    }
    Err(format!(
        "conforming store of seed {seed} (serve-reference --conforming-seed {seed}): exit code {exit_code}, not 0 (it conforms)\n{}\nits choices:\n{}",
        wrong.join("\n"),
        choices.describe()
    )
    .into())
}
