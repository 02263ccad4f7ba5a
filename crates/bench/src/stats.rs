//! Small statistics helpers shared by the benchmarks.

use std::time::{Duration, Instant};

/// Median of `values` (the mean of the two middle ones for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Runs `pass` `runs` times, each time repeating it until at least `min_time` has elapsed, and
/// returns the median of the per-call durations in seconds.
pub fn median_seconds(runs: usize, min_time: Duration, mut pass: impl FnMut()) -> f64 {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let mut calls = 0u32;
        while calls == 0 || start.elapsed() < min_time {
            pass();
            calls += 1;
        }
        samples.push(start.elapsed().as_secs_f64() / f64::from(calls));
    }
    median(&samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
