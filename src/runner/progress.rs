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

    /// One rule finished; a failure is printed above the bar as it happens (the rule and one
    /// line of reason), so the terminal shows what broke before the run ends.
    pub fn rule_done(&self, failure: Option<String>) {
        if let Some(line) = failure {
            self.failures.fetch_add(1, Ordering::Relaxed);
            self.bar.println(line);
        }
        self.bar.inc(1);
    }

    /// The run ended with every selected rule judged: the bar shows its total, whatever
    /// drawing it skipped (it is redrawn at most a few times a second).
    pub fn complete(&self) {
        if let Some(total) = self.bar.length() {
            self.bar.set_position(total);
        }
    }

    /// Stops refreshing and leaves the bar's last state on the terminal, before the summary.
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
        self.bar.finish();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// One failure as the terminal lists it while the run goes on: verdict, level, rule, and the
/// first line of what was expected and observed, cut to a terminal's width.
pub fn failure_line(rule: &str, level: &str, gated: bool, message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    let mut reason: String = first.chars().take(140).collect();
    if first.chars().count() > 140 {
        reason.push('…');
    }
    let tag = if gated {
        "FAILED"
    } else {
        "failed (not gated)"
    };
    format!(
        "{tag} {rule} [{level}]: {}",
        crate::report::terminal::line(&reason)
    )
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

#[cfg(test)]
mod tests {
    use super::failure_line;

    #[test]
    fn a_failure_is_one_line_naming_the_rule_and_why() {
        let line = failure_line(
            "list-pets/limit/default-at-most-20",
            "required",
            true,
            &format!(
                "expected at most 20 pets; observed {}\nmore",
                "x".repeat(200)
            ),
        );
        assert!(line.starts_with(
            "FAILED list-pets/limit/default-at-most-20 [required]: expected at most 20"
        ));
        assert!(!line.contains('\n') && line.ends_with('…'), "{line}");
        let quiet = failure_line(
            "deprecation/get-pet/deprecation-syntax",
            "recommended",
            false,
            "x",
        );
        assert!(quiet.starts_with("failed (not gated) "), "{quiet}");
    }
}
