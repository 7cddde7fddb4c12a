//! The worker threads that judge a property rule's cases at once, bounded for the whole run.
//!
//! A worker is a thread blocked on one request at a time, so the requests in flight, not the
//! threads, set the pace: past `--concurrency` workers in all, a thread only waits for a lane.
//! Each thread costs its touched stack (kept by glibc's stack cache after it ends) and its
//! buffers, which is how a run under a time budget, with every property rule spawning a
//! worker per place in flight, came to 570 threads and 70 MB. So a rule's own thread judges
//! cases itself, and helpers join it while the run has a worker slot free (one more per case
//! taken, so a rule alone grows to its full width within its first cases, and a rule that
//! starts while others hold every slot still moves, on its own thread).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::thread::Scope;

use super::{Checked, RuleCtx};

/// The helper threads a run may have at once, across its rules.
pub struct WorkerSlots(AtomicUsize);

/// Helper threads at most, whatever `--concurrency` allows in flight: a thread costs its
/// touched stack and buffers (some 70 kB each, measured), a place in flight on a kept-alive
/// connection much less, and the run's batches (`send_all`, bursts) fill the places past the
/// workers without threads.
pub const MAX_WORKERS: usize = 128;

impl WorkerSlots {
    pub fn new(slots: usize) -> WorkerSlots {
        WorkerSlots(AtomicUsize::new(slots))
    }

    /// The slots of a run with `concurrency` places in flight.
    pub fn for_concurrency(concurrency: usize) -> WorkerSlots {
        WorkerSlots::new(concurrency.clamp(1, MAX_WORKERS))
    }

    /// A slot, if one is free now (never waits: the caller works on without).
    fn take(&self) -> Option<Slot<'_>> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |free| {
                free.checked_sub(1)
            })
            .ok()
            .map(|_| Slot(self))
    }
}

/// A worker slot, given back when the helper ends (or unwinds).
struct Slot<'a>(&'a WorkerSlots);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_add(1, Ordering::AcqRel);
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
pub(super) fn judge_all<T: Sync>(
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
fn work<'scope, 'env, T: Sync, F: Fn(&T) -> Checked + Sync>(
    scope: &'scope Scope<'scope, 'env>,
    batch: &'env Batch<'env, T, F>,
    offset: u32,
) where
    'env: 'scope,
{
    let own = super::lane(|| {
        loop {
            let index = batch.next.fetch_add(1, Ordering::Relaxed);
            let Some(value) = batch.values.get(index) else {
                break;
            };
            if index + 1 < batch.values.len() {
                helper(scope, batch, offset + super::lane_so_far());
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

/// Starts one more worker of `batch`, within its width and the run's free slots.
fn helper<'scope, 'env, T: Sync, F: Fn(&T) -> Checked + Sync>(
    scope: &'scope Scope<'scope, 'env>,
    batch: &'env Batch<'env, T, F>,
    offset: u32,
) where
    'env: 'scope,
{
    if batch
        .workers
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < batch.width).then_some(n + 1)
        })
        .is_err()
    {
        return;
    }
    let Some(slot) = batch.ctx.run.worker_slots.take() else {
        batch.workers.fetch_sub(1, Ordering::AcqRel);
        return;
    };
    scope.spawn(move || {
        let _slot = slot;
        let worked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(scope, batch, offset)));
        if let Err(panic) = worked {
            batch
                .panic
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(panic);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_never_more_than_given_and_come_back_when_a_helper_ends() {
        let slots = WorkerSlots::new(2);
        let first = slots.take().expect("a free slot");
        let second = slots.take().expect("a second free slot");
        assert!(slots.take().is_none(), "two slots, two helpers");
        drop(first);
        let third = slots.take().expect("the slot given back");
        assert!(slots.take().is_none());
        drop((second, third));
        assert_eq!(slots.0.load(Ordering::Relaxed), 2);
    }
}
