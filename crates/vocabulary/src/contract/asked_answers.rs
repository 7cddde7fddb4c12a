//! What the contract asks of an answer, and how firmly: the words the harness judges by and
//! the reference (and its conforming-store generator) answers by, typed once for both.

use serde::{Deserialize, Serialize};

/// Whether the contract states what a rule checks, or HTTP practice suggests it where the
/// contract is silent. The default gate fails a run only on `required` rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Required,
    Recommended,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Required => "required",
            Level::Recommended => "recommended",
        }
    }
}

/// What a store must answer to a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// The operation's success: 200, or 201 for createPet.
    Accepted,
    /// Exactly 400, with an Error body.
    #[serde(rename = "refused-400")]
    Refused400,
    /// Any 4xx, with an Error body.
    #[serde(rename = "refused-4xx")]
    Refused4xx,
    /// 401, with an Error body.
    #[serde(rename = "refused-401")]
    Refused401,
    /// Any answer but a 5xx.
    Answered,
    /// Any answer but a 5xx, whose body is JSON under a JSON Content-Type: an Error for a
    /// 4xx (the status is the contract's silent area, the body's media type is not).
    AnsweredJson,
}

impl Expect {
    /// Whether it asks for a refusal (a 4xx with an Error).
    pub fn is_refusal(self) -> bool {
        matches!(
            self,
            Expect::Refused400 | Expect::Refused4xx | Expect::Refused401
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Accepted => "accepted",
            Expect::Refused400 => "refused-400",
            Expect::Refused4xx => "refused-4xx",
            Expect::Refused401 => "refused-401",
            Expect::Answered => "answered",
            Expect::AnsweredJson => "answered-json",
        }
    }
}
