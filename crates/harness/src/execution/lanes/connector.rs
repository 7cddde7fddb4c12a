//! A lane's connector layer: it counts the connects of the lane and of the run, and holds
//! back the spare connect hyper races against a connection on its way back to the pool.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Lane;

/// What a lane and its connector layer share.
#[derive(Default)]
pub(super) struct LaneConnector {
    /// Connects started on this lane.
    pub(super) connects: AtomicU64,
    /// The lane's last exchange left its connection open (an answer without `Connection:
    /// close`): a connect now is most likely hyper's spare, raced against that connection's
    /// way back to the pool.
    pub(super) connected: std::sync::atomic::AtomicBool,
    /// Bumped when a request of the lane gets its answer.
    pub(super) served: Option<tokio::sync::watch::Sender<u64>>,
    /// Time a connect of this lane waited for a connection that never came back (hyper
    /// dropped it: the server closed it, or its answer's framing left bytes over), in ms since
    /// the lane's last answer. Not the target's time: the answer's time leaves it out, or the
    /// wait, which grows with the usual answer time, would feed on itself.
    pub(super) graced_ms: AtomicU64,
}

/// How long a connect waits, at least, when the lane's own connection is on its way back to
/// the pool, before it is made: if the request is served on that connection first, the spare
/// connect is dropped. hyper's pool starts a connect whenever a checkout finds no idle
/// connection, even one that is microseconds from being returned, and keeps the spare: with
/// one request at a time on a lane, that doubled the connections open. The wait grows with the
/// run's usual answer time (three of them): the request must be answered on the returning
/// connection within it, which takes a round trip to a remote target and longer on a loaded
/// machine.
pub const SPARE_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

impl Lane {
    /// Connects this lane has started so far; a request during which it moved went out on a
    /// fresh connection.
    pub fn connects(&self) -> u64 {
        self.shared.connects.load(Ordering::Relaxed)
    }

    /// A request of this lane got its answer (`keep_alive`: its connection stays open).
    pub fn served(&self, keep_alive: bool) {
        self.shared.connected.store(keep_alive, Ordering::Relaxed);
        if let Some(served) = &self.shared.served {
            served.send_modify(|count| *count += 1);
        }
    }

    /// The time this lane's connects waited since its last answer for a connection that never
    /// came back (see [`LaneConnector::graced_ms`]); counted once.
    pub(super) fn take_graced(&self) -> u64 {
        self.shared.graced_ms.swap(0, Ordering::Relaxed)
    }

    /// The answer on this lane was read to its end: the connection is idle from here for the
    /// server, however long the answer takes to judge (a parse may wait its turn).
    pub fn read_done(&self) {
        *self.read_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
    }

    /// How long the lane had been idle when taken for its current request.
    pub fn idle_before(&self) -> std::time::Duration {
        self.idle_before
    }

    /// A request of this lane got no answer: its connection is gone.
    pub fn disconnected(&self) {
        self.shared.connected.store(false, Ordering::Relaxed);
    }
}

/// Kept connections lost before the grace is given up, for each one that came back: a target
/// whose kept connections never come back (it closes each after its answer without saying
/// so, or hyper drops each because the answer's framing left bytes over) would otherwise cost
/// every request the grace, and a chain of them seconds.
const LOST_PER_RETURNED: u64 = 8;

/// What the run's connects have seen of connections on their way back to the pool.
#[derive(Default)]
pub(super) struct KeptConnections {
    /// A spare was dropped: the lane's own connection came back and served the request.
    returned: AtomicU64,
    /// The grace ran out: the lane's connection never came back.
    lost: AtomicU64,
}

impl KeptConnections {
    /// Whether a connect still waits for the lane's own connection: not once the kept
    /// connections of this target are mostly lost.
    fn worth_waiting(&self) -> bool {
        let returned = self.returned.load(Ordering::Relaxed);
        self.lost.load(Ordering::Relaxed) <= LOST_PER_RETURNED.saturating_mul(returned + 1)
    }
}

/// Counts the connects of one lane, and of the whole run, as a connector layer sees them, and
/// holds back a spare connect (see [`SPARE_GRACE`]).
#[derive(Clone)]
pub(super) struct CountConnects {
    pub(super) lane: Arc<LaneConnector>,
    pub(super) run: Arc<AtomicU64>,
    /// The run's usual answer time, in µs (see [`super::Lanes::answered`]).
    pub(super) usual_us: Arc<AtomicU64>,
    pub(super) kept: Arc<KeptConnections>,
}

impl<S> tower_layer::Layer<S> for CountConnects {
    type Service = Counted<S>;
    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            counts: self.clone(),
        }
    }
}

#[derive(Clone)]
pub(super) struct Counted<S> {
    inner: S,
    counts: CountConnects,
}

impl<S, R> tower_service::Service<R> for Counted<S>
where
    S: tower_service::Service<R, Error = Box<dyn std::error::Error + Send + Sync>>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let lane = Arc::clone(&self.counts.lane);
        let run = Arc::clone(&self.counts.run);
        let usual = std::time::Duration::from_micros(self.counts.usual_us.load(Ordering::Relaxed));
        let grace = SPARE_GRACE.max(usual.saturating_mul(3));
        // Subscribed now: an answer from here on cancels a spare.
        let served = lane.served.as_ref().map(|served| served.subscribe());
        let connect = self.inner.call(request);
        let kept = Arc::clone(&self.counts.kept);
        Box::pin(async move {
            if let Some(mut served) = served
                && lane.connected.load(Ordering::Relaxed)
                && kept.worth_waiting()
            {
                let waiting = std::time::Instant::now();
                match tokio::time::timeout(grace, served.changed()).await {
                    Ok(Ok(())) => {
                        kept.returned.fetch_add(1, Ordering::Relaxed);
                        return Err("a spare connection: the lane's own was reused".into());
                    }
                    _ => {
                        kept.lost.fetch_add(1, Ordering::Relaxed);
                        let waited = waiting.elapsed().as_millis();
                        lane.graced_ms.fetch_add(
                            u64::try_from(waited).unwrap_or(u64::MAX),
                            Ordering::Relaxed,
                        );
                    }
                }
            }
            lane.connects.fetch_add(1, Ordering::Relaxed);
            run.fetch_add(1, Ordering::Relaxed);
            connect.await
        })
    }
}

/// What a lane's client needs to count its connects (opaque outside this module).
pub struct CountConnectsHandle(pub(super) CountConnects);

impl CountConnectsHandle {
    /// Counters of no lane: for a client built only to check the settings.
    pub fn detached() -> CountConnectsHandle {
        CountConnectsHandle(CountConnects {
            lane: Arc::default(),
            run: Arc::default(),
            usual_us: Arc::default(),
            kept: Arc::default(),
        })
    }

    /// Adds the counting layer to a lane's client.
    pub fn install(self, builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
        builder.connector_layer(self.0)
    }
}
