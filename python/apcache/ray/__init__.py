"""apcache on Ray: an index split into shards, built in parallel and searched across
machines, with the scores and counts of one index.

Build, serve and search::

    import ray
    import apcache.ray as ar

    ray.init()
    ar.build_sharded(documents, "/data/wiki", shards=4)       # (id, title, body), streamed
    index = ar.ShardedIndex("/data/wiki", index_options={"mode": "hybrid-prefetch"})
    result = index.search("+river +valley", k=10, count=True)
    for hit in result.hits:
        print(hit.id, hit.score, hit.shard)
    url = ar.serve_sharded(index, "wiki", port=8000)          # apcache serve's HTTP API

A document's shard is a stable hash of its id (`shard_of`). Each shard is an ordinary
apcache index (`apcache.Index` can open it alone), served by a Ray actor holding an
`apcache.Index` with its own postings cache and tier. A query takes two round trips to
every shard: the statistics its terms need (summed), then a ranking with those sums, so
scores equal one index's bit for bit; ties go by the documents' place in the input, as in
one index. A shard that fails fails the query with `ShardError`, naming it. The HTTP front
(`serve_sharded`) answers `apcache serve`'s API: the native and Elasticsearch searches,
`/indexes`, `/_cat/indices`, `/metrics`, `/ui`, with the server's limits, deadline (504)
and admission (503), set by `FrontConfig`. docs/distributed.md describes the design and its
measurements.

Needs ``pip install "ray[serve]"``, which apcache itself does not install.
"""

from __future__ import annotations

from ._build import build_sharded, build_sharded_from_files
from ._layout import Layout, shard_of
from ._limits import FrontConfig, QueryLimits, QueryTooLarge
from ._shards import (
    QueryTimeout,
    ShardedHit,
    ShardedIndex,
    ShardedResult,
    ShardError,
    ShardServer,
    add_stats,
)


def serve_sharded(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Serves a `ShardedIndex` over HTTP with Ray Serve (see `apcache.ray._http.serve_sharded`);
    imported on first use, so that searching needs no Serve."""
    from ._http import serve_sharded as serve

    return serve(*args, **kwargs)


__all__ = [
    "FrontConfig",
    "Layout",
    "QueryLimits",
    "QueryTimeout",
    "QueryTooLarge",
    "ShardError",
    "ShardServer",
    "ShardedHit",
    "ShardedIndex",
    "ShardedResult",
    "add_stats",
    "build_sharded",
    "build_sharded_from_files",
    "serve_sharded",
    "shard_of",
]
