//! The worker threads that judge a property rule's cases at once, bounded for the whole run.
//!
//! A worker is a thread blocked on one request at a time, so the requests in flight, not the
//! threads, set the pace: past `--concurrency` workers in all, a thread only waits for a lane.
//! Each thread costs its touched stack and its buffers, which is how a run under a time
//! budget, with every property rule spawning a worker per place in flight, came to 570
//! threads and 70 MB. So a rule's own thread judges cases itself, and helpers join it while
//! the run has a worker slot free (one more per case taken, so a rule alone grows to its full
//! width within its first cases, and a rule that starts while others hold every slot still
//! moves, on its own thread).
//!
//! A helper is a scoped thread of the call that needs it, so the compiler, not a guard's drop
//! order, proves that nothing outlives the batch it borrows. A thread started per call costs
//! little now that helpers are few against a near target (4 per core) and the allocator keeps
//! no cache per thread: thousands of starts in a 5 s budget at 50 ms, and CPU per request the
//! same as on threads kept for the run (once one start per case, in glibc's malloc, cost a
//! fifth of the run's CPU).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::thread::Scope;

use crate::rules::{Checked, RuleCtx};
use crate::execution::Priority;

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
    fn limit(&self, fastest: std::time::Duration) -> usize {
        if fastest >= REMOTE {
            self.max
        } else {
            self.local
        }
    }

    /// A slot, if fewer than `limit` are taken now (never waits: the caller works on without).
    fn take(&self, limit: usize) -> Option<Slot<'_>> {
        self.busy
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |busy| {
                (busy < limit).then_some(busy + 1)
            })
            .ok()
            .map(|_| Slot(self))
    }
}

/// The slots a rule's helpers may fill: a plain rule leaves a quarter of them to the rules on
/// long chains, whose requests go first in flight too (`Priority`), so that their cases do not
/// wait one at a time for helpers the bulk of generated cases hold.
fn own_limit(limit: usize, priority: Priority) -> usize {
    match priority {
        Priority::Chain => limit,
        Priority::Plain => limit - limit / 4,
    }
}

/// A worker slot, given back when the helper ends (or unwinds).
struct Slot<'a>(&'a WorkerSlots);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One call's cases and what its workers share.
struct Batch<'a, T, F> {
    ctx: &'a RuleCtx<'a>,
    values: &'a [T],
    case: &'a F,
    /// Workers this call may have, its own thread included.
    width: usize,
    workers: AtomicUsize,
    next: AtomicUsize,
    verdicts: Vec<Mutex<Option<Checked>>>,
    /// The longest chain of round trips of any worker, counted from the call's start.
    longest: AtomicU32,
    /// A helper's panic, raised again on the rule's thread as it was.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// Judges every value with `case`, on up to `--concurrency` workers (the rule's own thread
/// and helpers while the run has slots); the verdicts come back in the order of `values`.
/// Each value counts as one case of the rule, and the rule's chain of round trips grows by the
/// longest chain of any one worker.
pub(crate) fn judge_all<T: Sync>(
    ctx: &RuleCtx,
    values: &[T],
    case: &(impl Fn(&T) -> Checked + Sync),
) -> Vec<Checked> {
    let width = ctx.run.concurrency.clamp(1, values.len().max(1));
    if width == 1 {
        return values
            .iter()
            .map(|value| {
                ctx.case_done();
                case(value)
            })
            .collect();
    }
    let batch = Batch {
        ctx,
        values,
        case,
        width,
        workers: AtomicUsize::new(1),
        next: AtomicUsize::new(0),
        verdicts: values.iter().map(|_| Mutex::new(None)).collect(),
        longest: AtomicU32::new(0),
        panic: Mutex::new(None),
    };
    // The helpers borrow the batch; the scope ends only when the last of them has.
    std::thread::scope(|scope| work(scope, &batch, 0));
    if let Some(panic) = batch.panic.lock().unwrap_or_else(|e| e.into_inner()).take() {
        std::panic::resume_unwind(panic);
    }
    ctx.add_round_trips(batch.longest.load(Ordering::Relaxed));
    batch
        .verdicts
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or(Ok(()))
        })
        .collect()
}

/// One worker: takes the next value until none is left, and before judging one, brings in a
/// helper for the values after it if the run has a slot free. `offset`: the round trips its
/// spawner had waited on when it started.
fn work<'scope, T: Sync, F: Fn(&T) -> Checked + Sync>(
    scope: &'scope Scope<'scope, '_>,
    batch: &'scope Batch<'scope, T, F>,
    offset: u32,
) {
    let own = crate::rules::lane(|| {
        loop {
            let index = batch.next.fetch_add(1, Ordering::Relaxed);
            let Some(value) = batch.values.get(index) else {
                break;
            };
            if index + 1 < batch.values.len() {
                helper(scope, batch, offset + crate::rules::lane_so_far());
            }
            batch.ctx.case_done();
            let verdict = (batch.case)(value);
            *batch.verdicts[index]
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(verdict);
        }
    });
    batch.longest.fetch_max(offset + own, Ordering::Relaxed);
}

/// Starts one more worker of `batch` on a thread of its own, within its width and the run's
/// free slots.
fn helper<'scope, T: Sync, F: Fn(&T) -> Checked + Sync>(
    scope: &'scope Scope<'scope, '_>,
    batch: &'scope Batch<'scope, T, F>,
    offset: u32,
) {
    if batch
        .workers
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < batch.width).then_some(n + 1)
        })
        .is_err()
    {
        return;
    }
    let slots = &batch.ctx.run.worker_slots;
    let limit = slots.limit(batch.ctx.run.client.fastest_answer());
    let Some(slot) = slots.take(own_limit(limit, batch.ctx.priority())) else {
        batch.workers.fetch_sub(1, Ordering::AcqRel);
        return;
    };
    let started = std::thread::Builder::new()
        .name("case-helper".into())
        .spawn_scoped(scope, move || {
            let _slot = slot;
            let worked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                work(scope, batch, offset)
            }));
            if let Err(panic) = worked {
                batch
                    .panic
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(panic);
            }
        });
    // No thread (the system's limit): the slot went back with the closure, and the workers
    // there are take the values.
    if started.is_err() {
        batch.workers.fetch_sub(1, Ordering::AcqRel);
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
