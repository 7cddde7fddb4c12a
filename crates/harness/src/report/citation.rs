//! Words as a person reads them: a contract citation without the Markdown of the contract's
//! tables, a step without a number the list already gives.

/// A citation as a reader wants it: the contract's Markdown table rows (`| 400 | \`createPet\`
/// | ... |`) as cells joined by " — ", code spans and emphasis without their marks; parts
/// of the quote stay apart (" … ").
pub fn plain(quote: &str) -> String {
    let plain = |part: &str| part.replace(['`', '*'], "");
    let mut parts: Vec<String> = Vec::new();
    for part in quote.split(" … ") {
        let part = part.trim();
        if part.starts_with('|') || part.contains(" | ") {
            // A Markdown table's header or row: several rows may run together.
            let cells: Vec<String> = part
                .split('|')
                .map(str::trim)
                .filter(|cell| !cell.is_empty() && !cell.chars().all(|c| c == '-'))
                .map(plain)
                .collect();
            parts.push(cells.join(" — "));
        } else {
            parts.push(plain(part));
        }
    }
    parts.join(" … ")
}

/// A sequence step (`2. getPet ...`) without its number, for a list that numbers its items.
pub fn unnumbered(what: &str) -> &str {
    what.split_once(". ")
        .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        .map_or(what, |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn table_rows_read_as_cells_and_marks_are_dropped() {
        assert_eq!(
            plain(
                "| 400 | `createPet` | Body lacks a required field. | … | 401 | all | Missing key. |"
            ),
            "400 — createPet — Body lacks a required field. … 401 — all — Missing key."
        );
        assert_eq!(
            plain("The `status` field repeats **the** code."),
            "The status field repeats the code."
        );
        assert_eq!(plain("|---|---|"), "");
    }

    #[test]
    fn a_step_loses_its_number_only() {
        assert_eq!(super::unnumbered("1. createPet {}"), "createPet {}");
        assert_eq!(super::unnumbered("createPet. Then"), "createPet. Then");
    }
}
