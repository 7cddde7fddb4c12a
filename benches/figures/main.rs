//! The bench: the figures that say how fast the suite is where it matters, against a remote
//! target, printed as a table and written as JSON. Not a test: nothing here passes or fails.
//! A bench target of its own, out of the release binary (`cargo bench --bench figures --
//! [--output FILE] [--long-budget SECONDS]`, optimised as a release build); it times the
//! harness's own binary, which cargo builds beside it.
//! 1. The default suite against the reference at 0, 10 and 50 ms of latency (five interleaved
//!    rounds, each figure the median; `--only-latency` for these alone, `--rounds` for more):
//!    wall time, in round trips and in round trips added to the run at 0 ms, beside the
//!    critical path (the longest chain of dependent requests of a rule).
//! 2. Time-budget throughput against a raw ceiling measured in the same run: the same client,
//!    at the same concurrency, sending the same mix of requests (the budget run's own request
//!    log, over again) to a fresh reference with nothing judged, as a ratio. Both write the
//!    same request log (the run needs it for the mix), so the ratio is what generating and
//!    judging cost, over the whole run (start, phases and reports included).
//! 3. Peak RSS and report size of the default run and after 5 s and 60 s budgets (the harness
//!    alone: the reference runs in a process of its own).
//! 4. Peak RSS against targets that send much: 1 MiB of `[{},{},...]` to every request, and a
//!    17,000-pet listing for every listPets (memory is bounded by bytes, not by what the target
//!    sends: at most 256 MB).
//! 5. Three shards of the default run (`--partition hash:K/3`) at once against the single run
//!    (`shards.rs`).

mod scratch;
mod shards;

use scratch::scratch;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use petstore_conformance::execution::{Client, ClientSettings};
use petstore_conformance::generation::request::{Body, RequestSpec};
use petstore_conformance::reference::{ReferenceConfig, ReferenceServer};
use petstore_conformance::runner::{RunConfig, stages};
use petstore_conformance::{stderrln, stdout};

#[path = "../../tests/common/peak.rs"]
mod peak;
use peak::vm_hwm_kb;

/// The harness's binary, which the runs in processes of their own time.
const HARNESS: &str = env!("CARGO_BIN_EXE_petstore-conformance");

/// Seconds of the long memory run: up to a day.
const LONG_BUDGET_SECONDS: std::ops::RangeInclusive<u64> = 1..=86_400;

/// The bench's arguments (cargo passes `--bench` too).
#[derive(clap::Parser)]
#[command(
    name = "figures",
    about = "Measure the harness: the default suite at 0, 10 and 50 ms of latency (in round trips), time-budget throughput against a raw ceiling, peak RSS of the default run and after a short and a long budget, three shards at once against the single run. Prints a table and writes it as JSON; about a minute and a half."
)]
struct Args {
    /// Where the figures are written as JSON.
    #[arg(long, default_value = "reports/bench.json")]
    output: PathBuf,
    /// Seconds of the long memory run.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(LONG_BUDGET_SECONDS))]
    long_budget: u64,
    /// Print only the time-budget throughput line (a few seconds), for tuning it.
    #[arg(long)]
    only_throughput: bool,
    /// Print only the peak RSS against the targets that send much (a few seconds each).
    #[arg(long, conflicts_with = "only_throughput")]
    only_heavy: bool,
    /// Print only the suite's latency figures (about 20 s at five rounds), for tuning the
    /// round trips added.
    #[arg(long, conflicts_with_all = ["only_throughput", "only_heavy"])]
    only_latency: bool,
    /// Interleaved rounds of the suite at 0, 10 and 50 ms: more rounds, a steadier median.
    #[arg(long, default_value_t = SUITE_ROUNDS as u64, value_parser = clap::value_parser!(u64).range(1..=100))]
    rounds: u64,
    /// Given by `cargo bench`.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> std::process::ExitCode {
    let args = <Args as clap::Parser>::parse();
    match measure(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            stderrln!("bench: {error}");
            std::process::ExitCode::from(2)
        }
    }
}

fn measure(args: &Args) -> Result<(), String> {
    if args.only_throughput {
        stdout!(
            "{}",
            render_throughput(&throughput(Duration::from_secs(5))?)
        );
        return Ok(());
    }
    if args.only_heavy {
        let heavy = [Heavy::TinyItems, Heavy::Listing]
            .into_iter()
            .map(heavy_memory)
            .collect::<Result<Vec<_>, _>>()?;
        stdout!("{}", render_heavy(&heavy));
        return Ok(());
    }
    let rounds = usize::try_from(args.rounds).unwrap_or(SUITE_ROUNDS);
    if args.only_latency {
        stdout!("{}", render_suite(&suites(rounds)?));
        return Ok(());
    }
    let figures = run_all(Duration::from_secs(args.long_budget), rounds)?;
    stdout!("{}", render(&figures));
    if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let json = serde_json::to_string_pretty(&figures).unwrap_or_default();
    petstore_conformance::execution::files::replace(&args.output, json.as_bytes())
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    stderrln!("wrote {}", args.output.display());
    Ok(())
}

#[derive(Debug, Serialize)]
pub struct SuiteFigure {
    pub latency_ms: u64,
    pub wall_ms: u64,
    pub requests: usize,
    /// Wall time over latency: how many round trips the run cost.
    pub round_trips: Option<f64>,
    /// (wall − wall at 0 ms) / latency: the round trips the latency added to the run, the
    /// median over interleaved rounds (see [`suites`]).
    pub added_round_trips: Option<f64>,
    /// The fewest and the most round trips added in one round.
    pub added_round_trips_spread: Option<(f64, f64)>,
    /// The longest chain of dependent requests of one rule, and that rule.
    pub critical_path: u32,
    pub critical_rule: String,
    /// Connections the run opened, the most open at once, and the concurrency level reached.
    pub connections_opened: u64,
    pub connections_most_open: u64,
    pub concurrency_reached: u64,
}

#[derive(Debug, Serialize)]
pub struct Throughput {
    pub budget_s: u64,
    pub suite_requests_per_s: f64,
    pub raw_requests_per_s: f64,
    pub ratio: f64,
    /// CPU time of this process (harness and in-process reference) per request, in µs, for
    /// the budget run and for the ceiling: the ratio of these is what the requests/s ratio
    /// comes to on a machine with nothing else running, and it holds on a busy one.
    pub suite_cpu_us_per_request: f64,
    pub raw_cpu_us_per_request: f64,
}

/// CPU time this process has used so far (user and system, all threads, ended ones too):
/// `utime` and `stime` of /proc/self/stat (fields 14 and 15, counted after the command name,
/// which may hold spaces), in ticks of 10 ms (`USER_HZ` on Linux); zero without /proc.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = (after_name.split_whitespace().skip(11).take(2))
        .filter_map(|ticks| ticks.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

fn per_request_us(cpu: Duration, requests: usize) -> f64 {
    cpu.as_secs_f64() * 1e6 / requests.max(1) as f64
}

#[derive(Debug, Serialize)]
pub struct Memory {
    /// `None`: the default run, no budget.
    pub budget_s: Option<u64>,
    pub peak_rss_kb: u64,
    pub report_bytes: u64,
    pub pets_created: u64,
}

/// Peak RSS of a default run against a target that sends much.
#[derive(Debug, Serialize)]
pub struct HeavyMemory {
    pub target: String,
    pub peak_rss_kb: u64,
    pub wall_ms: u64,
    pub exit_code: Option<i32>,
}

#[derive(Debug, Serialize)]
pub struct Bench {
    pub machine: String,
    pub suite: Vec<SuiteFigure>,
    pub throughput: Throughput,
    pub memory: Vec<Memory>,
    pub heavy_answers: Vec<HeavyMemory>,
    pub shards: shards::Shards,
}

fn quiet(config: &mut RunConfig, dir: &Path) {
    config.libtest.logfile = Some(dir.join("libtest.log").display().to_string());
    config.options.request_log = Some(dir.join("requests.jsonl"));
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// Rounds of the suite by default (`--rounds`): each round runs it at every latency in turn,
/// so that a round's runs see the machine in the same state. Single runs here move by a round
/// trip at 50 ms with what else the machine does, and three runs at 0 ms then three at 50 ms,
/// minutes apart in a busy hour, moved the round trips added by as much.
const SUITE_ROUNDS: usize = 5;

/// The latencies of the suite's figures, the first at 0 ms (what the others are added to).
const LATENCIES_MS: [u64; 3] = [0, 10, 50];

/// The suite at 0, 10 and 50 ms in `rounds` interleaved rounds. Each latency's figure is its
/// run of median wall time; the round trips it added are the median over the rounds of what
/// it added to the same round's run at 0 ms, with their spread.
fn suites(rounds: usize) -> Result<Vec<SuiteFigure>, String> {
    let rounds = (0..rounds.max(1))
        .map(|_| {
            LATENCIES_MS
                .iter()
                .map(|ms| suite_at(Duration::from_millis(*ms)))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(interleaved(rounds))
}

/// Each latency's figure from rounds of runs (one run per latency each, the first at 0 ms):
/// its run of median wall time, with the round trips added as [`suites`] says.
fn interleaved(rounds: Vec<Vec<SuiteFigure>>) -> Vec<SuiteFigure> {
    let added: Vec<Vec<f64>> = (0..LATENCIES_MS.len())
        .map(|at| {
            let mut added: Vec<f64> = rounds
                .iter()
                .filter(|round| round[at].latency_ms > 0)
                .map(|round| {
                    (round[at].wall_ms as f64 - round[0].wall_ms as f64)
                        / round[at].latency_ms as f64
                })
                .collect();
            added.sort_by(f64::total_cmp);
            added
        })
        .collect();
    let mut by_latency: Vec<Vec<SuiteFigure>> =
        (0..LATENCIES_MS.len()).map(|_| Vec::new()).collect();
    for round in rounds {
        for (at, run) in round.into_iter().enumerate() {
            by_latency[at].push(run);
        }
    }
    by_latency
        .into_iter()
        .zip(added)
        .map(|(mut runs, added)| {
            runs.sort_by_key(|run| run.wall_ms);
            let mut figure = runs.swap_remove(runs.len() / 2);
            figure.added_round_trips = median(&added);
            figure.added_round_trips_spread =
                added.first().zip(added.last()).map(|(a, b)| (*a, *b));
            figure
        })
        .collect()
}

/// The median of sorted `values` (the mean of the middle two for an even count).
fn median(values: &[f64]) -> Option<f64> {
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The default suite against the reference with `latency` on every answer.
pub fn suite_at(latency: Duration) -> Result<SuiteFigure, String> {
    let dir = scratch(&format!("suite-{}", latency.as_millis()));
    let mut config = petstore_conformance::embedded::reference_config(1);
    config.options.reference_latency = Some(latency);
    quiet(&mut config, &dir);
    let started = Instant::now();
    let outcome = stages::execute(config).map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    let report = outcome.report.ok_or("no report")?;
    let critical = report
        .rules
        .iter()
        .max_by_key(|rule| rule.round_trips)
        .ok_or("no rule ran")?;
    Ok(SuiteFigure {
        latency_ms: latency.as_millis() as u64,
        wall_ms: wall.as_millis() as u64,
        requests: lines(&dir.join("requests.jsonl")),
        round_trips: (!latency.is_zero()).then(|| wall.as_secs_f64() / latency.as_secs_f64()),
        added_round_trips: None,
        added_round_trips_spread: None,
        critical_path: critical.round_trips,
        critical_rule: critical.id.clone(),
        connections_opened: report.connections.opened,
        connections_most_open: report.connections.most_open,
        concurrency_reached: report.connections.concurrency_reached,
    })
}

/// The requests of a request log line: method, path (with its query) and body; sent with the
/// key, whatever credential the line had (a refusal costs the target no less).
fn logged_request(line: &str) -> Option<RequestSpec> {
    let entry: serde_json::Value = serde_json::from_str(line).ok()?;
    let full = entry["path"].as_str()?;
    let (path, query) = full.split_once('?').unwrap_or((full, ""));
    let spec = match entry["method"].as_str()? {
        "POST" => RequestSpec::post(
            path,
            Body::Raw {
                content_type: Some("application/json".into()),
                bytes: {
                    let text = entry["body"].as_str().unwrap_or("");
                    match entry["body_escaped"].as_bool() {
                        Some(true) => petstore_conformance::outcome::unescape_body(text),
                        _ => text.as_bytes().to_vec(),
                    }
                    .into()
                },
            },
        ),
        _ => RequestSpec::get(path),
    };
    Some(if query.is_empty() {
        spec
    } else {
        spec.raw_query(query)
    })
}

/// Requests per second the client gets from a fresh reference with nothing judged: `mix`
/// sent over and over for `span`, `--concurrency` (96) requests in flight, each written to a
/// request log in `dir` as the budget run writes its own.
fn raw_ceiling(span: Duration, mix: &[RequestSpec], dir: &Path) -> Result<(f64, f64), String> {
    if mix.is_empty() {
        return Err("the budget run logged no request".into());
    }
    let runtime = petstore_conformance::runner::runtime().map_err(|e| e.to_string())?;
    let key = format!("bench-{}", petstore_conformance::seed::random_seed());
    let server = runtime
        .block_on(ReferenceServer::start(ReferenceConfig::new(key.clone()), 0))
        .map_err(|e| e.to_string())?;
    let settings = ClientSettings::default();
    let loops = settings.concurrency;
    let client = std::sync::Arc::new(
        Client::new(&server.base_url, &key, settings, runtime.handle().clone())
            .map_err(|e| e.to_string())?,
    );
    let log = petstore_conformance::execution::files::create(&dir.join("raw-requests.jsonl"))
        .map(|file| std::sync::Mutex::new(std::io::BufWriter::new(file)))
        .map_err(|e| e.to_string())?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cpu = cpu_time();
    let started = Instant::now();
    let counts: Vec<usize> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..loops)
            .map(|_| {
                let (client, next, log) = (std::sync::Arc::clone(&client), &next, &log);
                scope.spawn(move || {
                    let mut sent = 0;
                    while started.elapsed() < span {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let exchange = client.send(&mix[index % mix.len()]);
                        let line = petstore_conformance::execution::request_log::line(
                            "raw-ceiling",
                            &exchange.request,
                            client.base_url(),
                            client.redactor(),
                        );
                        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
                        let _ = writeln!(log, "{line}");
                        drop(log);
                        sent += 1;
                    }
                    sent
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0)).collect()
    });
    let sent = counts.iter().sum::<usize>();
    let cpu = per_request_us(cpu_time().saturating_sub(cpu), sent);
    Ok((sent as f64 / started.elapsed().as_secs_f64(), cpu))
}

/// The suite's requests per second under a time budget, beside the raw ceiling.
pub fn throughput(budget: Duration) -> Result<Throughput, String> {
    let dir = scratch("throughput");
    let mut config = petstore_conformance::embedded::reference_config(2);
    // No --cases: the budget bounds the run.
    config.options.time_budget = Some(petstore_conformance::runner::options::Seconds(
        budget.as_secs(),
    ));
    quiet(&mut config, &dir);
    let cpu = cpu_time();
    let started = Instant::now();
    stages::execute(config).map_err(|e| e.to_string())?;
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_time().saturating_sub(cpu);
    let log = std::fs::read_to_string(dir.join("requests.jsonl")).unwrap_or_default();
    let mix: Vec<RequestSpec> = log.lines().filter_map(logged_request).collect();
    let suite = log.lines().count() as f64 / elapsed;
    let (raw, raw_cpu) = raw_ceiling(Duration::from_secs(3), &mix, &dir)?;
    Ok(Throughput {
        budget_s: budget.as_secs(),
        suite_requests_per_s: suite,
        raw_requests_per_s: raw,
        ratio: suite / raw,
        suite_cpu_us_per_request: per_request_us(cpu, log.lines().count()),
        raw_cpu_us_per_request: raw_cpu,
    })
}

/// Peak RSS (VmHWM) of `run` (with `--time-budget` when `budget` is given) in a process of
/// its own, against a reference in another.
pub fn memory(budget: Option<Duration>) -> Result<Memory, String> {
    let budget_s = budget.map(|b| b.as_secs());
    let dir = scratch(&format!("memory-{}", budget_s.unwrap_or(0)));
    let key = format!("bench-{}", petstore_conformance::seed::random_seed());
    let runtime = petstore_conformance::runner::runtime().map_err(|e| e.to_string())?;
    let server = runtime
        .block_on(ReferenceServer::start(ReferenceConfig::new(key.clone()), 0))
        .map_err(|e| e.to_string())?;
    let mut child = std::process::Command::new(HARNESS)
        .args(["run", "--no-regressions", "--base-url", &server.base_url])
        .args(
            budget_s
                .map(|b| vec!["--time-budget".to_string(), b.to_string()])
                .unwrap_or_default(),
        )
        .arg("--report-dir")
        .arg(dir.join("reports"))
        .env("PETSTORE_API_KEY", &key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let peak = peak_rss_kb(&mut child)?;
    let report_path = dir.join("reports/report.json");
    let report: serde_json::Value = std::fs::read(&report_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    Ok(Memory {
        budget_s,
        peak_rss_kb: peak,
        report_bytes: std::fs::metadata(&report_path).map_or(0, |m| m.len()),
        pets_created: report["created_pets"]["count"].as_u64().unwrap_or(0),
    })
}

/// The highest VmHWM of `child` until it exits, in kB (0 where /proc is not there).
fn peak_rss_kb(child: &mut std::process::Child) -> Result<u64, String> {
    let mut peak = 0u64;
    loop {
        peak = peak.max(vm_hwm_kb(child.id()));
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            return Ok(peak);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What a heavy target answers.
#[derive(Debug, Clone, Copy)]
pub enum Heavy {
    /// 1 MiB of `[{},{},...]`, 200 application/json, to every request.
    TinyItems,
    /// A listing of 17,000 valid pets to every request on /pets, whatever its limit, creates
    /// included; a pet to getPet.
    Listing,
}

impl Heavy {
    pub fn name(self) -> &'static str {
        match self {
            Heavy::TinyItems => "1 MiB of tiny items to every request",
            Heavy::Listing => "17,000-pet listing",
        }
    }

    /// The status and body answered to a request for `path`.
    fn answer(self, path: &str) -> (u16, std::sync::Arc<Vec<u8>>) {
        static TINY: std::sync::OnceLock<std::sync::Arc<Vec<u8>>> = std::sync::OnceLock::new();
        static LISTING: std::sync::OnceLock<std::sync::Arc<Vec<u8>>> = std::sync::OnceLock::new();
        static PET: std::sync::OnceLock<std::sync::Arc<Vec<u8>>> = std::sync::OnceLock::new();
        let listing = path.split('?').next().is_some_and(|p| p.ends_with("/pets"));
        match self {
            Heavy::TinyItems => (200, TINY.get_or_init(|| tiny_items(1 << 20)).clone()),
            Heavy::Listing if listing => (200, LISTING.get_or_init(|| pets(17_000)).clone()),
            Heavy::Listing => (
                200,
                PET.get_or_init(|| {
                    std::sync::Arc::new(
                        br#"{"id":1,"name":"pet-1","categoryId":1,"status":"available"}"#.to_vec(),
                    )
                })
                .clone(),
            ),
        }
    }

    /// Serves on an ephemeral loopback port, one thread per connection, for the rest of the
    /// process; returns the base URL (with `/v1`).
    pub fn serve(self) -> Result<String, String> {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let Ok(mut writer) = stream.try_clone() else {
                        return;
                    };
                    // Head and body go out in two writes: without this, Nagle's algorithm and
                    // a delayed ACK cost each answer 40 ms.
                    let _ = writer.set_nodelay(true);
                    let mut reader = BufReader::new(stream);
                    loop {
                        let mut head = String::new();
                        let mut line = String::new();
                        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                            head.push_str(&line);
                            line.clear();
                        }
                        if head.is_empty() {
                            return;
                        }
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .and_then(|v| v.trim().parse::<usize>().ok())
                            })
                            .unwrap_or(0);
                        let mut body = vec![0; length.min(1 << 20)];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let path = head.split(' ').nth(1).unwrap_or("/");
                        let (status, body) = self.answer(path);
                        let head = format!(
                            "HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                            body.len()
                        );
                        if writer.write_all(head.as_bytes()).is_err()
                            || writer.write_all(&body).is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        Ok(format!("http://127.0.0.1:{port}/v1"))
    }
}

/// `[{},{},...]` of at most `size` bytes.
pub fn tiny_items(size: usize) -> std::sync::Arc<Vec<u8>> {
    let mut body = b"[{}".to_vec();
    while body.len() + 4 <= size {
        body.extend_from_slice(b",{}");
    }
    body.push(b']');
    std::sync::Arc::new(body)
}

/// A JSON array of `count` valid pets (17,000 of them stay under the 1 MiB body cap, so
/// every one is parsed).
pub fn pets(count: u64) -> std::sync::Arc<Vec<u8>> {
    let items: Vec<String> = (1..=count)
        .map(|id| {
            format!(
                r#"{{"id":{id},"name":"p{id}","categoryId":{},"status":"sold"}}"#,
                id % 7
            )
        })
        .collect();
    std::sync::Arc::new(format!("[{}]", items.join(",")).into_bytes())
}

/// Peak RSS of a default run against `heavy`, in a process of its own (a few seconds; no
/// budget, under which property rules would go on generating cases); the target is served by
/// this one.
pub fn heavy_memory(heavy: Heavy) -> Result<HeavyMemory, String> {
    let dir = scratch("heavy");
    let base_url = heavy.serve()?;
    let started = Instant::now();
    let mut child = std::process::Command::new(HARNESS)
        .args(["run", "--no-regressions", "--base-url", &base_url])
        .arg("--report-dir")
        .arg(dir.join("reports"))
        .env(
            "PETSTORE_API_KEY",
            format!("bench-{}", petstore_conformance::seed::random_seed()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let peak_rss_kb = peak_rss_kb(&mut child)?;
    let exit_code = child.wait().map_err(|e| e.to_string())?.code();
    Ok(HeavyMemory {
        target: heavy.name().into(),
        peak_rss_kb,
        wall_ms: started.elapsed().as_millis() as u64,
        exit_code,
    })
}

/// Every figure; `long` is the budget of the long memory run (60 s by default).
pub fn run_all(long: Duration, rounds: usize) -> Result<Bench, String> {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let suite = suites(rounds)?;
    Ok(Bench {
        machine: format!(
            "{} {}, {cores} cores",
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
        suite,
        throughput: throughput(Duration::from_secs(5))?,
        memory: vec![
            memory(None)?,
            memory(Some(Duration::from_secs(5)))?,
            memory(Some(long))?,
        ],
        heavy_answers: vec![
            heavy_memory(Heavy::TinyItems)?,
            heavy_memory(Heavy::Listing)?,
        ],
        shards: shards::shards(Duration::from_millis(50))?,
    })
}

/// The table of peak RSS against the targets that send much.
pub fn render_heavy(heavy: &[HeavyMemory]) -> String {
    let mut out = String::from("| target | peak RSS | wall | exit |\n|---|---|---|---|\n");
    for h in heavy {
        out.push_str(&format!(
            "| {} | {:.1} MB | {:.1} s | {} |\n",
            h.target,
            h.peak_rss_kb as f64 / 1024.0,
            h.wall_ms as f64 / 1000.0,
            h.exit_code.map_or("-".into(), |c| c.to_string())
        ));
    }
    out
}

/// The throughput line.
pub fn render_throughput(t: &Throughput) -> String {
    format!(
        "time-budget throughput ({} s): {:.0} requests/s; raw ceiling {:.0} requests/s; ratio {:.2} (CPU per request: {:.0} µs against {:.0} µs, {:.2})\n",
        t.budget_s,
        t.suite_requests_per_s,
        t.raw_requests_per_s,
        t.ratio,
        t.suite_cpu_us_per_request,
        t.raw_cpu_us_per_request,
        t.raw_cpu_us_per_request / t.suite_cpu_us_per_request.max(f64::MIN_POSITIVE)
    )
}

/// The suite's latency figures as the guide's table.
pub fn render_suite(suite: &[SuiteFigure]) -> String {
    let mut out = String::new();
    out.push_str("| latency | wall | requests | round trips | added to 0 ms | critical path (rule) | connections opened (most open) | concurrency reached |\n|---|---|---|---|---|---|---|---|\n");
    for row in suite {
        out.push_str(&format!(
            "| {} ms | {:.2} s | {} | {} | {} | {} ({}) | {} ({}) | {} |\n",
            row.latency_ms,
            row.wall_ms as f64 / 1000.0,
            row.requests,
            row.round_trips.map_or("-".into(), |r| format!("{r:.0}")),
            match (row.added_round_trips, row.added_round_trips_spread) {
                (Some(median), Some((least, most))) =>
                    format!("{median:.1} ({least:.1} to {most:.1})"),
                _ => "-".into(),
            },
            row.critical_path,
            row.critical_rule,
            row.connections_opened,
            row.connections_most_open,
            row.concurrency_reached
        ));
    }
    out
}

/// The table the guide shows (docs/src/performance.md).
pub fn render(bench: &Bench) -> String {
    let mut out = format!("machine: {}\n\n", bench.machine);
    out.push_str(&render_suite(&bench.suite));
    out.push('\n');
    out.push_str(&render_throughput(&bench.throughput));
    out.push_str("\n| budget | peak RSS | report.json | pets created |\n|---|---|---|---|\n");
    for m in &bench.memory {
        out.push_str(&format!(
            "| {} | {:.1} MB | {} kB | {} |\n",
            m.budget_s
                .map_or("none (default run)".into(), |b| format!("{b} s")),
            m.peak_rss_kb as f64 / 1024.0,
            m.report_bytes / 1024,
            m.pets_created
        ));
    }
    out.push('\n');
    out.push_str(&render_heavy(&bench.heavy_answers));
    let sh = &bench.shards;
    let walls: Vec<String> = sh
        .shard_wall_ms
        .iter()
        .map(|ms| format!("{:.2} s", *ms as f64 / 1000.0))
        .collect();
    out.push_str(&format!(
        "\n3 shards at {} ms, three processes at once: {:.2} s (each {}) against {:.2} s for the single run; merged verdicts {} the single run's\n",
        sh.latency_ms,
        sh.shards_wall_ms as f64 / 1000.0,
        walls.join(", "),
        sh.single_wall_ms as f64 / 1000.0,
        if sh.merged_equals_single { "equal" } else { "DIFFER FROM" }
    ));
    out
}
