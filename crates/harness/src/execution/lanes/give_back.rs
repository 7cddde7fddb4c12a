//! A lane and its place given back: the lane idle (or closed, past the level), or, proven,
//! handed over with its place to a request that may not be sent twice, waiting for one.

use std::sync::atomic::Ordering;

use tokio::sync::SemaphorePermit;

use super::{Lane, Lanes, Level};

impl Lanes {
    /// A lane back from a request: handed over with its place to a create waiting for one,
    /// idle for the next request, or closed (with its connection) when the level has dropped
    /// below the lanes open.
    pub(super) fn give_back(
        &self,
        mut lane: Lane,
        mut permit: Option<SemaphorePermit<'_>>,
        discard: bool,
        past_level: bool,
    ) {
        let read_at = lane
            .read_at
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        lane.idle_since = Some(read_at.unwrap_or_else(std::time::Instant::now));
        let mut state = self.state();
        // A place past the level goes back to its own few, owing nothing.
        let owed = state.debt > 0 && !past_level;
        if owed {
            state.debt -= 1;
            if let Some(permit) = permit.take() {
                permit.forget();
            }
        }
        // A proven lane and its place go together to a request that may not be sent twice,
        // waiting for one (once the target keeps its connections): given back apart, the place
        // went to the first read in line, which took the lane with it, and the creates of a
        // run at 50 ms waited from its second round trip to its seventh.
        if !owed
            && !discard
            && !past_level
            && lane.proven.load(Ordering::Relaxed)
            && self.kept_answered.load(Ordering::Relaxed)
            && self.live.load(Ordering::Relaxed) <= state.level
            && self.unrepeatable_waiting.load(Ordering::Relaxed) > state.handed.len()
        {
            if let Some(permit) = permit.take() {
                permit.forget();
            }
            state.handed.push(lane);
            drop(state);
            self.lane_came_back();
            return;
        }
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
        self.lane_came_back();
        if owed {
            return;
        }
        // The place goes back after the lane, so whoever takes it finds the lane idle.
        match permit {
            Some(permit) => drop(permit),
            None => self.permits.add_permits(1), // a handed place, back in the line
        }
        self.freed.notify_one();
    }

    /// A lane handed over with its place, if one was and is still recent enough for a
    /// request idle no longer than `most` may take (the place of one that is not goes back).
    pub(super) fn take_handed(&self, most: std::time::Duration) -> Option<Lane> {
        let mut state = self.state();
        while let Some(lane) = state.handed.pop() {
            if lane.idle_since.is_some_and(|at| at.elapsed() < most) {
                return Some(lane);
            }
            self.hand_back(&mut state, lane);
        }
        None
    }

    /// Lanes handed over for more requests than now wait go back, idle, with their places
    /// (one that waited took another lane, went past its wait, or was cut off).
    pub(super) fn release_unclaimed(&self) {
        let mut state = self.state();
        while state.handed.len() > self.unrepeatable_waiting.load(Ordering::Relaxed) {
            let Some(lane) = state.handed.pop() else {
                break;
            };
            self.hand_back(&mut state, lane);
        }
    }

    /// Every lane handed over goes back (a request sent alone: they are idle connections
    /// too, which it closes).
    pub(super) fn release_unclaimed_all(&self) {
        self.hand_back_all(&mut self.state());
    }

    /// Every lane handed over back among the idle ones, with its place.
    pub(super) fn hand_back_all(&self, state: &mut Level) {
        for lane in std::mem::take(&mut state.handed) {
            self.hand_back(state, lane);
        }
    }

    /// A handed lane back among the idle ones, and its place back in the line (or paying what
    /// the level owes).
    pub(super) fn hand_back(&self, state: &mut Level, lane: Lane) {
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(lane);
        if state.debt > 0 {
            state.debt -= 1;
        } else {
            self.permits.add_permits(1);
            self.freed.notify_one();
        }
    }
}
