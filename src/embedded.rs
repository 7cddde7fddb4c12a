//! The built-in reference this program embeds (`petstore-reference`), as the runner starts it:
//! for `run` with no target, `replay` of a report of the reference, and the tests. The runner
//! knows a reference only by its fault and variant names and this way to start one.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::reference::{Fault, ReferenceConfig, ReferenceServer, Variant, WireShape};
use crate::runner::{BuiltIn, RunConfig, Running, ServeReference, Target};

/// Starts `petstore-reference` servers.
pub struct Embedded;

impl ServeReference for Embedded {
    fn start(
        &self,
        runtime: &tokio::runtime::Runtime,
        built_in: &BuiltIn,
        api_key: &str,
        latency: Duration,
    ) -> Result<Running, String> {
        // A name the reference does not know was refused where it was given; one from a report
        // of another version is left out, as a replay always did.
        let faults = built_in
            .faults
            .iter()
            .filter_map(|name| Fault::parse(name))
            .collect();
        let variants = built_in
            .variants
            .iter()
            .filter_map(|name| Variant::parse(name))
            .collect();
        let server = runtime
            .block_on(ReferenceServer::start(
                ReferenceConfig {
                    api_key: api_key.to_string(),
                    faults,
                    variants,
                    latency,
                    conforming: None,
                    wire: WireShape::default(),
                },
                0,
            ))
            .map_err(|e| e.to_string())?;
        Ok(Running {
            base_url: server.base_url.clone(),
            keep: Box::new(server),
        })
    }
}

/// The embedded reference, making `faults` and giving `variants`.
pub fn built_in(faults: &BTreeSet<Fault>, variants: &BTreeSet<Variant>) -> BuiltIn {
    BuiltIn {
        faults: faults.iter().map(|f| f.name().to_string()).collect(),
        variants: variants.iter().map(|v| v.name().to_string()).collect(),
        serve: Arc::new(Embedded),
    }
}

/// The run's target: the embedded reference with `faults` and `variants`.
pub fn reference_target(faults: BTreeSet<Fault>, variants: BTreeSet<Variant>) -> Target {
    Target::Reference(built_in(&faults, &variants))
}

/// A run against the embedded reference, without faults, with the defaults of the command
/// line, writing no reports.
pub fn reference_config(seed: u64) -> RunConfig {
    RunConfig::reference(seed, built_in(&BTreeSet::new(), &BTreeSet::new()))
}
