"""A sharded index on Ray against one index in-process: build time, latency, throughput and
the bytes each query's two phases move. Prints figures; not a test.

    python3 python/benchmarks/ray_shards.py --work /var/tmp/apcache-ray-bench \\
        --apcache target/release/apcache $(for n in 0 1 2 3; do bash ../shared/scripts/corpus.sh $n; done)

Steps (each skipped when its output exists, unless --rebuild):
  1. the single index of every input, built by `apcache index` (timed);
  2. the sharded index, one Ray task per shard (`build_sharded_from_files`, timed);
  3. queries from the shared query sets, run on `apcache.Index` in-process and on the
     `ShardedIndex` coordinator (one Ray actor per shard): latency at concurrency 1 (mean,
     p50, p99), throughput at concurrency 1 and 8, and the serialized size of each phase's
     request and reply (pickle, as Ray ships them).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Sequence

import ray

import apcache
import apcache.ray as ar

REPO = Path(__file__).resolve().parents[2]
QUERY_SETS = REPO.parent / "shared" / "queries"
LUCENEUTIL_CLASSES = [
    "HighTerm", "MedTerm", "LowTerm",
    "AndHighHigh", "AndHighMed", "AndHighLow",
    "OrHighHigh", "OrHighMed", "OrHighLow",
    "HighPhrase", "MedPhrase", "LowPhrase", "HighSloppyPhrase",
]


def queries(per_class: int, per_tag: int) -> List[str]:
    """`per_class` queries of each luceneutil class and `per_tag` of the game's unions,
    intersections and phrases."""
    out: List[str] = []
    taken: Dict[str, int] = {}
    for line in (QUERY_SETS / "luceneutil" / "wikimedium.10M.tasks").read_text().splitlines():
        kind, sep, rest = line.partition(":")
        if sep and kind in LUCENEUTIL_CLASSES and taken.get(kind, 0) < per_class:
            out.append(rest.split("#", 1)[0].strip())
            taken[kind] = taken.get(kind, 0) + 1
    for line in (QUERY_SETS / "search-benchmark-game.queries.jsonl").read_text().splitlines():
        entry = json.loads(line)
        tag = entry["tags"][0]
        if tag in ("union", "intersection", "phrase") and taken.get(tag, 0) < per_tag:
            out.append(entry["query"])
            taken[tag] = taken.get(tag, 0) + 1
    return out


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def latencies(run: Callable[[Any], object], texts: Iterable[Any]) -> List[float]:
    out = []
    for text in texts:
        started = time.perf_counter()
        run(text)
        out.append(time.perf_counter() - started)
    return out


def throughput(run: Callable[[str], object], texts: Sequence[str], clients: int, rounds: int) -> float:
    work = list(texts) * rounds
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for _ in pool.map(run, work):
            pass
    return len(work) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", type=Path, help="title<TAB>body files (the corpus parts)")
    parser.add_argument("--work", type=Path, required=True, help="where the indexes go")
    parser.add_argument("--apcache", type=Path, default=REPO / "target" / "release" / "apcache")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--cpus", type=int, default=2, help="ray.init(num_cpus=)")
    parser.add_argument("--per-class", type=int, default=10, help="queries per luceneutil class")
    parser.add_argument("--per-tag", type=int, default=30, help="queries per game tag")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the queries for throughput")
    parser.add_argument("--shard-threads", type=int, default=1, help="query threads per shard")
    parser.add_argument("--single-threads", type=int, default=2, help="query threads of the single index")
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    single_dir, sharded_dir = args.work / "single", args.work / f"sharded{args.shards}"
    figures: Dict[str, object] = {"cpus": os.cpu_count(), "ray_cpus": args.cpus}

    if args.rebuild or not (single_dir / "MANIFEST").is_file():
        started = time.perf_counter()
        subprocess.run(
            [str(args.apcache), "index", *map(str, args.inputs), "-o", str(single_dir), "--force"],
            check=True, stdout=subprocess.DEVNULL,
        )
        figures["single_build_s"] = round(time.perf_counter() - started, 1)
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    if args.rebuild or not (sharded_dir / "shards.json").is_file():
        report = ar.build_sharded_from_files(args.inputs, sharded_dir, shards=args.shards, threads=1, overwrite=True)
        figures["sharded_build_s"] = round(report["seconds"], 1)
        figures["shard_task_s"] = [round(r["task_seconds"], 1) for r in report["shard_reports"]]
    layout = ar.Layout.read(sharded_dir)
    figures["documents_per_shard"] = layout.documents
    figures["single_bytes"] = du(single_dir)
    figures["shard_bytes"] = [du(d) for d in layout.dirs]

    print(json.dumps(figures), file=sys.stderr, flush=True)
    single = apcache.Index(single_dir, threads=args.single_threads)
    texts = []
    for text in queries(args.per_class, args.per_tag):
        try:
            single.count(text)
            texts.append(text)
        except apcache.QueryError:  # a few use syntax the single-field index refuses
            pass
    figures["queries"] = len(texts)
    sharded = ar.ShardedIndex(sharded_dir, index_options={"threads": args.shard_threads})

    def run_single(text: str) -> object:
        return single.search(text, k=10, fields=False)

    def run_sharded(text: str) -> object:
        return sharded.search(text, k=10, fields=False)

    # Equal answers first (also the warm-up: every query once on each).
    differing = 0
    for text in texts:
        a = [(h.id, h.score) for h in single.search(text, k=10, fields=False)]
        b = [(h.id, h.score) for h in sharded.search(text, k=10, fields=False).hits]
        differing += a != b
    figures["differing_top10"] = differing

    for name, run in (("single", run_single), ("sharded", run_sharded)):
        lat = latencies(run, texts)
        figures[f"{name}_mean_ms"] = round(statistics.mean(lat) * 1e3, 3)
        figures[f"{name}_p50_ms"] = round(percentile(lat, 50) * 1e3, 3)
        figures[f"{name}_p99_ms"] = round(percentile(lat, 99) * 1e3, 3)
    # One shard's own work, in-process: phase 1 and phase 2 on shard 0's index.
    shard_index = apcache.Index(layout.dirs[0], threads=1)
    wholes = {text: sharded.collection_stats(text) for text in texts}
    lat = latencies(lambda text: shard_index.collection_stats(text), texts)
    figures["shard0_phase1_mean_ms"] = round(statistics.mean(lat) * 1e3, 3)
    lat = latencies(lambda text: shard_index.search(text, k=10, fields=False, stats=wholes[text]), texts)
    figures["shard0_phase2_mean_ms"] = round(statistics.mean(lat) * 1e3, 3)
    figures["shard0_phase2_p99_ms"] = round(percentile(lat, 99) * 1e3, 3)
    shard_index.close()
    figures["overhead_mean_ms"] = round(figures["sharded_mean_ms"] - figures["single_mean_ms"], 3)  # type: ignore[operator]
    figures["overhead_p99_ms"] = round(figures["sharded_p99_ms"] - figures["single_p99_ms"], 3)  # type: ignore[operator]
    for clients in (1, 8):
        for name, run in (("single", run_single), ("sharded", run_sharded)):
            figures[f"{name}_qps_c{clients}"] = round(throughput(run, texts, clients, args.rounds), 1)

    # The bytes of each phase, per shard and query, as Ray pickles them.
    sizes: Dict[str, List[int]] = {k: [] for k in ("p1_request", "p1_reply", "p2_request", "p2_reply", "p3_request", "p3_reply")}
    shard0 = ar.ShardServer(str(layout.dirs[0]), 0, {"threads": 1})
    for text in texts:
        stats, canonical, notes = shard0.prepare(text, "or")
        whole = sharded.collection_stats(text)
        sizes["p1_request"].append(len(pickle.dumps((text, "or"))))
        sizes["p1_reply"].append(len(pickle.dumps((stats, canonical, notes))))
        sizes["p2_request"].append(len(pickle.dumps((text, 10, False, whole, "or", False))))
        answer = shard0.search(text, 10, False, whole, "or", False)
        sizes["p2_reply"].append(len(pickle.dumps(answer)))
        # Phase 3 as if all ten final hits were this shard's (the most one shard sends).
        docs = [hit[3] for hit in answer[2]]
        if docs:
            sizes["p3_request"].append(len(pickle.dumps(docs)))
            sizes["p3_reply"].append(len(pickle.dumps(shard0.fetch(docs))))
    for key, values in sizes.items():
        figures[f"{key}_bytes_mean"] = round(statistics.mean(values))
        figures[f"{key}_bytes_max"] = max(values)
    # Ray's own cost: a no-op call to one shard actor, and to all of them at once.
    one = sharded.actors[0]
    lat = latencies(lambda _: ray.get(one.ping.remote()), range(500))
    figures["ray_call_one_mean_ms"] = round(statistics.mean(lat) * 1e3, 3)
    lat = latencies(lambda _: ray.get([a.ping.remote() for a in sharded.actors]), range(500))
    figures["ray_call_all_mean_ms"] = round(statistics.mean(lat) * 1e3, 3)
    shard_stats = sharded.shard_stats()
    figures["shard_modes"] = sorted({s["mode"] for s in shard_stats})
    json.dump(figures, sys.stdout, indent=2)
    print()
    sharded.close()
    single.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
