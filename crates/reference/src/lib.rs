//! The built-in reference server: an in-memory Pet Store that honours every statement of the
//! contract, unless told to break one with a [`Fault`].
//!
//! Every answer, refusals included, is a JSON body with `application/json`; axum's built-in
//! extractors are avoided on purpose, because their rejections answer in text/plain.
//!
//! A crate of its own, one floor above the vocabulary (`petstore_vocabulary`: the contract,
//! JSON, seeds) and beside the harness, which embeds it for `run` with no target and
//! `serve-reference`: nothing here can reach the harness that tests it.

// A function a newcomer can read: about 120 lines at most (clippy.toml holds the number).
#![warn(clippy::too_many_lines)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod answers;
mod clients;
pub mod codings;
mod conforming;
mod faults;
mod gate;
mod handlers;
mod json_text;
mod lenient;
mod members;
mod new_pet;
mod queries;
mod store;
mod variants;
mod wire;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde_json::{Value, json};

pub use conforming::{Choices, LinkForm, PREDICTIONS, Signals, Surrogates, Unasked, meets};
pub use faults::{
    Channel, FAULTS, Fault, FaultInfo, FilterReading, Hook, IdTaking, Leniency, LimitReading,
    MemberFold, NameReading, NameStorage, PetIdReading, Route, SEVERAL_CAUSES, SiteHeader,
    UnknownPetAnswer,
};
pub use variants::{VARIANTS, Variant, VariantInfo};
pub use wire::{
    Dimension, FieldSpacing, Framing, HeaderCase, HeaderOrder, Interim, Persistence, Reason,
    WireShape, Writes,
};

use petstore_vocabulary::contract::{DEPRECATED_SINCE_UNIX, PET_STATUSES};

use answers::*;
use clients::*;
use conforming::*;
use gate::*;
use handlers::*;
use members::*;
use new_pet::*;
use queries::*;
use store::*;

/// How to run the reference server.
#[derive(Debug, Clone)]
pub struct ReferenceConfig {
    pub api_key: String,
    pub faults: BTreeSet<Fault>,
    pub variants: BTreeSet<Variant>,
    /// Added before every answer, so a remote target can be seen without a proxy.
    pub latency: std::time::Duration,
    /// A conforming store drawn from this seed ([`Choices::draw`]) instead of the reference's
    /// own choices (and its variants').
    pub conforming: Option<u64>,
    /// How HTTP/1.1 answers travel; the wire variants among `variants` are laid over it.
    pub wire: WireShape,
}

impl ReferenceConfig {
    pub fn new(api_key: impl Into<String>) -> ReferenceConfig {
        ReferenceConfig {
            api_key: api_key.into(),
            faults: BTreeSet::new(),
            variants: BTreeSet::new(),
            latency: std::time::Duration::ZERO,
            conforming: None,
            wire: WireShape::default(),
        }
    }

    /// The store's every choice: drawn from the conforming seed, or the reference's own with
    /// its variants.
    pub fn choices(&self) -> Choices {
        match self.conforming {
            Some(seed) => Choices::draw(seed),
            None => Choices::of_variants(&self.variants),
        }
    }
}

/// A reference server running on 127.0.0.1; stops when dropped.
pub struct ReferenceServer {
    pub base_url: String,
    pub addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for ReferenceServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

impl ReferenceServer {
    /// Binds 127.0.0.1:`port` (0 = ephemeral) and serves on the current tokio runtime.
    pub async fn start(config: ReferenceConfig, port: u16) -> std::io::Result<ReferenceServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let wire = match config.conforming {
            Some(_) => config.choices().wire,
            None => config.wire.clone().with_variants(&config.variants),
        };
        let app = router(config);
        if wire.is_plain() {
            tokio::spawn(async move {
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        } else {
            // A front writes the answers in the shape (wire/front.rs says how).
            tokio::spawn(wire::serve(listener, app, wire, stopped));
        }
        Ok(ReferenceServer {
            base_url: format!("http://{addr}/v1"),
            addr,
            shutdown: Some(shutdown),
        })
    }
}

pub fn router(config: ReferenceConfig) -> Router {
    let choices = config.choices();
    let state: AppState = Arc::new(Shared {
        choices,
        config,
        answered: std::sync::atomic::AtomicBool::new(false),
        store: Mutex::new(Store::default()),
        creates_in_flight: std::sync::atomic::AtomicUsize::new(0),
        creates_arrived: std::sync::atomic::AtomicUsize::new(0),
        opened: std::time::Instant::now(),
        others_stored: std::sync::atomic::AtomicU64::new(0),
        requests_seen: std::sync::atomic::AtomicU64::new(0),
        throttle_window: Mutex::new((std::time::Instant::now(), 0)),
    });
    match state.choices.stored {
        Stored::Empty => {}
        Stored::Few(count) => state.others_left(count),
        Stored::Crowded => state.crowd(),
        Stored::Plain(count) => state.plain(count),
    }
    Router::new()
        .route("/v1/pets", get(list_pets).post(create_pet))
        .route("/v1/pets/{pet_id}", get(get_pet))
        .route("/v1/store/orders", get(list_store_orders))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            client_headers,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            trailing_slash,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), delay))
        .with_state(state)
}
