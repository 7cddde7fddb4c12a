//! Taking a lane for a request: which idle lane it may take, a place in flight in line as its
//! priority says, a burst's lanes together (`gather`), a request sent alone (giving it back:
//! `give_back`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::SemaphorePermit;

use super::connector::{CountConnects, LaneConnector};
use super::{CountConnectsHandle, Lane, Lanes, Priority};

mod gather;

/// How often a request behind the chains looks for a free place even without being told of
/// one (a place given back by a wait that was called off tells no one).
const PLAIN_RECHECK: std::time::Duration = std::time::Duration::from_millis(20);

/// How often a burst gathering its lanes looks at the level again.
const BURST_RECHECK: std::time::Duration = std::time::Duration::from_millis(10);

/// Which idle lane a request may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Any, the last given back first.
    Any,
    /// One idle for less than this: a connection idle longer may be one the server is closing.
    IdleUnder(std::time::Duration),
    /// None: a lane of its own, on a fresh connection.
    Never,
    /// For a request that may not be sent twice (createPet): an idle lane only as `IdleUnder`
    /// says (none at all with `None`), and a fresh connection only within the connections the
    /// target has served at once ([`super::START`] before any): a server that takes so many
    /// and resets the rest unread (a worker pool's cap) would take the request with it, and
    /// no one could say whether it was applied. Past that, the request waits for a lane to
    /// come back (a probe past the cap is left to the requests that may be sent again), at
    /// most [`FRESH_WAIT`].
    Unrepeatable(Option<std::time::Duration>),
}

/// The longest a request that may not be sent twice waits for a lane it may take before it
/// opens a connection past those the target has served at once.
pub const FRESH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The longest a connection may have been idle for a request that may not be sent twice
/// (createPet) to go on it, until the target shows how long it keeps them: common servers
/// close idle connections after 2 to 75 seconds, a hand-written one sooner, and one closing
/// just as the request is written loses it with no way to tell whether it was applied. A run's
/// lanes come back within a round trip or two: few are idle this long.
pub const SAFE_IDLE: std::time::Duration = std::time::Duration::from_millis(250);

/// Where a create waiting for a lane stands among the others: a fixture's first, then a chain
/// request's (a quiet-store rule's, or a long chain's), then a plain one's.
fn tier(priority: Priority) -> usize {
    match priority {
        Priority::First => 0,
        Priority::Chain => 1,
        Priority::Plain => PLAIN_TIER,
    }
}

const PLAIN_TIER: usize = 2;

/// A request that may not be sent twice waiting for a lane it may take, counted while it waits;
/// once it no longer waits, the lanes handed over for more than wait go back (`lanes`).
struct Waiting<'a>(&'a AtomicUsize, Option<&'a Lanes>);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize, lanes: Option<&'a Lanes>) -> Waiting<'a> {
        count.fetch_add(1, Ordering::Relaxed);
        Waiting(count, lanes)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
        if let Some(lanes) = self.1 {
            lanes.release_unclaimed();
        }
    }
}

/// A lane taken for a request, with its place among those in flight; both go back on drop.
pub struct Checkout<'a> {
    lanes: &'a Lanes,
    lane: Option<Lane>,
    /// `None`: the place came handed over with the lane (see `Lanes::give_back`).
    permit: Option<SemaphorePermit<'a>>,
    /// The place is one of the [`super::FIRST_PLACES`], past the level.
    past_level: bool,
    discard: bool,
    /// Held while the request is in flight (dropped after the lane and the place go back).
    _turn: Turn,
}

/// Whether a request goes beside others (the lock shared) or alone (held whole; see
/// [`Lanes::checkout_alone`]).
struct Turn {
    _beside: Option<Arc<tokio::sync::OwnedRwLockReadGuard<()>>>,
    _alone: Option<tokio::sync::OwnedRwLockWriteGuard<()>>,
}

impl Turn {
    fn beside(shared: Arc<tokio::sync::OwnedRwLockReadGuard<()>>) -> Turn {
        Turn {
            _beside: Some(shared),
            _alone: None,
        }
    }
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
        let Some(lane) = self.lane.take() else {
            return;
        };
        // No permit: the place came handed over with the lane, and goes back with it.
        self.lanes
            .give_back(lane, self.permit.take(), self.discard, self.past_level);
    }
}

impl Lanes {
    /// A lane and a place in flight, once the level has room and, for a plain request, no
    /// chain request (nor burst) waits for it; `Err` when the permits are closed (never, in
    /// practice).
    pub async fn checkout(&self, priority: Priority) -> Result<Checkout<'_>, String> {
        self.checkout_reusing(priority, Reuse::Any).await
    }

    /// [`Lanes::checkout`], taking an idle lane only as `reuse` allows.
    pub async fn checkout_reusing(
        &self,
        priority: Priority,
        reuse: Reuse,
    ) -> Result<Checkout<'_>, String> {
        let turn = Turn::beside(Arc::new(Arc::clone(&self.turns).read_owned().await));
        self.checkout_in(priority, turn, reuse).await
    }

    /// What idle lane a request may take: `repeatable` when sending it twice cannot repeat
    /// its effect (a GET). Once the target has closed a kept connection, none idle half as
    /// long is taken; before that a request that is not repeatable takes none idle past
    /// [`SAFE_IDLE`], and none at all until a kept connection has been answered on (a server
    /// may close each connection after its answer without saying so).
    pub fn reuse_for(&self, repeatable: bool) -> Reuse {
        // At `--concurrency`'s ceiling a fresh lane would be one connection too many while the
        // one it replaces closes: a kept one is taken then.
        let below_ceiling = self.live.load(Ordering::Relaxed) < self.state().ceiling;
        if !repeatable && !self.kept_answered.load(Ordering::Relaxed) && below_ceiling {
            return Reuse::Unrepeatable(None);
        }
        let learned = match self.idle_close_ms.load(Ordering::Relaxed) {
            u64::MAX => None,
            ms => Some(std::time::Duration::from_millis(ms / 2)),
        };
        match (repeatable, learned) {
            (true, None) => Reuse::Any,
            (true, Some(learned)) => Reuse::IdleUnder(learned),
            (false, learned) => {
                Reuse::Unrepeatable(Some(learned.map_or(SAFE_IDLE, |l| l.min(SAFE_IDLE))))
            }
        }
    }

    /// An answer came on a kept connection.
    pub fn kept_answered(&self) {
        self.kept_answered.store(true, Ordering::Relaxed);
    }

    /// The target closed a kept connection that had been idle this long: it keeps them no
    /// longer (see [`Lanes::reuse_for`]).
    pub fn closed_after_idle(&self, idle: std::time::Duration) {
        let ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX - 1);
        self.idle_close_ms.fetch_min(ms, Ordering::Relaxed);
    }

    /// A lane and a place once no other request is in flight, and none starts until this one is
    /// done: a request sent alone, on a fresh connection, with every idle one closed (a server
    /// that takes only so many connections counts the idle ones too).
    pub async fn checkout_alone(&self) -> Result<Checkout<'_>, String> {
        let turn = Turn {
            _beside: None,
            _alone: Some(Arc::clone(&self.turns).write_owned().await),
        };
        let permit = self.permits.acquire().await.map_err(|e| e.to_string())?;
        self.release_unclaimed_all();
        let idle: Vec<Lane> =
            std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        for lane in idle {
            self.close(lane);
        }
        Ok(self.lane_for(permit, turn, Reuse::Never))
    }

    async fn checkout_in(
        &self,
        priority: Priority,
        turn: Turn,
        reuse: Reuse,
    ) -> Result<Checkout<'_>, String> {
        if !matches!(reuse, Reuse::Unrepeatable(_)) {
            let (permit, past_level) = self.place_for(priority).await?;
            let mut checkout = self.lane_for(permit, turn, reuse);
            checkout.past_level = past_level;
            return Ok(checkout);
        }
        let opens_anyway = tokio::time::Instant::now() + FRESH_WAIT;
        let tier = tier(priority);
        let mut waiting = None;
        loop {
            // Looked at again on each turn: a create that began waiting before the target kept
            // a connection takes kept ones once it has (handed over, or idle), and never opens
            // a fresh connection in the place of an idle one after that.
            let reuse = match reuse {
                Reuse::Unrepeatable(None) => self.reuse_for(false),
                reuse => reuse,
            };
            // A lane handed over with its place goes as it is, on its kept connection: never
            // closed for a fresh one in its place, which a server counting its connections
            // may not yet have seen closed (a create reset unread behind a cap of 32).
            if let Reuse::Unrepeatable(Some(most)) = reuse
                && let Some(lane) = self.take_handed(most)
            {
                drop(waiting);
                return Ok(self.handed_checkout(lane, turn));
            }
            let opens = tokio::time::Instant::now() >= opens_anyway;
            // No place is taken before a lane is there to take: places taken and given back at
            // once kept the reads, which show the connections it waits for, from them.
            if self.may_take(tier) || opens {
                // A lane handed over with its place while this one waits in line for a place
                // is taken at the loop's top: the place handed over never reaches the line.
                let placed = tokio::select! {
                    placed = self.place_for(priority) => Some(placed?),
                    () = self.back_by[tier].notified(), if waiting.is_some() => None,
                };
                let Some((permit, past_level)) = placed else {
                    continue;
                };
                if self.may_take(tier) || opens {
                    drop(waiting);
                    let mut checkout = self.lane_for(permit, turn, reuse);
                    checkout.past_level = past_level;
                    return Ok(checkout);
                }
                // Another took the lane meanwhile: the place goes back to the others.
                drop(permit);
                self.freed.notify_one();
            }
            // Until it goes, the reads open fresh lanes and leave the idle ones to it (and the
            // plain creates to a chain's, and these to a fixture's).
            waiting.get_or_insert_with(|| {
                (
                    Waiting::new(&self.unrepeatable_waiting, Some(self)),
                    Waiting::new(&self.waiting_by[tier], None),
                )
            });
            // It waits for a lane back (or one more proven), not for a place: waiting for a
            // place, the creates that could not go woke each other in turn, thousands of times
            // a run.
            let _ = tokio::time::timeout(PLAIN_RECHECK, self.back_by[tier].notified()).await;
        }
    }

    /// A lane came back, or one more was proven: a fixture's create waiting is woken first,
    /// then a chain's.
    pub(super) fn lane_came_back(&self) {
        let tier = self
            .waiting_by
            .iter()
            .position(|waiting| waiting.load(Ordering::Relaxed) > 0)
            .unwrap_or(PLAIN_TIER);
        self.back_by[tier].notify_one();
    }

    /// Whether a request that may not be sent twice finds a lane it may take now: an idle one
    /// (as recent as it asks, or closed to make room for a fresh one, as [`Lanes::lane_for`]
    /// does), or room for a fresh one within the connections the target has served at once.
    pub(super) fn may_take(&self, tier: usize) -> bool {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).len();
        let fresh = self
            .fresh_bound()
            .saturating_sub(self.live.load(Ordering::Relaxed));
        // The lanes the creates of a tier before this one wait for are theirs.
        let kept: usize = self.waiting_by[..tier]
            .iter()
            .map(|waiting| waiting.load(Ordering::Relaxed))
            .sum();
        idle + fresh > kept
    }

    /// The connections a request that may not be sent twice may open up to.
    fn fresh_bound(&self) -> usize {
        self.most_proven.load(Ordering::Relaxed).max(super::START)
    }

    /// A place in flight, once the level has room and, for a plain request, no chain request
    /// (nor burst) waits for it.
    async fn place(&self, priority: Priority) -> Result<SemaphorePermit<'_>, String> {
        // The semaphore hands a place given back to the requests in its line (chain requests
        // and bursts) first: a place is free to take only when none waits there. A plain
        // request that has waited a usual answer's time joins the line: it may end a short
        // chain of its own, which would otherwise be left for after the long ones. Not while a
        // chain request waits there: the line is first come, first served, and plain reads
        // that had joined it held a quiet-store rule's listing for four round trips at 50 ms;
        // and then one plain request at a time (below).
        let joins_line = tokio::time::Instant::now() + self.usual_answer();
        while priority == Priority::Plain
            && (tokio::time::Instant::now() < joins_line
                || self.chain_in_line.load(Ordering::Relaxed) > 0)
        {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            match self.permits.try_acquire() {
                Ok(permit) => return Ok(permit),
                Err(tokio::sync::TryAcquireError::Closed) => return Err("closed".into()),
                Err(tokio::sync::TryAcquireError::NoPermits) => {}
            }
            let now = tokio::time::Instant::now();
            let recheck = now + PLAIN_RECHECK;
            let _ = tokio::time::timeout_at(
                if now < joins_line {
                    joins_line.min(recheck)
                } else {
                    recheck
                },
                freed,
            )
            .await;
        }
        // A chain request is counted while in line; a plain one waits its turn to join, one at
        // a time, so that a chain request coming later is behind one plain request, not behind
        // every read that had joined before it (a quiet-store rule's creates waited four round
        // trips behind the reads beside them at 50 ms).
        let (_in_line, _plain_turn) = match priority {
            Priority::Plain => (None, Some(self.plain_in_line.lock().await)),
            _ => (Some(Waiting::new(&self.chain_in_line, None)), None),
        };
        self.permits.acquire().await.map_err(|e| e.to_string())
    }

    /// A place in flight as [`Lanes::place`] gives it, or for a [`Priority::First`] request
    /// when the level is full, one of the few past it; whether it is past the level.
    async fn place_for(&self, priority: Priority) -> Result<(SemaphorePermit<'_>, bool), String> {
        if priority == Priority::First {
            match self.permits.try_acquire() {
                Ok(permit) => return Ok((permit, false)),
                Err(tokio::sync::TryAcquireError::Closed) => return Err("closed".into()),
                Err(tokio::sync::TryAcquireError::NoPermits) => {
                    // Past the level, never past `--concurrency`: the user's ceiling holds.
                    let state = self.state();
                    let past = super::FIRST_PLACES - self.first_places.available_permits();
                    if state.level + past < state.ceiling
                        && let Ok(permit) = self.first_places.try_acquire()
                    {
                        return Ok((permit, true));
                    }
                }
            }
        }
        self.place(priority).await.map(|permit| (permit, false))
    }

    /// The run's usual answer time (a moving average; none before the first answer).
    fn usual_answer(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.usual_us.load(Ordering::Relaxed))
    }

    fn lane_for<'a>(
        &'a self,
        permit: SemaphorePermit<'a>,
        turn: Turn,
        reuse: Reuse,
    ) -> Checkout<'a> {
        // A request that may be sent again opens a fresh lane, where the level has room for
        // one, while one that may not waits for an idle lane: the kept connections go to the
        // creates, and the fresh ones (which may stall in a backlog) to the reads, whose answers
        // show more connections served, which lets the creates open more. Reads taking every
        // lane that came back held the run's first creates for four round trips at 50 ms.
        let leave_idle = matches!(reuse, Reuse::Any | Reuse::IdleUnder(_))
            && self.kept_answered.load(Ordering::Relaxed)
            && self.unrepeatable_waiting.load(Ordering::Relaxed) > 0
            && self.live.load(Ordering::Relaxed) < self.state().level;
        let idle = match reuse {
            _ if leave_idle => None,
            Reuse::Never | Reuse::Unrepeatable(None) => None,
            Reuse::Any => self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop(),
            Reuse::IdleUnder(most) | Reuse::Unrepeatable(Some(most)) => {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                let recent = idle
                    .iter()
                    .rposition(|lane| lane.idle_since.is_some_and(|at| at.elapsed() < most));
                recent.map(|n| idle.remove(n))
            }
        };
        let idle = idle.map(taken);
        // Whether the fresh lane takes the place of a proven one closed for it.
        let mut inherited = false;
        if idle.is_none() && reuse != Reuse::Any {
            // A lane of its own while others sit idle: the oldest idle one closes, so the
            // connections open stay within the level (`--concurrency` included).
            // One that may not be sent twice stays within the connections the target has
            // served at once as well.
            let mut most = self.state().level;
            if matches!(reuse, Reuse::Unrepeatable(_)) {
                most = most.min(self.fresh_bound());
            }
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if self.live.load(Ordering::Relaxed) >= most && !idle.is_empty() {
                let oldest = idle.remove(0);
                inherited = self.close_for_room(oldest);
            }
        }
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
                proven: std::sync::atomic::AtomicBool::new(inherited),
                idle_since: None,
                read_at: std::sync::Mutex::new(None),
                idle_before: std::time::Duration::ZERO,
            }
        });
        self.checkout_of(lane, Some(permit), turn)
    }

    /// A checkout of a lane handed over with its place (see `Lanes::give_back`).
    fn handed_checkout(&self, lane: Lane, turn: Turn) -> Checkout<'_> {
        self.checkout_of(taken(lane), None, turn)
    }

    fn checkout_of<'a>(
        &'a self,
        lane: Lane,
        permit: Option<SemaphorePermit<'a>>,
        turn: Turn,
    ) -> Checkout<'a> {
        Checkout {
            lanes: self,
            lane: Some(lane),
            permit,
            past_level: false,
            discard: false,
            _turn: turn,
        }
    }

    /// Closes an idle lane to open a fresh one in its place; whether the fresh one inherits
    /// its proof. A connection the target served, closed by us, frees the place the target
    /// gave it (a worker, a slot under a connection cap) for the one that replaces it: the
    /// connections it has shown it serves at once stay as many. Counted as closed, they fell
    /// while a run whose first requests may not be sent twice churned its connections (each
    /// such request opens one until kept connections are seen to answer), and the level,
    /// held within twice the proven lanes, took five round trips to pass 13 at 50 ms.
    fn close_for_room(&self, lane: Lane) -> bool {
        let proven = lane.proven.load(Ordering::Relaxed);
        self.live.fetch_sub(1, Ordering::Relaxed);
        proven
    }

    /// A fresh lane's connection was not served (it stalled, was refused, or closed before any
    /// answer): a proof it took over from the lane it replaced was not the target's, and the
    /// cut that follows counts only the lanes the target did serve.
    pub fn not_served(&self, lane: &Lane) {
        if lane.proven.swap(false, Ordering::Relaxed) {
            self.proven.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Closes a lane (and its connection).
    pub(super) fn close(&self, lane: Lane) {
        self.live.fetch_sub(1, Ordering::Relaxed);
        if lane.proven.load(Ordering::Relaxed) {
            self.proven.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// An idle lane taken for a request: how long it had been idle, for the request's answer.
fn taken(mut lane: Lane) -> Lane {
    lane.idle_before = lane
        .idle_since
        .take()
        .map_or_else(Default::default, |at| at.elapsed());
    lane
}
