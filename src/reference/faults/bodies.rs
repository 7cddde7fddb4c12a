//! Faults in what a store reads from a createPet body (issue 28): JSON at the byte level,
//! member names, a read-only `id`, free names, integer literals, bodies past a limit. Each is
//! caught by one class of the request space (cases/request-space.json), or one rule.

use super::{Fault, FaultInfo};

const REQUIRED: &[&str] = &["inputs/create-pet/required"];
const RECOMMENDED: &[&str] = &["inputs/create-pet/recommended"];

pub(super) const FAULTS: &[FaultInfo] = &[
    FaultInfo {
        fault: Fault::TrailingDataIgnored,
        name: "trailing-data-ignored",
        description: "createPet reads the body's first JSON value and ignores what follows it (a prefix parser): `{...}xyz` is stored",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::SecondDocumentRead,
        name: "second-document-read",
        description: "createPet reads one JSON document from the body as a stream (Go's json.NewDecoder(r.Body).Decode): a second document after it is ignored",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::CommentsAccepted,
        name: "comments-accepted",
        description: "createPet reads `/* */` and `//` comments in the body as whitespace (Ruby's parser, JSON5)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::NanReadAsFloat,
        name: "nan-read-as-float",
        description: "createPet reads NaN and Infinity as floats (Python's json module): a typed field refuses them, a member the store ignores does not",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::InvalidUtf8Replaced,
        name: "invalid-utf8-replaced",
        description: "createPet decodes a body that is not UTF-8 with U+FFFD in place of the bad bytes and stores the pet (Go, Hono)",
        breaks: &["create-pet/poisoned/not-utf-8"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::BomSkipped,
        name: "byte-order-mark-skipped",
        description: "createPet skips a byte-order mark before the JSON (RFC 8259 lets a parser; refusing is recommended)",
        breaks: RECOMMENDED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::SingleQuotesAccepted,
        name: "single-quotes-accepted",
        description: "createPet reads single-quoted strings as strings (JSON5)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::TrailingCommasAccepted,
        name: "trailing-commas-accepted",
        description: "createPet takes a comma after the last member (JSON5)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::LeadingZerosAccepted,
        name: "leading-zeros-accepted",
        description: "createPet reads a number with leading zeros (`007`) as decimal",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::ArrayReadPositionally,
        name: "array-read-positionally",
        description: "createPet reads an array body as NewPet's values in order (serde's derive reads a struct from a sequence)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::DuplicateNamesLastWins,
        name: "duplicate-names-last-wins",
        description: "createPet takes a body with a member named twice, the last value winning (refusing it is recommended)",
        breaks: RECOMMENDED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::MemberCaseFallback,
        name: "member-name-case-fallback",
        description: "createPet looks a missing member up in another letter case: `{\"NAME\":...,\"CATEGORYID\":...}` is stored",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::MemberCaseOverwrites,
        name: "member-name-case-overwrites",
        description: "after checking the members by their exact names, createPet decodes them without regard to case: `\"Name\"` after `\"name\"` overwrites it (a validator, then Go's encoding/json)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::IdMemberStoredNotAnswered,
        name: "id-member-stored-not-answered",
        description: "a NewPet's unused id becomes the stored pet's id, while the answer carries the id the store's counter gave (nothing is stored under it)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::IdMemberOverwrites,
        name: "id-member-overwrites",
        description: "createPet copies the body onto its record (mass assignment): a NewPet carrying an existing pet's id overwrites that pet",
        breaks: REQUIRED,
        // The pet it overwrites is the run's existing-pet fixture, which that rule reads too:
        // before or after, as the run goes. The overwriting create is answered with that pet's
        // id: unique-ids, which watches every create's id while it runs, sees one id given to
        // two pets when the inputs walk sends it then (seen once in .ci/run).
        may_break: &[
            "get-pet/existing/returns-pet",
            "create-pet/valid/unique-ids",
        ],
    },
    FaultInfo {
        fault: Fault::NameLiteralRefused,
        name: "name-literal-refused",
        description: "a name that reads as another JSON value (`null`, `true`, `7`, `[]`) is coerced and refused as not a string",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::BlankNameRefused,
        name: "blank-name-refused",
        description: "an empty or blank name is refused as missing (Django REST framework: 'This field may not be blank.'); accepting it is recommended",
        breaks: RECOMMENDED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::EmptyStatusStored,
        name: "empty-status-stored",
        description: "`\"status\": \"\"` is stored as no status (a choice field that allows blank)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::StatusSpellingsCoerced,
        name: "status-spellings-coerced",
        description: "a status padded with spaces is trimmed, and an index (1 or \"1\") names the status at that place (Jackson's and Laravel's enum coercion): the pet is stored",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::QueryMergedIntoBody,
        name: "query-merged-into-body",
        description: "createPet merges the query's parameters into the body's fields (Laravel's input()): a body without categoryId and ?categoryId=7 stores a pet",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::HeaderMergedIntoBody,
        name: "header-merged-into-body",
        description: "createPet merges request headers named as NewPet members into the body's fields (one bag for every input source): a body without categoryId and a `categoryId: 1` header stores a pet",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::EscapedEnumRefused,
        name: "escaped-enum-refused",
        description: "a status spelt with a JSON escape (`\\u0061vailable`) is refused: the enum binder matches the raw token, not the string it decodes to",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::NameTrimmed,
        name: "name-trimmed",
        description: "a name is stored with the whitespace at its ends cut (a binder's trim), where free text is kept as sent",
        breaks: REQUIRED,
        may_break: &[
            "inputs/create-pet/recommended",
            "create-pet/valid/created",
            "create-pet/valid/round-trip",
        ],
    },
    FaultInfo {
        fault: Fault::Latin1BodyDecoded,
        name: "latin1-body-decoded",
        description: "a body under `charset=iso-8859-1` is decoded as Latin-1 and stored (RFC 8259 defines no charset: JSON is UTF-8)",
        breaks: &["create-pet/poisoned/not-utf-8"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::NegativeZeroRefused,
        name: "negative-zero-refused",
        description: "a categoryId of `-0` is refused (serde reads it as a float; actix)",
        breaks: REQUIRED,
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::TrailingDataStored,
        name: "trailing-data-stored",
        description: "a body with data after its JSON document is refused with 400, but only after the document was stored",
        breaks: &["inputs/create-pet/stores-nothing"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::BodyLimitHtml,
        name: "body-limit-html",
        description: "bodies past 2.5 MB are refused with 413 and an HTML page (Django's default limit), not a JSON Error",
        breaks: &[
            "create-pet/sizes/body-ladder",
            "responses/content-type/json",
            "responses/error-body/status-matches",
        ],
        may_break: &[],
    },
];
