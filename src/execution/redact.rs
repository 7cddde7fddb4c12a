//! The one place where the API key is taken out of anything the harness shows or writes.

/// What replaces the key wherever it would appear.
pub const REDACTED: &str = "[REDACTED]";

/// Replaces every occurrence of the API key with [`REDACTED`].
#[derive(Clone)]
pub struct Redactor {
    key: String,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redactor([REDACTED])")
    }
}

impl Redactor {
    pub fn new(key: &str) -> Redactor {
        Redactor {
            key: key.to_string(),
        }
    }

    pub fn redact(&self, text: &str) -> String {
        // An empty key would match everywhere; it is refused at start-up, so this is a guard.
        if self.key.is_empty() || !text.contains(&self.key) {
            return text.to_string();
        }
        text.replace(&self.key, REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_every_occurrence() {
        let redactor = Redactor::new("s3cret");
        assert_eq!(
            redactor.redact("Bearer s3cret and s3cret"),
            "Bearer [REDACTED] and [REDACTED]"
        );
        assert_eq!(redactor.redact("nothing here"), "nothing here");
        assert!(!format!("{redactor:?}").contains("s3cret"));
    }
}
