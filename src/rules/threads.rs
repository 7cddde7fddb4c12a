//! The run's helper threads, kept from one batch of cases to the next.
//!
//! Under a time budget a property rule judges a batch of cases, then draws the next, for the
//! whole budget; a helper thread spawned per batch (in effect, one per case) cost the run
//! ten thousand thread starts in five seconds, each mapping and unmapping its stack guard and
//! signal stack (a TLB shootdown on every core). A thread here waits for its next job instead,
//! and ends when the run's threads are dropped. There are never more of them than the run's
//! worker slots, as each job holds a slot.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

/// A job for a kept thread: it must not borrow what it outlives (see [`Threads::run`]).
pub(super) type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    /// Threads waiting for a job that no job has been handed to yet.
    idle: usize,
    threads: usize,
    /// The run is over: waiting threads end.
    closed: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Up to `max` threads, started when a job finds none waiting, kept until dropped.
pub(super) struct Threads {
    shared: Arc<Shared>,
    max: usize,
}

impl Threads {
    pub(super) fn new(max: usize) -> Threads {
        Threads {
            shared: Arc::default(),
            max: max.max(1),
        }
    }

    /// Runs `job` on a waiting thread, or on a new one while there are fewer than `max` and
    /// `limit` (the helpers allowed now: a thread that has just handed back its slot is not yet
    /// waiting, and would otherwise be joined by a new one each time); else it waits in the
    /// queue for the first thread done with its job. Where no thread can be started, the
    /// caller runs it.
    pub(super) fn run(&self, job: Job, limit: usize) {
        let mut state = self.shared.lock();
        state.queue.push_back(job);
        if state.idle > 0 {
            state.idle -= 1;
            self.shared.wake.notify_one();
            return;
        }
        if state.threads >= self.max.min(limit.max(1)) {
            // A thread that took another's job may be waiting uncounted: wake them all.
            self.shared.wake.notify_all();
            return;
        }
        state.threads += 1;
        drop(state);
        let shared = Arc::clone(&self.shared);
        let started = std::thread::Builder::new()
            .name("case-helper".into())
            .spawn(move || serve(&shared));
        if started.is_err() {
            let mut state = self.shared.lock();
            state.threads -= 1;
            let job = state.queue.pop_back();
            drop(state);
            if let Some(job) = job {
                job();
            }
        }
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_all();
    }
}

/// A kept thread: takes jobs until the threads are dropped.
fn serve(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if let Some(job) = state.queue.pop_front() {
            drop(state);
            job();
            state = shared.lock();
            continue;
        }
        if state.closed {
            state.threads -= 1;
            return;
        }
        state.idle += 1;
        state = shared
            .wake
            .wait_while(state, |state| state.queue.is_empty() && !state.closed)
            .unwrap_or_else(|e| e.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    #[test]
    fn jobs_run_on_kept_threads_never_more_than_max() {
        let threads = Threads::new(3);
        let names = Arc::new(Mutex::new(std::collections::BTreeSet::new()));
        let done = Arc::new(AtomicUsize::new(0));
        for _ in 0..10 {
            // Three at a time, each round waiting for the last: threads are reused.
            let (tx, rx) = mpsc::channel();
            for _ in 0..3 {
                let (names, done, tx) = (Arc::clone(&names), Arc::clone(&done), tx.clone());
                threads.run(
                    Box::new(move || {
                        let id = std::thread::current().id();
                        names.lock().unwrap().insert(format!("{id:?}"));
                        done.fetch_add(1, Ordering::SeqCst);
                        let _ = tx.send(());
                    }),
                    3,
                );
            }
            for _ in 0..3 {
                rx.recv().expect("a job ran");
            }
        }
        assert_eq!(done.load(Ordering::SeqCst), 30);
        let count = names.lock().unwrap().len();
        assert!(count <= 3, "{count} threads for at most 3 jobs at once");
        drop(threads);
    }

    #[test]
    fn a_job_queued_past_max_runs_when_a_thread_is_free() {
        let threads = Threads::new(1);
        let (tx, rx) = mpsc::channel();
        let (release, wait) = mpsc::channel::<()>();
        let first = tx.clone();
        threads.run(
            Box::new(move || {
                let _ = wait.recv();
                let _ = first.send(1);
            }),
            1,
        );
        threads.run(
            Box::new(move || {
                let _ = tx.send(2);
            }),
            1,
        );
        release.send(()).unwrap();
        let order: Vec<i32> = rx.iter().take(2).collect();
        assert_eq!(
            order,
            vec![1, 2],
            "one thread: the second job waits for the first"
        );
    }
}
