//! The progress of a run on a terminal: one bar on stderr with rules done of the total,
//! requests sent, failures so far and the time left in the budget; each failure printed above
//! it as it happens, on one line of the terminal's width, in colour unless `--color never` or
//! `NO_COLOR` says otherwise. Off the terminal (CI logs) or with `--no-progress`, libtest's
//! plain lines are the progress instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::events::{Event, Subscriber};

/// The bar, and the thread that refreshes what it shows while a long rule runs. A subscriber
/// of the run's events: it counts the exchanges and the gated failures, and prints each
/// failure's line as its verdict is reached.
pub struct Progress {
    bar: ProgressBar,
    color: bool,
    layout: Layout,
    figures: Arc<Figures>,
    done: Arc<AtomicBool>,
    refresher: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// How the bar's line fits a terminal: the bar's columns, the room its message has, and
/// whether it says the time left (only when the user gave `--time-budget`: the default
/// bound is no budget of theirs).
#[derive(Debug, Clone, Copy)]
struct Layout {
    bar: usize,
    message: usize,
    budget: bool,
}

impl Layout {
    /// For `rules` rules on a terminal `width` columns wide: the line is the bar, " N/N rules  "
    /// and the message, one column short of the width (a line that fills the last column
    /// wraps on some terminals).
    fn new(width: usize, rules: u64, budget: bool) -> Layout {
        let count = format!(" {rules}/{rules} rules  ").chars().count();
        let line = width.saturating_sub(1);
        let bar = line.saturating_sub(count + 40).clamp(8, 30);
        Layout {
            bar,
            message: line.saturating_sub(bar + count),
            budget,
        }
    }
}

impl Progress {
    /// A bar over `rules` rules, counting on from `requests` already sent, drawn on stderr;
    /// failure lines in colour if `color`; the time left to `deadline` shown when the run has a
    /// `budget`.
    pub fn start(
        rules: u64,
        requests: u64,
        deadline: Option<Instant>,
        (color, budget): (bool, bool),
    ) -> Progress {
        let layout = Layout::new(terminal_width().unwrap_or(DEFAULT_WIDTH), rules, budget);
        let bar = ProgressBar::with_draw_target(Some(rules), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{bar:{}}} {{pos}}/{{len}} rules  {{msg}}",
                layout.bar
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let figures = Arc::new(Figures {
            deadline,
            requests: AtomicU64::new(requests),
            failures: AtomicU64::new(0),
        });
        let done = Arc::new(AtomicBool::new(false));
        let refresher = {
            let (bar, figures, done) = (bar.clone(), Arc::clone(&figures), Arc::clone(&done));
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    bar.set_message(figures.status_line(layout));
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        };
        Progress {
            bar,
            color,
            layout,
            figures,
            done,
            refresher: std::sync::Mutex::new(Some(refresher)),
        }
    }

    /// One rule finished; a failure is printed above the bar as it happens (the rule and one
    /// line of reason), so the terminal shows what broke before the run ends. A known failure
    /// and a failure the gate does not count are shown but not counted: the count is the
    /// report's `failed` (`Totals::failed`).
    pub fn rule_done(&self, failure: Option<FailureLine<'_>>) {
        if let Some(failure) = failure {
            if failure.gated {
                self.figures.failures.fetch_add(1, Ordering::Relaxed);
                self.bar.set_message(self.figures.status_line(self.layout));
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
        self.bar.set_message(self.figures.status_line(self.layout));
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
        // A failure not gated is a recommended rule's: its level goes without saying.
        let head = match (self.gated, self.known) {
            (_, true) => format!("known failure {} [{}]: ", self.rule, self.level),
            (true, false) => format!("FAILED {} [{}]: ", self.rule, self.level),
            (false, false) => format!("failed (not gated) {}: ", self.rule),
        };
        let tone = match (self.gated, self.known) {
            (true, false) => Tone::Failed,
            _ => Tone::Warning,
        };
        let first = self.message.lines().next().unwrap_or_default();
        let room = width.saturating_sub(head.chars().count());
        let reason = cut(first, room);
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

/// What the bar counts, from the run's events, and when the run's bound ends.
#[derive(Default)]
struct Figures {
    deadline: Option<Instant>,
    requests: AtomicU64,
    failures: AtomicU64,
}

impl Figures {
    /// "1234 requests, 2 failed, 41 s left": what the bar says beside the count of rules, cut
    /// to the room the layout leaves.
    fn status_line(&self, layout: Layout) -> String {
        let left = self
            .deadline
            .filter(|_| layout.budget)
            .map(|end| end.saturating_duration_since(Instant::now()).as_secs());
        status_text(
            self.requests.load(Ordering::Relaxed),
            self.failures.load(Ordering::Relaxed),
            left,
            layout.message,
        )
    }
}

impl Subscriber for Progress {
    fn on(&self, event: &Event<'_>) {
        match event {
            Event::ExchangeRecorded(_) => {
                self.figures.requests.fetch_add(1, Ordering::Relaxed);
            }
            Event::VerdictReached(judged) => self.rule_done(
                matches!(judged.judgement.verdict, crate::outcome::Verdict::Failed(_)).then_some(
                    FailureLine {
                        rule: &judged.rule.id,
                        level: judged.rule.level.as_str(),
                        gated: judged.gated,
                        known: judged.known,
                        message: judged.message,
                    },
                ),
            ),
            Event::RunFinished => {}
        }
    }
}

/// The bar's message from its figures, at most `room` columns.
fn status_text(requests: u64, failures: u64, left: Option<u64>, room: usize) -> String {
    // "failed", as the summary and the reports say it.
    let mut line = format!("{requests} requests, {failures} failed");
    if let Some(left) = left {
        line.push_str(&format!(", {left} s left"));
    }
    cut(&line, room)
}

/// `text` in at most `room` columns, its end replaced by `…` when cut.
fn cut(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(room.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
mod tests {
    use super::{ColorChoice, FailureLine, Layout, paint, status_text, wants_color};

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
    fn the_bar_fits_any_width_and_says_a_budget_only_when_there_is_one() {
        for width in [40, 80, 120, 200] {
            for rules in [9, 105, 1000] {
                let layout = Layout::new(width, rules, true);
                let message = status_text(123_456, 99, Some(3600), layout.message);
                let line = format!(
                    "{} {rules}/{rules} rules  {message}",
                    "█".repeat(layout.bar)
                );
                assert!(
                    line.chars().count() < width.max(layout.bar + 20),
                    "{width}: {line}"
                );
                if width >= 80 {
                    assert!(
                        message.starts_with("123456 requests, 99 failed"),
                        "{message}"
                    );
                }
            }
        }
        let wide = Layout::new(200, 105, true);
        assert_eq!(wide.bar, 30);
        assert_eq!(
            status_text(5, 1, Some(41), wide.message),
            "5 requests, 1 failed, 41 s left"
        );
        assert_eq!(status_text(5, 1, None, 80), "5 requests, 1 failed");
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
