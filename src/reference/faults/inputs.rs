//! Faults in the request space's classes (cases/request-space.json): spellings a store must take, near misses it must refuse.

use super::{Fault, FaultInfo};

pub(super) const FAULTS: &[FaultInfo] = &[
    FaultInfo {
        fault: Fault::ContentTypeCharsetRefused,
        name: "content-type-charset-refused",
        description: "createPet answers 415 to any Content-Type but exactly 'application/json' (a charset parameter, another letter case, whitespace)",
        breaks: &[
            "inputs/create-pet/required",
            "inputs/create-pet/recommended",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthNoSeparatorAccepted,
        name: "auth-no-separator-accepted",
        description: "'Authorization: Bearer<key>' (no space) is accepted",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::CreateNanAccepted,
        name: "create-nan-accepted",
        description: "createPet reads NaN and Infinity in the body (not JSON) as 0 and stores the pet",
        breaks: &[
            "create-pet/poisoned/not-utf-8",
            "inputs/create-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::CreateStatusNullStored,
        name: "create-status-null-stored",
        description: "createPet takes \"status\": null as no status and stores the pet (FastAPI's, Spring's and axum's reading: null is present and none of the allowed values)",
        breaks: &["inputs/create-pet/required"],
        may_break: &[
            "create-pet/fields/type-confusion",
            "create-pet/fields/type-confusion-stores-nothing",
            "create-pet/invalid/generated",
        ],
    },
    FaultInfo {
        fault: Fault::CreateNoBody500,
        name: "create-no-body-500",
        description: "createPet answers 500 to a POST with neither body nor Content-Type",
        breaks: &[
            "inputs/create-pet/required",
            "responses/no-server-error",
            "inputs/create-pet/recommended",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::CreateNoBody415,
        name: "create-no-body-415",
        description: "createPet answers 415 to a POST with neither body nor Content-Type (the contract's table names 400)",
        breaks: &["inputs/create-pet/recommended"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthTrailingWordAccepted,
        name: "auth-trailing-word-accepted",
        description: "'Authorization: Bearer <key> junk' is accepted: the guard splits the value on spaces and takes the second word (as NestJS's guide shows)",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthBearerSearched,
        name: "auth-bearer-searched",
        description: "the key is whatever follows the first 'Bearer ' anywhere in Authorization, up to a comma or space: 'Bearer <key>, junk', 'Basic x, Bearer <key>' and 'xBearer <key>' are accepted (Laravel's bearerToken())",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthBasicAccepted,
        name: "auth-basic-accepted",
        description: "'Authorization: Basic base64(...)' is accepted when the key is its user name or its password",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthApiKeyHeaderAccepted,
        name: "auth-api-key-header-accepted",
        description: "the key in an 'api_key' header is accepted without an Authorization header",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthXApiKeyAccepted,
        name: "auth-x-api-key-accepted",
        description: "the key in an 'X-API-Key' header is accepted without an Authorization header",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthQueryKeyAccepted,
        name: "auth-query-key-accepted",
        description: "the key in an 'api_key' query parameter is accepted without an Authorization header",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::AuthCookieKeyAccepted,
        name: "auth-cookie-key-accepted",
        description: "the key in an 'api_key' cookie is accepted without an Authorization header",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::UndecodableQueryTextBody,
        name: "undecodable-query-text-body",
        description: "listPets answers a query that does not percent-decode to text (%zz, %00, %FF) with 400 and a plain-text body under Content-Type: application/json (as Sinatra does)",
        breaks: &[
            "inputs/list-pets/required",
            "list-pets/parameters/refused",
            "responses/error-body/status-matches",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::BracketedQuery500,
        name: "bracketed-query-500",
        description: "listPets answers 500 to a contract parameter with a bracketed name (limit[]=2: a qs-style parser hands an array to the code that reads limit, which expects a string)",
        breaks: &["inputs/list-pets/required", "responses/no-server-error"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::PlusQueryDefaultPage,
        name: "plus-query-default-page",
        description: "listPets answers a query holding a raw + anywhere (note=a+b beside limit=2) with the default page, every parameter ignored: the whole query taken for one it cannot read",
        breaks: &["list-pets/limit/beside-other-parameters"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::CrossSiteRefererRefused,
        name: "cross-site-referer-refused",
        description: "every operation answers 403 text/plain when Referer names another host, after it has acted: createPet stores the pet it refuses (Sinatra's default protection)",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
            "responses/content-type/json",
            "responses/error-body/status-matches",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::CrossOriginRefused,
        name: "cross-origin-refused",
        description: "every operation answers 403 'Invalid CORS request' in plain text when Origin names another host, before it acts (Spring's CORS filter)",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
            "responses/content-type/json",
            "responses/error-body/status-matches",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::WildcardAccept406,
        name: "wildcard-accept-406",
        description: "every operation answers 406 to 'Accept: */*' (it takes only an Accept naming application/json)",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::WeightedAccept406,
        name: "weighted-accept-406",
        description: "every operation answers 406 to an Accept list with q-values (application/json;q=0.9 is not read as application/json)",
        breaks: &[
            "inputs/list-pets/required",
            "inputs/create-pet/required",
            "inputs/get-pet/required",
        ],
        may_break: &[],
    },
];
