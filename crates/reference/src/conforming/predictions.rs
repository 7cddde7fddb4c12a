//! The recommended rules a conforming store may fail, by the choice it drew: data
//! (`predictions.json`), so that no rule id is written in the generator's code.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

#[derive(Deserialize)]
struct PredictionsFile {
    choices: BTreeMap<String, Vec<String>>,
}

/// Each choice that parts from a recommendation, with the recommended rules that ask for it.
pub static PREDICTIONS: LazyLock<BTreeMap<String, Vec<String>>> = LazyLock::new(|| {
    let file: PredictionsFile = serde_json::from_str(include_str!("predictions.json"))
        .expect("conforming/predictions.json parses (tested)");
    file.choices
});

/// The rules a choice predicts. A choice the file does not name is the generator's mistake,
/// not a store's: it stops the program at the first seed that draws it.
pub(crate) fn predicted(choice: &str) -> &'static [String] {
    PREDICTIONS
        .get(choice)
        .unwrap_or_else(|| panic!("conforming/predictions.json names no choice {choice:?}"))
}
