//! The worker slots of a run: how many helper threads its property rules may have at once,
//! across every rule (see `workers.rs` for what a helper does). Fewer against a near target,
//! where the CPU is the bound, than against a remote one, where the requests a worker waits on
//! set the pace.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The helper threads a run may have at once, across its rules.
pub struct WorkerSlots {
    busy: AtomicUsize,
    /// The most slots, against a remote target.
    max: usize,
    /// The most slots against a near one.
    local: usize,
}

/// Helper threads at most, whatever `--concurrency` allows in flight: a thread costs its
/// touched stack and its buffers, a place in flight on a kept-alive connection much less, and
/// the run's batches (`send_all`, bursts) fill the places past the workers without threads.
pub const MAX_WORKERS: usize = 256;

/// Helper threads per core while the fastest answer came back within [`REMOTE`]: a target
/// that answers in no time leaves the CPU the bound, and more threads only take memory and
/// contend for it (under a 5 s budget on 2 cores, 8 helpers sent a sixth more than 128,
/// in 35 MB, not 80). The fastest answer, not the usual one: a saturated CPU slows every
/// answer of a near target, and more threads would not help it.
pub const LOCAL_WORKERS_PER_CORE: usize = 4;

/// The fastest answer past which a target is remote: the requests a worker waits on, not the
/// CPU, then set the pace (Little's law: in flight = rate x latency).
pub const REMOTE: std::time::Duration = crate::execution::lanes::NEAR;

impl WorkerSlots {
    pub fn new(slots: usize) -> WorkerSlots {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        WorkerSlots {
            busy: AtomicUsize::new(0),
            max: slots,
            local: slots.min(LOCAL_WORKERS_PER_CORE.saturating_mul(cores)),
        }
    }

    /// The slots of a run with `concurrency` places in flight.
    pub fn for_concurrency(concurrency: usize) -> WorkerSlots {
        WorkerSlots::new(concurrency.clamp(1, MAX_WORKERS))
    }

    /// The helpers allowed now: [`LOCAL_WORKERS_PER_CORE`] per core while the target answers
    /// within [`REMOTE`] (`fastest`, the run's fastest answer), the run's most otherwise.
    pub(super) fn limit(&self, fastest: std::time::Duration) -> usize {
        if fastest >= REMOTE {
            self.max
        } else {
            self.local
        }
    }

    /// A slot, if fewer than `limit` are taken now (never waits: the caller works on without).
    pub(super) fn take(&self, limit: usize) -> Option<Slot<'_>> {
        self.busy
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |busy| {
                (busy < limit).then_some(busy + 1)
            })
            .ok()
            .map(|_| Slot(self))
    }
}

/// A worker slot, given back when the helper ends (or unwinds).
pub(super) struct Slot<'a>(&'a WorkerSlots);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_never_more_than_given_and_come_back_when_a_helper_ends() {
        let slots = WorkerSlots::new(2);
        let remote = slots.limit(REMOTE);
        let first = slots.take(remote).expect("a free slot");
        let second = slots.take(remote).expect("a second free slot");
        assert!(slots.take(remote).is_none(), "two slots, two helpers");
        drop(first);
        let third = slots.take(remote).expect("the slot given back");
        assert!(slots.take(remote).is_none());
        drop((second, third));
        assert_eq!(slots.busy.load(Ordering::Relaxed), 0);
        // A target that answers at once: the CPU is the bound, fewer threads.
        let slots = WorkerSlots::new(MAX_WORKERS);
        let near = slots.limit(std::time::Duration::ZERO);
        let local: Vec<_> = (0..MAX_WORKERS).map_while(|_| slots.take(near)).collect();
        assert_eq!(local.len(), slots.local);
        assert!(slots.local < MAX_WORKERS);
        let far = slots.limit(REMOTE);
        assert!(slots.take(far).is_some(), "past them, for a remote target");
    }
}
