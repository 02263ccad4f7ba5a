"""apcache: a full-text search engine for indices larger than DRAM, from Python.

Build an index, search it, run a set of TREC topics and evaluate the run::

    import apcache

    with apcache.IndexWriter("/tmp/idx") as writer:
        writer.add("d1", "Valdarno", "The Valdarno is the valley of the river Arno ...")
        writer.add_many(documents)          # (id, title, body) tuples or dicts, streamed

    index = apcache.Index("/tmp/idx")
    for hit in index.search("+river +valley", k=3):
        print(hit.id, hit.score, hit.title)
        print(index.highlight("+river +valley", hit.body))   # fragments, words marked <em>

    topics = apcache.read_topics("topics.txt")        # {qid: query}
    results = index.batch_search(topics, k=1000, threads=4)
    apcache.write_trec_run(results, "run.txt", tag="bm25")

JSON documents (dicts) are indexed under an Elasticsearch mapping, or one inferred from
them, and searched by field, filtered and sorted::

    mapping = {"properties": {"summary": {"type": "text"}, "size": {"type": "long"}}}
    with apcache.IndexWriter("/tmp/deb", mapping=mapping) as writer:
        writer.add({"_id": "vim", "summary": "text editor", "size": 3000})
    hits = apcache.Index("/tmp/deb").search("summary:editor", filter="size:[1000 TO *]",
                                            sort=["size:desc"])
    hits[0]._id, hits[0]._source, hits[0].sort       # "vim", {...}, [3000]

Queries in `search` and `count` use Lucene's classic syntax (``parse="lucene"``);
`batch_search` reads each query as a bag of words (``parse="plain"``), so that topic text
with punctuation (``c++``, ``u.s.``, ``AIDS: treatment``) never fails. Either takes the other.

Errors are Python exceptions carrying the engine's message, all subclasses of
`ApcacheError`: `QueryError` (a query that does not parse; its `position` is the byte it
points at, or None), `IndexError` (an index that cannot be opened, read or built; note that
it is not Python's builtin ``IndexError``: catch it as ``apcache.IndexError``) and
`TopicError` (a malformed topic file, with its line).

`apcache.ray` (which needs ``pip install "ray[serve]"``) splits an index into shards, builds
them as Ray tasks and serves them from Ray actors, with one index's scores and counts; see
docs/distributed.md.
"""

from __future__ import annotations

from typing import Dict, List, Mapping

from ._apcache import (
    ApcacheError,
    Hit,
    Index,
    IndexError,  # noqa: A004 - apcache.IndexError, not the builtin; see the module docstring
    IndexWriter,
    QueryError,
    TopicError,
    __version__,
    escape_query,
    read_topics,
    write_trec_run,
)

__all__ = [
    "ApcacheError",
    "Hit",
    "Index",
    "IndexError",
    "IndexWriter",
    "QueryError",
    "TopicError",
    "__version__",
    "escape_query",
    "read_topics",
    "results_to_dataframe",
    "write_trec_run",
]

RUN_COLUMNS = ["qid", "docno", "rank", "score"]
"""The columns of `results_to_dataframe`: PyTerrier's names for a ranking."""


def results_to_dataframe(results: Mapping[str, List[Hit]], queries: Mapping[str, str] | None = None):
    """The rankings of `batch_search` as a pandas DataFrame in PyTerrier's column names.

    One row per hit: ``qid``, ``docno`` (the document's id), ``rank`` (from 0, as PyTerrier
    counts) and ``score``; with `queries` (``{qid: text}``, as `read_topics` returns) also a
    ``query`` column. Needs pandas, which apcache does not install
    (``pip install pandas``); without it this raises ImportError saying so.
    """
    try:
        import pandas as pd
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "apcache.results_to_dataframe needs pandas: pip install pandas"
        ) from error
    rows: Dict[str, list] = {name: [] for name in RUN_COLUMNS}
    if queries is not None:
        rows["query"] = []
    for qid, hits in results.items():
        for rank, hit in enumerate(hits):
            rows["qid"].append(str(qid))
            rows["docno"].append(hit.id)
            rows["rank"].append(rank)
            rows["score"].append(float(hit.score))
            if queries is not None:
                rows["query"].append(queries[qid])
    return pd.DataFrame(rows)
