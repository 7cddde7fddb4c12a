//! What a report says of the run before its verdicts: the suite, the contract, the target,
//! the cases per property rule, where the created pets are, the report's own digest.

use serde::{Deserialize, Serialize};

/// The digest that shows a report was not edited.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Integrity {
    pub sha256: String,
}

/// Where the pets a run created are listed, and how many there are.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreatedPetsInfo {
    pub count: u64,
    /// `created-pets.jsonl` beside the report (one `{id, name, rule}` per line); `None` when
    /// the run wrote no reports.
    pub file: Option<String>,
    pub run_prefix: String,
    /// Under a time budget, the pets the run could create at most (`--max-pets`), and whether
    /// it held a createPet back for it; absent without a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<CreatedCap>,
}

/// The cap on a run's pets, and whether it was reached.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreatedCap {
    pub max_pets: u64,
    pub reached: bool,
}

impl CreatedPetsInfo {
    /// "N pets", and the cap where it stopped the run creating more.
    pub fn counted(&self) -> String {
        match &self.cap {
            Some(cap) if cap.reached => format!(
                "{} pets (the --max-pets cap of {}, reached)",
                self.count, cap.max_pets
            ),
            _ => format!("{} pets", self.count),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Named {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContractInfo {
    pub title: String,
    pub version: String,
    /// The contract text the rules cite, as the repository carries it.
    pub document: String,
    /// SHA-256 of that text: which text exactly the run certified against.
    pub sha256: String,
    /// SHA-256 of the rule catalogue as loaded (canonical JSON of its rules).
    #[serde(default)]
    pub catalogue_sha256: String,
    /// SHA-256 of the JSON Schemas as loaded (canonical JSON of the documents by `$id`).
    #[serde(default)]
    pub schemas_sha256: String,
    pub schemas: String,
    pub cases: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetInfo {
    pub base_url: String,
    pub kind: TargetKind,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    pub tls_verification: bool,
    /// The protocol the target answered the first request in.
    pub http_version: String,
    /// Why the run stopped sending, when the target stopped answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_answering: Option<String>,
    /// The product under test as the user named it (`--product`, `--product-version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_version: Option<String>,
    /// The target's own `Server` header, from the first answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// What the run was pointed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TargetKind {
    /// The built-in reference server, started for the run (its faults and variants named).
    #[serde(rename = "built-in reference server")]
    Reference,
    /// Any implementation, at the base URL given.
    #[serde(rename = "external")]
    External,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Reference => "built-in reference server",
            TargetKind::External => "external",
        }
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many generated cases each property rule judges: a count (`--cases`), or as many as the
/// time budget allows (a budget and no `--cases`). report.json writes the count, and
/// 1,000,000 for the budget, as it always has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cases {
    Count(u32),
    UntilDeadline,
}

impl Cases {
    /// The number report.json writes for [`Cases::UntilDeadline`], which is also the most a
    /// count may be (`--cases` is held to it): a count that high reads back as the budget's.
    pub const UNTIL_DEADLINE: u32 = 1_000_000;

    /// The most generated cases a property rule judges: the count, or, until the deadline,
    /// [`Cases::UNTIL_DEADLINE`] (the deadline comes first).
    pub fn limit(self) -> u32 {
        match self {
            Cases::Count(count) => count,
            Cases::UntilDeadline => Cases::UNTIL_DEADLINE,
        }
    }

    /// What a run judges: a property rule always tries one generated case, `--cases 0` too.
    pub fn at_least_one(self) -> Cases {
        match self {
            Cases::Count(count) => Cases::Count(count.max(1)),
            until => until,
        }
    }

    /// "32 cases per property", or that the budget decides.
    pub fn per_property(self) -> String {
        match self {
            Cases::Count(count) => format!("{count} cases per property"),
            Cases::UntilDeadline => "cases per property until the time budget ends".into(),
        }
    }
}

impl std::fmt::Display for Cases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cases::Count(count) => write!(f, "{count}"),
            Cases::UntilDeadline => f.write_str("until the time budget ends"),
        }
    }
}

impl Serialize for Cases {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(self.limit())
    }
}

impl<'de> Deserialize<'de> for Cases {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let count = u32::deserialize(deserializer)?;
        Ok(if count >= Cases::UNTIL_DEADLINE {
            Cases::UntilDeadline
        } else {
            Cases::Count(count)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_and_the_target_kind_keep_report_json_s_words() {
        let written = |cases: Cases| serde_json::to_string(&cases).unwrap();
        assert_eq!(written(Cases::Count(32)), "32");
        assert_eq!(written(Cases::UntilDeadline), "1000000");
        let read = |text: &str| serde_json::from_str::<Cases>(text).unwrap();
        assert_eq!(read("32"), Cases::Count(32));
        assert_eq!(read("1000000"), Cases::UntilDeadline);
        assert_eq!(
            serde_json::to_string(&TargetKind::Reference).unwrap(),
            "\"built-in reference server\""
        );
        assert_eq!(
            serde_json::from_str::<TargetKind>("\"external\"").unwrap(),
            TargetKind::External
        );
        assert!(serde_json::from_str::<TargetKind>("\"elsewhere\"").is_err());
    }
}
