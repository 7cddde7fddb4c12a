//! The worker threads that judge a property rule's cases at once, bounded for the whole run.
//!
//! A worker is a thread blocked on one request at a time, so the requests in flight, not the
//! threads, set the pace: past `--concurrency` workers in all, a thread only waits for a lane.
//! Each thread costs its touched stack and its buffers, which is how a run under a time
//! budget, with every property rule spawning a worker per place in flight, came to 570
//! threads and 70 MB. So a rule's own thread judges cases itself, and helpers join it while
//! the run has a worker slot free (one more per case taken, so a rule alone grows to its full
//! width within its first cases, and a rule that starts while others hold every slot still
//! moves, on its own thread). Helpers run on threads kept for the run (`threads.rs`), not
//! on a thread started per batch.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::threads::{Job, Threads};
use super::{Checked, RuleCtx};
use crate::execution::Priority;

/// The helper threads a run may have at once, across its rules, and the threads they run on.
pub struct WorkerSlots {
    busy: AtomicUsize,
    /// The most slots, against a remote target.
    max: usize,
    /// The most slots against a near one.
    local: usize,
    threads: Threads,
}

/// Helper threads at most, whatever `--concurrency` allows in flight: a thread costs its
/// touched stack and its allocator caches (kept for the run: some 200 kB each under a budget,
/// measured), a place in flight on a kept-alive connection much less, and the run's batches
/// (`send_all`, bursts) fill the places past the workers without threads.
pub const MAX_WORKERS: usize = 256;

/// Helper threads per core while the fastest answer came back within [`REMOTE`]: a target
/// that answers in no time leaves the CPU the bound, and more threads only take memory and
/// contend for it (under a 5 s budget on 2 cores, 8 kept threads sent a sixth more than 128,
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
            threads: Threads::new(slots),
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

/// The helpers of one call still running. Shared by ownership, not borrowed: a helper's last
/// act is to count itself out, after which the call may return and its batch go.
#[derive(Default)]
struct Running {
    count: Mutex<usize>,
    ended: Condvar,
}

impl Running {
    fn started(&self) {
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    }

    fn ended(&self) {
        let mut count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        *count -= 1;
        if *count == 0 {
            self.ended.notify_all();
        }
    }

    fn wait_for_none(&self) {
        let count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        let _none = self
            .ended
            .wait_while(count, |count| *count > 0)
            .unwrap_or_else(|e| e.into_inner());
    }
}

/// Waits for every helper of a call when dropped, so that the call neither returns nor
/// unwinds while a helper still borrows its batch.
struct JoinHelpers(Arc<Running>);

impl Drop for JoinHelpers {
    fn drop(&mut self) {
        self.0.wait_for_none();
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
    running: Arc<Running>,
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
        running: Arc::default(),
    };
    let join = JoinHelpers(Arc::clone(&batch.running));
    work(&batch, 0);
    drop(join);
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
fn work<T: Sync, F: Fn(&T) -> Checked + Sync>(batch: &Batch<'_, T, F>, offset: u32) {
    let own = super::lane(|| {
        loop {
            let index = batch.next.fetch_add(1, Ordering::Relaxed);
            let Some(value) = batch.values.get(index) else {
                break;
            };
            if index + 1 < batch.values.len() {
                helper(batch, offset + super::lane_so_far());
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
fn helper<T: Sync, F: Fn(&T) -> Checked + Sync>(batch: &Batch<'_, T, F>, offset: u32) {
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
    let running = Arc::clone(&batch.running);
    running.started();
    let job = move || {
        let worked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(batch, offset)));
        if let Err(panic) = worked {
            batch
                .panic
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(panic);
        }
        drop(slot);
        // The last touch of the batch; `running` is this job's own.
        running.ended();
    };
    let job: Box<dyn FnOnce() + Send + '_> = Box::new(job);
    // SAFETY: the job borrows the batch (and through it the rule's context and the run) for
    // less than 'static. The call that owns the batch holds a `JoinHelpers` from before its
    // first helper starts until after its last one has counted itself out, and drops it before
    // it returns or unwinds, so every borrow outlives the job (std::thread::scope's argument;
    // only the threads are kept). The job touches nothing borrowed after `running.ended()`.
    let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
    slots.threads.run(job, limit);
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
