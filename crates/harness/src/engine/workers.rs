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
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::thread::Scope;

use super::ctx::{RuleCtx, lane, lane_so_far};
use crate::execution::Priority;
use crate::generation::request::RequestSpec;
use crate::outcome::{Checked, Exchange};

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
    /// Whether the cases' first requests went ahead, and whether a case has waited on one
    /// since: until then, a batch sent ahead brings in no helper.
    sent_ahead: bool,
    waited: AtomicBool,
    next: AtomicUsize,
    verdicts: Vec<Mutex<Option<Checked>>>,
    /// The longest chain of round trips of any worker, counted from the call's start.
    longest: AtomicU32,
    /// A helper's panic, raised again on the rule's thread as it was.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// The requests a case sends, where they are known before it runs: its first (`None`: it
/// sends none), and those its first's answer decides (a read back of what it created).
pub struct SentAhead<'a, T> {
    pub first: &'a (dyn Fn(&T) -> Option<RequestSpec> + Sync),
    pub then: Option<&'a Then<'a, T>>,
    /// Whether a case's first answer may decide more (`then`): those cases go first in the
    /// batch, so that their reads are not also the last to go.
    pub leads: Option<&'a (dyn Fn(&T) -> bool + Sync)>,
}

/// The requests a case's first answer decides.
pub type Then<'a, T> = dyn Fn(&T, &Exchange) -> Vec<RequestSpec> + Sync + 'a;

impl<T> Clone for SentAhead<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SentAhead<'_, T> {}

impl<'a, T> SentAhead<'a, T> {
    /// A case's first request alone.
    pub fn first(first: &'a (dyn Fn(&T) -> Option<RequestSpec> + Sync)) -> SentAhead<'a, T> {
        SentAhead {
            first,
            then: None,
            leads: None,
        }
    }
}

/// Judges every value with `case`, on up to `--concurrency` workers (the rule's own thread
/// and helpers while the run has slots); the verdicts come back in the order of `values`.
/// Each value counts as one case of the rule, and the rule's chain of round trips grows by the
/// longest chain of any one worker.
///
/// With `ahead`, the cases' requests go first: their first requests all at once (those that
/// may lead to more first), and each of those an answer decides as soon as it is back, kept
/// for the cases (see [`RuleCtx::keep_ahead`]). A case then only judges what came back, on
/// the rule's thread; helpers come in once a case has waited on a request of its own. Each
/// case sending its own on a thread of its own, a run at 50 ms started 700 threads, and a
/// quarter of its CPU went to them.
pub(crate) fn judge_all<T: Sync>(
    ctx: &RuleCtx,
    values: &[T],
    ahead: Option<SentAhead<T>>,
    case: &(impl Fn(&T) -> Checked + Sync),
) -> Vec<Checked> {
    if let Some(ahead) = ahead {
        send_ahead(ctx, values, ahead);
    }
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
        sent_ahead: ahead.is_some(),
        waited: AtomicBool::new(false),
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

/// The requests of `values` known before they are judged, sent and kept for them.
fn send_ahead<T>(ctx: &RuleCtx, values: &[T], ahead: SentAhead<T>) {
    let mut sending: Vec<&T> = values.iter().collect();
    if let Some(leads) = ahead.leads {
        sending.sort_by_key(|value| !leads(value)); // stable: in their order otherwise
    }
    let (sending, specs): (Vec<&T>, Vec<RequestSpec>) = sending
        .into_iter()
        .filter_map(|value| Some((value, (ahead.first)(value)?)))
        .unzip();
    if specs.is_empty() {
        return;
    }
    let Some(then) = ahead.then else {
        let exchanges = ctx.send_all(&specs);
        ctx.keep_ahead(specs, exchanges);
        return;
    };
    // A case's reads go as soon as its answer is back (see `RuleCtx::send_all_then`).
    let (exchanges, after) = ctx.send_all_then(&specs, &|n, exchange| then(sending[n], exchange));
    ctx.keep_ahead(specs, exchanges);
    let (then, answers): (Vec<RequestSpec>, Vec<Exchange>) = after.into_iter().unzip();
    ctx.keep_ahead(then, answers);
}

/// One worker: takes the next value until none is left, and before judging one, brings in a
/// helper for the values after it if the run has a slot free. `offset`: the round trips its
/// spawner had waited on when it started.
fn work<'scope, T: Sync, F: Fn(&T) -> Checked + Sync>(
    scope: &'scope Scope<'scope, '_>,
    batch: &'scope Batch<'scope, T, F>,
    offset: u32,
) {
    let own = lane(|| {
        loop {
            let index = batch.next.fetch_add(1, Ordering::Relaxed);
            let Some(value) = batch.values.get(index) else {
                break;
            };
            let needs_help = !batch.sent_ahead || batch.waited.load(Ordering::Relaxed);
            if index + 1 < batch.values.len() && needs_help {
                helper(scope, batch, offset + lane_so_far());
            }
            batch.ctx.case_done();
            let before = lane_so_far();
            let verdict = (batch.case)(value);
            if lane_so_far() > before {
                batch.waited.store(true, Ordering::Relaxed);
            }
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
