//! Faults: each makes the reference server break one statement of the contract, so that every
//! rule can be seen to fail. `serve-reference --list-faults` prints this table.

mod auth;
mod bodies;
mod creating;
mod inputs;
mod listing;
mod reading;

/// A deliberate deviation from the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

/// A fault's name on the command line, what it does, and the rules it is meant to fail.
#[derive(Clone, Copy)]
pub struct FaultInfo {
    pub fault: Fault,
    pub name: &'static str,
    pub description: &'static str,
    pub breaks: &'static [&'static str],
    /// Rules it fails only when generation happens on the input that shows it (not declared
    /// as broken, but not a surprise either).
    pub may_break: &'static [&'static str],
}

/// Every fault, area by area (one file each).
pub const FAULTS: &[FaultInfo] = &joined::<
    {
        auth::FAULTS.len()
            + inputs::FAULTS.len()
            + listing::FAULTS.len()
            + creating::FAULTS.len()
            + reading::FAULTS.len()
            + bodies::FAULTS.len()
    },
>(&[
    auth::FAULTS,
    inputs::FAULTS,
    listing::FAULTS,
    creating::FAULTS,
    reading::FAULTS,
    bodies::FAULTS,
]);

/// The areas' tables as one (a const slice cannot be concatenated otherwise).
const fn joined<const N: usize>(parts: &[&[FaultInfo]]) -> [FaultInfo; N] {
    let mut all = [parts[0][0]; N];
    let mut at = 0;
    let mut part = 0;
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            all[at] = parts[part][i];
            at += 1;
            i += 1;
        }
        part += 1;
    }
    assert!(at == N, "every fault is in FAULTS once");
    all
}

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
