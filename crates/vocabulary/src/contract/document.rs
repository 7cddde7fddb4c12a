//! The contract's own text, as the repository carries it in `contract/`: what every rule's
//! citation quotes, and what a report names by version and SHA-256.

/// Where the text lives in the repository.
pub const CONTRACT_DOCUMENT: &str = "contract/petstore-interface.md";

/// The text this binary was built with.
pub const CONTRACT_TEXT: &str = include_str!("../../../../contract/petstore-interface.md");

/// The SHA-256 of [`CONTRACT_TEXT`], as `contract/README.md` records it (a test checks both).
pub const CONTRACT_SHA256: &str =
    "8bd1fa4319f9972d36af82a0c304e4e3a86f732c9a1fc8bd57a16bcf4aa6667f";

/// Whether `text` quotes the contract: one of its "double-quoted" fragments is a sentence or
/// table row of [`CONTRACT_TEXT`] as written (runs of whitespace read as one space).
pub fn quotes_contract(text: &str) -> bool {
    // Collapsed once per process: every rule and class of a run asks (it was a tenth of the
    // CPU of a one-rule run).
    static COLLAPSED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let contract = COLLAPSED.get_or_init(|| {
        CONTRACT_TEXT
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    });
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(|quote| quote.split_whitespace().collect::<Vec<_>>().join(" "))
        .any(|quote| quote.len() >= 8 && contract.contains(&quote))
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_digest_is_the_texts() {
        assert_eq!(sha256_hex(CONTRACT_TEXT.as_bytes()), CONTRACT_SHA256);
        let readme = include_str!("../../../../contract/README.md");
        assert!(readme.contains(CONTRACT_SHA256), "contract/README.md");
        assert!(CONTRACT_TEXT.contains("The interface description is at version 1.0.0."));
    }

    #[test]
    fn a_quote_of_the_contract_is_told_from_one_that_is_not() {
        assert!(quotes_contract(
            r#"Required: "When the key is missing or invalid, the operation answers 401 with an Error body.""#
        ));
        // Across a line break of the contract, and one of the quoting text.
        assert!(quotes_contract(
            "says \"All traffic is JSON over\n HTTP.\" and more"
        ));
        assert!(!quotes_contract(
            r#"Recommended: RFC 9110 says "The type and subtype tokens are case-insensitive.""#
        ));
        assert!(!quotes_contract("no quote at all"));
        // Too short to be a statement.
        assert!(!quotes_contract(r#"the word "pet""#));
    }
}
