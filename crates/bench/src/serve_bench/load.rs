//! The load generators: a closed loop (C threads, each with one keep-alive connection, sending
//! its next request when the last is answered) and an open loop (requests due at fixed
//! intervals whether or not earlier ones were answered), with latencies in HdrHistograms.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::http::{metric_value, HttpClient};
use crate::latency::{latency_histogram, LatencySummary};

/// Stack of each client thread (the open loop runs hundreds).
const CLIENT_STACK_BYTES: usize = 256 << 10;

/// How long a request may take before the client gives up on it (counted as `io`).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A request sent later than this after its due time counts as late (open loop).
const LATE_AFTER: Duration = Duration::from_millis(1);

/// Samples of `/metrics` kept at most (one a second).
pub const MAX_MEMORY_SAMPLES: usize = 3600;

/// Records `elapsed` in `histogram` (nanoseconds). An auto-resizing histogram grows to take
/// any value (`saturating_record` would clamp it to the current highest instead).
pub fn record(histogram: &mut Histogram<u64>, elapsed: Duration) {
    let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    histogram
        .record(nanos.max(1))
        .expect("an auto-resizing histogram takes any value");
}

/// Outcomes other than 200, by status (`"503"`), plus `"io"` for connection errors and
/// timeouts.
pub type Errors = BTreeMap<String, u64>;

fn count(errors: &mut Errors, key: String) {
    *errors.entry(key).or_insert(0) += 1;
}

fn merge(into: &mut Errors, from: Errors) {
    for (key, n) in from {
        *into.entry(key).or_insert(0) += n;
    }
}

/// One closed-loop run.
#[derive(Debug, Clone, Serialize)]
pub struct ClosedLoopRun {
    /// Client threads, each with one connection and one request in flight.
    pub concurrency: usize,
    /// What was asked: `native`, `es-nosource` (`_search` without stored fields) or `health`.
    pub api: String,
    /// Seconds measured.
    pub duration_s: f64,
    /// Requests started and answered within the measured window.
    pub requests: u64,
    /// Answered 200, per second.
    pub qps: f64,
    /// Latency of the answers 200.
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Other outcomes in the measured window.
    pub errors: Errors,
    /// `/metrics` read right after the run (with `--memory`): the cgroup peak so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_after: Option<MemorySample>,
}

/// Runs `targets` (request paths) from `concurrency` threads, thread `t` starting at query
/// `t * n / concurrency`, for `warmup` unmeasured and then `duration` measured. A request
/// counts when it starts and ends inside the measured window.
pub fn closed_loop(
    addr: SocketAddr,
    targets: &[String],
    concurrency: usize,
    warmup: Duration,
    duration: Duration,
    api: &str,
) -> ClosedLoopRun {
    let start = Instant::now() + Duration::from_millis(20);
    let measure_from = start + warmup;
    let end = measure_from + duration;
    let n = targets.len();
    let results: Vec<(Histogram<u64>, Errors)> = thread::scope(|scope| {
        let handles: Vec<_> = (0..concurrency)
            .map(|t| {
                thread::Builder::new()
                    .stack_size(CLIENT_STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        let mut client = HttpClient::new(addr, REQUEST_TIMEOUT);
                        let mut histogram = latency_histogram();
                        let mut errors = Errors::new();
                        let mut body = Vec::new();
                        let mut i = t * n / concurrency;
                        if let Some(wait) = start.checked_duration_since(Instant::now()) {
                            thread::sleep(wait);
                        }
                        loop {
                            let began = Instant::now();
                            if began >= end {
                                break;
                            }
                            let outcome = client.get(&targets[i % n], &mut body);
                            i += 1;
                            let done = Instant::now();
                            if began < measure_from || done > end {
                                continue;
                            }
                            match outcome {
                                Ok(200) => record(&mut histogram, done - began),
                                Ok(status) => count(&mut errors, status.to_string()),
                                Err(_) => count(&mut errors, "io".into()),
                            }
                        }
                        (histogram, errors)
                    })
                    .expect("spawn a client thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client thread"))
            .collect()
    });
    let mut histogram = latency_histogram();
    let mut errors = Errors::new();
    for (h, e) in results {
        histogram.add(&h).expect("histograms of the same precision");
        merge(&mut errors, e);
    }
    let errors_total: u64 = errors.values().sum();
    ClosedLoopRun {
        concurrency,
        api: api.to_string(),
        duration_s: duration.as_secs_f64(),
        requests: histogram.len() + errors_total,
        qps: histogram.len() as f64 / duration.as_secs_f64(),
        latency: LatencySummary::from_histogram(&histogram),
        errors,
        memory_after: None,
    }
}

/// The server's memory as `/metrics` gives it (`apcache_dram_bytes{kind=...}`), bytes.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct MemorySample {
    /// Seconds since the run started.
    pub t_s: f64,
    /// The memory cgroup's peak (with `--memory-limit`).
    pub cgroup_peak: Option<u64>,
    /// The memory cgroup's usage now.
    pub cgroup_usage: Option<u64>,
    /// The memory cgroup's limit.
    pub cgroup_limit: Option<u64>,
    /// The process's resident anonymous memory.
    pub process_rss_anon: Option<u64>,
    /// The process's resident shared memory (a tmpfs tier it maps).
    pub process_rss_shmem: Option<u64>,
    /// The process's peak resident set (VmHWM, tier pages included).
    pub process_peak_rss: Option<u64>,
}

impl MemorySample {
    /// The figures in a `/metrics` text.
    pub fn parse(text: &str, t_s: f64) -> MemorySample {
        let kind =
            |k: &str| metric_value(text, "apcache_dram_bytes", Some(("kind", k))).map(|v| v as u64);
        MemorySample {
            t_s,
            cgroup_peak: kind("cgroup_peak"),
            cgroup_usage: kind("cgroup_usage"),
            cgroup_limit: kind("cgroup_limit"),
            process_rss_anon: kind("process_rss_anon"),
            process_rss_shmem: kind("process_rss_shmem"),
            process_peak_rss: kind("process_peak_rss"),
        }
    }
}

/// Reads `/metrics` once.
pub fn read_metrics(addr: SocketAddr) -> std::io::Result<String> {
    let mut client = HttpClient::new(addr, Duration::from_secs(10));
    let mut body = Vec::new();
    match client.get("/metrics", &mut body)? {
        200 => Ok(String::from_utf8_lossy(&body).into_owned()),
        status => Err(std::io::Error::other(format!("/metrics answered {status}"))),
    }
}

/// What an open-loop run measured.
#[derive(Debug, Clone, Serialize)]
pub struct OpenLoopRun {
    /// Requests due per second.
    pub rate_per_s: f64,
    /// Connections (client threads) that sent them.
    pub connections: usize,
    /// Seconds during which requests fell due.
    pub duration_s: f64,
    /// Requests that fell due; each counts as offered whether or not it could be sent.
    pub offered: u64,
    /// Offered but never sent: every connection was waiting for an answer until the end.
    pub not_sent: u64,
    /// Sent more than 1 ms after their due time (all connections were busy).
    pub sent_late: u64,
    /// Answered 200.
    pub admitted: u64,
    /// Answered 503 (the server's queue was full).
    pub rejected: u64,
    /// Other statuses, and `io` for connection errors.
    pub other_errors: Errors,
    /// Latency of the admitted, from their due time (so a late send counts against it).
    pub admitted_latency: LatencySummary,
    /// Latency of the admitted, from the moment they were sent.
    pub admitted_service_latency: LatencySummary,
    /// Latency of the rejections, from their due time.
    pub rejected_latency: LatencySummary,
    /// `/metrics` about once a second (at most [`MAX_MEMORY_SAMPLES`]).
    pub memory_samples: Vec<MemorySample>,
}

#[derive(Default)]
struct OpenLoopTotals {
    offered: u64,
    not_sent: u64,
    late: u64,
    errors: Errors,
}

/// Sends `targets` in turn at `rate` per second for `duration` over `connections` connections:
/// request `i` is due at `start + i / rate`; a connection takes the next due request when its
/// last one is answered, sleeps until it is due, and sends it. `/metrics` is read about every
/// `sample_every` on a connection of its own.
pub fn open_loop(
    addr: SocketAddr,
    targets: &[String],
    rate: f64,
    connections: usize,
    duration: Duration,
    sample_every: Duration,
) -> OpenLoopRun {
    let start = Instant::now() + Duration::from_millis(100);
    let end = start + duration;
    let next = AtomicU64::new(0);
    let admitted = Mutex::new((latency_histogram(), latency_histogram()));
    let rejected = Mutex::new(latency_histogram());
    let totals = Mutex::new(OpenLoopTotals::default());
    let stop_sampling = AtomicBool::new(false);
    let samples = Mutex::new(Vec::new());
    thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut client = HttpClient::new(addr, Duration::from_secs(10));
            let mut body = Vec::new();
            let mut due = start;
            while !stop_sampling.load(Ordering::Relaxed) {
                let now = Instant::now();
                if now < due {
                    thread::sleep((due - now).min(Duration::from_millis(50)));
                    continue;
                }
                due += sample_every;
                if let Ok(200) = client.get("/metrics", &mut body) {
                    let text = String::from_utf8_lossy(&body);
                    let t = now.saturating_duration_since(start).as_secs_f64();
                    let mut samples = samples.lock().expect("samples lock");
                    if samples.len() < MAX_MEMORY_SAMPLES {
                        samples.push(MemorySample::parse(&text, t));
                    }
                }
            }
        });
        let workers: Vec<_> = (0..connections)
            .map(|_| {
                thread::Builder::new()
                    .stack_size(CLIENT_STACK_BYTES)
                    .spawn_scoped(scope, || {
                        let mut client = HttpClient::new(addr, REQUEST_TIMEOUT);
                        let mut body = Vec::new();
                        let mut mine = OpenLoopTotals::default();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let due = start + Duration::from_secs_f64(i as f64 / rate);
                            if due >= end {
                                break;
                            }
                            mine.offered += 1;
                            let now = Instant::now();
                            if now < due {
                                thread::sleep(due - now);
                            } else if now >= end {
                                mine.not_sent += 1;
                                continue;
                            } else if now - due > LATE_AFTER {
                                mine.late += 1;
                            }
                            let sent = Instant::now();
                            let outcome =
                                client.get(&targets[i as usize % targets.len()], &mut body);
                            let done = Instant::now();
                            let from_due = done - due;
                            match outcome {
                                Ok(200) => {
                                    let mut h = admitted.lock().expect("histogram lock");
                                    record(&mut h.0, from_due);
                                    record(&mut h.1, done - sent);
                                }
                                Ok(503) => {
                                    record(&mut rejected.lock().expect("histogram lock"), from_due)
                                }
                                Ok(status) => count(&mut mine.errors, status.to_string()),
                                Err(_) => count(&mut mine.errors, "io".into()),
                            }
                        }
                        let mut totals = totals.lock().expect("totals lock");
                        totals.offered += mine.offered;
                        totals.not_sent += mine.not_sent;
                        totals.late += mine.late;
                        merge(&mut totals.errors, mine.errors);
                    })
                    .expect("spawn a client thread")
            })
            .collect();
        for worker in workers {
            worker.join().expect("client thread");
        }
        stop_sampling.store(true, Ordering::Relaxed);
        sampler.join().expect("sampler thread");
    });
    let (admitted, service) = admitted.into_inner().expect("histogram lock");
    let rejected = rejected.into_inner().expect("histogram lock");
    let totals = totals.into_inner().expect("totals lock");
    OpenLoopRun {
        rate_per_s: rate,
        connections,
        duration_s: duration.as_secs_f64(),
        offered: totals.offered,
        not_sent: totals.not_sent,
        sent_late: totals.late,
        admitted: admitted.len(),
        rejected: rejected.len(),
        other_errors: totals.errors,
        admitted_latency: LatencySummary::from_histogram(&admitted),
        admitted_service_latency: LatencySummary::from_histogram(&service),
        rejected_latency: LatencySummary::from_histogram(&rejected),
        memory_samples: samples.into_inner().expect("samples lock"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_durations_of_any_size() {
        let mut h = latency_histogram();
        for us in 1..=1000u64 {
            record(&mut h, Duration::from_micros(us));
        }
        record(&mut h, Duration::from_secs(3600));
        record(&mut h, Duration::ZERO);
        let s = LatencySummary::from_histogram(&h);
        assert_eq!(s.count, 1002);
        assert!((s.p50_us - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.max_us - 3.6e9).abs() < 3.6e6, "not clamped: {s:?}");
    }
}
