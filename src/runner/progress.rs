//! The progress of a run on a terminal: one bar on stderr with rules done of the total,
//! requests sent, failures so far and the time left in the budget. Off the terminal (CI logs)
//! or with `--no-progress`, libtest's plain lines are the progress instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::rules::Run;

/// The bar, and the thread that refreshes what it shows while a long rule runs.
pub struct Progress {
    bar: ProgressBar,
    failures: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    refresher: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Progress {
    /// A bar over `rules` rules of `run`, drawn on stderr.
    pub fn start(rules: u64, run: &Arc<Run>) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(rules), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} rules  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let failures = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let refresher = {
            let (bar, failures, done, run) = (
                bar.clone(),
                Arc::clone(&failures),
                Arc::clone(&done),
                Arc::clone(run),
            );
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    bar.set_message(status_line(&run, failures.load(Ordering::Relaxed)));
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        };
        Progress {
            bar,
            failures,
            done,
            refresher: std::sync::Mutex::new(Some(refresher)),
        }
    }

    /// One rule finished, failed or not.
    pub fn rule_done(&self, failed: bool) {
        if failed {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
        self.bar.inc(1);
    }

    /// Clears the bar, before the summary is printed.
    pub fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
        let refresher = self
            .refresher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(refresher) = refresher {
            let _ = refresher.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// "1234 requests, 2 failures, 41 s left": what the bar says beside the count of rules.
fn status_line(run: &Run, failures: u64) -> String {
    let mut line = format!(
        "{} requests, {failures} failure{}",
        run.requests_sent(),
        if failures == 1 { "" } else { "s" }
    );
    if let Some(end) = run.stops.hard_deadline() {
        let left = end.saturating_duration_since(Instant::now());
        line.push_str(&format!(", {} s left in the budget", left.as_secs()));
    }
    line
}
