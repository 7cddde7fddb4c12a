//! libtest's lines reach stdout through a relay that a closed pipe cannot break. libtest's
//! printer panics when a write fails, so `run | head -1` ended in exit 101 with no report. Off
//! a terminal, libtest writes into a pipe of the run's own (its `--logfile`); a thread copies
//! the lines to stdout and, once stdout is gone, reads the rest and drops it: the run ends as
//! it would have, with its reports and its exit code.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::thread::JoinHandle;

pub(super) struct Relay {
    /// Held until libtest is done, so that the thread reads to the end of libtest's lines, not
    /// to an end before libtest opened the pipe.
    writer: std::io::PipeWriter,
    thread: JoinHandle<()>,
}

impl Relay {
    /// A relay, and the path libtest is to write its lines to; `None` on a terminal (libtest
    /// colours its lines there, and a terminal does not close under it) or where no pipe can
    /// be named.
    pub(super) fn start() -> Option<(Relay, String)> {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() || !std::path::Path::new("/dev/fd").is_dir() {
            return None;
        }
        let (reader, writer) = std::io::pipe().ok()?;
        let path = format!("/dev/fd/{}", writer.as_raw_fd());
        let thread = std::thread::Builder::new()
            .name("libtest-lines".into())
            .spawn(move || copy_while_read(reader))
            .ok()?;
        Some((Relay { writer, thread }, path))
    }

    /// Waits for the last of libtest's lines (libtest has closed its end).
    pub(super) fn finish(self) {
        drop(self.writer);
        let _ = self.thread.join();
    }
}

/// Copies `reader` to stdout until its end; after a write to stdout fails, only reads.
fn copy_while_read(mut reader: std::io::PipeReader) {
    let mut stdout = Some(std::io::stdout());
    let mut buffer = [0u8; 8192];
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => return,
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if let Some(out) = &mut stdout
            && (out.write_all(&buffer[..read]).is_err() || out.flush().is_err())
        {
            stdout = None; // the reader went away (`| head -1`): the rest goes nowhere
        }
    }
}
