//! [`Throttled`]: an emulated slow device around any loader.
//!
//! The machines the experiments run on have fast NVMe or none at all, while APCache is about
//! what a slow or remote device costs. `Throttled` makes any loader behave like a slower
//! device: every device read request (every chunk the inner loader hands over: one per
//! `pread` or per io_uring read, one per range for the mmap loader) costs an added latency,
//! and all threads together cannot read faster than a bandwidth cap. Its
//! [`describe`](StorageLoader::describe) always says "emulated", so no report passes the
//! numbers off as a real device's.
//!
//! # How the time is added
//!
//! The inner read runs at full speed and hands its chunks to the sink as they come; then the
//! call waits until both (a) the end of the real read plus `latency` times the number of
//! chunks and (b) the end of the slot the range reserved in a shared bandwidth schedule (a
//! virtual clock that advances by `bytes / bandwidth` per range, never earlier than the call's
//! start) have passed. So one call's requests are charged their latency one after another
//! (queue depth 1, as in a dependent chain of reads), calls on different threads overlap their
//! latencies but share the bandwidth, and no lock is held while waiting. Waits above 200 µs
//! sleep, shorter ones yield in a loop, so the added time is never less than asked and
//! rarely much more.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use super::{elapsed_ns, LoaderStats, StorageLoader};

/// A loader that emulates a slower device: `latency` more per read request and at most
/// `bandwidth` bytes per second over all threads.
#[derive(Debug)]
pub struct Throttled<L: StorageLoader> {
    inner: L,
    latency: Duration,
    bandwidth: Option<u64>,
    /// When the emulated device is next free to transfer, for the bandwidth cap.
    next_free: Mutex<Option<Instant>>,
    busy_ns: AtomicU64,
}

impl<L: StorageLoader> Throttled<L> {
    /// Wraps `inner`, adding `latency` per read request and capping the bandwidth at
    /// `bandwidth` bytes per second (`None` or `Some(0)`: no cap).
    pub fn new(inner: L, latency: Duration, bandwidth: Option<u64>) -> Throttled<L> {
        Throttled {
            inner,
            latency,
            bandwidth: bandwidth.filter(|&b| b > 0),
            next_free: Mutex::new(None),
            busy_ns: AtomicU64::new(0),
        }
    }

    /// The wrapped loader.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The latency added per read request.
    pub fn latency(&self) -> Duration {
        self.latency
    }

    /// The bandwidth cap in bytes per second, if any.
    pub fn bandwidth(&self) -> Option<u64> {
        self.bandwidth
    }

    /// Reserves `bytes` in the bandwidth schedule and returns when the transfer ends.
    fn reserve(&self, bytes: u64, start: Instant) -> Option<Instant> {
        let bandwidth = self.bandwidth?;
        let cost = Duration::from_secs_f64(bytes as f64 / bandwidth as f64);
        let mut next_free = self.next_free.lock().unwrap_or_else(|p| p.into_inner());
        let begin = next_free.map_or(start, |t| t.max(start));
        let end = begin + cost;
        *next_free = Some(end);
        Some(end)
    }
}

impl<L: StorageLoader> StorageLoader for Throttled<L> {
    fn read_range(
        &self,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        let start = Instant::now();
        let mut requests = 0u32;
        let mut bytes = 0u64;
        let result = self.inner.read_range(offset, len, &mut |at, chunk| {
            requests = requests.saturating_add(1);
            bytes += chunk.len() as u64;
            sink(at, chunk);
        });
        let mut deadline = Instant::now() + self.latency.saturating_mul(requests);
        if bytes > 0 {
            if let Some(transfer_end) = self.reserve(bytes, start) {
                deadline = deadline.max(transfer_end);
            }
        }
        wait_until(deadline);
        self.busy_ns.fetch_add(elapsed_ns(start), Ordering::Relaxed);
        result
    }

    fn file_len(&self) -> u64 {
        self.inner.file_len()
    }

    /// The inner loader's reads and bytes, with the time spent including the emulation.
    fn stats(&self) -> LoaderStats {
        LoaderStats {
            busy_ns: self.busy_ns.load(Ordering::Relaxed),
            ..self.inner.stats()
        }
    }

    fn describe(&self) -> String {
        let latency = self.latency.as_secs_f64() * 1e6;
        let cap = match self.bandwidth {
            Some(b) => format!("{} MB/s cap", trim_number(b as f64 / 1e6)),
            None => "no bandwidth cap".to_string(),
        };
        format!(
            "{}; emulated: +{} µs per read, {cap}",
            self.inner.describe(),
            trim_number(latency)
        )
    }
}

/// A number with at most three decimals and no trailing zeros: 100, 2.5, 0.125.
fn trim_number(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Waits until `deadline`: sleeps while more than 200 µs remain (sleep overshoots by tens of
/// µs), then yields in a loop.
fn wait_until(deadline: Instant) {
    const SPIN: Duration = Duration::from_micros(200);
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > SPIN {
            thread::sleep(left - SPIN / 2);
        } else {
            thread::yield_now();
        }
    }
}
