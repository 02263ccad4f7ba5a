"""What the HTTP front is told (`FrontConfig`): what one request may ask and how many may
wait, `apcache serve`'s limits (crates/server/src/config.rs and search.rs) with the same
defaults and the same messages, a request's deadline, and the bounded queue (`Admission`).

The checks that need the parsed query (its clauses, its nesting) run in the shard
actors, right after they parse it (`check_parsed`), so that they cost no round trip of their
own; a query over a limit fails there with `QueryTooLarge`, which Ray carries back to the
coordinator as itself. The checks of the request alone (the query's bytes, the result window)
and admission run in the front.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, replace
from typing import Any, List, Optional, Tuple

from .._apcache import ApcacheError


@dataclass(frozen=True)
class QueryLimits:
    """Limits on what one request may ask for (`apcache serve`'s defaults); past them, a 400
    (a 413 for the body)."""

    max_results: int = 10_000
    """`offset + k` (`from + size`) at most this (Elasticsearch's `index.max_result_window`)."""
    max_terms: int = 1024
    """Clauses in a query at most this: every term each time it is written, and every word of
    a phrase (Lucene's `maxClauseCount`)."""
    max_depth: int = 32
    """Nesting of groups at most this."""
    max_query_bytes: int = 16 * 1024
    """Bytes of query text (UTF-8) at most this."""
    max_body_bytes: int = 1 << 20
    """Bytes of a request body at most this."""

    def __post_init__(self) -> None:
        for name in ("max_results", "max_terms", "max_depth", "max_query_bytes", "max_body_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")

    def parsed(self) -> Tuple[int, int]:
        """The limits a shard checks on the parsed query: (max_terms, max_depth)."""
        return self.max_terms, self.max_depth


QUEUE_PER_THREAD = 8
"""The default queue: this many waiting searches per thread (the server's default)."""


@dataclass(frozen=True)
class FrontConfig:
    """How the front serves: the query limits, a request's deadline, and its admission.

    `threads` searches run at once in a front replica (default: the CPU count, as the
    server's query threads), `queue_depth` more may wait (default 8 per thread), one more
    is refused with a 503; `timeout_ms` is a request's deadline from its arrival (default
    10,000 ms), past which it is answered 504; `stats_timeout_s` bounds each shard's answer
    to a `/metrics` scrape.
    """

    threads: Optional[int] = None
    queue_depth: Optional[int] = None
    timeout_ms: int = 10_000
    limits: QueryLimits = field(default_factory=QueryLimits)
    stats_timeout_s: float = 5.0

    def resolved(self) -> "FrontConfig":
        """The configuration with its defaults filled in (here, on this machine)."""
        threads = self.threads if self.threads is not None else max(1, os.cpu_count() or 1)
        depth = self.queue_depth if self.queue_depth is not None else threads * QUEUE_PER_THREAD
        if threads < 1 or depth < 1:
            raise ValueError("threads and queue_depth must be at least 1")
        if self.timeout_ms < 1:
            raise ValueError("timeout_ms must be at least 1")
        return replace(self, threads=threads, queue_depth=depth)


class QueryTooLarge(ApcacheError):
    """A query over the term, nesting or size limits (the server's `query_too_large`)."""

    def __reduce__(self) -> Tuple[Any, ...]:
        # Raised in a shard actor and unpickled in the coordinator: rebuilt from its message.
        return (QueryTooLarge, (str(self),))


def check_query_bytes(query: str, limits: QueryLimits) -> None:
    """QueryTooLarge when `query` is over `limits.max_query_bytes` bytes of UTF-8."""
    size = len(query.encode("utf-8"))
    if size > limits.max_query_bytes:
        raise QueryTooLarge(
            f"the query is {size} bytes; at most {limits.max_query_bytes} are accepted"
        )


def text_nesting(text: str) -> int:
    """The deepest nesting of parentheses in query text, escaped ones and quoted text aside
    (as the server counts it)."""
    depth = deepest = 0
    quoted = escaped = False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            quoted = not quoted
        elif c == "(" and not quoted:
            depth += 1
            deepest = max(deepest, depth)
        elif c == ")" and not quoted:
            depth = max(0, depth - 1)
    return deepest


def _top_level_clauses(canonical: str) -> List[str]:
    """The clauses of a canonical query's outermost level (split at unescaped spaces outside
    quotes and groups)."""
    clauses: List[str] = []
    start = depth = 0
    quoted = escaped = False
    for i, c in enumerate(canonical):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == " " and depth == 0:
            clauses.append(canonical[start:i])
            start = i + 1
    clauses.append(canonical[start:])
    return [clause for clause in clauses if clause]


def parsed_depth(canonical: str) -> int:
    """The nesting of the boolean groups of a parsed query, from its canonical form (what
    `apcache.Index.parse_query` returns): the server's `depth` of the query tree.

    The canonical form prints a group inside another in parentheses and the outermost one
    bare; a parsed query is simplified (a group of one required or one optional clause is
    that clause), so the outermost level is a group exactly when it is empty (a query of only
    dropped words), has several clauses, or has a single prohibited one.
    """
    clauses = _top_level_clauses(canonical)
    outer_group = not clauses or len(clauses) > 1 or clauses[0].startswith("-")
    return text_nesting(canonical) + (1 if outer_group else 0)


def check_parsed(query: str, canonical: str, clauses: int, limits: Tuple[int, int]) -> None:
    """QueryTooLarge when the parsed query has more clauses (every term each time it is
    written, every word of a phrase), or nests deeper, than `limits` (max_terms, max_depth)
    allow: the server's checks after parsing, in its order."""
    max_terms, max_depth = limits
    if clauses > max_terms:
        raise QueryTooLarge(
            f"the query has {clauses} clauses; at most {max_terms} are accepted (a clause is "
            "a term, counted each time it is written, and each word of a phrase)"
        )
    nesting = max(parsed_depth(canonical), text_nesting(query))
    if nesting > max_depth:
        raise QueryTooLarge(
            f"the query nests {nesting} levels deep; at most {max_depth} are accepted"
        )


class Overloaded(ApcacheError):
    """A request refused because as many as allowed already wait (the server's 503)."""


class Admission:
    """The front's bound on searches at once: `threads` run, at most `queue_depth` more wait
    for one of them, and one more is refused at once (as `apcache serve`'s query threads and
    queue), so that overload is answered with a 503 instead of a growing wait."""

    def __init__(self, threads: int, queue_depth: int) -> None:
        if threads < 1 or queue_depth < 1:
            raise ValueError("threads and queue_depth must be at least 1")
        self.threads = threads
        self.queue_depth = queue_depth
        self._lock = threading.Lock()
        self._active = 0
        self.admitted = 0
        self.rejected = 0

    @property
    def waiting(self) -> int:
        """Admitted searches that no thread has taken yet."""
        return max(0, self._active - self.threads)

    def admit(self) -> None:
        """Counts a search in, or raises Overloaded (with the server's message) when
        `queue_depth` already wait."""
        with self._lock:
            waiting = self.waiting
            if waiting >= self.queue_depth:
                self.rejected += 1
                raise Overloaded(f"the request queue is full ({waiting} waiting); retry later")
            self._active += 1
            self.admitted += 1

    def release(self) -> None:
        """Counts a search out (answered, failed, timed out or cancelled)."""
        with self._lock:
            self._active -= 1
