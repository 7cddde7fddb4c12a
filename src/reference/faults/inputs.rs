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
        breaks: &["inputs/create-pet/required"],
        may_break: &[],
    },
    FaultInfo {
        fault: Fault::CreateStatusNullStored,
        name: "create-status-null-stored",
        description: "createPet takes \"status\": null as no status and stores the pet (a reading the contract leaves open: refusing null is recommended)",
        breaks: &["inputs/create-pet/recommended"],
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
];
