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
//! answer (slow start: one that came back while the level stood at the bound below counts once
//! more lanes are proven) until the first sign of overload, then by one per level's worth of
//! answers (additive increase); a connect that stalls, fails or times out, an exchange that
//! times out, a 503 without Retry-After, or throttling (429) halves it (multiplicative decrease), once per
//! [`COOLDOWN`] however many requests the same overload caught. A lane is *proven* once an
//! answer came on it, and the level stays within twice the proven lanes (or [`PROBES`] past
//! them, [`START`] until a first overload, as at the start): a stall takes a second to tell
//! from a slow answer, and in that second at most that many connections can be caught in a
//! server's backlog. A stall on a fresh connection also caps the level at the
//! lanes proven then: that is the connections the server holds, and probing past it again
//! would cost a stall every time. `--concurrency` is the ceiling.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

mod checkout;
mod connector;
mod give_back;

pub use checkout::{Checkout, Reuse, SAFE_IDLE};
pub use connector::{CountConnectsHandle, SPARE_GRACE};
use connector::{KeptConnections, LaneConnector};

/// The level a run starts at: few connections, as a polite client opens to a server it does
/// not know (a Python `http.server` with a listen backlog of 5, a few workers behind a
/// connection limit), until answers show more are welcome. Slow start doubles it each round
/// trip while answers stay as fast as the first: a remote target pays three round trips to
/// reach the 64 the run's first phase can use; a server that bears less never sees 128
/// connects at once. A near target's level stops at [`NEAR_LEVEL`].
pub const START: usize = 8;

/// How long a cap on the level, from a stalled or refused connection, holds.
pub const LIMIT_HOLD: std::time::Duration = std::time::Duration::from_secs(10);

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

/// Which requests take a free place first when the level is full. Every round trip a request
/// of a long chain of dependent requests waits in line lengthens the chain, so the run; a
/// request that ends its rule's chain costs the run nothing by waiting while places are busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// A fixture other rules wait on: in line as a chain request, and its creates take the
    /// first lane that comes back, before the other creates waiting.
    First,
    /// On a long chain: in line before every plain request, in arrival order; its creates take
    /// a lane that comes back before a plain request's creates.
    Chain,
    /// Takes a place no chain request waits for, in arrival order.
    Plain,
}

/// Places past the level a fixture's requests may take when the level is full, rather than
/// wait in line behind every chain request: the run has two fixtures of one request each (a
/// pet to read, the marker's baseline), on which most rules wait. A create among them still
/// goes only on a lane the target has served (see [`Reuse::Unrepeatable`]), and none goes
/// past `--concurrency`.
pub const FIRST_PLACES: usize = 2;

/// Overload signals within this time of a cut are the same overload: one cut, as TCP cuts
/// once per window.
pub const COOLDOWN: std::time::Duration = std::time::Duration::from_secs(1);

/// One lane: its own client (so its own one-connection pool), and what its connector sees.
pub struct Lane {
    pub(super) http: reqwest::Client,
    shared: Arc<LaneConnector>,
    /// An answer came on this lane: the server took its connection.
    proven: std::sync::atomic::AtomicBool,
    /// When it was last given back, idle: when its last answer was read to its end, where
    /// one was (the server's idle clock starts there, not once the answer was judged).
    idle_since: Option<std::time::Instant>,
    /// When the answer on it now was read to its end.
    read_at: std::sync::Mutex<Option<std::time::Instant>>,
    /// How long it had been idle when taken for its current request.
    idle_before: std::time::Duration,
}

/// Why the level drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overload {
    /// A request on a fresh connection got no answer in time: the server did not take the
    /// connection (a full worker pool, a connection cap leaving it in the listen backlog).
    StalledConnect,
    /// The connect was refused, reset or timed out while the target answered on other
    /// connections: a cap on connections, as a stalled connect shows it (the level is capped
    /// at the lanes proven then).
    ConnectFailed,
    /// The exchange timed out.
    TimedOut,
    /// 503 without Retry-After: the server says it is overloaded, without saying for how long.
    Unavailable,
    /// 429, or 503 with Retry-After: fewer requests in flight, besides waiting it out.
    Throttled,
    /// A fresh connection closed or reset before any answer while others were answered: a
    /// server that takes only so many connections (a worker pool, a connection cap) and
    /// drops the rest. Caps the level at the lanes proven then, as a stalled connect does.
    Refused,
}

/// The level and what it has been through.
struct Level {
    /// Requests allowed in flight now: permits in use plus permits free, less `debt`.
    level: usize,
    /// `--concurrency`.
    ceiling: usize,
    /// Below the connections that were open when one stalled; the ceiling until then.
    limit: usize,
    /// When `limit` goes back to the ceiling: a server's cap seen once may have been a moment
    /// of its own (a burst of connects that overflowed its backlog), so the level probes past
    /// it again, one stall per [`LIMIT_HOLD`] at most.
    limit_until: Option<std::time::Instant>,
    /// No overload seen yet: grow by one per answer.
    slow_start: bool,
    /// Answers since the last additive step.
    credit: usize,
    /// Permits to take out of circulation as they come back (after a decrease).
    debt: usize,
    /// Proven lanes kept out of the idle ones, each with its place kept out of the line, for
    /// the requests that may not be sent twice waiting for one (see `Lanes::give_back`).
    handed: Vec<Lane>,
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
    /// Connections the target closed or reset before any answer to the request on them.
    #[serde(default)]
    pub resets: u64,
    /// Pauses the run took when nothing was answered for a while, before sending again.
    #[serde(default)]
    pub pauses: u64,
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
        if self.resets > 0 {
            line.push_str(&format!(
                "; {} connections closed or reset before an answer",
                self.resets
            ));
        }
        if self.pauses > 0 {
            line.push_str(&format!(
                "; {} pauses while the target answered nothing",
                self.pauses
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
    /// The most lanes with an answer on them open at once: connections the target has shown
    /// it takes together (see [`Reuse::Unrepeatable`]).
    most_proven: AtomicUsize,
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
    /// Every request holds it shared; one sent alone holds it whole: the lowest level there is,
    /// where an answer of overload is the store's own (see `Client::send_async`).
    turns: Arc<tokio::sync::RwLock<()>>,
    /// An answer came on a kept connection: the target keeps them (see [`Lanes::reuse_for`]).
    kept_answered: std::sync::atomic::AtomicBool,
    /// Requests that may not be sent twice waiting for a lane they may take (see
    /// `Lanes::lane_for`).
    unrepeatable_waiting: AtomicUsize,
    /// Chain and fixture requests waiting in the semaphore's line for a place: while any do,
    /// a plain request stays out of the line (see `Lanes::place`).
    chain_in_line: AtomicUsize,
    /// Held by the one plain request in the line for places (see [`Lanes::place`]).
    plain_in_line: tokio::sync::Mutex<()>,
    /// Creates waiting for a lane, by [`Priority`] (a fixture's, a chain's, a plain one), and
    /// what wakes each: a lane back goes to the first that has one waiting.
    waiting_by: [AtomicUsize; 3],
    back_by: [tokio::sync::Notify; 3],
    /// Places past the level for [`Priority::First`] requests when the level is full (see
    /// [`FIRST_PLACES`]).
    first_places: Semaphore,
    /// The shortest idle time after which a kept connection was found closed by the target
    /// (its keep-alive timeout, or less), in ms; `u64::MAX` until one was.
    idle_close_ms: AtomicU64,
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
                limit_until: None,
                slow_start: true,
                credit: 0,
                debt: 0,
                handed: Vec::new(),
                reached: start,
                backoffs: 0,
                last_cut: None,
            }),
            live: AtomicUsize::new(0),
            most_live: AtomicUsize::new(0),
            proven: AtomicUsize::new(0),
            most_proven: AtomicUsize::new(0),
            opened: Arc::default(),
            resent: AtomicU64::new(0),
            fastest_ms: AtomicU64::new(u64::MAX),
            usual_us: Arc::default(),
            kept: Arc::default(),
            gathering: tokio::sync::Mutex::new(()),
            freed: tokio::sync::Notify::new(),
            turns: Arc::default(),
            idle_close_ms: AtomicU64::new(u64::MAX),
            unrepeatable_waiting: AtomicUsize::new(0),
            chain_in_line: AtomicUsize::new(0),
            plain_in_line: tokio::sync::Mutex::new(()),
            waiting_by: Default::default(),
            back_by: Default::default(),
            first_places: Semaphore::new(FIRST_PLACES),
            kept_answered: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Level> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
        let graced = lane.take_graced();
        let elapsed_ms = elapsed_ms.saturating_sub(graced);
        if !lane.proven.swap(true, Ordering::Relaxed) {
            let proven = self.proven.fetch_add(1, Ordering::Relaxed) + 1;
            if self.most_proven.fetch_max(proven, Ordering::Relaxed) < proven {
                self.lane_came_back();
            }
        }
        // An answer that waited for a connection says nothing of how near the target is: what
        // is left of its time once the wait is taken off may be far less than a round trip
        // (the waits of a lane add up), and one such reading held a target 50 ms away to the
        // near level for the rest of the run (1 run in 10 to 40 took twice as long).
        let fastest = if served && graced == 0 {
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
        if state
            .limit_until
            .is_some_and(|until| std::time::Instant::now() >= until)
        {
            state.limit = state.ceiling;
            state.limit_until = None;
        }
        // Until a first overload, the run may hold as many lanes past the proven ones as it
        // opened at its start: held to `PROBES` past them, a preflight answered on fewer lanes
        // than `START` left the level there for a round trip more at 50 ms.
        let unproven = if state.backoffs == 0 { START } else { PROBES };
        let proven_bound = (proven * 2).max(proven + unproven);
        let mut bound = state.ceiling.min(state.limit);
        if near {
            bound = bound.min(NEAR_LEVEL);
        }
        let room = state.level < bound && !queued;
        let grow = if state.slow_start {
            // One place per answer, within twice the proven lanes. An answer that came while
            // the level stood at that bound counts once more lanes are proven (a level's worth
            // at most): answers on kept connections coming back before the fresh ones held
            // the doubling back (14 places, then 22 and not 28, at 50 ms).
            if room {
                let wanted = 1 + state.credit;
                let grow = wanted.min(proven_bound.min(bound).saturating_sub(state.level));
                state.credit = (wanted - grow).min(state.level);
                grow
            } else {
                0
            }
        } else {
            state.credit += 1;
            let step = room && state.level < proven_bound && state.credit >= state.level;
            if step {
                state.credit = 0;
            }
            usize::from(step)
        };
        for _ in 0..grow {
            if state.debt > 0 {
                state.debt -= 1; // a permit still out stays in circulation instead
            } else {
                self.permits.add_permits(1);
                self.freed.notify_one();
            }
            state.level += 1;
        }
        state.reached = state.reached.max(state.level);
    }

    /// A throttling answer came back on `lane` (429, or 503 with Retry-After): the target
    /// asks for fewer requests, so the level is cut and nothing grows it. Counted as an
    /// answer, it would win back within the cool-down what the cut took (a store throttling
    /// every request left the level where it had climbed to).
    pub fn throttled(&self, lane: &Lane) {
        let _ = lane.take_graced();
        self.overloaded(Overload::Throttled);
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
        if matches!(
            why,
            Overload::StalledConnect | Overload::Refused | Overload::ConnectFailed
        ) {
            let bearable = self.proven.load(Ordering::Relaxed).max(1);
            state.limit = state.limit.min(bearable);
            state.limit_until = Some(now + LIMIT_HOLD);
        }
        let target = (state.level / 2).max(1).min(state.limit);
        self.lower(&mut state, target);
    }

    /// The level at its lowest, one request in flight, to grow again from the answers as it
    /// does at the start (as TCP after a retransmission timeout): the target answered nothing
    /// for a while.
    pub fn lowest(&self) {
        let mut state = self.state();
        state.slow_start = true;
        state.credit = 0;
        state.backoffs += 1;
        state.last_cut = Some(std::time::Instant::now());
        self.lower(&mut state, 1);
    }

    /// Lowers the level to `target`: free places go out of circulation now, the rest as they
    /// come back; idle lanes past the level are closed now, so that a server can take the
    /// connections waiting in its backlog.
    fn lower(&self, state: &mut Level, target: usize) {
        let cut = state.level.saturating_sub(target);
        state.level -= cut;
        // The lanes handed over go back idle, their places first to what the cut takes.
        self.hand_back_all(state);
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

    /// `--concurrency 1`: one request at a time, in the order asked.
    pub fn one_at_a_time(&self) -> bool {
        self.state().ceiling == 1
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
            resets: 0,
            pauses: 0,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod line_tests;

#[cfg(test)]
mod burst_tests;

#[cfg(test)]
mod growth_tests;
