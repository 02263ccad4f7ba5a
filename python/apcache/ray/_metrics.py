"""`/metrics` of the Ray front in the text format `apcache serve` writes (OpenMetrics, as the
`prometheus-client` crate encodes it; crates/server/src/metrics.rs), under the server's names
where the sharded front has the same thing to count:

- kept as requests happen: `apcache_http_requests_total{endpoint,status}` and the histogram
  `apcache_http_request_duration_seconds{endpoint}` (the server's buckets: 50 µs doubling to
  about 26 s), `endpoint` being the route's template, as the server labels it;
- the front's admission and outcomes by index: `queue_depth`, `admitted`, `rejected`,
  `timeouts`, `cancelled`, `panics` (the front's own unexpected errors, answered 500),
  `failed`, `queries`;
- summed over the shards at scrape time: `postings_cache_hits`, `postings_cache_misses`;
- the sharded front's own: `shards` and `shards_unavailable` (shards whose actors did not
  answer the scrape), `shard_queries_total{index,shard}` (each shard's admitted queries) and
  `shard_failures_total{index,shard}` (queries that failed naming the shard);
- `dram_bytes{kind}`: the front process's resident memory (anonymous, shared, peak).

Each front replica keeps its own counters (a scrape through Serve reads one replica's).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Dict, Iterable, List, Optional, Tuple

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"

BUCKETS = [50e-6 * 2.0**i for i in range(20)]
"""Upper bounds of the latency histogram's buckets, in seconds (the server's)."""


def format_float(value: float) -> str:
    """A float as the server's encoder (the `dtoa` crate) writes it: the shortest digits that
    read back, positional from 1e-6 up to 1e21 (with a `.0` when whole), else with an
    exponent; `+Inf` for infinity."""
    if value == float("inf"):
        return "+Inf"
    if value == float("-inf"):
        return "-Inf"
    if value != value:
        return "NaN"
    magnitude = abs(value)
    if magnitude == 0 or 1e-6 <= magnitude < 1e21:
        text = format(Decimal(repr(value)), "f")
        return text if "." in text else text + ".0"
    mantissa, exponent = repr(value).split("e")
    return f"{mantissa}e{int(exponent)}"


def _labels(pairs: Iterable[Tuple[str, str]]) -> str:
    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    inside = ",".join(f'{name}="{escape(value)}"' for name, value in pairs)
    return "{" + inside + "}" if inside else ""


@dataclass
class _Histogram:
    total: float = 0.0
    count: int = 0
    buckets: List[int] = field(default_factory=lambda: [0] * len(BUCKETS))

    def observe(self, seconds: float) -> None:
        self.total += seconds
        self.count += 1
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.buckets[i] += 1


@dataclass
class IndexCounters:
    """The front's counts for one index, kept as requests happen."""

    timeouts: int = 0
    cancelled: int = 0
    panics: int = 0
    failed: int = 0
    queries: int = 0
    shard_failures: Dict[int, int] = field(default_factory=dict)


@dataclass
class IndexSnapshot:
    """One index's state at scrape time."""

    name: str
    queue_depth: int
    admitted: int
    rejected: int
    counters: IndexCounters
    shard_stats: List[Optional[Dict[str, object]]]
    """Each shard's `apcache.Index.stats()`, None for a shard that did not answer."""


class Metrics:
    """Requests by route and status and their latency, kept as they happen (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: Dict[Tuple[str, int], int] = {}
        self._durations: Dict[str, _Histogram] = {}

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        """Counts a request to `endpoint` (a route template, or "unmatched") answered with
        `status` after `seconds`."""
        with self._lock:
            key = (endpoint, status)
            self._requests[key] = self._requests.get(key, 0) + 1
            self._durations.setdefault(endpoint, _Histogram()).observe(seconds)

    def render(self, indexes: List[IndexSnapshot], memory: Dict[str, int]) -> str:
        """The whole text: the kept metrics, then the snapshot, then `# EOF`."""
        out: List[str] = []
        with self._lock:
            requests = list(self._requests.items())
            durations = [(k, _Histogram(h.total, h.count, list(h.buckets))) for k, h in self._durations.items()]
        _family(out, "http_requests", "counter", "HTTP requests by route and status.")
        for (endpoint, status), value in requests:
            out.append(f"apcache_http_requests_total{_labels([('endpoint', endpoint), ('status', str(status))])} {value}")
        _family(
            out,
            "http_request_duration_seconds",
            "histogram",
            "Time from a request's arrival to its response, by route.",
        )
        for endpoint, histogram in durations:
            name = "apcache_http_request_duration_seconds"
            labels = _labels([("endpoint", endpoint)])
            out.append(f"{name}_sum{labels} {format_float(histogram.total)}")
            out.append(f"{name}_count{labels} {histogram.count}")
            for bound, value in zip(BUCKETS, histogram.buckets):
                out.append(f"{name}_bucket{_labels([('le', format_float(bound)), ('endpoint', endpoint)])} {value}")
            out.append(f"{name}_bucket{_labels([('le', '+Inf'), ('endpoint', endpoint)])} {histogram.count}")
        _per_index(out, "queue_depth", "gauge", "Requests waiting for a query thread.",
                   [(i.name, i.queue_depth) for i in indexes])
        _per_index(out, "admitted", "counter", "Requests admitted into the queue.",
                   [(i.name, i.admitted) for i in indexes])
        _per_index(out, "rejected", "counter", "Requests refused with 503 because the queue was full.",
                   [(i.name, i.rejected) for i in indexes])
        _per_index(out, "timeouts", "counter", "Requests that ran past their deadline (504).",
                   [(i.name, i.counters.timeouts) for i in indexes])
        _per_index(out, "cancelled", "counter", "Requests cancelled because their client went away.",
                   [(i.name, i.counters.cancelled) for i in indexes])
        _per_index(out, "panics", "counter", "Unexpected errors caught in the front (500): a bug, as the server's panics.",
                   [(i.name, i.counters.panics) for i in indexes])
        _per_index(out, "failed", "counter",
                   "Requests answered with an error of a shard or its index (a shard that failed, damaged bytes, a failed storage read).",
                   [(i.name, i.counters.failed) for i in indexes])
        _per_index(out, "queries", "counter", "Queries answered.",
                   [(i.name, i.counters.queries) for i in indexes])
        _per_index(out, "postings_cache_hits", "counter", "Term reads served from the tier, summed over the shards that answered.",
                   [(i.name, _shard_sum(i, "cache_hits")) for i in indexes])
        _per_index(out, "postings_cache_misses", "counter", "Term reads that had to come from storage, summed over the shards that answered.",
                   [(i.name, _shard_sum(i, "cache_misses")) for i in indexes])
        _per_index(out, "shards", "gauge", "Shards of the index.",
                   [(i.name, len(i.shard_stats)) for i in indexes])
        _per_index(out, "shards_unavailable", "gauge", "Shards whose actors did not answer this scrape.",
                   [(i.name, sum(1 for s in i.shard_stats if s is None)) for i in indexes])
        _family(out, "shard_queries", "counter", "Queries each shard admitted (every phase of a sharded query is one).")
        for i in indexes:
            for shard, stats in enumerate(i.shard_stats):
                if stats is not None:
                    out.append(f"apcache_shard_queries_total{_labels([('index', i.name), ('shard', str(shard))])} {int(stats.get('queries', 0))}")  # type: ignore[call-overload]
        _family(out, "shard_failures", "counter", "Requests that failed because this shard did not answer.")
        for i in indexes:
            for shard, value in sorted(i.counters.shard_failures.items()):
                out.append(f"apcache_shard_failures_total{_labels([('index', i.name), ('shard', str(shard))])} {value}")
        _family(out, "dram_bytes", "gauge", "DRAM in use: the front process's resident memory.")
        for kind, value in memory.items():
            out.append(f"apcache_dram_bytes{_labels([('kind', kind)])} {value}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _family(out: List[str], name: str, kind: str, help_text: str) -> None:
    out.append(f"# HELP apcache_{name} {help_text}")
    out.append(f"# TYPE apcache_{name} {kind}")


def _per_index(out: List[str], name: str, kind: str, help_text: str, values: List[Tuple[str, int]]) -> None:
    _family(out, name, kind, help_text)
    suffix = "_total" if kind == "counter" else ""
    for index, value in values:
        out.append(f"apcache_{name}{suffix}{_labels([('index', index)])} {value}")


def _shard_sum(index: IndexSnapshot, key: str) -> int:
    return sum(int(stats.get(key, 0)) for stats in index.shard_stats if stats is not None)  # type: ignore[call-overload]


def process_memory() -> Dict[str, int]:
    """This process's resident memory in bytes, from /proc/self/status: anonymous, shared, and
    the peak (the server's `dram_bytes` kinds); empty where /proc is not there."""
    wanted = {"RssAnon": "process_rss_anon", "RssShmem": "process_rss_shmem", "VmHWM": "process_peak_rss"}
    found: Dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                key, _, rest = line.partition(":")
                if key in wanted:
                    parts = rest.split()
                    if parts and parts[0].isdigit():
                        found[wanted[key]] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except OSError:
        return {}
    return found
