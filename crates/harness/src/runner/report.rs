//! The report stage's model: [`Report::from_run`] fills the report from what each stage
//! found (the run, the target, the tally), with the request-coverage rows and the contract
//! coverage matrix. The report module renders it and reads no run state.

use std::time::{Instant, SystemTime};

use super::settings::{RunConfig, Target};
use super::tally::Tallied;
use super::target::{SHORT_KEY_NOTE, Started};
use crate::catalogue::partition::ShardRecord;
use crate::catalogue::{Catalogue, Check, Rule};
use crate::contract::Operation;
use crate::contract::{
    CONTRACT_DOCUMENT, CONTRACT_TEXT, CONTRACT_TITLE, CONTRACT_VERSION, sha256_hex,
};
use crate::engine::input_tally::InputTally;
use crate::engine::run::Run;
use crate::generation::space::{Class, RequestSpace};
use crate::outcome::Exchange;
use crate::report::coverage::InputCoverage;
use crate::report::statements::{
    CheckedBy, StatementCoverage, cites_passages, passages, statement_text, statements,
};
use crate::report::{
    CREATED_PETS_FILE, ContractInfo, CreatedCap, CreatedPetsInfo, Named, Report, RuleReport,
    TargetInfo, TargetKind,
};

/// What a finished run hands the report: each stage's findings.
pub(super) struct Finished<'a> {
    pub(super) config: &'a RunConfig,
    pub(super) catalogue: &'a Catalogue,
    pub(super) run: &'a Run,
    pub(super) target: &'a Started,
    /// The target's base URL as the run shows it (redacted).
    pub(super) base_url: &'a str,
    /// The first answer of the preflight, which names the target's protocol and server.
    pub(super) preflight: Option<&'a Exchange>,
    pub(super) tallied: Tallied,
    pub(super) shard: Option<ShardRecord>,
    pub(super) started_at: SystemTime,
    pub(super) started: Instant,
    /// Whether the run writes a report directory (the created pets' file is named in it).
    pub(super) report_dir: bool,
}

impl Report {
    /// The report of a finished run.
    pub(super) fn from_run(mut finished: Finished) -> Report {
        let stopped_answering = finished.tallied.stopped_answering.take();
        let target = target_info(&finished, stopped_answering);
        let Finished {
            config,
            catalogue,
            run,
            tallied,
            ..
        } = finished;
        let statements = statement_matrix(&catalogue.rules, &tallied.rules);
        let findings = crate::report::causes::findings(&tallied.rules, &target.base_url);
        Report {
            suite: Named {
                name: crate::SUITE_NAME.into(),
                version: crate::SUITE_VERSION.into(),
            },
            contract: ContractInfo {
                title: CONTRACT_TITLE.into(),
                version: CONTRACT_VERSION.into(),
                document: CONTRACT_DOCUMENT.into(),
                sha256: sha256_hex(CONTRACT_TEXT.as_bytes()),
                catalogue_sha256: catalogue.sha256(),
                schemas_sha256: crate::report::attestation::schemas_sha256(&run.contract),
                schemas: run.contract.source().to_string(),
                cases: catalogue.source.clone(),
            },
            target,
            seed: config.seed(),
            cases_per_property: config.cases().at_least_one(),
            gate: config.options.gate,
            started_at: humantime::format_rfc3339_seconds(finished.started_at).to_string(),
            finished_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            duration_ms: finished.started.elapsed().as_millis() as u64,
            interrupted: run.stops.interrupted(),
            throttling: run.client.throttle_tally(),
            connections: run.client.connection_tally(),
            conformance: tallied.conformance,
            totals: tallied.totals,
            findings,
            rerun: super::rerun::command(config),
            rules: tallied.rules,
            run_prefix: run.prefix.clone(),
            request_coverage: {
                let mut rows = coverage_rows(&run.space, &run.input_tally, &catalogue.rules);
                rows.extend(baseline_row(run.marker_taken.get().copied()));
                rows
            },
            integrity: Default::default(),
            partition: finished.shard,
            merged: None,
            statements,
            redaction: config
                .options
                .allow_short_key
                .then(|| SHORT_KEY_NOTE.to_string()),
            created_pets: CreatedPetsInfo {
                count: run.fixtures.created.count(),
                file: finished.report_dir.then(|| CREATED_PETS_FILE.to_string()),
                run_prefix: run.prefix.clone(),
                cap: run.pet_cap.max().map(|max_pets| CreatedCap {
                    max_pets,
                    reached: run.pet_cap.reached(),
                }),
            },
        }
    }
}

/// The target as the report names it.
fn target_info(finished: &Finished, stopped_answering: Option<String>) -> TargetInfo {
    let config = finished.config;
    let first = finished.preflight;
    TargetInfo {
        base_url: finished.base_url.to_string(),
        kind: match config.target {
            Target::Reference(_) => TargetKind::Reference,
            Target::External { .. } => TargetKind::External,
        },
        faults: finished.target.faults.clone(),
        variants: finished.target.variants.clone(),
        tls_verification: !config.options.insecure,
        http_version: first
            .and_then(|p| p.response.as_ref())
            .map(|r| r.version.clone())
            .unwrap_or_default(),
        stopped_answering,
        product: config.options.product.clone(),
        product_version: config.options.product_version.clone(),
        server: first.and_then(|p| p.header("server")).map(String::from),
    }
}

/// The rule of `catalogue` that walks `class` of `operation`: the inputs walk of that operation
/// and level, or for createPet's bodies that are not UTF-8, the poisoned-bytes rule.
fn walking_rule(catalogue: &[Rule], operation: Operation, class: &Class) -> Option<String> {
    let last = class.goes_last() && operation == Operation::CreatePet;
    catalogue
        .iter()
        .find(|rule| match rule.check {
            Check::CreatePoisonedBytes {} => last,
            Check::InputsWalk {} => {
                !last && rule.operation == operation && rule.level == class.level
            }
            _ => false,
        })
        .map(|rule| rule.id.clone())
}

/// What the store made of the plainest NewPet with the run's marker category, where the run
/// asked (issue 36 item 1): the baseline every refused case of the space changes once.
fn baseline_row(taken: Option<bool>) -> Option<InputCoverage> {
    let note = match taken? {
        true => {
            "the store took the plainest NewPet with a categoryId no other request uses: the refused cases spell it, so a pet stored from one is found"
        }
        false => {
            "the store refused the plainest NewPet with a categoryId no other request uses (a list of categories?): every case spelt an accepted category instead, and stores-nothing looked for their pets by name; pass --category-ids to name the store's categories"
        }
    };
    Some(InputCoverage {
        operation: "createPet".into(),
        input: "baseline".into(),
        class: match taken? {
            true => "marker-category-taken".into(),
            false => "marker-category-refused".into(),
        },
        outcome: "tried".into(),
        level: None,
        expect: Some("accepted".into()),
        rule: None,
        cases: 1,
        failed: 0,
        unanswered: 0,
        note: Some(note.into()),
        operator: None,
    })
}

/// Every class of the space, in the file's order, with what the pass found.
pub(super) fn coverage_rows(
    space: &RequestSpace,
    tally: &InputTally,
    catalogue: &[Rule],
) -> Vec<InputCoverage> {
    let mut rows = Vec::new();
    for input in &space.inputs {
        for &operation in &input.operations {
            let name = operation.name();
            for class in &input.classes {
                let found = tally
                    .get(operation, &input.input, &class.class)
                    .unwrap_or_default();
                let rule = walking_rule(catalogue, operation, class);
                let (outcome, note) = if found.failed > 0 {
                    ("failed", found.first_failure)
                } else if found.cases > 0 {
                    ("tried", None)
                } else if found.unanswered > 0 {
                    (
                        "not-tried",
                        Some("sent, but no case got a whole answer".into()),
                    )
                } else if found.withheld > 0 {
                    (
                        "not-tried",
                        Some("not sent: the run sends this header itself (-H)".into()),
                    )
                } else {
                    let rule = rule.as_deref().unwrap_or("no rule of the catalogue");
                    ("not-tried", Some(format!("not sent: {rule} was not run")))
                };
                rows.push(InputCoverage {
                    operation: name.into(),
                    input: input.input.clone(),
                    class: class.class.clone(),
                    outcome: outcome.into(),
                    level: Some(class.level),
                    expect: Some(class.expect.as_str().into()),
                    rule,
                    cases: found.cases,
                    failed: found.failed,
                    unanswered: found.unanswered,
                    note,
                    operator: class.operator.clone(),
                });
            }
            for untried in &input.untried {
                rows.push(InputCoverage {
                    operation: name.into(),
                    input: input.input.clone(),
                    class: untried.class.clone(),
                    outcome: "not-tried".into(),
                    level: None,
                    expect: None,
                    rule: None,
                    cases: 0,
                    failed: 0,
                    unanswered: 0,
                    note: Some(untried.reason.clone()),
                    operator: None,
                });
            }
        }
    }
    // The parameters' operators, which the parameter rules send and judge (no 5xx and a
    // documented status for a value the schema allows; a 4xx for one it does not allow).
    for (key, rule, found) in tally.by_rules() {
        let (operation, input, operator) = (key.operation.name().to_string(), key.input, key.class);
        let outcome = match (found.failed, found.cases) {
            (0, 0) => "not-tried",
            (0, _) => "tried",
            _ => "failed",
        };
        rows.push(InputCoverage {
            operation,
            input,
            class: operator.clone(),
            outcome: outcome.into(),
            level: found.judged.map(|(level, _)| level),
            expect: found.judged.map(|(_, expect)| expect.to_string()),
            rule: Some(rule),
            cases: found.cases,
            failed: found.failed,
            unanswered: found.unanswered,
            note: found.first_failure.or_else(|| {
                (found.cases == 0).then(|| "sent, but no case got a whole answer".into())
            }),
            operator: Some(operator),
        });
    }
    rows
}

/// The matrix for `catalogue`'s rules, with the verdicts of `reports` (a rule not run has
/// none).
pub(super) fn statement_matrix(
    catalogue: &[Rule],
    reports: &[RuleReport],
) -> Vec<StatementCoverage> {
    let Ok(statements) = statements() else {
        return Vec::new();
    };
    // Each rule's passages and each statement's text normalized once, not per pair.
    let cited: Vec<Vec<String>> = catalogue.iter().map(passages).collect();
    statements
        .into_iter()
        .map(|statement| {
            let text = statement_text(&statement);
            (statement, text)
        })
        .map(|(statement, text)| StatementCoverage {
            rules: catalogue
                .iter()
                .zip(&cited)
                .filter(|(rule, cited)| cites_passages(rule, cited, &statement, &text))
                .map(|(rule, _)| rule)
                .map(|rule| CheckedBy {
                    rule: rule.id.clone(),
                    verdict: reports.iter().find(|r| r.id == rule.id).map(|r| r.verdict),
                })
                .collect(),
            section: statement.section,
            text: statement.text,
            not_testable: statement.not_testable,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_statement_has_rules_or_a_reason() {
        let catalogue = crate::catalogue::Catalogue::built_in().unwrap();
        for row in statement_matrix(&catalogue.rules, &[]) {
            assert!(
                !row.rules.is_empty() || row.not_testable.is_some(),
                "{} / {:?}: no rule checks it and no reason says why not",
                row.section,
                row.text
            );
        }
    }

    #[test]
    fn every_class_is_a_row_and_untried_ones_say_why() {
        let space = RequestSpace::built_in();
        let catalogue = crate::catalogue::Catalogue::built_in().unwrap();
        let rows = coverage_rows(&space, &InputTally::default(), &catalogue.rules);
        let classes: usize = space
            .inputs
            .iter()
            .map(|input| input.operations.len() * (input.classes.len() + input.untried.len()))
            .sum();
        assert_eq!(rows.len(), classes);
        assert!(
            rows.iter()
                .all(|row| row.outcome == "not-tried" && row.note.is_some())
        );
        // Every class the harness sends is walked by a rule of the catalogue, and the bodies
        // that are not UTF-8 by the poisoned-bytes rule.
        for row in rows.iter().filter(|row| row.level.is_some()) {
            let rule = row
                .rule
                .as_deref()
                .unwrap_or_else(|| panic!("{row:?}: no rule"));
            let walker = catalogue.rules.iter().find(|r| r.id == rule).unwrap();
            let poisoned = matches!(walker.check, Check::CreatePoisonedBytes {});
            assert!(
                poisoned || matches!(walker.check, Check::InputsWalk {}),
                "{rule} (class {}) walks no class",
                row.class
            );
            assert_eq!(
                poisoned,
                row.class.contains("utf-8") || row.class == "other-charset"
            );
        }
    }
}
