//! The request-coverage table: per operation and input, each class of values of the request
//! space (`cases/request-space.json`), whether the coverage pass tried it, how many cases got
//! an answer and how many failed. Classes the harness cannot send are rows too, with why, so
//! a user sees what was not tried. (Not the contract-statement coverage: this is about the
//! requests sent.)

use serde::{Deserialize, Serialize};

use crate::catalogue::Level;

/// One class of one input of one operation, and what the coverage pass found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputCoverage {
    pub operation: String,
    pub input: String,
    pub class: String,
    /// `tried`, `failed` (a case was answered otherwise than the class says), or `not-tried`.
    pub outcome: String,
    /// The class's level; none for a class the harness cannot send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// What the store must answer (accepted, refused-400, refused-4xx, refused-401, answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
    /// The rule that walks the class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Cases of the class that got a whole answer.
    pub cases: u32,
    /// Of those, the ones answered otherwise than the class says.
    pub failed: u32,
    /// Cases sent that got no whole answer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unanswered: u32,
    /// The first failing case, or why the class was not tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The operator that generated the class (`cases/operators.json`); none for a listed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Counts for a one-line summary: classes tried, failed, not tried.
pub fn counts(rows: &[InputCoverage]) -> (usize, usize, usize) {
    let of = |outcome: &str| rows.iter().filter(|row| row.outcome == outcome).count();
    (of("tried"), of("failed"), of("not-tried"))
}

/// The generated classes as a product: every position (operation and input) with a generated
/// class in a row, every operator in a column, and in each cell what the position's classes
/// of that operator got (`None`: the operator does not apply there).
pub struct Product<'a> {
    pub operators: Vec<&'a str>,
    pub positions: Vec<(String, Vec<Option<Cell>>)>,
}

/// What one position's classes of one operator got.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    pub cases: u32,
    pub failed: u32,
    pub tried: bool,
}

impl Cell {
    /// The cell in words: `6`, `1 of 6 failed`, or `not tried`.
    pub fn words(&self) -> String {
        match (self.tried, self.failed) {
            (false, _) => "not tried".into(),
            (true, 0) => self.cases.to_string(),
            (true, failed) => format!("{failed} of {} failed", self.cases),
        }
    }
}

/// The product of the generated rows (empty when no row is generated).
pub fn product(rows: &[InputCoverage]) -> Product<'_> {
    let mut operators: Vec<&str> = Vec::new();
    for operator in rows.iter().filter_map(|row| row.operator.as_deref()) {
        if !operators.contains(&operator) {
            operators.push(operator);
        }
    }
    // One class judged by two rules (a parameter's value: answered, and refused where the
    // schema does not allow it) is one set of cases: its rows merge by the larger count.
    let mut classes: Vec<(String, &str, &str, Cell)> = Vec::new();
    for row in rows {
        let Some(operator) = row.operator.as_deref() else {
            continue;
        };
        let position = format!("{} {}", row.operation, row.input);
        let cell = Cell {
            cases: row.cases,
            failed: row.failed,
            tried: row.outcome != "not-tried",
        };
        match classes
            .iter_mut()
            .find(|(p, o, c, _)| *p == position && *o == operator && *c == row.class)
        {
            Some((.., merged)) => {
                merged.cases = merged.cases.max(cell.cases);
                merged.failed = merged.failed.max(cell.failed);
                merged.tried |= cell.tried;
            }
            None => classes.push((position, operator, &row.class, cell)),
        }
    }
    let mut positions: Vec<(String, Vec<Option<Cell>>)> = Vec::new();
    for (position, operator, _, class) in classes {
        let at = match positions.iter().position(|(p, _)| *p == position) {
            Some(at) => at,
            None => {
                positions.push((position, vec![None; operators.len()]));
                positions.len() - 1
            }
        };
        let column = operators.iter().position(|o| *o == operator).unwrap_or(0);
        let cell = positions[at].1[column].get_or_insert_with(Cell::default);
        cell.cases += class.cases;
        cell.failed += class.failed;
        cell.tried |= class.tried;
    }
    Product {
        operators,
        positions,
    }
}
