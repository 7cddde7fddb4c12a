//! Faults in getPet, its deprecation headers, and the answers every response shares.

use super::{Fault, FaultInfo};

pub(super) const FAULTS: &[FaultInfo] = &[
    FaultInfo {
        fault: Fault::ErrorStatusMismatch,
        name: "error-status-mismatch",
        description: "the Error body's status field is always 400, whatever the HTTP status",
        breaks: &["responses/error-body/status-matches"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::ErrorTextPlain,
        name: "error-text-plain",
        description: "Error bodies are sent as text/plain",
        // A query that does not decode is answered 400 with that type too.
        breaks: &["responses/content-type/json", "inputs/list-pets/required"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::GetPetUnknown200,
        name: "get-pet-unknown-200",
        description: "getPet answers 200 with an empty object for an unknown id",
        breaks: &["get-pet/unknown/not-found", "responses/success-body/schema"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::GetPetMockUnknownIds,
        name: "get-pet-mock-unknown-ids",
        description: "getPet answers 422 to int64's maximum and 200 with an example pet to any other unknown id (a mock's answers: the first hides the second from a probe of one id)",
        breaks: &["get-pet/unknown/not-found", "get-pet/parameters/answered"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::GetPetEchoesAnyId,
        name: "get-pet-echoes-any-id",
        description: "getPet answers 200 with a made-up Pet carrying the id asked for, to any id it does not hold (a mock that echoes the path)",
        breaks: &["get-pet/unknown/not-found"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::PetIdTruncated32,
        name: "pet-id-truncated-32",
        description: "getPet looks the id up by its low 32 bits (an int32 column): a stored pet's id plus 2^32 finds that pet",
        breaks: &["get-pet/unknown/not-found"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::EncodedSlashHtml,
        name: "encoded-slash-html",
        description: "a petId holding an encoded slash (/pets/7%2F7) is refused before the operation, with the server's HTML 400 page (Tomcat's)",
        breaks: &[
            "get-pet/parameters/refused",
            "responses/content-type/json",
            "responses/error-body/status-matches",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::GetPetNonInteger500,
        name: "get-pet-non-integer-500",
        description: "getPet answers 500 for an id that is not an integer",
        breaks: &[
            "get-pet/non-integer-id/client-error",
            "responses/no-server-error",
            "get-pet/parameters/answered",
            "get-pet/parameters/refused",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::NoDeprecationHeader,
        name: "no-deprecation-header",
        description: "getPet responses carry no Deprecation header",
        breaks: &["deprecation/get-pet/deprecation-header"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::DeprecationLegacyTrue,
        name: "deprecation-legacy-true",
        description: "getPet sends the legacy 'Deprecation: true'",
        breaks: &["deprecation/get-pet/deprecation-syntax"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::DeprecationAfterSunset,
        name: "deprecation-after-sunset",
        description: "the Deprecation date (1 January 2032) is later than the Sunset date and the stated removal",
        breaks: &[
            "deprecation/get-pet/sunset-not-before-deprecation",
            "deprecation/get-pet/deprecation-before-removal",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::NoSunsetHeader,
        name: "no-sunset-header",
        description: "getPet responses carry no Sunset header",
        breaks: &["deprecation/get-pet/sunset-header"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::SunsetWrongDate,
        name: "sunset-wrong-date",
        description: "Sunset names 5 December 2029",
        breaks: &["deprecation/get-pet/sunset-date"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::NoSuccessorLink,
        name: "no-successor-link",
        description: "getPet responses carry no successor-version link",
        breaks: &["deprecation/get-pet/successor-link"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::DeprecationOnListPets,
        name: "deprecation-on-list-pets",
        description: "listPets responses carry a Deprecation header",
        breaks: &[
            "deprecation/list-pets/not-deprecated",
            "responses/deprecation/get-pet-only",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::DeprecationOnCreatePet,
        name: "deprecation-on-create-pet",
        description: "createPet responses carry a Deprecation header",
        breaks: &[
            "deprecation/create-pet/not-deprecated",
            "responses/deprecation/get-pet-only",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::PetIdPercentEncodingIgnored,
        name: "pet-id-percent-encoding-ignored",
        description: "getPet reads petId without percent-decoding it: /pets/%31 is refused instead of being pet 1",
        breaks: &["get-pet/parameters/answered"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::PetIdOverflow500,
        name: "pet-id-overflow-500",
        description: "a petId past the int64 range crashes the lookup: 500",
        breaks: &[
            "get-pet/parameters/answered",
            "get-pet/parameters/refused",
            "responses/no-server-error",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::TrailingSlash500,
        name: "trailing-slash-500",
        description: "a path with a trailing slash (GET /pets/, the empty petId) answers 500, as an unhandled route does",
        breaks: &["responses/outside-operations/no-server-error"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::DeprecationInMilliseconds,
        name: "deprecation-in-milliseconds",
        description: "getPet's Deprecation date is written in milliseconds (@1735689600000): a valid Structured Field Date tens of thousands of years after the Sunset",
        breaks: &[
            "deprecation/get-pet/sunset-not-before-deprecation",
            "deprecation/get-pet/deprecation-before-removal",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::SuccessorLinkRelativeWrong,
        name: "successor-link-relative-wrong",
        description: "getPet's successor-version link is the relative reference 'pets', which resolves against /v1/pets/{petId} to /v1/pets/pets, not to listPets",
        breaks: &["deprecation/get-pet/successor-is-list-pets"],
        may_break: &[],
    },
];
