//! The built-in reference as the runner knows it: the faults it makes and the variants it
//! gives, by name, and a way to start one. The way is the embedding program's (the CLI embeds
//! `petstore-reference` for `run` with no target, `replay` and the tests); the runner only
//! starts what it is handed, so it does not depend on the reference.

use std::sync::Arc;
use std::time::Duration;

/// Starts a built-in reference.
pub trait ServeReference: Send + Sync {
    /// A reference on an ephemeral loopback port that takes `api_key`, makes the faults and
    /// gives the variants of `built_in`, and answers each request after `latency`.
    fn start(
        &self,
        runtime: &tokio::runtime::Runtime,
        built_in: &BuiltIn,
        api_key: &str,
        latency: Duration,
    ) -> Result<Running, String>;
}

/// A reference started: its base address (with `/v1`), and what keeps it running (dropped, it
/// stops).
pub struct Running {
    pub base_url: String,
    pub keep: Box<dyn std::any::Any + Send>,
}

/// The built-in reference a run is pointed at.
#[derive(Clone)]
pub struct BuiltIn {
    /// The faults it makes, by name, in the order reports list them.
    pub faults: Vec<String>,
    /// The variants it gives, by name.
    pub variants: Vec<String>,
    pub serve: Arc<dyn ServeReference>,
}

impl std::fmt::Debug for BuiltIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltIn")
            .field("faults", &self.faults)
            .field("variants", &self.variants)
            .finish_non_exhaustive()
    }
}

impl BuiltIn {
    /// The same reference with other faults and variants (a report's, to replay it).
    pub fn with(&self, faults: Vec<String>, variants: Vec<String>) -> BuiltIn {
        BuiltIn {
            faults,
            variants,
            serve: Arc::clone(&self.serve),
        }
    }
}

/// A built-in reference that cannot start: for the runner's own unit tests, which build
/// configurations and command lines but start no server (the runner embeds none).
#[cfg(test)]
pub(crate) fn not_embedded() -> BuiltIn {
    struct NotEmbedded;
    impl ServeReference for NotEmbedded {
        fn start(
            &self,
            _: &tokio::runtime::Runtime,
            _: &BuiltIn,
            _: &str,
            _: Duration,
        ) -> Result<Running, String> {
            Err("no reference is embedded in the runner's unit tests".into())
        }
    }
    BuiltIn {
        faults: Vec::new(),
        variants: Vec::new(),
        serve: Arc::new(NotEmbedded),
    }
}
