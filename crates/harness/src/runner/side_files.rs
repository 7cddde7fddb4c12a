//! The side files a run writes as it goes (`--request-log`, `--har`), each a subscriber of the
//! run's event stream: every exchange recorded is written, redacted, and the file is finished
//! when the run is. One that cannot be created is a warning: side files never cost the run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::engine::events::{Event, Subscriber};
use crate::execution::har::Har;
use crate::execution::request_log;

/// `--request-log FILE`: one JSON line per request.
pub struct RequestLog {
    path: PathBuf,
    out: Mutex<std::io::BufWriter<std::fs::File>>,
}

impl RequestLog {
    /// The log at `path`, or none (with a warning) when it cannot be created.
    pub fn create(path: &Path) -> Option<Arc<RequestLog>> {
        crate::execution::files::create(path)
            .map_err(|e| {
                stderrln!(
                    "petstore-conformance: warning: --request-log {}: cannot create it ({e}); the run goes on without a request log",
                    path.display()
                );
            })
            .ok()
            .map(|file| {
                Arc::new(RequestLog {
                    path: path.to_path_buf(),
                    out: Mutex::new(std::io::BufWriter::new(file)),
                })
            })
    }
}

impl Subscriber for RequestLog {
    fn on(&self, event: &Event<'_>) {
        match event {
            Event::ExchangeRecorded(recorded) => {
                // A padded body's spaces are written as the line goes, not held (a rung of the
                // body ladder is up to 16 MiB of them); any other large body is written whole.
                let padding = recorded.padding_past_kept();
                let logged = match padding {
                    Some(_) => recorded.exchange,
                    None => recorded.whole(),
                };
                let line = request_log::line(
                    recorded.origin,
                    &logged.request,
                    recorded.base_url(),
                    recorded.redactor(),
                );
                let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
                let _ = request_log::write_padded(&mut *out, &line, padding.unwrap_or(0));
            }
            Event::RunFinished => {
                let _ = self.out.lock().unwrap_or_else(|e| e.into_inner()).flush();
            }
            Event::VerdictReached(_) => {}
        }
    }

    fn writes(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
}

/// `--har FILE`: every exchange as HTTP Archive 1.2.
pub struct HarFile {
    path: PathBuf,
    har: Har,
}

impl HarFile {
    /// The archive at `path`, or none (with a warning) when it cannot be created.
    pub fn create(path: &Path) -> Option<Arc<HarFile>> {
        Har::create(path)
            .map_err(|e| {
                stderrln!(
                    "petstore-conformance: warning: --har {}: cannot create it ({e}); the run goes on without it",
                    path.display()
                );
            })
            .ok()
            .map(|har| {
                Arc::new(HarFile {
                    path: path.to_path_buf(),
                    har,
                })
            })
    }
}

impl Subscriber for HarFile {
    fn on(&self, event: &Event<'_>) {
        match event {
            Event::ExchangeRecorded(recorded) => {
                self.har
                    .add(recorded.origin, recorded.whole(), recorded.redactor())
            }
            Event::RunFinished => self.har.finish(),
            Event::VerdictReached(_) => {}
        }
    }

    fn writes(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
}
