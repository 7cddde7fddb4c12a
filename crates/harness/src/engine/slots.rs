//! The worker slots of a run: how many helper threads its property rules may have at once,
//! across every rule (see `workers.rs` for what a helper does). Fewer against a near target,
//! where the CPU is the bound, than against a remote one, where the requests a worker waits on
//! set the pace. And the helper threads themselves, kept between batches.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The helper threads a run may have at once, across its rules.
pub struct WorkerSlots {
    busy: AtomicUsize,
    /// The most slots, against a remote target.
    max: usize,
    /// The most slots against a near one.
    local: usize,
    /// The helper threads between batches.
    pub(super) threads: Threads,
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
            threads: Threads::default(),
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

/// A helper's work, its borrows made `'static` by [`Threads::run`]'s caller.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// How long a helper thread with nothing to do waits for the next batch before it ends: a
/// run's batches follow each other within a round trip or two.
pub const LINGER: std::time::Duration = std::time::Duration::from_secs(1);

/// The helper threads of a run: one waiting for work takes the next job, and a job no one
/// waits for starts a thread. A thread per job, as scoped threads were, started 700 threads in
/// a run at 50 ms, and their stacks' mapping, faults and unmapping took a tenth of its CPU.
#[derive(Default)]
pub(super) struct Threads(Arc<Waiting>);

#[derive(Default)]
struct Waiting {
    queue: Mutex<Queue>,
    job_ready: Condvar,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    idle: usize,
}

impl Threads {
    /// Runs `job` on a waiting helper thread, or on a new one; `false` if no thread could
    /// start (the system's limit), `job` then dropped unrun.
    ///
    /// # Safety
    /// Whatever `job` borrows must outlive its run: the caller waits until `job` has run or
    /// been dropped (as `workers::judge_all` does on its latch) before those borrows end.
    pub(super) unsafe fn run<'a>(&self, job: Box<dyn FnOnce() + Send + 'a>) -> bool {
        // SAFETY: only the lifetime changes, and the caller keeps the borrows alive as long as
        // the job may run (see above).
        let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
        let mut queue = self.0.queue.lock().unwrap_or_else(|e| e.into_inner());
        if queue.idle > queue.jobs.len() {
            queue.jobs.push_back(job);
            self.0.job_ready.notify_one();
            return true;
        }
        drop(queue);
        let waiting = Arc::clone(&self.0);
        std::thread::Builder::new()
            .name("case-helper".into())
            .spawn(move || helper_thread(&waiting, job))
            .is_ok()
    }
}

/// A helper thread: its first job, then each job queued while it waits, until none comes
/// within [`LINGER`].
fn helper_thread(waiting: &Waiting, first: Job) {
    let mut job = first;
    loop {
        job();
        let mut queue = waiting.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.idle += 1;
        job = loop {
            if let Some(next) = queue.jobs.pop_front() {
                queue.idle -= 1;
                break next;
            }
            let (again, waited) = waiting
                .job_ready
                .wait_timeout(queue, LINGER)
                .unwrap_or_else(|e| e.into_inner());
            queue = again;
            if waited.timed_out() && queue.jobs.is_empty() {
                queue.idle -= 1;
                return;
            }
        };
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

    #[test]
    fn a_helper_thread_takes_the_next_job_then_ends_when_none_comes() {
        let threads = Threads::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let run = |tx: std::sync::mpsc::Sender<std::thread::ThreadId>| {
            let job = Box::new(move || tx.send(std::thread::current().id()).unwrap());
            // SAFETY: the job borrows nothing.
            assert!(unsafe { threads.run(job) });
        };
        run(tx.clone());
        let first = rx.recv().unwrap();
        // Once the first job's thread waits for work, the next job goes to it.
        let deadline = std::time::Instant::now() + LINGER / 2;
        while threads.0.queue.lock().unwrap().idle == 0 {
            assert!(std::time::Instant::now() < deadline, "no thread waits");
            std::thread::yield_now();
        }
        run(tx);
        assert_eq!(rx.recv().unwrap(), first, "a second thread started");
        // With nothing more to do, it ends after LINGER (it holds the queue's Arc till then).
        let deadline = std::time::Instant::now() + LINGER * 3;
        while Arc::strong_count(&threads.0) > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "the thread lingers on"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(threads.0.queue.lock().unwrap().idle, 0);
    }
}
