//! Faults: each makes the reference server break one statement of the contract, so that every
//! rule can be seen to fail. `serve-reference --list-faults` prints this table; `faults.json`
//! holds each one's name, area, description and the rules it breaks.

mod hooks;
mod readings;
pub use hooks::{
    Channel, FilterReading, Hook, IdTaking, Leniency, LimitReading, MemberFold, NameReading,
    NameStorage, PetIdReading, Route, SiteHeader, UnknownPetAnswer,
};

/// A deliberate deviation from the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize)]
pub enum Fault {
    AuthSkippedListPets,
    AuthSkippedCreatePet,
    AuthSkippedGetPet,
    AuthSkippedStoreOrders,
    AuthAnyScheme,
    AuthEmptyTokenAccepted,
    AuthSchemeCaseSensitive,
    UnauthorizedWithoutBody,
    RefusedCreateStillStored,
    StoreOrdersMissing,
    ErrorStatusMismatch,
    ErrorTextPlain,
    ListPetsInvalidPet,
    DefaultLimitIgnored,
    DefaultLimitTen,
    LimitIgnored,
    LimitOffByOne,
    LimitMinimumRefused,
    LimitBoundsUnchecked,
    LimitMaximumReturns99,
    LimitReadFromHeader,
    ListingFailsPast999Rows,
    ListingFailsPast1000Rows,
    StatusFilterIgnored,
    StatusFilterUnknownAccepted,
    CreateReturns200,
    CreateDropsStatus,
    CreateMissingNameAccepted,
    CreateMissingCategoryStored,
    CreateNameCoerced,
    CreateCategoryIdCoerced,
    CreateCategoryIdTruncated,
    CreateCategoryIdSaturates,
    CreateUnknownStatusAccepted,
    CreateArrayBodyAccepted,
    CreateMalformedJson500,
    CreateEmptyBodyAccepted,
    InvalidValues422,
    DuplicateIds,
    GetPetAltersCategory,
    GetPetUnknown200,
    GetPetMockUnknownIds,
    GetPetNonInteger500,
    NoDeprecationHeader,
    DeprecationLegacyTrue,
    DeprecationAfterSunset,
    NoSunsetHeader,
    SunsetWrongDate,
    NoSuccessorLink,
    DeprecationOnListPets,
    DeprecationOnCreatePet,
    CreateCategoryIdNullAccepted,
    CreateIgnoresContentType,
    LongName500,
    NonAsciiNameAltered,
    CategoryIdTruncated32,
    UnescapedNameJson,
    StatusFilterFirst50,
    AuthCaseInsensitive,
    AuthPrefixMatch,
    AuthOneCharShort,
    AuthIgnoresFirstChar,
    ValidationBeforeAuth,
    NotFoundBeforeAuth,
    QueryValidatedBeforeAuth,
    PetIdPercentEncodingIgnored,
    PetIdOverflow500,
    LimitHuge500,
    StatusCaseInsensitive,
    CategoryIdBoolCoerced,
    StatusNull500,
    StatusCaseInsensitiveCreate,
    NameArrayJoined,
    StatusValidatedAfterInsert,
    RacyIdCounter,
    LostWriteUnderLoad,
    ReadAfterWriteLag,
    TrailingSlash500,
    ContentTypeCharsetRefused,
    AuthNoSeparatorAccepted,
    LimitNonFiniteUnchecked,
    CreateNanAccepted,
    CreateStatusNullStored,
    CreateNoBody500,
    CreateNoBody415,
    LargeBody500,
    NameCutAt1000,
    EmptyListNull,
    LoneSurrogatePoisonsReads,
    Create500TwoWays,
    AuthTrailingWordAccepted,
    AuthBasicAccepted,
    AuthApiKeyHeaderAccepted,
    AuthXApiKeyAccepted,
    AuthQueryKeyAccepted,
    AuthCookieKeyAccepted,
    UndecodableQueryTextBody,
    BracketedQuery500,
    PlusQueryDefaultPage,
    CrossSiteRefererRefused,
    WildcardAccept406,
    WeightedAccept406,
    DeprecationInMilliseconds,
    SuccessorLinkRelativeWrong,
    TrailingDataIgnored,
    SecondDocumentRead,
    CommentsAccepted,
    NanReadAsFloat,
    InvalidUtf8Replaced,
    BomSkipped,
    SingleQuotesAccepted,
    TrailingCommasAccepted,
    LeadingZerosAccepted,
    ArrayReadPositionally,
    DuplicateNamesLastWins,
    MemberCaseFallback,
    MemberCaseOverwrites,
    IdMemberStoredNotAnswered,
    IdMemberOverwrites,
    NameLiteralRefused,
    BlankNameRefused,
    EmptyStatusStored,
    NegativeZeroRefused,
    TrailingDataStored,
    NotUtf8RefusedStored,
    BodyLimitHtml,
    AuthBearerSearched,
    StatusSpellingsCoerced,
    QueryMergedIntoBody,
    GetPetEchoesAnyId,
    Latin1BodyDecoded,
    EncodedSlashHtml,
    PetIdTruncated32,
    CrossOriginRefused,
    HeaderMergedIntoBody,
    EscapedEnumRefused,
    NameTrimmed,
    InvalidBytesPoisonReads,
    FormBodyAccepted,
    SunsetIso8601,
}

/// The faults whose one mistake shows as more than one finding (`report::findings`), each with
/// why: the same mistake seen in another answer, or a consequence of it seen on another request.
/// Every other fault reads as one finding over the rules it breaks (tests/conformance/faults.rs).
pub const SEVERAL_CAUSES: &[(Fault, &[&str])] = &[
    (
        Fault::AuthSkippedListPets,
        &[
            "an invalid query without a key is answered 400 by the validation the key check no longer precedes, where 401 was due",
        ],
    ),
    (
        Fault::AuthSkippedGetPet,
        &[
            "an unknown petId without a key is answered 404 by the lookup the key check no longer precedes, where 401 was due",
        ],
    ),
    (
        Fault::AuthSkippedCreatePet,
        &[
            "an invalid body without a key is answered 400 by the validation the key check no longer precedes, where 401 was due",
            "the pet a refused create stored shows in a later listing",
        ],
    ),
    (
        Fault::CreateUnknownStatusAccepted,
        &[
            "the pet stored with an unknown status makes the 201 answer no Pet",
            "and makes the listings that hold it no array of Pets",
        ],
    ),
    (
        Fault::CrossSiteRefererRefused,
        &["the refusal's own body is text/plain, not an Error"],
    ),
    (
        Fault::CrossOriginRefused,
        &["the refusal's own body is text/plain, not an Error"],
    ),
    (
        Fault::DeprecationOnCreatePet,
        &[
            "the Deprecation header is on createPet's refusals too, and the rule may see a 400 first",
        ],
    ),
    (
        Fault::GetPetUnknown200,
        &["the 200 it answers for an unknown pet holds no Pet"],
    ),
    (
        Fault::LimitBoundsUnchecked,
        &["a limit over 100 accepted then pages more than 100 pets"],
    ),
    (
        Fault::LimitNonFiniteUnchecked,
        &["an infinite limit accepted then pages more than 100 pets"],
    ),
];

/// The faults as data (`faults.json`): each fault's name on the command line, its area, what
/// it does, and the rules it is meant to fail. The fault itself is a variant of [`Fault`],
/// the hook the reference's code tests; the file names it.
const FAULTS_FILE: &str = include_str!("faults.json");

/// A fault's name on the command line, what it does, and the rules it is meant to fail.
pub type FaultInfo = FaultEntry<'static>;

/// One entry of `faults.json`, its names borrowed from the file's text.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultEntry<'a> {
    pub fault: Fault,
    pub name: &'a str,
    /// The part of the contract it breaks (`auth`, `listing`, ...), one of the file's areas.
    pub area: &'a str,
    pub description: String,
    #[serde(borrow)]
    pub breaks: Vec<&'a str>,
    /// Rules it fails only when generation happens on the input that shows it (not declared
    /// as broken, but not a surprise either).
    #[serde(default, borrow)]
    pub may_break: Vec<&'a str>,
    /// Why a rule is among them, where that is not plain.
    #[serde(default)]
    pub note: Option<String>,
    /// The kind of mistake and its value, where the fault is one of a family the handlers ask
    /// as one ([`Hook`]); none where its own code makes it.
    #[serde(default)]
    pub hook: Option<Hook>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultsFile<'a> {
    #[allow(dead_code)] // read by people: what the file is
    description: String,
    #[serde(borrow)]
    areas: std::collections::BTreeMap<&'a str, String>,
    #[serde(borrow)]
    faults: Vec<FaultEntry<'a>>,
}

/// Every fault, area by area.
pub static FAULTS: std::sync::LazyLock<Vec<FaultInfo>> = std::sync::LazyLock::new(|| {
    let file: FaultsFile<'static> =
        serde_json::from_str(FAULTS_FILE).expect("faults.json is valid (tested)");
    for info in &file.faults {
        assert!(
            file.areas.contains_key(info.area),
            "{}: no area {}",
            info.name,
            info.area
        );
    }
    file.faults
});

impl Fault {
    pub fn info(self) -> &'static FaultInfo {
        FAULTS
            .iter()
            .find(|info| info.fault == self)
            .expect("every fault is in FAULTS")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn parse(name: &str) -> Option<Fault> {
        FAULTS
            .iter()
            .find(|info| info.name == name)
            .map(|info| info.fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Deprecation value in milliseconds is the contract's date, in milliseconds: a date
    /// moved in the contract moves this fault's value with it, or this fails.
    #[test]
    fn the_deprecation_in_milliseconds_is_the_contracts_date() {
        let value = Fault::DeprecationInMilliseconds.info().hook.clone();
        let since = petstore_vocabulary::contract::DEPRECATED_SINCE_UNIX;
        assert_eq!(
            value,
            Some(Hook::DeprecationSent(Some(format!("@{}", since * 1000))))
        );
    }

    /// `faults.json` reads whole: each fault once, by its name and by its variant.
    #[test]
    fn every_fault_is_named_once() {
        let mut names = std::collections::BTreeSet::new();
        let mut variants = std::collections::BTreeSet::new();
        let mut hooks: Vec<&Hook> = Vec::new();
        for info in FAULTS.iter() {
            if let Some(hook) = &info.hook {
                assert!(
                    !hooks.contains(&hook),
                    "{}: another fault's hook",
                    info.name
                );
                hooks.push(hook);
            }
            assert!(names.insert(info.name), "{} named twice", info.name);
            assert!(variants.insert(info.fault), "{:?} listed twice", info.fault);
            assert_eq!(Fault::parse(info.name), Some(info.fault));
            assert!(!info.breaks.is_empty(), "{} breaks no rule", info.name);
        }
    }
}
