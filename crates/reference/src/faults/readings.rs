//! How a store misreads its input, for the hook families of the reference's faults
//! ([`super::Hook`]): the value each fault of a family names in `faults.json`, and what a
//! store that reads that way keeps of an input.

use petstore_vocabulary::contract::PET_STATUSES;
use serde_json::Value;

/// How a lenient parser reads a createPet body that RFC 8259 says is no JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Leniency {
    /// Data after the document ignored.
    TrailingDataIgnored,
    /// The first of two documents read (Go's `json.NewDecoder(r.Body).Decode`).
    FirstDocumentRead,
    /// `//` and `/* */` comments skipped.
    Comments,
    /// A comma before `}` or `]` skipped.
    TrailingCommas,
    /// Leading zeros of a number read away.
    LeadingZeros,
    /// `NaN` and `Infinity` read as numbers.
    NonFiniteNumbers,
    /// Single-quoted strings read as strings.
    SingleQuotes,
    /// Bytes that are not UTF-8 read as U+FFFD (Go, Hono).
    InvalidUtf8Replaced,
}

/// Where else than the JSON body a store reads createPet's members from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// An HTML form body, urlencoded or multipart, read as the members.
    Form,
    /// The query string merged into the body's members.
    Query,
    /// Request headers of the members' names merged into the body.
    Header,
}

/// How a store reads getPet's petId where it parts from an int64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PetIdReading {
    /// Its percent-encodings not decoded (`%31` is no digit).
    PercentEncodingIgnored,
    /// Digits past int64 answered 500 (an integer parse that overflows).
    OverflowCrashes,
    /// Anything not an integer answered 500.
    NonIntegerCrashes,
    /// Only its low 32 bits looked up (an int32 column).
    Truncated32,
}

impl PetIdReading {
    /// The id a store that reads this way looks up for `id`.
    pub fn looked_up(self, id: i64) -> i64 {
        match self {
            PetIdReading::Truncated32 => i64::from(id as u32),
            _ => id,
        }
    }
}

/// What a store answers for an id no pet has, where the contract says 404.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnknownPetAnswer {
    /// 200 with `{}`.
    EmptyObject,
    /// 200 with a made-up Pet carrying the id asked for.
    EchoedId,
    /// A mock server's answers: 200 with one made-up Pet of id 0, and 422 for the largest
    /// int64.
    Mock,
}

/// How a store misreads listPets' `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitReading {
    /// Infinity or NaN taken as no bound at all.
    NonFiniteUnbounded,
    /// Any integer taken, past 100 or below 1 (a negative one as no bound).
    BoundsUnchecked,
    /// 1, the minimum, refused.
    MinimumRefused,
    /// A number of more than 18 digits answered 500 (an integer parse that overflows).
    HugeCrashes,
    /// A `limit` request header read where the query has none (every input source merged
    /// into one bag).
    AlsoFromHeader,
}

/// How a store misreads listPets' `status` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterReading {
    /// In any letter case (`status=AVAILABLE` lists the available pets).
    CaseInsensitive,
    /// A value that is no PetStatus answers 200 with an empty list.
    UnknownAnsweredEmpty,
    /// Not at all: every pet is listed.
    Ignored,
    /// Only over the first so many pets stored; later ones pass unfiltered.
    FirstOnly(usize),
}

/// How a store takes a status that is none of PetStatus's values: what it keeps of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StatusReading {
    /// Any string, kept as sent (a plain string column).
    AnyString,
    /// A value in another letter case, kept in lower case.
    AnyCase,
    /// `null`, kept as no status.
    NullAsNone,
    /// `""`, kept as no status (a choice field that allows blank).
    EmptyAsNone,
    /// A value padded with spaces, trimmed; an index (a number or its digits), the value at
    /// that place of the list (an enum coercion).
    Coerced,
}

impl StatusReading {
    /// What a store that reads this way keeps of `spelt` (`Some(None)`: no status), or `None`
    /// where it refuses it as the contract does.
    pub fn keeps(self, spelt: &Value) -> Option<Option<String>> {
        match (self, spelt) {
            (StatusReading::AnyString, Value::String(s)) => Some(Some(s.clone())),
            (StatusReading::AnyCase, Value::String(s)) => {
                let lower = s.to_ascii_lowercase();
                PET_STATUSES
                    .contains(&lower.as_str())
                    .then_some(Some(lower))
            }
            (StatusReading::NullAsNone, Value::Null) => Some(None),
            (StatusReading::EmptyAsNone, Value::String(s)) if s.is_empty() => Some(None),
            (StatusReading::Coerced, spelt) => {
                let index = match spelt {
                    Value::String(s) if PET_STATUSES.contains(&s.trim()) => {
                        return Some(Some(s.trim().to_string()));
                    }
                    Value::String(s) => s.parse::<usize>().ok()?,
                    Value::Number(n) => usize::try_from(n.as_u64()?).ok()?,
                    _ => return None,
                };
                PET_STATUSES
                    .get(index)
                    .map(|status| Some(status.to_string()))
            }
            _ => None,
        }
    }
}

/// How a store takes a categoryId that is no integer JSON Schema counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CategoryReading {
    /// A whole number past int64, saturated to its bound (a float cast).
    Saturates,
    /// A fraction, its integer part (truncated), where it fits.
    Truncated,
    /// A string of digits, parsed.
    FromString,
    /// `true` and `false`, as 1 and 0.
    FromBool,
    /// `null`, as 0 (a nullable column's default).
    NullAsZero,
}

impl CategoryReading {
    /// The id a store that reads this way takes `value` for, if any.
    pub fn reads(self, value: &Value) -> Option<i64> {
        match (self, value) {
            (CategoryReading::Saturates, Value::Number(n)) => {
                let float = n.as_f64()?;
                (float.fract() == 0.0).then_some(float as i64)
            }
            (CategoryReading::Truncated, Value::Number(n)) => {
                let float = n.as_f64()?;
                (float.abs() < 9.0e18).then_some(float.trunc() as i64)
            }
            (CategoryReading::FromString, Value::String(text)) => text.parse().ok(),
            (CategoryReading::FromBool, Value::Bool(flag)) => Some(i64::from(*flag)),
            (CategoryReading::NullAsZero, Value::Null) => Some(0),
            _ => None,
        }
    }
}

/// How a store miscounts a page asked for with `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageMistake {
    /// The default page whatever `limit` says (20).
    Ignored,
    /// One pet more than asked.
    OneMore,
    /// 99 pets where 100 were asked.
    HundredShortOne,
}

impl PageMistake {
    /// The page size this store gives for `limit`.
    pub fn page(self, limit: usize) -> usize {
        match self {
            PageMistake::Ignored => 20,
            PageMistake::OneMore => limit.saturating_add(1),
            PageMistake::HundredShortOne if limit == 100 => 99,
            PageMistake::HundredShortOne => limit,
        }
    }
}

/// How a store reads createPet's `name` where NewPet says a string is required.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NameReading {
    /// A missing name taken as the empty one.
    MissingAsEmpty,
    /// A name of another JSON kind taken as its JSON text (`42` as "42").
    AnyKindAsText,
    /// An array of names joined with commas (a form binder's list).
    ArrayJoined,
    /// Spaces around the name trimmed away.
    Trimmed,
}

impl NameReading {
    /// The name a store that reads this way takes from `spelt` (`None`: missing), or `None`
    /// where it refuses it as the contract does (or takes it as the contract does: a string
    /// is for the caller to read).
    pub fn takes(self, spelt: Option<&Value>) -> Option<String> {
        match (self, spelt) {
            (NameReading::MissingAsEmpty, None) => Some(String::new()),
            (NameReading::AnyKindAsText, Some(other)) if !other.is_string() => {
                Some(other.to_string())
            }
            (NameReading::ArrayJoined, Some(Value::Array(parts))) => Some(
                parts
                    .iter()
                    .map(|part| part.as_str().map_or_else(|| part.to_string(), String::from))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => None,
        }
    }
}

/// How a store's column keeps a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NameStorage {
    /// Cut to this many characters, silently.
    CutAt(usize),
    /// Past this many characters, the insert fails: 500 (`value too long for column`).
    ColumnOf(usize),
    /// Each character that is not ASCII kept as `?` (a Latin-1 or ASCII column); the answer
    /// echoes the name as sent.
    AsciiOnly,
}

/// How a store folds a member named in another letter case than NewPet's into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemberFold {
    /// Over the member of the right name, when both are there (the last one read wins).
    Overwrites,
    /// In place of the member of the right name, when it is missing.
    Fallback,
}

impl MemberFold {
    /// Whether a store that folds this way takes the other-case member, the member of the
    /// right name being `present` or not.
    pub fn folds(self, present: bool) -> bool {
        match self {
            MemberFold::Overwrites => present,
            MemberFold::Fallback => !present,
        }
    }
}

/// How a store takes a NewPet's `id`, which the service is to assign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdTaking {
    /// Always: the pet of that id overwritten, or a new one given it, and answered so.
    Overwrites,
    /// Where no pet has it: stored under it, while the answer carries the counter's id.
    StoredNotAnswered,
}
