//! A burst: lanes taken together for requests sent at one moment (a race), within the level
//! and, for requests that may not be sent twice, within the connections the target has served.

use std::sync::Arc;

use super::super::{Lanes, Priority};
use super::{BURST_RECHECK, Checkout, FRESH_WAIT, Reuse, SAFE_IDLE, Turn, Waiting, tier};

impl Lanes {
    /// `n` lanes for a burst sent at one moment, within the level: a burst is what a race is
    /// checked with, so while no overload has been seen it may raise the level up to the
    /// ceiling for itself (slow start would have got there). One burst gathers at a time, so
    /// that two never hold half the lanes each, waiting for the other's.
    /// Its idle lanes are taken as `reuse` says: a burst of creates takes none the server may be
    /// closing.
    pub async fn checkout_many(&self, n: usize, reuse: Reuse) -> Result<Vec<Checkout<'_>>, String> {
        let _gathering = self.gathering.lock().await;
        // One shared turn for the whole burst: taken lane by lane, a request waiting to go
        // alone between two of them would wait for the burst, and the burst for it.
        let turn = Arc::new(Arc::clone(&self.turns).read_owned().await);
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
        // A burst of requests that may not be sent twice opens no connection past those the
        // target has served at once, as one such request does (see `Reuse::Unrepeatable`): a
        // place with no lane it may take goes back, and the burst waits for lanes to come
        // back. Where the target keeps connections, once it holds one, for half `SAFE_IDLE`
        // (the lanes it holds meanwhile stay idle), then what it has goes, its other requests
        // following on its lanes; before that is known (a server may close each connection
        // after one answer, and one that follows would be lost with it), or holding none, for
        // `FRESH_WAIT`, as one such request does; then the rest open. The client first shows
        // the target as many connections as the burst asks for (`Client::send_at_once`).
        // Raised past them, a burst of creates behind 4 workers resetting past 32 connections
        // lost a create in 1 run in 40 under load.
        let unrepeatable = matches!(reuse, Reuse::Unrepeatable(_));
        let may_follow = matches!(reuse, Reuse::Unrepeatable(Some(_)));
        let started = tokio::time::Instant::now();
        let goes_with_what_it_has = started + SAFE_IDLE / 2;
        let opens_anyway = started + FRESH_WAIT;
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
                        let mut short = false;
                        while let Some(one) = permits.split(1) {
                            let opens = (checkouts.is_empty() || !may_follow)
                                && tokio::time::Instant::now() >= opens_anyway;
                            // A lane it may take now, whatever else waits for one.
                            let free = self.may_take(tier(Priority::First));
                            if unrepeatable && !free && !opens {
                                short = true;
                                break; // its place goes back, with the others not taken
                            }
                            checkouts.push(self.lane_for(
                                one,
                                Turn::beside(Arc::clone(&turn)),
                                reuse,
                            ));
                        }
                        if short {
                            drop(permits);
                            self.freed.notify_waiters();
                            let want = want.min(self.level());
                            self.take_lanes_back(&mut checkouts, want, &turn).await;
                            if checkouts.len() >= want
                                || (may_follow
                                    && !checkouts.is_empty()
                                    && tokio::time::Instant::now() >= goes_with_what_it_has)
                            {
                                break 'gather;
                            }
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

    /// How many lanes short of `n` a burst of requests that may not be sent twice is: past
    /// the most lanes the target has answered on at once, within `--concurrency`.
    pub fn unserved(&self, n: usize) -> usize {
        let ceiling = self.state().ceiling;
        n.min(ceiling)
            .saturating_sub(self.most_proven.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Lanes coming back for a burst of creates short of lanes, handed over with their places
    /// (it counts among the creates waiting for one, as a chain's), until it has `want` or for
    /// [`BURST_RECHECK`]: the single creates waiting would otherwise take every lane back first.
    async fn take_lanes_back<'a>(
        &'a self,
        checkouts: &mut Vec<Checkout<'a>>,
        want: usize,
        turn: &Arc<tokio::sync::OwnedRwLockReadGuard<()>>,
    ) {
        let Reuse::Unrepeatable(Some(most)) = self.reuse_for(false) else {
            // None is handed over before the target keeps connections.
            tokio::time::sleep(BURST_RECHECK).await;
            return;
        };
        let tier = tier(Priority::Chain);
        let waiting: Vec<_> = (checkouts.len()..want)
            .map(|_| {
                (
                    Waiting::new(&self.unrepeatable_waiting, None),
                    Waiting::new(&self.waiting_by[tier], None),
                )
            })
            .collect();
        let until = tokio::time::Instant::now() + BURST_RECHECK;
        while checkouts.len() < want {
            if let Some(lane) = self.take_handed(most) {
                checkouts.push(self.handed_checkout(lane, Turn::beside(Arc::clone(turn))));
                continue;
            }
            let back = self.back_by[tier].notified();
            if tokio::time::timeout_at(until, back).await.is_err() {
                break;
            }
        }
        drop(waiting);
        self.release_unclaimed();
    }
}
