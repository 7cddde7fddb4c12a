//! The binary under test as a child process: its output drained as it comes (no pipe fills
//! up), waited for with a bound, and killed if the test lets it go unfinished; and a test run
//! alone in a fresh process of its own binary.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The binary, run from the repository (see `bin`).
pub fn binary() -> Command {
    let mut command = super::bin();
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// `run ARGS --report-dir DIR --no-regressions`, with `key` in PETSTORE_API_KEY if given.
pub fn run_command(args: &[&str], key: Option<&str>, report_dir: &Path) -> Command {
    let mut command = binary();
    command
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(report_dir)
        .arg("--no-regressions");
    if let Some(key) = key {
        command.env("PETSTORE_API_KEY", key);
    }
    command
}

/// A child that has ended: its exit code, everything it wrote, and how long it ran.
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

impl Finished {
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn assert_no_panic(&self) {
        let all = format!("{}{}", self.stdout(), self.stderr());
        assert!(
            !all.contains("panicked") && !all.contains("RUST_BACKTRACE"),
            "the binary panicked:\n{all}"
        );
    }
}

/// A child whose output is drained as it comes, killed if dropped unfinished.
pub struct Running {
    child: Option<Child>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    started: Instant,
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

impl Running {
    pub fn start(command: &mut Command) -> Running {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("binary starts");
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        Running {
            child: Some(child),
            stdout: Some(stdout),
            stderr: Some(stderr),
            started: Instant::now(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Whether the child has ended (without reaping anything else).
    pub fn try_finish(&mut self) -> Option<Finished> {
        let status = self.child.as_mut().unwrap().try_wait().unwrap()?;
        self.child = None;
        Some(Finished {
            code: status.code(),
            stdout: self.stdout.take().unwrap().join().unwrap(),
            stderr: self.stderr.take().unwrap().join().unwrap(),
            elapsed: self.started.elapsed(),
        })
    }

    /// Waits at most `limit` from the start; past it, kills the child and fails the test.
    pub fn wait(mut self, limit: Duration) -> Finished {
        loop {
            if let Some(finished) = self.try_finish() {
                return finished;
            }
            if self.started.elapsed() > limit {
                let _ = self.child.as_mut().unwrap().kill();
                let _ = self.child.as_mut().unwrap().wait();
                let stderr = self.stderr.take().unwrap().join().unwrap();
                let stdout = self.stdout.take().unwrap().join().unwrap();
                self.child = None;
                // The rules done so far (libtest's lines) say where it was held.
                let stdout = String::from_utf8_lossy(&stdout);
                let last: Vec<&str> = stdout.lines().rev().take(30).collect();
                panic!(
                    "still running after {limit:?}; killed. stderr:\n{}\nthe last lines of stdout:\n{}",
                    String::from_utf8_lossy(&stderr),
                    last.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` (`TERM`, `INT`) with kill(1).
    pub fn signal(&self, signal: &str) {
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "kill -{signal} failed");
    }

    /// Waits at most `limit` for the child to end after a signal; fails the test past it.
    pub fn finish_within(mut self, limit: Duration, what: &str) -> Finished {
        let from = Instant::now();
        loop {
            if let Some(finished) = self.try_finish() {
                return finished;
            }
            assert!(
                from.elapsed() < limit,
                "{what}: still running {limit:?} after the signal"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `command` to its end, failing the test past `limit`.
pub fn run_to_end(command: &mut Command, limit: Duration) -> Finished {
    Running::start(command).wait(limit)
}

/// Set in a process this binary starts to run one test of its own alone.
const ALONE: &str = "PC_TEST_ALONE";

/// Whether the test `name` of `module` (`module_path!()`) runs here. If this process runs
/// other tests too, runs it again in a fresh process of this binary, alone, fails if it fails
/// there, and says no. For a child's peak memory: its ru_maxrss counts its parent's memory up
/// to its exec, and a process running every other test holds hundreds of megabytes.
pub fn alone(module: &str, name: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let path = module.split_once("::").map_or("", |(_, path)| path);
    let test = format!("{path}::{name}");
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &test, "--nocapture", "--test-threads", "1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{test}, alone:\n{said}");
    assert!(
        said.contains("1 passed"),
        "{test} did not run alone:\n{said}"
    );
    false
}
