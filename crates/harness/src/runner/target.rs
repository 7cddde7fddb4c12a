//! What the configure, connect and preflight stages do: load the contract, the catalogue and
//! saved counterexamples; start the built-in reference or check the external target's address
//! and key; the preflight requests.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::built_in::{BuiltIn, Running};
pub use super::error::RunError;
use super::regressions::{self};
use super::settings::{KeySource, RunConfig, Target};
use crate::catalogue::Catalogue;
use crate::contract::{Contract, SchemaName};
use crate::execution::{BaseUrl, Client};
use crate::generation::Schemas;
use crate::generation::request::RequestSpec;
use crate::seed::random_seed;

/// A base URL given as text, checked (see [`BaseUrl::parse`]).
pub fn check_base_url(base_url: &str) -> Result<BaseUrl, RunError> {
    BaseUrl::parse(base_url).map_err(RunError::Config)
}

/// A key that would not survive as a header value, or would break every line it is redacted
/// from, is a configuration error naming where it came from.
pub fn check_api_key(key: &str, source: &str) -> Result<(), RunError> {
    if key.chars().any(char::is_control) {
        return Err(RunError::Config(format!(
            "{source}: the API key holds a control character (a newline, a tab?); it cannot be sent in an Authorization header"
        )));
    }
    Ok(())
}

/// Keys shorter than this cannot be told apart from ordinary text: redacting one takes words
/// out of the evidence (`json`, `pets`).
pub const MIN_KEY_LENGTH: usize = 12;

/// A key shorter than [`MIN_KEY_LENGTH`] is refused unless `allowed` (`--allow-short-key`).
pub fn check_key_length(key: &str, source: &str, allowed: bool) -> Result<(), RunError> {
    let length = key.chars().count();
    if length < MIN_KEY_LENGTH && !allowed {
        return Err(RunError::Config(format!(
            "{source}: the API key has {length} characters, fewer than {MIN_KEY_LENGTH}: so short a key cannot be told apart from ordinary text, and redacting it would take words out of the evidence; use a longer key, or --allow-short-key (the reports then say their evidence may be over-redacted)"
        )));
    }
    Ok(())
}

/// What the reports say under `--allow-short-key`.
pub const SHORT_KEY_NOTE: &str = "the API key is shorter than 12 characters (--allow-short-key): the evidence may be over-redacted, ordinary text that spells the key shown as [REDACTED]";

/// What a run loads before it sends anything.
pub(super) struct Loaded {
    pub(super) contract: Contract,
    pub(super) catalogue: Catalogue,
    pub(super) new_pet_schema: Value,
    pub(super) regressions: BTreeMap<String, Vec<Value>>,
    pub(super) space: crate::generation::space::RequestSpace,
}

/// The contract, the catalogue and the saved counterexamples; every error names its file.
pub(super) fn load(config: &RunConfig) -> Result<Loaded, RunError> {
    let options = &config.options;
    let contract = Contract::load(options.schemas.as_deref())?;
    let catalogue = Catalogue::load(options.cases_dir.as_deref())?;
    let space = crate::generation::space::RequestSpace::load(options.cases_dir.as_deref())
        .map_err(|e| RunError::Config(e.to_string()))?;
    let new_pet_schema = Schemas::new(&contract).flatten(&contract, SchemaName::NewPet)?;
    // The operators apply to the NewPet this run loads: a contract's own members get theirs.
    let operators = crate::generation::operators::Operators::load(options.cases_dir.as_deref())
        .map_err(|e| RunError::Config(e.to_string()))?;
    let space = space
        .with_operators(&operators, &new_pet_schema)
        .map_err(RunError::Config)?;
    for note in crate::generation::check_caps(&new_pet_schema, "NewPet")? {
        stderrln!("petstore-conformance: {note}");
    }
    let regressions = match &config.regressions {
        Some(path) => regressions::load(path).map_err(RunError::Config)?,
        None => BTreeMap::new(),
    };
    Ok(Loaded {
        contract,
        catalogue,
        new_pet_schema,
        regressions,
        space,
    })
}

/// The target a run talks to: its address and key, and the reference server when it is one
/// (kept alive for the run).
pub(super) struct Started {
    pub(super) base_url: String,
    pub(super) api_key: String,
    pub(super) faults: Vec<String>,
    pub(super) variants: Vec<String>,
    pub(super) _server: Option<Running>,
}

/// Starts the built-in reference, or checks the external target's address and key.
pub(super) fn start_target(
    config: &RunConfig,
    runtime: &tokio::runtime::Runtime,
) -> Result<Started, RunError> {
    match &config.target {
        Target::Reference(built_in) => {
            let (server, api_key) = start_reference(
                runtime,
                built_in,
                config.options.reference_latency.unwrap_or_default(),
            )?;
            Ok(Started {
                base_url: server.base_url.clone(),
                api_key,
                faults: built_in.faults.clone(),
                variants: built_in.variants.clone(),
                _server: Some(server),
            })
        }
        Target::External { base_url, api_key } => {
            if api_key.is_empty() {
                return Err(RunError::Config(match &config.key_source {
                    KeySource::Variable(name) => format!(
                        "no API key: set the environment variable {name} (or choose another with --api-key-env)"
                    ),
                    KeySource::File(path) => {
                        format!("no API key: --api-key-file {} is empty", path.display())
                    }
                }));
            }
            check_api_key(api_key, &config.key_source.to_string())?;
            Ok(Started {
                base_url: base_url.as_str().to_string(),
                api_key: api_key.clone(),
                faults: Vec::new(),
                variants: Vec::new(),
                _server: None,
            })
        }
    }
}

/// The built-in reference on an ephemeral loopback port, with a fresh random key: the one
/// place a run or a replay starts it.
pub fn start_reference(
    runtime: &tokio::runtime::Runtime,
    built_in: &BuiltIn,
    latency: Duration,
) -> Result<(Running, String), RunError> {
    let api_key = format!("ref-{:016x}{:016x}", random_seed(), random_seed());
    let server = built_in
        .serve
        .start(runtime, built_in, &api_key, latency)
        .map_err(|e| RunError::Config(format!("cannot start the reference server: {e}")))?;
    Ok((server, api_key))
}

/// The likely cause of a first request that got no answer, where the error shows it: TLS
/// spoken to a server that answered in plain HTTP (rustls reads its answer as a corrupt TLS
/// record).
fn unreachable_hint(base_url: &str, error: Option<&str>) -> &'static str {
    let error = error.unwrap_or_default();
    if base_url.starts_with("https:")
        && (error.contains("InvalidContentType") || error.contains("corrupt message"))
    {
        " (the server answered in plain HTTP, not TLS: is the base URL http://?)"
    } else {
        ""
    }
}

/// The store as it is before the run changes it, in one round trip: its first page
/// (`GET /pets?limit=100`, authenticated: the key's check) and each status's first page, which
/// the quiet-store rules need and would otherwise ask for in round trips of their own. No
/// answer at all to the first is "could not be reached" (exit 2), unless the budget or an
/// interrupt stopped it: then the rules run and say so (undetermined or interrupted, with
/// reports). 401 or 403 is confirmed with a second operation (GET /pets/1): refused on both,
/// the key is refused (exit 2); a target that refuses a valid key on one operation only is
/// judged by the rules. Returns the requests and their exchanges, the first page's first.
pub(super) fn preflight(
    config: &RunConfig,
    client: &Client,
    halt: &crate::execution::Halt,
    base_url: &str,
) -> Result<Vec<(RequestSpec, crate::outcome::Exchange)>, RunError> {
    // Beside the store's pages, the two reads that tell a refused key from a refused listing
    // (getPet of id 1) and a wrong base URL from an empty store (the store orders): sent with
    // them, they cost no round trip of their own where they decide, and the preflight fills
    // the connections a run starts with, whose answers let the level grow from its first round
    // trip (the 4 pages alone held it at its start for one more at 50 ms).
    let mut specs = crate::engine::store_setup::snapshot_requests();
    specs.extend([
        RequestSpec::get("/pets/1"),
        RequestSpec::get("/store/orders"),
    ]);
    let answers: Vec<(RequestSpec, crate::outcome::Exchange)> =
        specs.iter().cloned().zip(client.send_all(&specs)).collect();
    let confirmation = &answers[answers.len() - 2].1;
    let orders = &answers[answers.len() - 1].1;
    let preflight = &answers[0].1;
    let stopped = || halt.reason().is_some() || super::interrupts::signalled().is_some();
    // Another of the snapshot's requests answered: the target is there, and the rules say
    // what it does next.
    let any_answered = answers.iter().any(|(_, exchange)| {
        exchange.response.is_some() || crate::execution::client::head_too_large(exchange)
    });
    if preflight.response.is_none() {
        if !preflight.was_sent() || stopped() || any_answered {
            return Ok(answers);
        }
        return Err(RunError::Unreachable(format!(
            "the target {base_url} could not be reached: {}{}",
            preflight.summary(),
            unreachable_hint(
                base_url,
                (preflight.transport_error.as_ref()).map(|error| error.detail.as_str()),
            )
        )));
    }
    let refused = |exchange: &crate::outcome::Exchange| {
        exchange
            .response
            .as_ref()
            .is_some_and(|r| r.status == 401 || r.status == 403)
    };
    if !refused(preflight) {
        no_operation_at(&answers, orders, base_url)?;
        return Ok(answers);
    }
    if !refused(confirmation) {
        return Ok(answers);
    }
    let status =
        |exchange: &crate::outcome::Exchange| exchange.response.as_ref().map_or(0, |r| r.status);
    let source = config.key_source.described();
    Err(RunError::KeyRefused(format!(
        "the target {base_url} refused the key from {source} (GET /pets?limit=100 answered {}, GET /pets/1 answered {}): check the key; no rule was run",
        status(preflight),
        status(confirmation)
    )))
}

/// A base URL where no operation of the contract answers: a wrong path (`/api/v1` for `/v1`)
/// is a configuration mistake to name (exit 2), not fifteen failed rules. Decided from the
/// operations the contract gives no 404 to: every listing of the preflight (listPets, the
/// store's first page and each status's) answered 404, and so does the listing of store orders
/// (`orders`, one more read that creates nothing). getPet's 404 for an id the store lacks is
/// normal and is not read here; createPet is not tried, so that nothing can be created on a
/// target the run then refuses to judge.
fn no_operation_at(
    answers: &[(RequestSpec, crate::outcome::Exchange)],
    orders: &crate::outcome::Exchange,
    base_url: &str,
) -> Result<(), RunError> {
    let not_found = |exchange: &crate::outcome::Exchange| exchange.status() == Some(404);
    let listings_absent = answers
        .iter()
        .filter(|(spec, _)| spec.method == "GET" && spec.path == "/pets")
        .all(|(_, exchange)| not_found(exchange));
    if !listings_absent || !not_found(orders) {
        return Ok(());
    }
    Err(RunError::NoOperation(format!(
        "the target {base_url}: no operation answered at this base URL; check the path (GET /pets and each status's listing, and GET /store/orders, all answered 404; --base-url is the address the contract's paths follow, /v1 included)"
    )))
}
