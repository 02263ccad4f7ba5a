"""Serving a sharded index: one Ray actor per shard, and a coordinator that scatters each
query to every shard and gathers an exact global answer in two phases.

1. Statistics: every shard reports its documents, tokens and the query terms' document
   frequencies (`apcache.Index.collection_stats`); the coordinator adds them up.
2. Search: every shard ranks its documents with the summed statistics
   (`apcache.Index.search_with_total(..., stats=)`), so its scores are the ones a single
   index of every shard's documents gives, bit for bit; the coordinator merges the top k by
   score, ties by the documents' place in the input (as one index breaks them), and adds the
   counts.
3. Fetch (only when stored fields or highlights are asked for): the shards that hold one of
   the final k hits return those documents' title and body, and their highlights made there
   with the shard's analyzer, so k documents cross the network, not k per shard
   (Elasticsearch's query-then-fetch).

A shard may have several replicas (actors over the same shard directory); a replica that
fails is retried on another. A shard none of whose replicas answers (its actors died, or
did not answer within the timeout) fails the whole query with `ShardError`, naming the
shard: never a silently shorter answer. A query given a deadline (the HTTP front's
per-request timeout) that passes it fails with `QueryTimeout`; its calls not yet started are
cancelled, and no later phase starts.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, TypeVar

import ray
from ray.exceptions import GetTimeoutError, RayError, RayTaskError

from .._apcache import ApcacheError, Index
from ._layout import Layout, PathLike, read_order, shard_of
from ._limits import check_parsed

T = TypeVar("T")

Stats = Dict[str, Any]
"""Collection statistics as `apcache.Index.collection_stats` gives them: ``doc_count``,
``total_tokens`` and ``doc_freqs`` (``{term: documents}``)."""

# A shard's hit on the wire: (score, input place, id, shard-local number, title, body).
_WireHit = Tuple[float, int, str, int, Optional[str], Optional[str]]


class ShardError(ApcacheError):
    """A query that some shards could not answer (an actor died, or ran past the timeout).

    The answer of the other shards is not returned: it would be silently incomplete.
    `shards` lists the failed shards' numbers and `phase` says where the query was.
    """

    def __init__(self, message: str, shards: Sequence[int], phase: str) -> None:
        super().__init__(message)
        self.shards = list(shards)
        self.phase = phase

    def __reduce__(self) -> Tuple[Any, ...]:
        return (ShardError, (str(self), self.shards, self.phase))


class QueryTimeout(ApcacheError):
    """A query that ran past its deadline: the calls it had not started were cancelled and
    no later phase was run. `phase` says where the query was."""

    def __init__(self, message: str, phase: str) -> None:
        super().__init__(message)
        self.phase = phase

    def __reduce__(self) -> Tuple[Any, ...]:
        return (QueryTimeout, (str(self), self.phase))


ParsedLimits = Optional[Tuple[int, int]]
"""(max_terms, max_depth) for a shard to check a query against once parsed
(`apcache.ray._limits.check_parsed`), or None for no check."""

HIGHLIGHT_DEFAULTS: Dict[str, Any] = {
    "pre_tag": "<em>",
    "post_tag": "</em>",
    "fragment_size": 100,
    "number_of_fragments": 5,
}
"""The options of a highlighted field and their defaults (Elasticsearch's, and `apcache
serve`'s): the keyword arguments of `apcache.Index.highlight`."""

HighlightFields = Dict[str, Dict[str, Any]]
"""Stored fields to highlight (``title``, ``body``), each with its options (keys of
`HIGHLIGHT_DEFAULTS`; those left out take the defaults)."""

Highlights = Dict[str, List[str]]
"""A hit's highlights: each field's fragments, a field with no marked word left out."""


def highlight_fields(fields: Mapping[str, Mapping[str, Any]]) -> HighlightFields:
    """`fields` checked (ValueError), with every option's default filled in."""
    out: HighlightFields = {}
    for name, options in fields.items():
        if name not in ("title", "body"):
            raise ValueError(f"highlight field {name!r}: the fields are 'title' and 'body'")
        unknown = sorted(set(options) - set(HIGHLIGHT_DEFAULTS))
        if unknown:
            raise ValueError(
                f"highlight option {unknown[0]!r}: the options are {', '.join(HIGHLIGHT_DEFAULTS)}"
            )
        merged = {**HIGHLIGHT_DEFAULTS, **options}
        for tag in ("pre_tag", "post_tag"):
            if not isinstance(merged[tag], str):
                raise ValueError(f"highlight {tag} must be a str")
        for number, least in (("fragment_size", 1), ("number_of_fragments", 0)):
            value = merged[number]
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"highlight {number} must be a whole number of at least {least}")
        out[name] = merged
    return out


def add_stats(parts: Sequence[Mapping[str, Any]]) -> Stats:
    """The sum of several shards' statistics (the whole collection's)."""
    doc_freqs: Dict[str, int] = {}
    fields: Dict[str, Dict[str, int]] = {}
    total: Stats = {"doc_count": 0, "total_tokens": 0, "doc_freqs": doc_freqs, "fields": fields}
    for part in parts:
        total["doc_count"] += part["doc_count"]
        total["total_tokens"] += part["total_tokens"]
        for term, df in part["doc_freqs"].items():
            doc_freqs[term] = doc_freqs.get(term, 0) + df
        for name, figures in part.get("fields", {}).items():
            summed = fields.setdefault(name, {"documents": 0, "tokens": 0})
            summed["documents"] += figures["documents"]
            summed["tokens"] += figures["tokens"]
    return total


class ShardServer:
    """One shard's index, served in a Ray actor (see `ShardedIndex`); its methods answer the
    coordinator's two phases and the documents' lookups."""

    def __init__(self, path: str, shard: int, index_options: Mapping[str, Any]) -> None:
        self.shard = shard
        self.path = path
        self.index = Index(path, **dict(index_options))
        # Each document's place in the whole input: the merge's tie-break. Without the file
        # (an index built elsewhere) the shard's own numbers stand in.
        self.order = read_order(Path(path))

    def _place(self, doc: int) -> int:
        return self.order[doc] if doc < len(self.order) else doc

    def prepare(
        self, query: str, default_op: str, limits: ParsedLimits = None
    ) -> Tuple[Stats, str, List[str]]:
        """Phase 1: this shard's statistics of `query`, and the query's canonical form and
        analyzer notes (QueryError if it does not parse; QueryTooLarge if it is over
        `limits`, checked here, where the query is parsed, so that it costs no call)."""
        stats = self.index.collection_stats(query, default_op=default_op)
        canonical, notes = self.index.parse_query(query, default_op=default_op)
        if limits is not None:
            clauses = self.index.query_clauses(query, default_op=default_op)
            check_parsed(query, canonical, clauses, limits)
        return stats, canonical, notes

    def search(
        self, query: str, k: int, count: bool, stats: Optional[Stats], default_op: str, fields: bool
    ) -> Tuple[int, bool, List[_WireHit]]:
        """Phase 2: this shard's best `k` scored with `stats`, and its number of matches."""
        total, exact, hits = self.index.search_with_total(
            query, k, count=count, default_op=default_op, fields=fields, stats=stats
        )
        wire = [(h.score, self._place(h.doc), h.id, h.doc, h.title, h.body) for h in hits]
        return total, exact, wire

    def count(self, query: str, default_op: str, limits: ParsedLimits = None) -> int:
        """The shard's exact number of matches of `query` (checked against `limits` first, as
        `prepare` does)."""
        if limits is not None:
            clauses = self.index.query_clauses(query, default_op=default_op)
            canonical, _ = self.index.parse_query(query, default_op=default_op)
            check_parsed(query, canonical, clauses, limits)
        return self.index.count(query, default_op=default_op)

    def fetch(
        self,
        docs: List[int],
        query: Optional[str] = None,
        default_op: str = "or",
        highlight: Optional[HighlightFields] = None,
        fields: bool = True,
    ) -> List[Tuple[Optional[str], Optional[str], Optional[Highlights]]]:
        """Phase 3: the stored (title, body) of these documents (the shard's numbers), None
        for both without `fields`; and, with `highlight`, the fragments of each field it names
        with the words `query` matches marked (`apcache.Index.highlight`; a field without a
        marked word left out), so that a highlighted search without fields ships no text."""
        out: List[Tuple[Optional[str], Optional[str], Optional[Highlights]]] = []
        for doc in docs:
            stored = self.index.doc(doc)
            marked: Optional[Highlights] = None
            if highlight is not None and query is not None:
                marked = {}
                for name, options in highlight.items():
                    fragments = self.index.highlight(query, stored[name], default_op=default_op, **options)
                    if fragments:
                        marked[name] = fragments
            if fields:
                out.append((stored["title"], stored["body"], marked))
            else:
                out.append((None, None, marked))
        return out

    def first_documents(self, n: int, fields: bool) -> List[_WireHit]:
        """The shard's first `n` documents in input order (what match_all lists)."""
        out: List[_WireHit] = []
        for doc in range(min(n, len(self.index))):
            stored = self.index.doc(doc)
            title, body = (stored["title"], stored["body"]) if fields else (None, None)
            out.append((1.0, self._place(doc), stored["id"], doc, title, body))
        return out

    def document(self, doc_id: str) -> Optional[Dict[str, Any]]:
        """The stored document with this external id, or None."""
        try:
            return dict(self.index.doc(doc_id))
        except KeyError:
            return None

    def info(self) -> Dict[str, Any]:
        """The index's `stats()`, with the shard's number."""
        info = dict(self.index.stats())
        info["shard"] = self.shard
        return info

    def describe(self) -> Dict[str, Any]:
        """What `apcache serve` says of an index (`GET /indexes/{name}`), for this shard:
        documents, segments, the bytes of the files queries read and of the document store,
        the serving mode and the postings cache's segments (all from `Index.stats()`)."""
        stats = self.index.stats()
        return {
            "docs": int(stats["documents"]),
            "segments": int(stats["segments"]),
            "search_bytes": int(stats["search_bytes"]),
            "store_bytes": int(stats["store_bytes"]),
            "mode": str(stats["mode"]),
            "cache_segments": int(stats["cache_segments"]),
            "mapping": stats["mapping"],
        }

    def ping(self) -> int:
        """The shard's number (a liveness check)."""
        return self.shard


@dataclass(frozen=True)
class ShardedHit:
    """One ranked document of a sharded search."""

    id: str
    """The document's external id."""
    score: float
    """The BM25 score, with the whole collection's statistics (a float32's value)."""
    shard: int
    """The shard that holds it."""
    doc: int
    """Its number in its shard's index."""
    place: int
    """Its place in the whole input (ties in score go by it, as in one index)."""
    title: Optional[str] = None
    """The stored title (None when the search asked for no fields)."""
    body: Optional[str] = None
    """The stored body (None when the search asked for no fields)."""
    highlight: Optional[Highlights] = None
    """With a search's `highlight`: each field's fragments with the query's words marked (a
    field with none left out); else None."""


@dataclass(frozen=True)
class ShardedResult:
    """A sharded search's answer."""

    total: int
    """Matches summed over the shards: exact when `exact`, else a lower bound."""
    exact: bool
    """Whether `total` is exact (every shard counted exactly)."""
    hits: List[ShardedHit]
    """The hits after `offset`, best first."""
    query: str = ""
    """The query as parsed, in canonical form."""
    notes: List[str] = field(default_factory=list)
    """What the analyzer changed or dropped in the query's words."""
    stats: Optional[Stats] = None
    """The summed statistics the shards scored with."""


Call = Callable[[Any, int], "ray.ObjectRef[Any]"]
"""A call to one shard: (its actor's handle, the shard's number) to the call's reference."""


class ShardedIndex:
    """A sharded index served by Ray actors, `replicas` a shard, searched through this
    coordinator.

    `path` is a directory `build_sharded` wrote. `index_options` go to each shard's
    `apcache.Index` (mode, cache_size, tier_dir, memory_limit, threads, loader), so every
    shard has its own postings cache and tier. Each actor asks Ray for `num_cpus` CPUs (a
    fraction lets several shards share a node's cores; their query threads are apcache's,
    outside the GIL) and takes up to `max_concurrency` calls at once. With `replicas` above
    1, each call goes to one replica of each shard in turn, and a replica that fails (its
    actor died, or it ran past the timeout) is retried on the next; a dead replica is left
    out from then on; replicas are spread over the nodes (Ray's ``SPREAD`` strategy) unless
    `actor_options` says otherwise. A shard none of whose replicas answers fails the query
    with `ShardError`. `timeout_s` bounds each wait for a shard (None: no bound);
    `open_timeout_s` bounds the wait for every actor to be placed and opened (a cluster
    without the CPUs asked for never places some). Extra `actor_options` go to Ray
    (``resources``, ``scheduling_strategy``, ...). Ray must be initialised.
    """

    def __init__(
        self,
        path: PathLike,
        *,
        index_options: Optional[Mapping[str, Any]] = None,
        replicas: int = 1,
        num_cpus: float = 0.25,
        max_concurrency: int = 16,
        timeout_s: Optional[float] = None,
        open_timeout_s: float = 300.0,
        actor_options: Optional[Mapping[str, Any]] = None,
    ) -> None:
        if replicas < 1:
            raise ValueError("replicas must be at least 1")
        self.layout = Layout.read(path)
        self.timeout_s = timeout_s
        options: Dict[str, Any] = {"num_cpus": num_cpus, "max_concurrency": max_concurrency}
        if replicas > 1:
            options["scheduling_strategy"] = "SPREAD"
        options.update(actor_options or {})
        actor = ray.remote(ShardServer)
        # Ray's handles by shard, then replica (typed loosely: their methods' `.remote` is
        # made at run time).
        self.replicas: List[List[Any]] = [
            [
                actor.options(**options).remote(str(directory), i, dict(index_options or {}))
                for _ in range(replicas)
            ]
            for i, directory in enumerate(self.layout.dirs)
        ]
        self._dead: set = set()
        self._turn = 0
        # Every replica opened (or the first failure, as ShardError) before the first query.
        for replica in range(replicas):
            self._scatter(
                lambda handle, shard: handle.ping.remote(),
                "open",
                timeout_s=open_timeout_s,
                pinned=replica,
            )

    @property
    def actors(self) -> List[Any]:
        """Each shard's first replica's actor, in shard order."""
        return [shard[0] for shard in self.replicas]

    @property
    def shards(self) -> int:
        """The number of shards."""
        return len(self.replicas)

    def __len__(self) -> int:
        return sum(self.layout.documents)

    def __repr__(self) -> str:
        return (
            f"ShardedIndex({str(self.layout.path)!r}, shards={self.shards}, "
            f"replicas={len(self.replicas[0]) if self.replicas else 0}, documents={len(self)})"
        )

    def _pick(self, shard: int, tried: Set[int]) -> Optional[int]:
        """The replica of `shard` to ask next: the live ones in turn, none tried before."""
        live = [
            r
            for r in range(len(self.replicas[shard]))
            if (shard, r) not in self._dead and r not in tried
        ]
        if not live:
            return None
        self._turn += 1
        return live[self._turn % len(live)]

    def _scatter(
        self,
        call: Call,
        phase: str,
        shards: Optional[Sequence[int]] = None,
        timeout_s: Optional[float] = None,
        pinned: Optional[int] = None,
        deadline: Optional[float] = None,
    ) -> List[Any]:
        """`call` on one replica of each of `shards` (default: all) at once; their answers in
        that order. A replica that fails is retried on another of its shard; a shard with
        none left fails the whole call with ShardError naming it. An apcache error a shard
        raised (a query that does not parse) is raised as itself. `pinned` asks that replica
        of every shard, with no retry (opening). `deadline` (a `time.monotonic()` value)
        bounds the whole call: past it, the calls not yet answered are cancelled and
        QueryTimeout is raised (an answer already there is still taken)."""
        shards = list(range(self.shards)) if shards is None else list(shards)
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        if deadline is not None and time.monotonic() >= deadline:
            raise QueryTimeout(f"the deadline passed before the {phase} phase began", phase)
        chosen: Dict[int, Optional[int]] = {
            shard: pinned if pinned is not None else self._pick(shard, set()) for shard in shards
        }
        refs = {
            shard: call(self.replicas[shard][r], shard) for shard, r in chosen.items() if r is not None
        }
        answers: List[Any] = []
        failed: List[Tuple[int, str]] = []
        for at, shard in enumerate(shards):
            replica, tried = chosen[shard], set()
            why = "every replica has failed"
            while replica is not None:
                wait = timeout_s
                if deadline is not None:
                    left = max(0.0, deadline - time.monotonic())
                    wait = left if wait is None else min(wait, left)
                try:
                    answers.append(ray.get(refs[shard], timeout=wait))
                    break
                except RayTaskError as error:
                    cause = getattr(error, "cause", None)
                    if isinstance(cause, ApcacheError):
                        raise cause from None
                    why = str(error).splitlines()[0] if str(error) else repr(error)
                except GetTimeoutError:
                    if deadline is not None and time.monotonic() >= deadline:
                        _cancel(refs[s] for s in shards[at:] if s in refs)
                        raise QueryTimeout(
                            f"the query ran past its deadline in the {phase} phase, waiting "
                            f"for shard {shard}; its calls not yet answered were cancelled",
                            phase,
                        ) from None
                    _cancel([refs[shard]])
                    why = f"no answer within {timeout_s} s"
                except RayError as error:
                    text = str(error).strip().splitlines()
                    why = f"{type(error).__name__}: {text[0] if text else ''}"
                    self._dead.add((shard, replica))
                tried.add(replica)
                replica = None if pinned is not None else self._pick(shard, tried)
                if replica is not None:
                    refs[shard] = call(self.replicas[shard][replica], shard)
            else:
                failed.append((shard, why))
        if failed:
            names = ", ".join(
                f"shard {shard} ({self.layout.dirs[shard]}): {why}" for shard, why in failed
            )
            raise ShardError(
                f"{len(failed)} of {self.shards} shards failed in the {phase} phase, so the "
                f"answer would be partial and none is given: {names}",
                [shard for shard, _ in failed],
                phase,
            )
        return answers

    def collection_stats(self, query: str, *, default_op: str = "or") -> Stats:
        """The whole collection's statistics for `query` (phase 1: every shard's, summed)."""
        return self._prepare(query, default_op, None, None)[0]

    def _prepare(
        self, query: str, default_op: str, limits: ParsedLimits, deadline: Optional[float]
    ) -> Tuple[Stats, str, List[str]]:
        parts = self._scatter(
            lambda a, _: a.prepare.remote(query, default_op, limits), "statistics", deadline=deadline
        )
        return add_stats([p[0] for p in parts]), parts[0][1], parts[0][2]

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        offset: int = 0,
        count: bool = False,
        default_op: str = "or",
        fields: bool = True,
        highlight: Optional[Mapping[str, Mapping[str, Any]]] = None,
        limits: ParsedLimits = None,
        deadline: Optional[float] = None,
    ) -> ShardedResult:
        """The best `k` documents for `query` after the first `offset`, best first, with
        scores equal to one index's of every shard's documents; `count` counts every match
        exactly (else `total` may be a lower bound). Query syntax as `apcache.Index.search`
        (Lucene's classic). QueryError if it does not parse, ShardError if a shard fails.
        `highlight` (``{"body": {}, "title": {"number_of_fragments": 0}}``: fields and
        `apcache.Index.highlight`'s options) gives each hit its `highlight`, made by the
        shard that holds it when it fetches the hit's fields (ValueError for an unknown field
        or option). `limits` (max_terms, max_depth) are checked where the shards parse the
        query (QueryTooLarge); past `deadline` (`time.monotonic()`), QueryTimeout."""
        if k < 0 or offset < 0:
            raise ValueError("k and offset are at least 0")
        marks = highlight_fields(highlight) if highlight is not None else None
        stats, canonical, notes = self._prepare(query, default_op, limits, deadline)
        want = offset + k
        answers = self._scatter(
            lambda a, _: a.search.remote(query, want, count, stats, default_op, False),
            "search",
            deadline=deadline,
        )
        total = sum(a[0] for a in answers)
        exact = all(a[1] for a in answers)
        ranked = heapq.nsmallest(
            want,
            ((hit, shard) for shard, answer in enumerate(answers) for hit in answer[2]),
            key=lambda pair: (-pair[0][0], pair[0][1]),
        )
        hits = [_hit(hit, shard) for hit, shard in ranked[offset:]]
        if (fields or marks is not None) and hits:
            hits = self._fetch(hits, deadline, query, default_op, marks, fields)
        return ShardedResult(total, exact, hits, canonical, list(notes), stats)

    def _fetch(
        self,
        hits: List[ShardedHit],
        deadline: Optional[float] = None,
        query: Optional[str] = None,
        default_op: str = "or",
        highlight: Optional[HighlightFields] = None,
        fields: bool = True,
    ) -> List[ShardedHit]:
        """`hits` with their stored fields (when `fields`), and their highlights of `query`
        when `highlight` names fields, asked of the shards that hold them (phase 3)."""
        wanted: Dict[int, List[int]] = {}
        for hit in hits:
            wanted.setdefault(hit.shard, []).append(hit.doc)
        shards = sorted(wanted)
        fetched = self._scatter(
            lambda a, shard: a.fetch.remote(wanted[shard], query, default_op, highlight, fields),
            "fetch",
            shards,
            deadline=deadline,
        )
        stored = {
            (shard, doc): fields
            for shard, shard_fields in zip(shards, fetched)
            for doc, fields in zip(wanted[shard], shard_fields)
        }
        return [
            replace(
                hit,
                title=stored[hit.shard, hit.doc][0],
                body=stored[hit.shard, hit.doc][1],
                highlight=stored[hit.shard, hit.doc][2],
            )
            for hit in hits
        ]

    def count(
        self,
        query: str,
        *,
        default_op: str = "or",
        limits: ParsedLimits = None,
        deadline: Optional[float] = None,
    ) -> int:
        """The exact number of documents matching `query`: every shard's count, summed (one
        phase: counting needs no statistics). `limits` and `deadline` as in `search`."""
        return sum(
            self._scatter(
                lambda a, _: a.count.remote(query, default_op, limits), "count", deadline=deadline
            )
        )

    def first_documents(self, n: int, *, offset: int = 0, fields: bool = True) -> List[ShardedHit]:
        """Documents `offset` to `offset + n` in input order, each with score 1 (what an
        Elasticsearch match_all lists)."""
        answers = self._scatter(
            lambda a, _: a.first_documents.remote(offset + n, fields), "match_all"
        )
        ranked = heapq.nsmallest(
            offset + n,
            ((hit, shard) for shard, answer in enumerate(answers) for hit in answer),
            key=lambda pair: pair[0][1],
        )
        return [_hit(hit, shard) for hit, shard in ranked[offset:]]

    def document(self, doc_id: str) -> Optional[Dict[str, Any]]:
        """The stored document with external id `doc_id` (id, doc, title, body), or None;
        asked of the one shard its id hashes to."""
        shard = shard_of(doc_id, self.shards)
        return self._scatter(lambda a, _: a.document.remote(doc_id), "document", [shard])[0]

    def shard_stats(self) -> List[Dict[str, Any]]:
        """One replica's `apcache.Index.stats()` of each shard, in shard order."""
        return self._scatter(lambda a, _: a.info.remote(), "stats")

    def shard_stats_answered(self, timeout_s: float) -> List[Optional[Dict[str, Any]]]:
        """Each shard's `apcache.Index.stats()`, or None for a shard that did not answer
        within `timeout_s`: what monitoring reads, which must not fail with one shard."""
        out: List[Optional[Dict[str, Any]]] = []
        for shard in range(self.shards):
            try:
                out.append(
                    self._scatter(lambda a, _: a.info.remote(), "stats", [shard], timeout_s=timeout_s)[0]
                )
            except ShardError:
                out.append(None)
        return out

    def describe(self) -> Dict[str, Any]:
        """What `apcache serve` says of an index (`GET /indexes/{name}`), over every shard:
        documents, segments and bytes summed, the serving mode (the shards', when they all
        have one; else the modes joined by commas), the postings caches' segments summed."""
        parts = self._scatter(lambda a, _: a.describe.remote(), "describe")
        modes = sorted({part["mode"] for part in parts})
        return {
            "docs": sum(part["docs"] for part in parts),
            "segments": sum(part["segments"] for part in parts),
            "search_bytes": sum(part["search_bytes"] for part in parts),
            "store_bytes": sum(part["store_bytes"] for part in parts),
            "mode": ",".join(modes),
            "cache_segments": sum(part["cache_segments"] for part in parts),
            # Every shard is written with the same mapping.
            "mapping": parts[0]["mapping"],
        }

    def close(self) -> None:
        """Stops every actor."""
        for shard in self.replicas:
            for actor in shard:
                ray.kill(actor)
        self.replicas = []

    def __enter__(self) -> "ShardedIndex":
        return self

    def __exit__(self, *args: object) -> None:
        self.close()


def _cancel(refs: Iterable["ray.ObjectRef[Any]"]) -> None:
    """Cancels calls whose answers will not be read (queued ones do not run; a running one
    finishes, as Ray leaves threaded actors' running calls alone)."""
    for ref in refs:
        try:
            ray.cancel(ref)
        except (RayError, TypeError, ValueError):
            pass  # already finished, or the actor is gone: nothing left to stop


def _hit(wire: _WireHit, shard: int) -> ShardedHit:
    score, place, doc_id, doc, title, body = wire
    return ShardedHit(doc_id, score, shard, doc, place, title, body)
