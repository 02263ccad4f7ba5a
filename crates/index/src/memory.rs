//! The process's memory, as Linux reports it, for reports that must show a memory budget is
//! kept.
//!
//! Peak resident memory (`VmHWM`) counts the pages of mapped files too: a merge maps its input
//! segments, whose pages are page cache the kernel can drop at any time. What a budget bounds
//! is anonymous memory (heap: the posting tables), so a [`MemorySampler`] also records the peak
//! of `RssAnon`, sampled every few milliseconds on a thread of its own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A field of `/proc/self/status` in bytes (`VmHWM`, `VmRSS`, `RssAnon`, ...).
pub fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| {
        l.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with(':'))
    })?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Peak resident memory of the process, mapped files included (`VmHWM`).
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM")
}

/// Samples anonymous resident memory until stopped; keeps the peak.
pub struct MemorySampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MemorySampler {
    /// Starts sampling every `interval`.
    pub fn start(interval: Duration) -> MemorySampler {
        let peak = Arc::new(AtomicU64::new(status_bytes("RssAnon").unwrap_or(0)));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (peak, stop) = (peak.clone(), stop.clone());
            std::thread::Builder::new()
                .name("memory-sampler".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        if let Some(anon) = status_bytes("RssAnon") {
                            peak.fetch_max(anon, Ordering::Relaxed);
                        }
                        std::thread::sleep(interval);
                    }
                })
                .ok()
        };
        MemorySampler { peak, stop, thread }
    }

    /// Stops sampling; returns the peak anonymous resident memory seen, if any was.
    pub fn finish(mut self) -> Option<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take()?.join().ok()?;
        Some(self.peak.load(Ordering::Relaxed)).filter(|&p| p > 0)
    }
}

impl Drop for MemorySampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_an_allocation() {
        let sampler = MemorySampler::start(Duration::from_millis(1));
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        std::thread::sleep(Duration::from_millis(30));
        let peak = sampler.finish().expect("Linux reports RssAnon");
        assert!(peak >= 64 << 20, "peak {peak}");
        drop(block);
        assert!(peak_rss_bytes().unwrap() >= 64 << 20);
    }
}
