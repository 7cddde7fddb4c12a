//! Faults: each makes the reference server break one statement of the contract, so that every
//! rule can be seen to fail. `serve-reference --list-faults` prints this table.

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
    GetPetNonInteger500,
    NoDeprecationHeader,
    DeprecationLegacyTrue,
    DeprecationAfterSunset,
    NoSunsetHeader,
    SunsetWrongDate,
    NoSuccessorLink,
    DeprecationOnListPets,
    DeprecationOnCreatePet,
}

/// A fault's name on the command line, what it does, and the rules it is meant to fail.
pub struct FaultInfo {
    pub fault: Fault,
    pub name: &'static str,
    pub description: &'static str,
    pub breaks: &'static [&'static str],
}

const AUTH_LIST: &[&str] = &[
    "auth/missing-key/list-pets",
    "auth/wrong-key/list-pets",
    "auth/other-scheme/list-pets",
    "auth/empty-token/list-pets",
];

pub const FAULTS: &[FaultInfo] = &[
    FaultInfo {
        fault: Fault::AuthSkippedListPets,
        name: "auth-skipped-list-pets",
        description: "listPets answers without checking the key",
        breaks: AUTH_LIST,
    },
    FaultInfo {
        fault: Fault::AuthSkippedCreatePet,
        name: "auth-skipped-create-pet",
        description: "createPet stores pets without checking the key",
        breaks: &[
            "auth/missing-key/create-pet",
            "auth/wrong-key/create-pet",
            "auth/other-scheme/create-pet",
            "auth/empty-token/create-pet",
            "auth/refused-create/stores-nothing",
        ],
    },
    FaultInfo {
        fault: Fault::AuthSkippedGetPet,
        name: "auth-skipped-get-pet",
        description: "getPet answers without checking the key",
        breaks: &[
            "auth/missing-key/get-pet",
            "auth/wrong-key/get-pet",
            "auth/other-scheme/get-pet",
            "auth/empty-token/get-pet",
        ],
    },
    FaultInfo {
        fault: Fault::AuthSkippedStoreOrders,
        name: "auth-skipped-store-orders",
        description: "GET /store/orders answers without checking the key",
        breaks: &[
            "auth/missing-key/store-orders",
            "auth/wrong-key/store-orders",
            "auth/other-scheme/store-orders",
            "auth/empty-token/store-orders",
        ],
    },
    FaultInfo {
        fault: Fault::AuthAnyScheme,
        name: "auth-any-scheme",
        description: "the key is accepted under any scheme (Basic <key> passes)",
        breaks: &[
            "auth/other-scheme/list-pets",
            "auth/other-scheme/create-pet",
            "auth/other-scheme/get-pet",
            "auth/other-scheme/store-orders",
        ],
    },
    FaultInfo {
        fault: Fault::AuthEmptyTokenAccepted,
        name: "auth-empty-token-accepted",
        description: "'Authorization: Bearer ' with an empty token is accepted",
        breaks: &[
            "auth/empty-token/list-pets",
            "auth/empty-token/create-pet",
            "auth/empty-token/get-pet",
            "auth/empty-token/store-orders",
        ],
    },
    FaultInfo {
        fault: Fault::AuthSchemeCaseSensitive,
        name: "auth-scheme-case-sensitive",
        description: "only 'Bearer' with a capital B is accepted",
        breaks: &[
            "auth/lowercase-scheme/list-pets",
            "auth/lowercase-scheme/create-pet",
            "auth/lowercase-scheme/get-pet",
            "auth/lowercase-scheme/store-orders",
        ],
    },
    FaultInfo {
        fault: Fault::UnauthorizedWithoutBody,
        name: "unauthorized-without-body",
        description: "401 answers carry an empty text/plain body instead of an Error",
        breaks: &[
            "auth/missing-key/list-pets",
            "auth/wrong-key/list-pets",
            "auth/other-scheme/list-pets",
            "auth/empty-token/list-pets",
            "auth/missing-key/create-pet",
            "auth/wrong-key/create-pet",
            "auth/other-scheme/create-pet",
            "auth/empty-token/create-pet",
            "auth/missing-key/get-pet",
            "auth/wrong-key/get-pet",
            "auth/other-scheme/get-pet",
            "auth/empty-token/get-pet",
            "auth/missing-key/store-orders",
            "auth/wrong-key/store-orders",
            "auth/other-scheme/store-orders",
            "auth/empty-token/store-orders",
            "responses/content-type/json",
            "responses/error-body/status-matches",
        ],
    },
    FaultInfo {
        fault: Fault::RefusedCreateStillStored,
        name: "refused-create-still-stored",
        description: "createPet answers 401 to a bad key but stores the pet anyway",
        breaks: &["auth/refused-create/stores-nothing"],
    },
    FaultInfo {
        fault: Fault::StoreOrdersMissing,
        name: "store-orders-missing",
        description: "GET /store/orders is not implemented (404)",
        breaks: &["auth/store-orders/answered-with-key"],
    },
    FaultInfo {
        fault: Fault::ErrorStatusMismatch,
        name: "error-status-mismatch",
        description: "the Error body's status field is always 400, whatever the HTTP status",
        breaks: &["responses/error-body/status-matches"],
    },
    FaultInfo {
        fault: Fault::ErrorTextPlain,
        name: "error-text-plain",
        description: "Error bodies are sent as text/plain",
        breaks: &["responses/content-type/json"],
    },
    FaultInfo {
        fault: Fault::ListPetsInvalidPet,
        name: "list-pets-invalid-pet",
        description: "listPets returns ids as strings",
        breaks: &["list-pets/success/pets-array"],
    },
    FaultInfo {
        fault: Fault::DefaultLimitIgnored,
        name: "default-limit-ignored",
        description: "without a limit, listPets returns every pet",
        breaks: &[
            "list-pets/limit/default-at-most-20",
            "list-pets/limit/default-fills-page",
        ],
    },
    FaultInfo {
        fault: Fault::DefaultLimitTen,
        name: "default-limit-ten",
        description: "without a limit, listPets returns 10 pets, not 20",
        breaks: &["list-pets/limit/default-fills-page"],
    },
    FaultInfo {
        fault: Fault::LimitIgnored,
        name: "limit-ignored",
        description: "a limit in 1..100 is ignored: listPets always returns up to 20 pets",
        breaks: &[
            "list-pets/limit/within-bounds",
            "list-pets/limit/minimum-accepted",
            "list-pets/limit/maximum-fills-page",
        ],
    },
    FaultInfo {
        fault: Fault::LimitOffByOne,
        name: "limit-off-by-one",
        description: "listPets returns limit + 1 pets",
        breaks: &[
            "list-pets/limit/within-bounds",
            "list-pets/limit/minimum-accepted",
            "list-pets/limit/maximum-accepted",
            "list-pets/limit/maximum-fills-page",
        ],
    },
    FaultInfo {
        fault: Fault::LimitMinimumRefused,
        name: "limit-minimum-refused",
        description: "limit=1 is refused with 400",
        breaks: &[
            "list-pets/limit/within-bounds",
            "list-pets/limit/minimum-accepted",
        ],
    },
    FaultInfo {
        fault: Fault::LimitBoundsUnchecked,
        name: "limit-bounds-unchecked",
        description: "out-of-range and non-integer limits are not refused (applied as given, or the default)",
        breaks: &[
            "list-pets/limit/below-minimum",
            "list-pets/limit/negative",
            "list-pets/limit/above-maximum",
            "list-pets/limit/huge",
            "list-pets/limit/non-integer",
            "list-pets/limit/fractional",
            "list-pets/limit/empty",
            "list-pets/limit/out-of-range-never-over-100",
        ],
    },
    FaultInfo {
        fault: Fault::LimitMaximumReturns99,
        name: "limit-maximum-returns-99",
        description: "limit=100 returns at most 99 pets",
        breaks: &["list-pets/limit/maximum-fills-page"],
    },
    FaultInfo {
        fault: Fault::StatusFilterIgnored,
        name: "status-filter-ignored",
        description: "the status filter is ignored",
        breaks: &["list-pets/status/filter"],
    },
    FaultInfo {
        fault: Fault::StatusFilterUnknownAccepted,
        name: "status-filter-unknown-accepted",
        description: "an unknown status filter value answers 200 with an empty list",
        breaks: &["list-pets/status/unknown-value"],
    },
    FaultInfo {
        fault: Fault::CreateReturns200,
        name: "create-returns-200",
        description: "createPet answers 200 instead of 201",
        breaks: &["create-pet/valid/created"],
    },
    FaultInfo {
        fault: Fault::CreateDropsStatus,
        name: "create-drops-status",
        description: "createPet's answer leaves out the status that was sent",
        breaks: &["create-pet/valid/created"],
    },
    FaultInfo {
        fault: Fault::CreateMissingNameAccepted,
        name: "create-missing-name-accepted",
        description: "a NewPet without name is stored with an empty name",
        breaks: &["create-pet/invalid/missing-name"],
    },
    FaultInfo {
        fault: Fault::CreateMissingCategoryStored,
        name: "create-missing-category-stored",
        description: "a NewPet without categoryId is answered 400 but stored anyway",
        breaks: &["create-pet/invalid/missing-category-id"],
    },
    FaultInfo {
        fault: Fault::CreateNameCoerced,
        name: "create-name-coerced",
        description: "a name that is a number or null is turned into a string and stored",
        breaks: &[
            "create-pet/invalid/name-wrong-type",
            "create-pet/invalid/name-null",
            "create-pet/invalid/values-answer-400",
        ],
    },
    FaultInfo {
        fault: Fault::CreateCategoryIdCoerced,
        name: "create-category-id-coerced",
        description: "a categoryId given as a string of digits is accepted",
        breaks: &[
            "create-pet/invalid/category-id-wrong-type",
            "create-pet/invalid/values-answer-400",
        ],
    },
    FaultInfo {
        fault: Fault::CreateCategoryIdTruncated,
        name: "create-category-id-truncated",
        description: "a fractional categoryId is truncated to an integer and stored",
        breaks: &[
            "create-pet/invalid/category-id-fractional",
            "create-pet/invalid/values-answer-400",
        ],
    },
    FaultInfo {
        fault: Fault::CreateCategoryIdSaturates,
        name: "create-category-id-saturates",
        description: "a categoryId beyond int64 is clamped to the int64 maximum and stored",
        breaks: &[
            "create-pet/invalid/category-id-beyond-int64",
            "create-pet/invalid/values-answer-400",
        ],
    },
    FaultInfo {
        fault: Fault::CreateUnknownStatusAccepted,
        name: "create-unknown-status-accepted",
        description: "any status string is accepted (and then listed)",
        breaks: &[
            "create-pet/invalid/unknown-status",
            "list-pets/success/pets-array",
            "create-pet/invalid/values-answer-400",
        ],
    },
    FaultInfo {
        fault: Fault::CreateArrayBodyAccepted,
        name: "create-array-body-accepted",
        description: "a JSON array body is answered 201 with an empty pet",
        breaks: &["create-pet/invalid/not-an-object"],
    },
    FaultInfo {
        fault: Fault::CreateMalformedJson500,
        name: "create-malformed-json-500",
        description: "malformed JSON makes createPet answer 500",
        breaks: &[
            "create-pet/invalid/malformed-json",
            "responses/no-server-error",
        ],
    },
    FaultInfo {
        fault: Fault::CreateEmptyBodyAccepted,
        name: "create-empty-body-accepted",
        description: "an empty body is answered 201 with a default pet",
        breaks: &["create-pet/invalid/empty-body"],
    },
    FaultInfo {
        fault: Fault::InvalidValues422,
        name: "invalid-values-422",
        description: "well-formed bodies with invalid values are answered 422, not 400",
        breaks: &["create-pet/invalid/values-answer-400"],
    },
    FaultInfo {
        fault: Fault::DuplicateIds,
        name: "duplicate-ids",
        description: "every second pet gets the id of the one before it",
        breaks: &["create-pet/valid/unique-ids", "create-pet/valid/round-trip"],
    },
    FaultInfo {
        fault: Fault::GetPetAltersCategory,
        name: "get-pet-alters-category",
        description: "getPet returns the pet with categoryId 0",
        breaks: &[
            "create-pet/valid/round-trip",
            "get-pet/existing/returns-pet",
        ],
    },
    FaultInfo {
        fault: Fault::GetPetUnknown200,
        name: "get-pet-unknown-200",
        description: "getPet answers 200 with an empty object for an unknown id",
        breaks: &["get-pet/unknown/not-found"],
    },
    FaultInfo {
        fault: Fault::GetPetNonInteger500,
        name: "get-pet-non-integer-500",
        description: "getPet answers 500 for an id that is not an integer",
        breaks: &[
            "get-pet/non-integer-id/client-error",
            "responses/no-server-error",
        ],
    },
    FaultInfo {
        fault: Fault::NoDeprecationHeader,
        name: "no-deprecation-header",
        description: "getPet responses carry no Deprecation header",
        breaks: &["deprecation/get-pet/deprecation-header"],
    },
    FaultInfo {
        fault: Fault::DeprecationLegacyTrue,
        name: "deprecation-legacy-true",
        description: "getPet sends the legacy 'Deprecation: true'",
        breaks: &["deprecation/get-pet/deprecation-syntax"],
    },
    FaultInfo {
        fault: Fault::DeprecationAfterSunset,
        name: "deprecation-after-sunset",
        description: "the Deprecation date is later than the Sunset date",
        breaks: &["deprecation/get-pet/sunset-not-before-deprecation"],
    },
    FaultInfo {
        fault: Fault::NoSunsetHeader,
        name: "no-sunset-header",
        description: "getPet responses carry no Sunset header",
        breaks: &["deprecation/get-pet/sunset-header"],
    },
    FaultInfo {
        fault: Fault::SunsetWrongDate,
        name: "sunset-wrong-date",
        description: "Sunset names 5 December 2029",
        breaks: &["deprecation/get-pet/sunset-date"],
    },
    FaultInfo {
        fault: Fault::NoSuccessorLink,
        name: "no-successor-link",
        description: "getPet responses carry no successor-version link",
        breaks: &["deprecation/get-pet/successor-link"],
    },
    FaultInfo {
        fault: Fault::DeprecationOnListPets,
        name: "deprecation-on-list-pets",
        description: "listPets responses carry a Deprecation header",
        breaks: &["deprecation/list-pets/not-deprecated"],
    },
    FaultInfo {
        fault: Fault::DeprecationOnCreatePet,
        name: "deprecation-on-create-pet",
        description: "createPet responses carry a Deprecation header",
        breaks: &["deprecation/create-pet/not-deprecated"],
    },
];

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
