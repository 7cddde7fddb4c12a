//! SIGINT and SIGTERM, heard from the start of the process (the command line installs the
//! listener before it parses anything), so that a signal at any moment leaves an honest report
//! directory: this run's report marked interrupted, or none at all, never the previous run's
//! looking current. The first signal stops the run (each run registers what stopping means for
//! it); a second quits at once, withdrawing the previous run's report if this one has not been
//! written yet.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use crate::engine::run::Run;

/// Exit code of a run stopped by SIGINT, as shells report a death by SIGINT (128 + 2).
pub const SIGINT_EXIT_CODE: u8 = 130;
/// Exit code of a run stopped by SIGTERM (128 + 15).
pub const SIGTERM_EXIT_CODE: u8 = 143;

/// The exit code of the first signal heard; 0 while none came.
static SIGNALLED: AtomicU8 = AtomicU8::new(0);

type Hook = Box<dyn Fn() + Send + Sync>;

/// What each run in progress does on the first signal (`stop`) and on the second (`quit`).
struct Hooks {
    stop: Vec<(u64, Hook)>,
    quit: Vec<(u64, Hook)>,
}

static HOOKS: Mutex<Hooks> = Mutex::new(Hooks {
    stop: Vec::new(),
    quit: Vec::new(),
});
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The exit code of the signal that interrupted the process (130 or 143), if one came.
pub fn signalled() -> Option<u8> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        code => Some(code),
    }
}

/// Starts listening for SIGINT and SIGTERM, once per process. The handlers are registered
/// before this returns, so no signal after it kills the process unheard.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let registered = {
                let _context = runtime.enter();
                (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                )
            };
            let (Ok(mut interrupt), Ok(mut terminate)) = registered else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || {
                    runtime.block_on(async move {
                        loop {
                            let code = tokio::select! {
                                _ = interrupt.recv() => SIGINT_EXIT_CODE,
                                _ = terminate.recv() => SIGTERM_EXIT_CODE,
                            };
                            heard(code);
                        }
                    })
                });
        }
        #[cfg(not(unix))]
        {
            let _ = std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || {
                    runtime.block_on(async move {
                        while tokio::signal::ctrl_c().await.is_ok() {
                            heard(SIGINT_EXIT_CODE);
                        }
                    })
                });
        }
    });
}

/// A command with no run to stop (serving the reference, comparing, verifying, merging): the
/// first signal ends the process, while no run is registered.
static QUIT_ON_FIRST: AtomicBool = AtomicBool::new(false);

/// From now on, the first signal that finds no run in progress ends the process at once, with
/// 130 or 143; one that came already ends it now. `run` does not call this: a signal before
/// its run starts stops the run as it starts, which still writes an interrupted report.
pub fn quit_on_first_signal() {
    // Under the lock: a signal is either seen here or finds the flag set.
    let _hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    QUIT_ON_FIRST.store(true, Ordering::SeqCst);
    if let Some(code) = signalled() {
        quit(code);
    }
}

fn quit(code: u8) -> ! {
    stderrln!("petstore-conformance: interrupted");
    std::process::exit(code.into());
}

/// The first signal stops every run in progress (or, with none and [`quit_on_first_signal`],
/// quits); the second quits.
fn heard(code: u8) {
    let first = SIGNALLED
        .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    let hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    if first && hooks.stop.is_empty() && QUIT_ON_FIRST.load(Ordering::SeqCst) {
        quit(code);
    }
    if first {
        stderrln!(
            "petstore-conformance: interrupted: no more requests; writing the reports (again to quit at once)"
        );
        for (_, stop) in &hooks.stop {
            stop();
        }
        return;
    }
    for (_, quit) in &hooks.quit {
        quit();
    }
    stderrln!("petstore-conformance: interrupted again: quitting without a report");
    std::process::exit(signalled().unwrap_or(code).into());
}

/// What a run does on a signal, for as long as this value lives. `stop` runs at once when a
/// signal already came.
pub struct Registration {
    id: u64,
}

pub fn register(stop: Hook, quit: Hook) -> Registration {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
    // Under the lock: a signal either finds the hook in place or is already visible here.
    if signalled().is_some() {
        stop();
    }
    hooks.stop.push((id, stop));
    hooks.quit.push((id, quit));
    Registration { id }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut hooks = HOOKS.lock().unwrap_or_else(|e| e.into_inner());
        hooks.stop.retain(|(id, _)| *id != self.id);
        hooks.quit.retain(|(id, _)| *id != self.id);
    }
}

/// Where a run is in writing its reports, for a second signal: withdraw the previous run's,
/// or let this run's finish.
const NOT_COMMITTED: u8 = 0;
const COMMITTING: u8 = 1;
const COMMITTED: u8 = 2;

/// A run's part in the signals, from before anything is sent: the first stops new requests
/// (the trials see it, the recorder refuses to send) and cuts the ones in flight, the
/// preflight included; the reports are then written, marked interrupted. The second quits at
/// once, and withdraws the previous run's reports from the directory (this run has none yet),
/// so that no report there looks like this run's.
pub(super) struct RunInterrupts {
    cancelled: tokio::sync::watch::Receiver<bool>,
    run: Arc<OnceLock<Arc<Run>>>,
    commit: Arc<AtomicU8>,
    _registration: Registration,
}

impl RunInterrupts {
    /// Listens for the run whose reports go to `report_dir` (none: nothing to withdraw).
    pub(super) fn listen(report_dir: Option<PathBuf>) -> RunInterrupts {
        let (cancel, cancelled) = tokio::sync::watch::channel(false);
        let run: Arc<OnceLock<Arc<Run>>> = Arc::default();
        let commit = Arc::new(AtomicU8::new(NOT_COMMITTED));
        install();
        let stopped = Arc::clone(&run);
        let writing = Arc::clone(&commit);
        let registration = register(
            Box::new(move || {
                let _ = cancel.send(true);
                if let Some(run) = stopped.get() {
                    run.stops.interrupted.store(true, Ordering::SeqCst);
                }
            }),
            Box::new(move || {
                let Some(dir) = &report_dir else {
                    return;
                };
                match writing.load(Ordering::SeqCst) {
                    NOT_COMMITTED => crate::report::withdraw(dir),
                    // Renaming this run's reports into place takes milliseconds: let it
                    // finish, so that the set is this run's whole.
                    _ => {
                        let waiting = Instant::now();
                        while writing.load(Ordering::SeqCst) == COMMITTING
                            && waiting.elapsed() < Duration::from_secs(5)
                        {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                    }
                }
            }),
        );
        RunInterrupts {
            cancelled,
            run,
            commit,
            _registration: registration,
        }
    }

    /// What cancels the client's requests in flight on the first signal.
    pub(super) fn cancelled(&self) -> tokio::sync::watch::Receiver<bool> {
        self.cancelled.clone()
    }

    /// From now on the first signal stops `run`. The listener sets the flag once the run is in
    /// the slot; a signal that came before is seen here (both sides write, then read the
    /// other's, with a full fence between).
    pub(super) fn reach(&self, run: &Arc<Run>) {
        let _ = self.run.set(Arc::clone(run));
        std::sync::atomic::fence(Ordering::SeqCst);
        if signalled().is_some() {
            run.stops.interrupted.store(true, Ordering::SeqCst);
        }
    }

    /// The reports are being renamed into place: a second signal lets that finish.
    pub(super) fn committing(&self) {
        self.commit.store(COMMITTING, Ordering::SeqCst);
    }

    pub(super) fn committed(&self) {
        self.commit.store(COMMITTED, Ordering::SeqCst);
    }
}
