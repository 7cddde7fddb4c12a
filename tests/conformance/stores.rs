//! Stores that conform in unusual ways (the variants, a crowded store) raise no false alarm,
//! and what a crowded store still catches.

use super::*;

/// A conforming-but-unusual variant raises no false alarm: no required rule fails under 3
/// seeds, and none is inconclusive (the seed changes the requests, the variant the answers;
/// `conforming::` draws the variants together under many more seeds). Only the crowded store may leave rules not decidable (a
/// created pet past the first 100 listed), and only the 422 variant fails a (recommended) rule.
pub fn variant_raises_no_false_alarm(variant: Variant) -> Result<(), Failed> {
    // A throttled run is paced to the few requests a second the target lets through, and a slow
    // gateway adds its delay to each: one seed is several seconds. Runs of 1-byte chunks or
    // 1-byte writes take several seconds too (a frame, a read, a byte); the seed changes the
    // requests, not the wire.
    let seeds = if matches!(
        variant,
        Variant::Throttled
            | Variant::SlowGateway
            | Variant::OneByteChunks
            | Variant::ByteWrites
            | Variant::Chunked
    ) {
        200..201u64
    } else {
        200..203u64
    };
    for seed in seeds {
        let report = run_target(seed, BTreeSet::new(), BTreeSet::from([variant]))?;
        let allowed_failure = |id: &str| {
            variant == Variant::Unprocessable422 && id == "create-pet/invalid/values-answer-400"
        };
        let wrong: BTreeSet<String> = report
            .rules
            .iter()
            .filter(|rule| match rule.verdict {
                VerdictKind::Failed => !allowed_failure(&rule.id),
                VerdictKind::Inconclusive => true,
                // Other clients' pets may leave no status empty: no empty result to judge.
                VerdictKind::NotDecidable => {
                    variant != Variant::CrowdedStore
                        && !(variant == Variant::BusyStore
                            && rule.id == "list-pets/status/empty-is-array")
                }
                _ => false,
            })
            .map(|rule| rule.id.clone())
            .collect();
        if !wrong.is_empty() {
            return Err(format!(
                "variant {} (seed {seed}):\n{}",
                variant.name(),
                describe(&report, &wrong)
            )
            .into());
        }
    }
    Ok(())
}

/// The faults that store a refused pet, with the rule that must catch each on a crowded store.
pub const STORED_ANYWAY: [(Fault, &str); 5] = [
    (
        Fault::RefusedCreateStillStored,
        "auth/refused-create/stores-nothing",
    ),
    (
        Fault::CreateMissingCategoryStored,
        "create-pet/invalid/missing-category-id",
    ),
    (
        Fault::StatusValidatedAfterInsert,
        "create-pet/invalid/status-not-in-enum",
    ),
    (
        Fault::TrailingDataStored,
        "inputs/create-pet/stores-nothing",
    ),
    (Fault::NotUtf8RefusedStored, "create-pet/poisoned/not-utf-8"),
];

/// The crowded stores: 5,000 pets of other clients with sequential ids, alone and with other
/// clients creating pets during the run.
pub fn crowded_stores() -> [BTreeSet<Variant>; 2] {
    [
        BTreeSet::from([Variant::CrowdedStore]),
        BTreeSet::from([Variant::CrowdedStore, Variant::BusyStore]),
    ]
}

pub fn names(variants: &BTreeSet<Variant>) -> String {
    variants
        .iter()
        .map(|v| v.name())
        .collect::<Vec<_>>()
        .join(",")
}

/// A conforming crowded store conforms (exit 0): every required rule decided but those not
/// decidable for the store's state ([`STORE_STATE_REASONS`]), none inconclusive, and the run
/// creates no pet of the population fixture (fewer than on an empty store, which the report
/// counts).
/// Why a required rule may be not decidable on a crowded, busy store: no status filter with an
/// empty result, or a look for a pet stored from a refused body that spans more than 1024 new
/// ids. How many of the second kind depends on the machine: run alone, a seed leaves one or
/// two; in this binary, hundreds of runs on two cores stretch the rules' windows (4 to 7 were
/// seen in CI after issue 35's and 39's merges). Any other reason fails the trial, and a store
/// that stores a refused pet still fails in `crowded::catches`.
const STORE_STATE_REASONS: [&str; 2] = [
    "gave more than 1024 ids",
    "every status filter matched pets",
];

pub fn crowded_store_conforms(seed: u64) -> Result<(), Failed> {
    let (empty, _) = run_gated(seed, BTreeSet::new(), BTreeSet::new(), Gate::Required)?;
    for variants in crowded_stores() {
        let (report, exit_code) =
            run_gated(seed, BTreeSet::new(), variants.clone(), Gate::Required)?;
        let what = format!("{} (seed {seed})", names(&variants));
        let inconclusive: BTreeSet<String> = report
            .rules
            .iter()
            .filter(|rule| {
                matches!(
                    rule.verdict,
                    VerdictKind::Inconclusive | VerdictKind::Failed
                )
            })
            .map(|rule| rule.id.clone())
            .collect();
        if !inconclusive.is_empty() {
            return Err(
                format!("{what}: not decided:\n{}", describe(&report, &inconclusive)).into(),
            );
        }
        let not_decidable: BTreeSet<String> = report
            .rules
            .iter()
            .filter(|rule| rule.verdict == VerdictKind::NotDecidable)
            .map(|rule| rule.id.clone())
            .collect();
        let required = report
            .rules
            .iter()
            .filter(|rule| {
                rule.verdict == VerdictKind::NotDecidable
                    && rule.level == petstore_conformance::catalogue::Level::Required
            })
            .count();
        let for_the_store = report.rules.iter().all(|rule| {
            rule.verdict != VerdictKind::NotDecidable
                || rule.level != petstore_conformance::catalogue::Level::Required
                || rule.reason.as_deref().is_some_and(|reason| {
                    STORE_STATE_REASONS.iter().any(|why| reason.contains(why))
                })
        });
        if !for_the_store || report.totals.not_decidable != not_decidable.len() {
            return Err(format!(
                "{what}: {required} required rules not decidable, some for another reason than the store's state, or totals say {}:\n{}",
                report.totals.not_decidable,
                describe(&report, &not_decidable)
            )
            .into());
        }
        if exit_code != 0 || report.conformance != Conformance::Conforms {
            return Err(format!("{what}: {:?}, exit {exit_code}", report.conformance).into());
        }
        // A crowded store needs no pet of the population fixture; an empty one needs the few of
        // each status it makes first (the rest of its 100 come from the other rules' pets).
        if report.created_pets.count + 12 > empty.created_pets.count {
            return Err(format!(
                "{what}: created {} pets, the empty store's run {}: not 12 fewer",
                report.created_pets.count, empty.created_pets.count
            )
            .into());
        }
    }
    Ok(())
}

/// A fault that stores a refused pet still fails the run on a crowded store (exit 1), with the
/// rule that shows it, found by getPet on the ids next to the run's own pets.
pub fn crowded_store_catches(fault: Fault, rule_id: &str) -> Result<(), Failed> {
    for variants in crowded_stores() {
        let (report, exit_code) = run_gated(
            21,
            BTreeSet::from([fault]),
            variants.clone(),
            Gate::Required,
        )?;
        let rule = rule_in(&report, rule_id)?;
        if rule.verdict != VerdictKind::Failed || exit_code != 1 {
            return Err(format!(
                "{} on {}: exit {exit_code}:\n{}",
                fault.name(),
                names(&variants),
                describe(&report, &BTreeSet::from([rule_id.to_string()]))
            )
            .into());
        }
    }
    Ok(())
}

/// Where the store's ids say nothing (random ids), a refused pet cannot be looked for on a
/// crowded store: the rules are not decidable, reported under the verdict by default and
/// undetermined under `--gate certify`; a store where every status holds pets is refused by
/// `--gate certify` before the run.
pub fn certify_needs_every_rule_decided() -> Result<(), Failed> {
    let variants = BTreeSet::from([Variant::CrowdedStore, Variant::RandomIds]);
    let (report, exit_code) = run_gated(31, BTreeSet::new(), variants.clone(), Gate::Required)?;
    let required_not_decidable = report
        .rules
        .iter()
        .filter(|rule| {
            rule.verdict == VerdictKind::NotDecidable
                && rule.level == petstore_conformance::catalogue::Level::Required
        })
        .count();
    if required_not_decidable == 0 || report.conformance != Conformance::Conforms || exit_code != 0
    {
        return Err(format!(
            "default gate: {required_not_decidable} required rules not decidable, {:?}, exit {exit_code}",
            report.conformance
        )
        .into());
    }
    // Every status of this store holds pets, so no listing is empty: --gate certify stops
    // before the run creates anything, naming the rule that cannot be decided and why.
    let mut config = petstore_conformance::embedded::reference_config(31);
    config.options.gate = Gate::Certify;
    config.libtest = quiet_args();
    config.target =
        petstore_conformance::embedded::reference_target(BTreeSet::new(), variants.clone());
    match stages::execute(config) {
        Err(e)
            if e.exit_code() == 2
                && e.to_string().contains(
                    "list-pets/status/empty-is-array: every status filter already matches pets",
                )
                && e.to_string().contains("fresh instance") => {}
        Err(e) => return Err(format!("--gate certify stopped for another reason: {e}").into()),
        Ok(outcome) => {
            return Err(format!(
                "--gate certify ran on a store it cannot certify: exit {}",
                outcome.exit_code
            )
            .into());
        }
    }
    // That rule left out, the rules the run itself finds undecidable (a refused pet cannot be
    // looked for among random ids) leave it undetermined.
    let mut config = petstore_conformance::embedded::reference_config(31);
    config.options.gate = Gate::Certify;
    config.options.skip = vec!["list-pets/status/empty-is-array".into()];
    config.libtest = quiet_args();
    config.target = petstore_conformance::embedded::reference_target(BTreeSet::new(), variants);
    let outcome = stages::execute(config).map_err(|e| e.to_string())?;
    let report = outcome.report.ok_or("no report")?;
    if report.conformance != Conformance::Undetermined
        || report.gate != Gate::Certify
        || outcome.exit_code != 3
    {
        return Err(format!(
            "--gate certify: {:?}, exit {}",
            report.conformance, outcome.exit_code
        )
        .into());
    }
    Ok(())
}

/// A store of 90 plain pets, which the run's own take past a page of 100 while the rules that
/// look for a refused pet run: every rule is decided (the ids given since the run began are
/// read where the listing is full), and the run conforms (exit 0).
pub fn nearly_full_store_conforms(seed: u64) -> Result<(), Failed> {
    let variants = BTreeSet::from([Variant::NearlyFullStore]);
    let (report, exit_code) = run_gated(seed, BTreeSet::new(), variants, Gate::Certify)?;
    let undecided: BTreeSet<String> = report
        .rules
        .iter()
        .filter(|rule| rule.verdict != VerdictKind::Passed)
        .filter(|rule| !left_out_by_option(rule.reason.as_deref()))
        .map(|rule| rule.id.clone())
        .collect();
    if !undecided.is_empty() {
        return Err(format!(
            "90 pets (seed {seed}): not passed:\n{}",
            describe(&report, &undecided)
        )
        .into());
    }
    if exit_code != 0 || report.conformance != Conformance::Conforms {
        return Err(format!(
            "90 pets (seed {seed}): {:?}, exit {exit_code}",
            report.conformance
        )
        .into());
    }
    Ok(())
}

/// A fault that stores a refused pet still fails the run on a store of 90 pets (exit 1), with
/// the rule that shows it.
pub fn nearly_full_store_catches(fault: Fault, rule_id: &str) -> Result<(), Failed> {
    let variants = BTreeSet::from([Variant::NearlyFullStore]);
    let (report, exit_code) = run_gated(21, BTreeSet::from([fault]), variants, Gate::Required)?;
    let rule = rule_in(&report, rule_id)?;
    if rule.verdict != VerdictKind::Failed || exit_code != 1 {
        return Err(format!(
            "{} on 90 pets: exit {exit_code}:\n{}",
            fault.name(),
            describe(&report, &BTreeSet::from([rule_id.to_string()]))
        )
        .into());
    }
    Ok(())
}
