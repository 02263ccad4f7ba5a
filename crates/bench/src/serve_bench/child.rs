//! The `apcache` child processes: `apcache serve` on a free local port (started, waited for
//! on `/health`, stopped with SIGTERM) and `apcache serve-stdin`, timed a round trip at a time.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::http::HttpClient;
use super::load::record;
use super::ServeBenchError;
use crate::latency::{latency_histogram, LatencySummary};

/// Lines of a child's standard error kept for error messages.
const STDERR_TAIL_LINES: usize = 40;

/// The last lines a child wrote to its standard error, collected by a thread.
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl StderrTail {
    fn collect(stderr: impl Read + Send + 'static) -> StderrTail {
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let sink = lines.clone();
        let thread = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut lines = sink.lock().expect("stderr tail lock");
                if lines.len() == STDERR_TAIL_LINES {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
        });
        StderrTail {
            lines,
            thread: Some(thread),
        }
    }

    fn text(&self) -> String {
        let lines = self.lines.lock().expect("stderr tail lock");
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Waits for the child's end of the pipe to close (the child has exited).
    fn finish(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How the server stopped.
#[derive(Debug, Clone, Serialize)]
pub struct Shutdown {
    /// SIGTERM was sent, and the exit came within the grace period.
    pub exited_after_sigterm: bool,
    /// The exit code (`None` when a signal ended it).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did (9 when the grace period ran out).
    pub signal: Option<i32>,
    /// From SIGTERM to the exit, milliseconds.
    pub took_ms: f64,
    /// Exited 0 after SIGTERM.
    pub clean: bool,
    /// The server's last lines of standard error, when it did not stop cleanly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
}

/// A running `apcache serve`.
pub struct ServerProcess {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    stderr: StderrTail,
    exited: bool,
}

/// A free port on 127.0.0.1 (bound and released; another process could take it in between).
fn free_local_addr() -> std::io::Result<SocketAddr> {
    TcpListener::bind("127.0.0.1:0")?.local_addr()
}

impl ServerProcess {
    /// Starts `apcache serve NAME=INDEX --addr 127.0.0.1:PORT SERVER_ARGS` and waits until
    /// `/health` answers 200; returns the process and how long that took.
    pub fn start(
        apcache: &Path,
        index: &Path,
        name: &str,
        server_args: &[String],
        timeout: Duration,
    ) -> Result<(ServerProcess, Duration), ServeBenchError> {
        let addr = free_local_addr().map_err(ServeBenchError::io("finding a free port"))?;
        let mut command = Command::new(apcache);
        command
            .arg("serve")
            .arg(format!("{name}={}", index.display()))
            .arg("--addr")
            .arg(addr.to_string())
            .args(server_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = command.spawn().map_err(ServeBenchError::io(format!(
            "starting {}",
            apcache.display()
        )))?;
        let stderr = StderrTail::collect(child.stderr.take().expect("stderr is piped"));
        let mut server = ServerProcess {
            child,
            addr,
            stderr,
            exited: false,
        };
        let mut client = HttpClient::new(addr, Duration::from_secs(5));
        let mut body = Vec::new();
        loop {
            if let Some(status) = server
                .child
                .try_wait()
                .map_err(ServeBenchError::io("waiting for the server"))?
            {
                server.exited = true;
                server.stderr.finish();
                return Err(ServeBenchError::Server(format!(
                    "apcache serve exited ({status}) before answering /health:\n{}",
                    server.stderr.text()
                )));
            }
            if let Ok(200) = client.get("/health", &mut body) {
                return Ok((server, started.elapsed()));
            }
            if started.elapsed() > timeout {
                return Err(ServeBenchError::Server(format!(
                    "apcache serve did not answer /health within {:.0} s:\n{}",
                    timeout.as_secs_f64(),
                    server.stderr.text()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGTERM and waits up to `grace` for the exit; past it, SIGKILL.
    pub fn stop(mut self, grace: Duration) -> Shutdown {
        let pid = self.child.id() as libc::pid_t;
        let sent = Instant::now();
        // SAFETY: signalling our own child, which has not been waited for (its pid is not reused).
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let mut status: Option<ExitStatus> = None;
        let mut after_sigterm = true;
        while sent.elapsed() < grace {
            match self.child.try_wait() {
                Ok(Some(s)) => {
                    status = Some(s);
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        if status.is_none() {
            after_sigterm = false;
            let _ = self.child.kill();
            status = self.child.wait().ok();
        }
        let took_ms = sent.elapsed().as_secs_f64() * 1e3;
        self.exited = true;
        self.stderr.finish();
        use std::os::unix::process::ExitStatusExt;
        let exit_code = status.and_then(|s| s.code());
        let signal = status.and_then(|s| s.signal());
        let clean = after_sigterm && exit_code == Some(0);
        Shutdown {
            exited_after_sigterm: after_sigterm,
            exit_code,
            signal,
            took_ms,
            clean,
            stderr_tail: (!clean).then(|| self.stderr.text()),
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !self.exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The baseline: the queries through `apcache serve-stdin`, one line out and one answer back
/// at a time.
#[derive(Debug, Clone, Serialize)]
pub struct StdinRun {
    /// Round trips measured.
    pub requests: u64,
    /// Seconds measured (after the warm-up).
    pub duration_s: f64,
    /// Round trips per second.
    pub qps: f64,
    /// Round-trip latency.
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Answers `UNSUPPORTED` in the measured window.
    pub unsupported: u64,
    /// Whether serve-stdin exited 0 once its input closed.
    pub exited_cleanly: bool,
}

/// Runs `lines` (each `COMMAND<TAB>query`) through `apcache serve-stdin INDEX` in a closed loop
/// at concurrency 1: `warmup` unmeasured, then `duration` measured.
pub fn run_serve_stdin(
    apcache: &Path,
    index: &Path,
    lines: &[String],
    warmup: Duration,
    duration: Duration,
) -> Result<StdinRun, ServeBenchError> {
    let mut child = Command::new(apcache)
        .arg("serve-stdin")
        .arg(index)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(ServeBenchError::io(format!(
            "starting {}",
            apcache.display()
        )))?;
    let mut stderr = StderrTail::collect(child.stderr.take().expect("stderr is piped"));
    let mut input: ChildStdin = child.stdin.take().expect("stdin is piped");
    let mut output = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let failed = |what: &str, e: std::io::Error, stderr: &StderrTail| {
        ServeBenchError::Server(format!(
            "apcache serve-stdin: {what}: {e}\n{}",
            stderr.text()
        ))
    };
    let mut histogram: Histogram<u64> = latency_histogram();
    let mut unsupported = 0u64;
    let mut answer = String::new();
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + duration;
    let mut i = 0usize;
    loop {
        let began = Instant::now();
        if began >= end {
            break;
        }
        let line = &lines[i % lines.len()];
        i += 1;
        if let Err(e) = input.write_all(line.as_bytes()) {
            return Err(failed("writing a query", e, &stderr));
        }
        answer.clear();
        match output.read_line(&mut answer) {
            Ok(0) => {
                let e = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "exited");
                return Err(failed("reading an answer", e, &stderr));
            }
            Ok(_) => {}
            Err(e) => return Err(failed("reading an answer", e, &stderr)),
        }
        let done = Instant::now();
        if began >= measure_from && done <= end {
            record(&mut histogram, done - began);
            if answer.starts_with("UNSUPPORTED") {
                unsupported += 1;
            }
        }
    }
    drop(input);
    let status = child
        .wait()
        .map_err(ServeBenchError::io("waiting for serve-stdin"))?;
    stderr.finish();
    let requests = histogram.len();
    Ok(StdinRun {
        requests,
        duration_s: duration.as_secs_f64(),
        qps: requests as f64 / duration.as_secs_f64(),
        latency: LatencySummary::from_histogram(&histogram),
        unsupported,
        exited_cleanly: status.success(),
    })
}
