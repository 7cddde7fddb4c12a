//! Issue 36: every operator of `cases/operators.json` that reaches a path or query parameter is
//! caught by a fault of the reference at every seed of 20, in the coverage table's row of its
//! position and operator, and no other operator's row of that rule fails beside it. (The body's
//! operators are held the same way by the class trials, `CLASS_FAULTS` and `ONLY_CLASS`.)

use std::collections::BTreeMap;

use super::*;

/// A fault, the parameter rule run alone, the position, and exactly the operators whose rows
/// of that rule fail.
pub const OPERATOR_FAULTS: [(&str, &str, &str, &[&str]); 5] = [
    (
        "status-filter-unknown-accepted",
        "list-pets/parameters/refused",
        "listPets query status",
        &[
            "another-json-type",
            "enum-index",
            "invalid-utf-8",
            "letter-case",
            "lists",
            "near-misses",
            "padding",
            "percent-encoding",
        ],
    ),
    (
        "status-case-insensitive",
        "list-pets/parameters/refused",
        "listPets query status",
        &["letter-case"],
    ),
    (
        "limit-bounds-unchecked",
        "list-pets/parameters/refused",
        "listPets query limit",
        &[
            "another-json-type",
            "beyond-bounds",
            "integer-spellings",
            "lists",
            "percent-encoding",
        ],
    ),
    (
        "get-pet-non-integer-500",
        "get-pet/parameters/answered",
        "getPet path petId",
        &[
            "another-json-type",
            "beyond-bounds",
            "integer-spellings",
            "lists",
            "padding",
            "percent-encoding",
        ],
    ),
    (
        "pet-id-percent-encoding-ignored",
        "get-pet/parameters/answered",
        "getPet path petId",
        &["percent-encoding"],
    ),
];

/// `fault` fails `rule_id` at each of 20 seeds, and the rows of that rule that fail are
/// exactly `operators` at `position`.
pub fn operator_fault_caught(
    fault: Fault,
    rule_id: &'static str,
    position: &'static str,
    operators: &'static [&'static str],
) -> Result<(), Failed> {
    super::faults::caught_at_every_seed(fault, rule_id, |report, _| {
        let failed: Vec<String> = report
            .request_coverage
            .iter()
            .filter(|row| row.outcome == "failed" && row.rule.as_deref() == Some(rule_id))
            .map(|row| format!("{} {} × {}", row.operation, row.input, row.class))
            .collect();
        let expected: Vec<String> = operators
            .iter()
            .map(|operator| format!("{position} × {operator}"))
            .collect();
        (failed != expected).then(|| format!("rows failed {failed:?}, not exactly {expected:?}"))
    })
}

/// A failing value is one case of its row, as a passing one is: the values a failed value is
/// sent again to confirm it count nothing more. Under `get-pet-non-integer-500` the failed rows
/// of petId count as many cases as the same rows of a store without the fault.
pub fn failing_values_counted_once() -> Result<(), Failed> {
    let rule_id = "get-pet/parameters/answered";
    let rows = |report: &Report| -> BTreeMap<String, (u32, u32)> {
        report
            .request_coverage
            .iter()
            .filter(|row| row.rule.as_deref() == Some(rule_id))
            .map(|row| (row.class.clone(), (row.cases, row.failed)))
            .collect()
    };
    let faulty = rows(&run_rule(7, Fault::GetPetNonInteger500, rule_id)?);
    let mut config = petstore_conformance::embedded::reference_config(7);
    config.libtest = quiet_args();
    config.libtest.filter = Some(rule_id.into());
    config.libtest.exact = true;
    let clean = rows(&execute(config)?.report.ok_or("no report")?);
    if !faulty.values().any(|(_, failed)| *failed > 0) {
        return Err(format!("no row of {rule_id} failed under the fault: {faulty:?}").into());
    }
    let counted = |rows: &BTreeMap<String, (u32, u32)>| -> Vec<(String, u32)> {
        rows.iter()
            .map(|(class, (cases, _))| (class.clone(), *cases))
            .collect()
    };
    if counted(&faulty) != counted(&clean) {
        return Err(
            format!("cases per row differ: with the fault {faulty:?}, without {clean:?}").into(),
        );
    }
    Ok(())
}
