//! The latency figures every report prints: [`LatencySummary`], from an HdrHistogram of
//! nanoseconds.
//!
//! Latencies are recorded in nanoseconds at 3 significant digits (the histogram grows to any
//! value), so the percentiles and the maximum are within 0.1% of the exact ones, rounded up
//! to the top of their bucket; a percentile is the least recorded value that at least that
//! fraction of the samples do not exceed. [`LatencySummary::from_nanos`] also sums the
//! latencies, so its mean is exact; [`LatencySummary::from_histogram`], for histograms merged
//! from several recorders, takes the histogram's mean.
//!
//! The summary serializes as flat fields (`count`, `mean_us`, `p50_us`, `p99_us`, `p999_us`,
//! `max_us`, all but the count in microseconds); reports embed it with `#[serde(flatten)]` so
//! their JSON keeps those keys at the level of the row.

use hdrhistogram::Histogram;
use serde::Serialize;

/// An HdrHistogram of nanoseconds at 3 significant digits, growing to whatever it records.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits are supported")
}

/// Count, mean, median, 99th and 99.9th percentiles and maximum of a set of latencies; all
/// zero for none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Latencies summarised.
    pub count: u64,
    /// Mean, microseconds.
    pub mean_us: f64,
    /// Median, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// 99.9th percentile, microseconds.
    pub p999_us: f64,
    /// Slowest, microseconds.
    pub max_us: f64,
}

impl LatencySummary {
    /// The summary of `nanos`, latencies in nanoseconds: the mean exact, the rest from a
    /// [`latency_histogram`]. A latency of 0 (a clock too coarse to see it) is recorded as
    /// 1 ns in the histogram.
    pub fn from_nanos(nanos: impl IntoIterator<Item = u64>) -> LatencySummary {
        let mut histogram = latency_histogram();
        let mut sum = 0u128;
        for ns in nanos {
            histogram
                .record(ns.max(1))
                .expect("the histogram resizes to any latency");
            sum += u128::from(ns);
        }
        LatencySummary {
            mean_us: if histogram.is_empty() {
                0.0
            } else {
                sum as f64 / histogram.len() as f64 / 1e3
            },
            ..LatencySummary::from_histogram(&histogram)
        }
    }

    /// The summary of `micros`, latencies in microseconds (a peer's own timings), rounded to
    /// whole nanoseconds (negative ones to 0) and summarised as [`LatencySummary::from_nanos`]
    /// does.
    pub fn from_micros(micros: impl IntoIterator<Item = f64>) -> LatencySummary {
        LatencySummary::from_nanos(
            micros
                .into_iter()
                .map(|us| (us.max(0.0) * 1e3).round() as u64),
        )
    }

    /// The summary of `histogram`, of nanoseconds; its mean is the histogram's (within its
    /// precision).
    pub fn from_histogram(histogram: &Histogram<u64>) -> LatencySummary {
        if histogram.is_empty() {
            return LatencySummary::default();
        }
        let us = |nanos: u64| nanos as f64 / 1e3;
        LatencySummary {
            count: histogram.len(),
            mean_us: histogram.mean() / 1e3,
            p50_us: us(histogram.value_at_quantile(0.5)),
            p99_us: us(histogram.value_at_quantile(0.99)),
            p999_us: us(histogram.value_at_quantile(0.999)),
            max_us: us(histogram.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_of_a_thousand_latencies() {
        let s = LatencySummary::from_nanos((1..=1000u64).map(|us| us * 1000));
        assert_eq!(s.count, 1000);
        assert_eq!(s.mean_us, 500.5, "the mean is exact");
        assert!((s.p50_us - 500.0).abs() < 0.5, "{s:?}");
        assert!((s.p99_us - 990.0).abs() < 1.0, "{s:?}");
        assert!((s.p999_us - 999.0).abs() < 1.0, "{s:?}");
        assert!((s.max_us - 1000.0).abs() < 1.0, "{s:?}");
        assert!(s.p50_us <= s.p99_us && s.p99_us <= s.p999_us && s.p999_us <= s.max_us);
        let mut histogram = latency_histogram();
        for us in 1..=1000u64 {
            histogram.record(us * 1000).unwrap();
        }
        let merged = LatencySummary::from_histogram(&histogram);
        assert_eq!((merged.count, merged.p99_us), (s.count, s.p99_us));
        assert!((merged.mean_us - 500.5).abs() < 1.0, "{merged:?}");
    }

    #[test]
    fn microseconds_and_nothing() {
        let s = LatencySummary::from_micros([1.5, 2.5, -1.0]);
        assert_eq!(s.count, 3);
        assert!((s.mean_us - 4.0 / 3.0).abs() < 1e-9, "{s:?}");
        assert!((s.max_us - 2.5).abs() < 0.01, "{s:?}");
        assert_eq!(LatencySummary::from_nanos([]), LatencySummary::default());
        assert_eq!(
            LatencySummary::from_histogram(&latency_histogram()),
            LatencySummary::default()
        );
    }

    #[test]
    fn serializes_flat_in_microseconds() {
        let json = serde_json::to_value(LatencySummary::from_nanos([2000])).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["count", "max_us", "mean_us", "p50_us", "p999_us", "p99_us"]
        );
        assert_eq!(json["p99_us"], 2.0);
    }
}
