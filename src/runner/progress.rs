//! The progress of a run on a terminal: one bar on stderr with rules done of the total,
//! requests sent, failures so far and the time left in the budget; each failure printed above
//! it as it happens, on one line of the terminal's width, in colour unless `--color never` or
//! `NO_COLOR` says otherwise. Off the terminal (CI logs) or with `--no-progress`, libtest's
//! plain lines are the progress instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::run::Run;

/// The bar, and the thread that refreshes what it shows while a long rule runs.
pub struct Progress {
    bar: ProgressBar,
    color: bool,
    run: Arc<Run>,
    failures: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    refresher: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Progress {
    /// A bar over `rules` rules of `run`, drawn on stderr; failure lines in colour if `color`.
    pub fn start(rules: u64, run: &Arc<Run>, color: bool) -> Progress {
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
            color,
            run: Arc::clone(run),
            failures,
            done,
            refresher: std::sync::Mutex::new(Some(refresher)),
        }
    }

    /// One rule finished; a failure is printed above the bar as it happens (the rule and one
    /// line of reason), so the terminal shows what broke before the run ends. A known failure
    /// is shown but not counted: the count is the report's `failed` (`Totals::failed`).
    pub fn rule_done(&self, failure: Option<FailureLine<'_>>) {
        if let Some(failure) = failure {
            if !failure.known {
                let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                self.bar.set_message(status_line(&self.run, failures));
            }
            let width = terminal_width().unwrap_or(DEFAULT_WIDTH);
            self.bar.println(failure.render(width, self.color));
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
        // The last line left on the terminal counts what the summary under it counts.
        self.bar.set_message(status_line(
            &self.run,
            self.failures.load(Ordering::Relaxed),
        ));
        self.bar.finish();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A failed rule as the terminal lists it while the run goes on.
pub struct FailureLine<'a> {
    pub rule: &'a str,
    pub level: &'a str,
    /// Whether the failure fails the run (its level under the gate, not a known failure).
    pub gated: bool,
    /// On the list of known failures: shown, not counted.
    pub known: bool,
    /// What was expected and observed; its first line is shown.
    pub message: &'a str,
}

/// Columns when the terminal does not say (and for a line that goes to a pipe).
const DEFAULT_WIDTH: usize = 100;

impl FailureLine<'_> {
    /// Verdict, level, rule and the first line of the reason, cut to `width` columns (with
    /// `…`) so that no line wraps, the verdict in colour if `color`.
    pub fn render(&self, width: usize, color: bool) -> String {
        let (tag, tone) = match (self.gated, self.known) {
            (_, true) => ("known failure", Tone::Warning),
            (true, false) => ("FAILED", Tone::Failed),
            (false, false) => ("failed (not gated)", Tone::Warning),
        };
        let head = format!("{tag} {} [{}]: ", self.rule, self.level);
        let first = self.message.lines().next().unwrap_or_default();
        let room = width.saturating_sub(head.chars().count()).max(20);
        let mut reason: String = first.chars().take(room).collect();
        if first.chars().count() > room {
            reason.pop();
            reason.push('…');
        }
        format!(
            "{}{}",
            paint(&head, tone, color),
            // Control characters a target sent would move the cursor: shown escaped.
            crate::report::terminal::line(&reason)
        )
    }
}

/// The columns of the terminal stderr is, if it is one; else `COLUMNS`, as shells set it.
pub fn terminal_width() -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct it is given, which lives here.
    let asked = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) };
    if asked == 0 && size.ws_col > 0 {
        return Some(usize::from(size.ws_col));
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.trim().parse().ok())
        .filter(|columns| *columns > 0)
}

/// What a coloured word means: red fails the run, yellow is reported and not gated, green passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Failed,
    Warning,
    Passed,
}

/// `text` in the colour of `tone` (bold for a failure), or as it is when `color` is off.
pub fn paint(text: &str, tone: Tone, color: bool) -> String {
    if !color {
        return text.to_string();
    }
    let code = match tone {
        Tone::Failed => "1;31",
        Tone::Warning => "33",
        Tone::Passed => "32",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// Whether to colour a stream: `--color always` or `never` says; `auto` colours a terminal,
/// unless `NO_COLOR` is set to anything but the empty string (no-color.org).
pub fn wants_color(choice: ColorChoice, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// `--color`: when to colour the output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    Always,
    Never,
}

/// "1234 requests, 2 failures, 41 s left": what the bar says beside the count of rules.
fn status_line(run: &Run, failures: u64) -> String {
    // "failed", as the summary and the reports say it.
    let mut line = format!("{} requests, {failures} failed", run.requests_sent());
    if let Some(end) = run.stops.hard_deadline() {
        let left = end.saturating_duration_since(Instant::now());
        line.push_str(&format!(", {} s left in the budget", left.as_secs()));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::{ColorChoice, FailureLine, paint, wants_color};

    fn line<'a>(message: &'a str, gated: bool, known: bool) -> FailureLine<'a> {
        FailureLine {
            rule: "list-pets/limit/default-at-most-20",
            level: "required",
            gated,
            known,
            message,
        }
    }

    #[test]
    fn a_failure_is_one_line_of_the_terminals_width_naming_the_rule_and_why() {
        let message = format!(
            "expected at most 20 pets; observed {}\nmore",
            "x".repeat(300)
        );
        for width in [80, 120, 160, 240] {
            let shown = line(&message, true, false).render(width, false);
            assert!(shown.starts_with(
                "FAILED list-pets/limit/default-at-most-20 [required]: expected at most 20"
            ));
            assert!(!shown.contains('\n') && shown.ends_with('…'), "{shown}");
            assert_eq!(shown.chars().count(), width, "{shown}");
        }
        let short = line("observed 21", true, false).render(160, false);
        assert!(short.ends_with(": observed 21"), "{short}");
        let quiet = line("x", false, false).render(80, false);
        assert!(quiet.starts_with("failed (not gated) "), "{quiet}");
        let known = line("x", true, true).render(80, false);
        assert!(known.starts_with("known failure "), "{known}");
        // A target's control characters never reach the terminal as such.
        let hostile = line("observed \u{1b}[2J", true, false).render(80, false);
        assert!(!hostile.contains('\u{1b}'), "{hostile:?}");
    }

    #[test]
    fn colour_only_when_asked_or_on_a_terminal_without_no_color() {
        let red = line("x", true, false).render(80, true);
        assert!(red.starts_with("\x1b[1;31mFAILED "), "{red:?}");
        assert_eq!(paint("ok", super::Tone::Passed, false), "ok");
        assert!(wants_color(ColorChoice::Always, false));
        assert!(!wants_color(ColorChoice::Never, true));
        assert!(!wants_color(ColorChoice::Auto, false));
    }
}
