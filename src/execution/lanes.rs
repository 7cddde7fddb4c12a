//! The connections of a run, and how many of them may be busy at once.
//!
//! A *lane* is a reqwest client of its own, used by one request at a time, so it holds at most
//! one connection (HTTP/1.1 keep-alive, or one HTTP/2 connection). The connections open to the
//! target are then at most the lanes, and the lanes never outnumber the *level*: a shared pool
//! cannot promise that, since hyper races a new connect against every checkout and keeps the
//! spare connections idle, which is how a run came to hold 130 connections to a server that
//! accepts 100 (issue 21).
//!
//! The level adapts as TCP's congestion window does: it starts at [`START`], grows by one per
//! answer (slow start) until the first sign of overload, then by one per level's worth of
//! answers (additive increase); a connect that stalls, fails or times out, an exchange that
//! times out, a 503 without Retry-After, or throttling (429) halves it (multiplicative decrease), once per
//! [`COOLDOWN`] however many requests the same overload caught. A lane is *proven* once an
//! answer came on it, and the level stays within twice the proven lanes (or [`PROBES`] past
//! them): a stall takes a second to tell from a slow answer, and in that second at most that
//! many connections can be caught in a server's backlog. A stall on a fresh connection also caps the level at the
//! lanes proven then: that is the connections the server holds, and probing past it again
//! would cost a stall every time. `--concurrency` is the ceiling.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, SemaphorePermit};

mod connector;

use connector::{CountConnects, KeptConnections, LaneConnector};
pub use connector::{CountConnectsHandle, SPARE_GRACE};

/// The level a run starts at: what the run's first round trips need (the quiet-store rules
/// send about 60 creates at once, then their listings with the reads beside them, about 100),
/// so that a remote target is not paid a round trip per doubling. It costs a server that
/// holds fewer connections nothing it would not pay anyway: the level would grow past that
/// server's cap within a few round trips, and the one stall that shows the cap (a second)
/// comes earlier instead. A near target's first answers bring it down to [`NEAR_LEVEL`].
pub const START: usize = 128;

/// Lanes past the proven ones that the level may open: the connections at most that a server
/// which stopped accepting leaves waiting at once.
pub const PROBES: usize = 4;

/// An answer slower than the fastest by more than this (and more than twice it) was queued at
/// the server: the level does not grow on it (see [`Lanes::answered`]).
pub const QUEUEING: std::time::Duration = std::time::Duration::from_millis(100);

/// A target whose fastest answer comes within this is near: the CPU, not the round trips, is
/// the bound, and more requests in flight only hold more connections and buffers.
pub const NEAR: std::time::Duration = std::time::Duration::from_millis(10);

/// The level at most against a near target (bursts may still take more, as they need).
pub const NEAR_LEVEL: usize = 64;

/// How often a request behind the chains looks for a free place even without being told of
/// one (a place given back by a wait that was called off tells no one).
const PLAIN_RECHECK: std::time::Duration = std::time::Duration::from_millis(20);

/// Which requests take a free place first when the level is full. Every round trip a request
/// of a long chain of dependent requests waits in line lengthens the chain, so the run; a
/// request that ends its rule's chain costs the run nothing by waiting while places are busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// On a long chain: in line before every plain request, in arrival order.
    Chain,
    /// Takes a place no chain request waits for, in arrival order.
    Plain,
}

/// How often a burst gathering its lanes looks at the level again.
const BURST_RECHECK: std::time::Duration = std::time::Duration::from_millis(10);

/// Overload signals within this time of a cut are the same overload: one cut, as TCP cuts
/// once per window.
pub const COOLDOWN: std::time::Duration = std::time::Duration::from_secs(1);

/// One lane: its own client (so its own one-connection pool), and what its connector sees.
pub struct Lane {
    pub(super) http: reqwest::Client,
    shared: Arc<LaneConnector>,
    /// An answer came on this lane: the server took its connection.
    proven: std::sync::atomic::AtomicBool,
}

/// Why the level drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overload {
    /// A request on a fresh connection got no answer in time: the server did not take the
    /// connection (a full worker pool, a connection cap leaving it in the listen backlog).
    StalledConnect,
    /// The connect was refused or timed out.
    ConnectFailed,
    /// The exchange timed out.
    TimedOut,
    /// 503 without Retry-After: the server says it is overloaded, without saying for how long.
    Unavailable,
    /// 429, or 503 with Retry-After: fewer requests in flight, besides waiting it out.
    Throttled,
}

/// The level and what it has been through.
struct Level {
    /// Requests allowed in flight now: permits in use plus permits free, less `debt`.
    level: usize,
    /// `--concurrency`.
    ceiling: usize,
    /// Below the connections that were open when one stalled; the ceiling until then.
    limit: usize,
    /// No overload seen yet: grow by one per answer.
    slow_start: bool,
    /// Answers since the last additive step.
    credit: usize,
    /// Permits to take out of circulation as they come back (after a decrease).
    debt: usize,
    reached: usize,
    backoffs: u64,
    last_cut: Option<std::time::Instant>,
}

/// What the connections of a run came to, for the report and the terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConnectionTally {
    /// Connections opened to the target over the run.
    pub opened: u64,
    /// The most lanes (so connections) that were open at once.
    pub most_open: u64,
    /// `--concurrency`: the most requests in flight the user allowed.
    pub concurrency_ceiling: u64,
    /// The highest level the adaptive concurrency reached.
    pub concurrency_reached: u64,
    /// The level when the run ended.
    pub concurrency_final: u64,
    /// Times the level was cut for overload.
    pub backoffs: u64,
    /// Requests caught in the run's own overload and sent again (never judged).
    pub resent: u64,
}

impl ConnectionTally {
    /// One line for the terminal and the reports.
    pub fn describe(&self) -> String {
        let mut line = format!(
            "{} connections opened, at most {} open; concurrency reached {} of {}",
            self.opened, self.most_open, self.concurrency_reached, self.concurrency_ceiling
        );
        if self.backoffs > 0 {
            line.push_str(&format!(
                ", cut {} times for overload (ended at {}), {} requests sent again",
                self.backoffs, self.concurrency_final, self.resent
            ));
        }
        line
    }
}

/// The lanes of a run.
pub struct Lanes {
    build: Box<dyn Fn(CountConnectsHandle) -> reqwest::Client + Send + Sync>,
    idle: Mutex<Vec<Lane>>,
    permits: Semaphore,
    state: Mutex<Level>,
    live: AtomicUsize,
    most_live: AtomicUsize,
    /// Live lanes with an answer on them.
    proven: AtomicUsize,
    opened: Arc<AtomicU64>,
    resent: AtomicU64,
    /// The fastest answer so far, in ms: the round trip with nothing queued.
    fastest_ms: AtomicU64,
    /// The usual answer time, in µs: a moving average (an eighth of each new answer).
    usual_us: Arc<AtomicU64>,
    /// Whether this target's kept connections come back (see the connector).
    kept: Arc<KeptConnections>,
    /// Held by the burst gathering its lanes.
    gathering: tokio::sync::Mutex<()>,
    /// Told when a place may have come free: wakes a plain request waiting for one.
    freed: tokio::sync::Notify,
}

/// A lane taken for a request, with its place among those in flight; both go back on drop.
pub struct Checkout<'a> {
    lanes: &'a Lanes,
    lane: Option<Lane>,
    permit: Option<SemaphorePermit<'a>>,
    discard: bool,
}

impl Checkout<'_> {
    pub fn lane(&self) -> &Lane {
        self.lane
            .as_ref()
            .expect("a checkout holds its lane until dropped")
    }

    /// The lane is closed when given back (its connection stalled or failed), not reused.
    pub fn discard(&mut self) {
        self.discard = true;
    }
}

impl Drop for Checkout<'_> {
    fn drop(&mut self) {
        let (Some(lane), Some(permit)) = (self.lane.take(), self.permit.take()) else {
            return;
        };
        self.lanes.give_back(lane, permit, self.discard);
    }
}

impl Lanes {
    /// Lanes built by `build` (a client builder with the run's settings, given the layer that
    /// counts its connects), up to `ceiling` requests in flight.
    pub fn new(
        ceiling: usize,
        build: impl Fn(CountConnectsHandle) -> reqwest::Client + Send + Sync + 'static,
    ) -> Lanes {
        let ceiling = ceiling.max(1);
        let start = START.min(ceiling);
        Lanes {
            build: Box::new(build),
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(start),
            state: Mutex::new(Level {
                level: start,
                ceiling,
                limit: ceiling,
                slow_start: true,
                credit: 0,
                debt: 0,
                reached: start,
                backoffs: 0,
                last_cut: None,
            }),
            live: AtomicUsize::new(0),
            most_live: AtomicUsize::new(0),
            proven: AtomicUsize::new(0),
            opened: Arc::default(),
            resent: AtomicU64::new(0),
            fastest_ms: AtomicU64::new(u64::MAX),
            usual_us: Arc::default(),
            kept: Arc::default(),
            gathering: tokio::sync::Mutex::new(()),
            freed: tokio::sync::Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Level> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A lane and a place in flight, once the level has room and, for a plain request, no
    /// chain request (nor burst) waits for it; `Err` when the permits are closed (never, in
    /// practice).
    pub async fn checkout(&self, priority: Priority) -> Result<Checkout<'_>, String> {
        // The semaphore hands a place given back to the requests in its line (chain requests
        // and bursts) first: a place is free to take only when none waits there. A plain
        // request that has waited a usual answer's time joins the line: it may end a short
        // chain of its own, which would otherwise be left for after the long ones.
        let joins_line = tokio::time::Instant::now() + self.usual_answer();
        while priority == Priority::Plain && tokio::time::Instant::now() < joins_line {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            match self.permits.try_acquire() {
                Ok(permit) => return Ok(self.lane_for(permit)),
                Err(tokio::sync::TryAcquireError::Closed) => return Err("closed".into()),
                Err(tokio::sync::TryAcquireError::NoPermits) => {}
            }
            let _ = tokio::time::timeout_at(
                joins_line.min(tokio::time::Instant::now() + PLAIN_RECHECK),
                freed,
            )
            .await;
        }
        let permit = self.permits.acquire().await.map_err(|e| e.to_string())?;
        Ok(self.lane_for(permit))
    }

    /// The run's usual answer time (a moving average; none before the first answer).
    fn usual_answer(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.usual_us.load(Ordering::Relaxed))
    }

    /// `n` lanes for a burst sent at one moment, within the level: a burst is what a race is
    /// checked with, so while no overload has been seen it may raise the level up to the
    /// ceiling for itself (slow start would have got there). One burst gathers at a time, so
    /// that two never hold half the lanes each, waiting for the other's.
    pub async fn checkout_many(&self, n: usize) -> Result<Vec<Checkout<'_>>, String> {
        let _gathering = self.gathering.lock().await;
        let want = {
            let mut state = self.state();
            let room = if state.slow_start {
                state.ceiling.min(state.limit)
            } else {
                state.level
            };
            let want = n.clamp(1, room.max(1));
            if want > state.level {
                let grow = want - state.level;
                let repaid = grow.min(state.debt);
                state.debt -= repaid;
                self.permits.add_permits(grow - repaid);
                self.freed.notify_waiters();
                state.level = want;
                state.reached = state.reached.max(want);
            }
            want
        };
        let mut checkouts = Vec::with_capacity(want);
        // The permits are taken together, first in line: requests behind the burst wait for it
        // rather than take its lanes one by one. Looked at again now and then, since the level
        // may drop below what is asked while the burst waits.
        'gather: while checkouts.len() < want.min(self.level()) {
            let need = want.min(self.level()) - checkouts.len();
            let acquire = self
                .permits
                .acquire_many(u32::try_from(need).unwrap_or(u32::MAX));
            tokio::pin!(acquire);
            loop {
                tokio::select! {
                    permits = &mut acquire => {
                        let mut permits = permits.map_err(|e| e.to_string())?;
                        while let Some(one) = permits.split(1) {
                            checkouts.push(self.lane_for(one));
                        }
                        continue 'gather;
                    }
                    _ = tokio::time::sleep(BURST_RECHECK) => {
                        if self.level() < checkouts.len() + need {
                            // The places this wait held go back: a plain request may take one.
                            self.freed.notify_waiters();
                            continue 'gather;
                        }
                    }
                }
            }
        }
        Ok(checkouts)
    }

    fn lane_for<'a>(&'a self, permit: SemaphorePermit<'a>) -> Checkout<'a> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let lane = idle.unwrap_or_else(|| {
            let shared = Arc::new(LaneConnector {
                served: Some(tokio::sync::watch::channel(0).0),
                ..LaneConnector::default()
            });
            let handle = CountConnectsHandle(CountConnects {
                lane: Arc::clone(&shared),
                run: Arc::clone(&self.opened),
                usual_us: Arc::clone(&self.usual_us),
                kept: Arc::clone(&self.kept),
            });
            let live = self.live.fetch_add(1, Ordering::Relaxed) + 1;
            self.most_live.fetch_max(live, Ordering::Relaxed);
            Lane {
                http: (self.build)(handle),
                shared,
                proven: std::sync::atomic::AtomicBool::new(false),
            }
        });
        Checkout {
            lanes: self,
            lane: Some(lane),
            permit: Some(permit),
            discard: false,
        }
    }

    /// Closes a lane (and its connection).
    fn close(&self, lane: Lane) {
        self.live.fetch_sub(1, Ordering::Relaxed);
        if lane.proven.load(Ordering::Relaxed) {
            self.proven.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A lane back from a request: idle for the next one, or closed (with its connection)
    /// when the level has dropped below the lanes open.
    fn give_back(&self, lane: Lane, permit: SemaphorePermit<'_>, discard: bool) {
        let mut state = self.state();
        let permit = if state.debt > 0 {
            state.debt -= 1;
            permit.forget();
            None
        } else {
            Some(permit)
        };
        {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if discard {
                self.close(lane);
            } else if self.live.load(Ordering::Relaxed) > state.level
                && (!lane.proven.load(Ordering::Relaxed)
                    || self.proven.load(Ordering::Relaxed) > state.level)
            {
                // One lane too many. A proven one is kept while the proven are within the
                // level: the unproven go first as they come back, since the server may never
                // take them.
                self.close(lane);
            } else {
                idle.push(lane);
            }
        }
        drop(state);
        // The place goes back after the lane, so whoever takes it finds the lane idle.
        if let Some(permit) = permit {
            drop(permit);
            self.freed.notify_one();
        }
    }

    /// An answer came back on `lane` after `elapsed_ms`: the level grows while the target keeps
    /// up. An answer that waited in the server's queue (more than twice the fastest answer, and
    /// [`QUEUEING`] more) does not grow it: more in flight would only lengthen that queue, as
    /// delay-based congestion control (TCP Vegas) reads it. A server 50 ms away that answers at
    /// once lets the level reach the ceiling; a small worker pool holds it near what it serves.
    /// Only a success (`served`: a 2xx) counts as the fastest answer: a gateway may refuse a
    /// bad key at its edge, near the client, while the store itself is far.
    pub fn answered(&self, lane: &Lane, elapsed_ms: u64, served: bool) {
        // The wait for a connection that never came back is the client's, not the target's.
        let elapsed_ms = elapsed_ms.saturating_sub(lane.take_graced());
        if !lane.proven.swap(true, Ordering::Relaxed) {
            self.proven.fetch_add(1, Ordering::Relaxed);
        }
        let fastest = if served {
            self.fastest_ms
                .fetch_min(elapsed_ms, Ordering::Relaxed)
                .min(elapsed_ms)
        } else {
            self.fastest_ms.load(Ordering::Relaxed)
        };
        let _ = self
            .usual_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |usual| {
                Some(usual - usual / 8 + elapsed_ms.saturating_mul(1000) / 8)
            });
        let slack = u64::try_from(QUEUEING.as_millis()).unwrap_or(u64::MAX);
        let queued = elapsed_ms > fastest.saturating_mul(2).max(fastest.saturating_add(slack));
        let mut state = self.state();
        let proven = self.proven.load(Ordering::Relaxed);
        let near = fastest < u64::try_from(NEAR.as_millis()).unwrap_or(u64::MAX);
        if near && state.level > NEAR_LEVEL {
            // The start level is for a far target: a near one is held to the near level.
            self.lower(&mut state, NEAR_LEVEL);
        }
        let room = state.level < state.ceiling.min(state.limit)
            && state.level < (proven * 2).max(proven + PROBES)
            && !(near && state.level >= NEAR_LEVEL)
            && !queued;
        let grow = if state.slow_start {
            room
        } else {
            state.credit += 1;
            room && state.credit >= state.level
        };
        if grow {
            state.credit = 0;
            if state.debt > 0 {
                state.debt -= 1; // a permit still out stays in circulation instead
            } else {
                self.permits.add_permits(1);
                self.freed.notify_one();
            }
            state.level += 1;
            state.reached = state.reached.max(state.level);
        }
    }

    /// The target showed overload: halve the level (not below one); a stalled connect also caps
    /// it below the connections that were open.
    pub fn overloaded(&self, why: Overload) {
        let mut state = self.state();
        let now = std::time::Instant::now();
        if state
            .last_cut
            .is_some_and(|cut| now.duration_since(cut) < COOLDOWN)
        {
            return; // the same overload, already cut for
        }
        state.last_cut = Some(now);
        state.slow_start = false;
        state.credit = 0;
        state.backoffs += 1;
        if why == Overload::StalledConnect {
            let bearable = self.proven.load(Ordering::Relaxed).max(1);
            state.limit = state.limit.min(bearable);
        }
        let target = (state.level / 2).max(1).min(state.limit);
        self.lower(&mut state, target);
    }

    /// Lowers the level to `target`: free places go out of circulation now, the rest as they
    /// come back; idle lanes past the level are closed now, so that a server can take the
    /// connections waiting in its backlog.
    fn lower(&self, state: &mut Level, target: usize) {
        let cut = state.level.saturating_sub(target);
        state.level -= cut;
        let mut owed = cut;
        while owed > 0 {
            match self.permits.try_acquire() {
                Ok(permit) => {
                    permit.forget();
                    owed -= 1;
                }
                Err(_) => break,
            }
        }
        state.debt += owed;
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.sort_by_key(|lane| lane.proven.load(Ordering::Relaxed));
        while self.live.load(Ordering::Relaxed) > state.level && !idle.is_empty() {
            let lane = idle.remove(0); // unproven first
            self.close(lane);
        }
    }

    /// A request caught in the run's own overload is being sent again.
    pub fn resending(&self) {
        self.resent.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests allowed in flight now.
    pub fn level(&self) -> usize {
        self.state().level
    }

    /// The fastest success so far: the round trip with nothing queued (`Duration::MAX` before
    /// any: far, until shown near).
    pub fn fastest_answer(&self) -> std::time::Duration {
        match self.fastest_ms.load(Ordering::Relaxed) {
            u64::MAX => std::time::Duration::MAX,
            ms => std::time::Duration::from_millis(ms),
        }
    }

    /// Lanes (so connections) open now.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    pub fn tally(&self) -> ConnectionTally {
        let state = self.state();
        ConnectionTally {
            opened: self.opened.load(Ordering::Relaxed),
            most_open: self.most_live.load(Ordering::Relaxed) as u64,
            concurrency_ceiling: state.ceiling as u64,
            concurrency_reached: state.reached as u64,
            concurrency_final: state.level as u64,
            backoffs: state.backoffs,
            resent: self.resent.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests;
