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
//! A helper is a job on the run's helper threads (`slots::Threads`), which wait a while for
//! the next batch rather than end with this one: started per call, as scoped threads, a run at
//! 50 ms started 700 threads, and their stacks' mapping, faults and unmapping took a tenth of
//! its CPU. A job borrows the batch, so the batch's own thread holds a latch that waits, even
//! as it unwinds, until every helper of the batch has ended (`Joined`).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::ctx::{RuleCtx, lane, lane_so_far};
use crate::execution::Priority;
use crate::outcome::Checked;

/// The slots a rule's helpers may fill: a plain rule leaves a quarter of them to the rules on
/// long chains, whose requests go first in flight too (`Priority`), so that their cases do not
/// wait one at a time for helpers the bulk of generated cases hold.
fn own_limit(limit: usize, priority: Priority) -> usize {
    match priority {
        Priority::First | Priority::Chain => limit,
        Priority::Plain => limit - limit / 4,
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
    helpers: Arc<Latch>,
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
        helpers: Arc::default(),
    };
    {
        // The helpers borrow the batch: it is not left, even by a panic, before the last
        // of them has ended.
        let _joined = Joined(&batch.helpers);
        work(&batch, 0);
    }
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
    let own = lane(|| {
        loop {
            let index = batch.next.fetch_add(1, Ordering::Relaxed);
            let Some(value) = batch.values.get(index) else {
                break;
            };
            if index + 1 < batch.values.len() {
                helper(batch, offset + lane_so_far());
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

/// Starts one more worker of `batch` on a helper thread, within its width and the run's free
/// slots.
fn helper<T: Sync, F: Fn(&T) -> Checked + Sync>(batch: &Batch<'_, T, F>, offset: u32) {
    batch.ctx.wait_before_helpers();
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
    let helping = Helping::new(&batch.helpers);
    let job = Box::new(move || {
        let _helping = helping; // dropped last: the batch is no longer borrowed
        let _slot = slot;
        let worked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(batch, offset)));
        if let Err(panic) = worked {
            batch
                .panic
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(panic);
        }
    });
    // SAFETY: the job borrows the batch, which `judge_all` does not leave (nor unwind past)
    // until every `Helping` has ended, the job's among them, run or dropped.
    let started = unsafe { slots.threads.run(job) };
    // No thread (the system's limit): the slot went back with the job, and the workers there
    // are take the values.
    if !started {
        batch.workers.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The helpers of a batch still running (or queued), and what tells the batch's own thread
/// that the last has ended. In an `Arc`: a helper's last touch of it may come after the
/// batch's thread saw the count reach zero.
#[derive(Default)]
struct Latch {
    running: Mutex<usize>,
    ended: Condvar,
}

/// One helper of a batch, counted until dropped.
struct Helping(Arc<Latch>);

impl Helping {
    fn new(latch: &Arc<Latch>) -> Helping {
        *latch.running.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        Helping(Arc::clone(latch))
    }
}

impl Drop for Helping {
    fn drop(&mut self) {
        let mut running = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        *running -= 1;
        if *running == 0 {
            self.0.ended.notify_all();
        }
    }
}

/// Held by a batch's own thread while it works: dropped (a panic included), it waits until
/// every helper has ended, so that none outlives what it borrows.
struct Joined<'a>(&'a Latch);

impl Drop for Joined<'_> {
    fn drop(&mut self) {
        let mut running = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        while *running > 0 {
            running = self
                .0
                .ended
                .wait(running)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_left_only_once_its_last_helper_has_ended() {
        let latch = Arc::new(Latch::default());
        let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let helpers: Vec<_> = (0..3).map(|_| Helping::new(&latch)).collect();
        let left = {
            let ended = Arc::clone(&ended);
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                ended.store(true, Ordering::SeqCst);
                drop(helpers);
            })
        };
        drop(Joined(&latch));
        assert!(ended.load(Ordering::SeqCst), "left while a helper ran");
        left.join().unwrap();
        // And as the batch's thread unwinds.
        let helping = Helping::new(&latch);
        let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let waiter = {
            let ended = Arc::clone(&ended);
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                ended.store(true, Ordering::SeqCst);
                drop(helping);
            })
        };
        let unwound = std::panic::catch_unwind(|| {
            let _joined = Joined(&latch);
            panic!("a case panicked");
        });
        assert!(unwound.is_err());
        assert!(ended.load(Ordering::SeqCst), "unwound while a helper ran");
        waiter.join().unwrap();
    }
}
