//! `/metrics` in Prometheus's text format (through `prometheus-client`): requests and their
//! latency by route and status, kept as they happen, and a snapshot of every index's live
//! service taken at scrape time (queue, admissions, rejections, timeouts, panics, failures and
//! those among them on damaged bytes, the postings cache's hits, misses, bytes loaded and
//! evictions, the prefetcher's window) and of the DRAM in use (the process's resident memory;
//! the memory cgroup's usage and peak where a limit is set).

use std::sync::Mutex;
use std::time::Duration;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::app::Shared;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: String,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct IndexLabels {
    index: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MemoryLabels {
    kind: String,
}

/// The metrics kept as requests happen.
pub struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    durations: Family<EndpointLabels, Histogram>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("apcache");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by route and status",
            requests.clone(),
        );
        // 50 µs to about 26 s, doubling.
        let durations = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
                50e-6, 2.0, 20,
            ))
        });
        registry.register(
            "http_request_duration_seconds",
            "Time from a request's arrival to its response, by route",
            durations.clone(),
        );
        Metrics {
            registry: Mutex::new(registry),
            requests,
            durations,
        }
    }

    /// Counts a request to `endpoint` answered with `status` after `took`.
    pub fn observe_request(&self, endpoint: &str, status: u16, took: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint: endpoint.to_string(),
                status,
            })
            .inc();
        self.durations
            .get_or_create(&EndpointLabels {
                endpoint: endpoint.to_string(),
            })
            .observe(took.as_secs_f64());
    }
}

/// Registers a counter family set to `values` now.
fn counters(registry: &mut Registry, name: &str, help: &str, values: &[(String, u64)]) {
    let family = Family::<IndexLabels, Counter>::default();
    for (index, value) in values {
        family
            .get_or_create(&IndexLabels {
                index: index.clone(),
            })
            .inc_by(*value);
    }
    registry.register(name, help, family);
}

/// Registers a gauge family set to `values` now.
fn gauges(registry: &mut Registry, name: &str, help: &str, values: &[(String, u64)]) {
    let family = Family::<IndexLabels, Gauge>::default();
    for (index, value) in values {
        family
            .get_or_create(&IndexLabels {
                index: index.clone(),
            })
            .set(i64::try_from(*value).unwrap_or(i64::MAX));
    }
    registry.register(name, help, family);
}

/// The snapshot of the services and of memory, as a registry of its own.
fn snapshot(state: &Shared) -> Registry {
    let mut registry = Registry::with_prefix("apcache");
    let services: Vec<_> = state
        .catalog
        .iter()
        .map(|i| (i.name.clone(), i.service.counters()))
        .collect();
    let per = |f: &dyn Fn(&apcache_tier::serving::LiveCounters) -> u64| -> Vec<(String, u64)> {
        services.iter().map(|(n, c)| (n.clone(), f(c))).collect()
    };
    gauges(
        &mut registry,
        "queue_depth",
        "Requests waiting for a query thread",
        &per(&|c| c.queued),
    );
    counters(
        &mut registry,
        "admitted",
        "Requests admitted into the queue",
        &per(&|c| c.admitted),
    );
    counters(
        &mut registry,
        "rejected",
        "Requests refused with 503 because the queue was full",
        &per(&|c| c.rejected),
    );
    counters(
        &mut registry,
        "timeouts",
        "Requests that ran past their deadline (504)",
        &per(&|c| c.timed_out),
    );
    counters(
        &mut registry,
        "cancelled",
        "Requests cancelled because their client went away",
        &per(&|c| c.cancelled),
    );
    counters(
        &mut registry,
        "panics",
        "Panics caught in query threads or the prefetcher (500)",
        &per(&|c| c.panics),
    );
    counters(
        &mut registry,
        "failed",
        "Requests answered with an error of the index or the cache (damaged bytes, a failed storage read)",
        &per(&|c| c.failed),
    );
    counters(
        &mut registry,
        "corrupt_reads",
        "Requests that failed on damaged index bytes: a term's metadata or postings (in failed too), or a stored document",
        &per(&|c| c.damaged),
    );
    counters(
        &mut registry,
        "load_errors",
        "Terms the postings cache could not load from storage",
        &per(&|c| c.load_errors),
    );
    counters(
        &mut registry,
        "queries",
        "Queries answered",
        &per(&|c| c.completed),
    );
    counters(
        &mut registry,
        "postings_cache_hits",
        "Term reads served from the tier",
        &per(&|c| c.cache_hits),
    );
    counters(
        &mut registry,
        "postings_cache_misses",
        "Term reads that had to come from storage",
        &per(&|c| c.cache_misses),
    );
    counters(
        &mut registry,
        "postings_cache_bytes_loaded",
        "Bytes copied from storage into the tier",
        &per(&|c| c.cache.map_or(0, |x| x.bytes_loaded)),
    );
    counters(
        &mut registry,
        "postings_cache_terms_loaded",
        "Terms copied from storage into the tier",
        &per(&|c| c.cache.map_or(0, |x| x.terms_loaded)),
    );
    counters(
        &mut registry,
        "postings_cache_positions_loaded",
        "Phrase terms' positions copied from storage into the tier",
        &per(&|c| c.cache.map_or(0, |x| x.positions_loaded)),
    );
    counters(
        &mut registry,
        "postings_cache_evictions",
        "Terms evicted from the tier",
        &per(&|c| c.cache.map_or(0, |x| x.evictions)),
    );
    counters(
        &mut registry,
        "storage_loader_bytes",
        "Bytes the storage loaders read",
        &per(&|c| c.loader_bytes),
    );
    let result = |f: fn(&apcache_tier::result_cache::ResultCacheCounters) -> u64| {
        per(&move |c| c.result_cache.as_ref().map_or(0, f))
    };
    counters(
        &mut registry,
        "result_cache_hits",
        "Requests answered from a result-cache entry of their own",
        &result(|r| r.hits),
    );
    counters(
        &mut registry,
        "result_cache_section_hits",
        "Requests answered from a section of another entry (partial matching)",
        &result(|r| r.section_hits),
    );
    counters(
        &mut registry,
        "result_cache_misses",
        "Result-cache lookups that found nothing",
        &result(|r| r.misses),
    );
    counters(
        &mut registry,
        "result_cache_admissions",
        "Results stored in the result cache",
        &result(|r| r.admissions),
    );
    counters(
        &mut registry,
        "result_cache_evictions",
        "Results evicted from the result cache",
        &result(|r| r.evictions),
    );
    gauges(
        &mut registry,
        "result_cache_bytes",
        "Bytes of the result cache's heap held by entries",
        &result(|r| r.bytes),
    );
    gauges(
        &mut registry,
        "postings_cache_segments",
        "Segments of the postings cache",
        &per(&|c| c.cache_segments),
    );
    gauges(
        &mut registry,
        "prefetch_window_segments",
        "Segments the prefetcher's lookahead window holds for queued queries",
        &per(&|c| c.window_segments),
    );

    let memory = Family::<MemoryLabels, Gauge>::default();
    let set = |kind: &str, bytes: u64| {
        memory
            .get_or_create(&MemoryLabels { kind: kind.into() })
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
    };
    if let Ok(process) = apcache_tier::cgroup::process_peak_rss() {
        set("process_rss_anon", process.rss_anon);
        set("process_rss_shmem", process.rss_shmem);
        set("process_peak_rss", process.peak_rss);
    }
    for index in state.catalog.iter() {
        if let Some(group) = index.service.stack().cgroup.as_ref() {
            if let Some(usage) = group.usage_bytes() {
                set("cgroup_usage", usage);
            }
            if let Some(peak) = group.peak_bytes() {
                set("cgroup_peak", peak);
            }
            set("cgroup_limit", group.limit_bytes());
        }
    }
    registry.register(
        "dram_bytes",
        "DRAM in use: the process's resident memory, and the memory cgroup's usage, peak and limit where --memory-limit is set",
        memory,
    );
    registry
}

/// `GET /metrics`.
pub async fn endpoint(State(state): State<Shared>) -> Response {
    let mut text = String::new();
    let kept = {
        let registry = state.metrics.registry.lock().expect("metrics lock");
        encode(&mut text, &registry)
    };
    let mut rest = String::new();
    let snap = encode(&mut rest, &snapshot(&state));
    if kept.is_err() || snap.is_err() {
        return (
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "cannot encode the metrics",
        )
            .into_response();
    }
    // Each encoding ends with "# EOF"; the text format wants it once, at the end.
    let text = text.trim_end().trim_end_matches("# EOF").to_string() + &rest;
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}
