"""Building a sharded index: documents split by a hash of their id, one Ray task per shard,
each building an ordinary apcache index with `apcache.IndexWriter`."""

from __future__ import annotations

import json
import shutil
import time
from array import array
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import ray

from .._apcache import IndexError as ApcacheIndexError
from .._apcache import IndexWriter
from ._layout import LAYOUT_FILE, Layout, PathLike, shard_dir, shard_of, write_order

Document = Union[Tuple[Union[str, int], str, str], Mapping[str, Any]]

_SPOOL = ".input-{}.jsonl"


def _document_fields(item: Document) -> Tuple[str, str, str]:
    """(id, title, body) of a tuple or a dict (as IndexWriter.add_many reads them)."""
    if isinstance(item, Mapping):
        if "id" not in item:
            raise KeyError('a document dict needs an "id"')
        body = item.get("body", item.get("contents"))
        if body is None:
            raise KeyError('a document dict needs a "body" (or "contents")')
        return str(item["id"]), str(item.get("title", "")), str(body)
    doc_id, title, body = item
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
        raise TypeError("a document id is a str or an int")
    return str(doc_id), title, body


def _spooled(spool: str) -> Iterator[Tuple[int, str, str, str]]:
    """(input place, id, title, body) of a shard's spool file, written by `build_sharded`."""
    with open(spool, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            yield row["n"], row["id"], row["title"], row["body"]


def _tsv_lines(paths: Sequence[str], shard: int, shards: int) -> Iterator[Tuple[int, str, str, str]]:
    """(input place, id, title, body) of the lines of `paths` (``title<TAB>body``) that fall
    in `shard`; a document's id is its place in the whole input, from 0, as `apcache index`
    numbers them."""
    n = 0
    for path in paths:
        with open(path, "rb") as lines:
            for raw in lines:
                doc_id = str(n)
                if shard_of(doc_id, shards) == shard:
                    text = raw.decode("utf-8", errors="replace").rstrip("\n")
                    title, _, body = text.partition("\t")
                    yield n, doc_id, title, body
                n += 1


@ray.remote
def _build_shard(
    source: Tuple[str, Any], shard: int, shards: int, out: str, writer_options: Dict[str, Any]
) -> Dict[str, Any]:
    """Builds shard `shard`'s index at `out` from `source` (a spool file, or TSV files the
    task filters itself); returns the IndexWriter's report and the shard's documents."""
    started = time.perf_counter()
    kind, what = source
    rows = _spooled(what) if kind == "spool" else _tsv_lines(what, shard, shards)
    order = array("Q")

    def documents() -> Iterator[Tuple[str, str, str]]:
        for n, doc_id, title, body in rows:
            order.append(n)
            yield doc_id, title, body

    writer = IndexWriter(out, **writer_options)
    added = writer.add_many(documents())
    if added == 0:
        raise ApcacheIndexError(f"shard {shard} got no documents: use fewer shards")
    report = dict(writer.commit())
    write_order(Path(out), order)
    if kind == "spool":
        Path(what).unlink()
    report["shard"] = shard
    report["task_seconds"] = time.perf_counter() - started
    return report


def _prepare(path: PathLike, shards: int, overwrite: bool) -> Path:
    if shards < 1:
        raise ValueError("shards must be at least 1")
    root = Path(path)
    if (root / LAYOUT_FILE).exists():
        if not overwrite:
            raise ApcacheIndexError(
                f"a sharded index is already at {root}: pass overwrite=True to replace it"
            )
        old = Layout.read(root)
        for directory in old.dirs[shards:]:
            shutil.rmtree(directory, ignore_errors=True)
        (root / LAYOUT_FILE).unlink()
    root.mkdir(parents=True, exist_ok=True)
    return root


def _run(
    root: Path,
    shards: int,
    sources: List[Tuple[str, Any]],
    writer_options: Dict[str, Any],
    num_cpus: float,
    started: float,
) -> Dict[str, Any]:
    tasks = [
        _build_shard.options(num_cpus=num_cpus).remote(
            sources[i], i, shards, str(shard_dir(root, i)), writer_options
        )
        for i in range(shards)
    ]
    reports = ray.get(tasks)
    Layout(path=root, shards=shards, documents=[r["documents"] for r in reports]).write()
    return {
        "shards": shards,
        "documents": sum(r["documents"] for r in reports),
        "seconds": time.perf_counter() - started,
        "shard_reports": reports,
    }


def build_sharded(
    documents: Iterable[Document],
    path: PathLike,
    shards: int = 4,
    *,
    codec: str = "pfor-delta-simd",
    threads: int = 1,
    positions: bool = True,
    memory_budget: Optional[Union[int, str]] = None,
    overwrite: bool = False,
    num_cpus: Optional[float] = None,
) -> Dict[str, Any]:
    """Builds a sharded index at `path` from `documents`, one Ray task per shard.

    `documents` are (id, title, body) tuples or dicts with id, title and body (as
    `IndexWriter.add_many` reads them), streamed: this process spools each to its shard's
    file (``shard_of(id, shards)``), then each shard's task builds an ordinary apcache index
    from its file with `apcache.IndexWriter` (`codec`, `threads`, `positions` and
    `memory_budget` are its options), keeping the external ids. A task asks Ray for
    `num_cpus` CPUs (default: `threads`). Ray must be initialised (``ray.init()``).

    Returns the build's report: ``shards``, ``documents``, ``seconds`` (from the first
    document to the last commit) and each task's IndexWriter report (``shard_reports``).
    Raises apcache.IndexError when an index is already at `path` (unless `overwrite`), or a
    shard got no document.
    """
    started = time.perf_counter()
    root = _prepare(path, shards, overwrite)
    spools = [root / _SPOOL.format(i) for i in range(shards)]
    files = [open(spool, "w", encoding="utf-8") for spool in spools]
    try:
        for n, item in enumerate(documents):
            doc_id, title, body = _document_fields(item)
            row = {"n": n, "id": doc_id, "title": title, "body": body}
            files[shard_of(doc_id, shards)].write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        for file in files:
            file.close()
    options = _writer_options(codec, threads, positions, memory_budget, overwrite)
    sources = [("spool", str(spool)) for spool in spools]
    return _run(root, shards, sources, options, float(num_cpus or threads), started)


def build_sharded_from_files(
    paths: Sequence[PathLike],
    path: PathLike,
    shards: int = 4,
    *,
    codec: str = "pfor-delta-simd",
    threads: int = 1,
    positions: bool = True,
    memory_budget: Optional[Union[int, str]] = None,
    overwrite: bool = False,
    num_cpus: Optional[float] = None,
) -> Dict[str, Any]:
    """Builds a sharded index at `path` from ``title<TAB>body`` files, one Ray task per shard.

    Every task reads all of `paths` in order and keeps the lines of its shard, so nothing
    passes through this process; a document's id is its place in the input (from 0, across
    the files), as `apcache index` numbers them. Options and report as `build_sharded`.
    """
    started = time.perf_counter()
    root = _prepare(path, shards, overwrite)
    files = [str(Path(p).resolve()) for p in paths]
    for file in files:
        if not Path(file).is_file():
            raise FileNotFoundError(file)
    options = _writer_options(codec, threads, positions, memory_budget, overwrite)
    sources = [("tsv", files)] * shards
    return _run(root, shards, sources, options, float(num_cpus or threads), started)


def _writer_options(
    codec: str,
    threads: int,
    positions: bool,
    memory_budget: Optional[Union[int, str]],
    overwrite: bool,
) -> Dict[str, Any]:
    return {
        "codec": codec,
        "threads": threads,
        "positions": positions,
        "memory_budget": memory_budget,
        "overwrite": overwrite,
    }
