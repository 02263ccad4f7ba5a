"""apcache.ray: a sharded index on a local Ray gives one index's counts, top 10 and scores;
a shard that dies fails the query by name; the HTTP front answers as `apcache serve` does.

The queries are drawn from the shared query sets (luceneutil's tasks: terms, conjunctions,
disjunctions, phrases; the search-benchmark-game's unions, intersections and phrases).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import ray  # a missing Ray is a failure, never a skip

import apcache
import apcache.ray as ar
from conftest import REPO, SAMPLE, apcache_bin, sample_documents

# Ray Serve's own modules warn of deprecations in their dependencies (pydantic).
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUERY_SETS = REPO.parent / "shared" / "queries"
LUCENEUTIL_CLASSES = [
    "HighTerm", "MedTerm", "LowTerm",
    "AndHighHigh", "AndHighMed", "AndHighLow",
    "OrHighHigh", "OrHighMed", "OrHighLow",
    "HighPhrase", "MedPhrase", "LowPhrase", "HighSloppyPhrase",
]
PER_LUCENEUTIL_CLASS = 3
PER_GAME_TAG = 12


def shared_queries() -> List[str]:
    """A few dozen queries of each kind from the shared query sets (a missing set fails)."""
    tasks = QUERY_SETS / "luceneutil" / "wikimedium.10M.tasks"
    game = QUERY_SETS / "search-benchmark-game.queries.jsonl"
    for path in (tasks, game):
        if not path.is_file():
            pytest.fail(f"no query set at {path} (../shared/queries beside the repository)", pytrace=False)
    queries: List[str] = []
    taken: Dict[str, int] = {}
    for line in tasks.read_text(encoding="utf-8").splitlines():
        kind, sep, rest = line.partition(":")
        if not sep or kind not in LUCENEUTIL_CLASSES or taken.get(kind, 0) >= PER_LUCENEUTIL_CLASS:
            continue
        queries.append(rest.split("#", 1)[0].strip())
        taken[kind] = taken.get(kind, 0) + 1
    for line in game.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        tag = entry["tags"][0]
        if tag in ("union", "intersection", "phrase") and taken.get(tag, 0) < PER_GAME_TAG:
            queries.append(entry["query"])
            taken[tag] = taken.get(tag, 0) + 1
    return queries


QUERIES = shared_queries()


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    try:
        from ray import serve

        serve.shutdown()
    finally:
        ray.shutdown()


def documents() -> Iterator[Tuple[str, str, str]]:
    # Ids are the documents' numbers in input order, as `apcache index` gives them, so the
    # sharded answers compare with the binary's index of the sample, and with its server.
    for i, (title, body) in enumerate(sample_documents()):
        yield str(i), title, body


@pytest.fixture(scope="module")
def sharded_paths(local_ray: None, tmp_path_factory: pytest.TempPathFactory) -> Dict[int, Path]:
    paths = {}
    for shards in (4, 1):
        path = tmp_path_factory.mktemp("ray") / f"sharded{shards}"
        report = ar.build_sharded(documents(), path, shards=shards)
        assert report["documents"] == 1744
        assert len(report["shard_reports"]) == shards
        paths[shards] = path
    return paths


@pytest.fixture(scope="module")
def four(sharded_paths: Dict[int, Path]) -> Iterator[ar.ShardedIndex]:
    with ar.ShardedIndex(sharded_paths[4], index_options={"threads": 1}, num_cpus=0.1) as index:
        yield index


@pytest.fixture(scope="module")
def one(sharded_paths: Dict[int, Path]) -> Iterator[ar.ShardedIndex]:
    with ar.ShardedIndex(sharded_paths[1], index_options={"threads": 1}, num_cpus=0.1) as index:
        yield index


@pytest.fixture(scope="module")
def single(cli_index: Path) -> Iterator[apcache.Index]:
    with apcache.Index(cli_index, threads=1) as index:
        yield index


def test_the_shard_hash_is_stable_and_spreads() -> None:
    # Fixed values: the hash is BLAKE2b, never Python's salted hash.
    assert [ar.shard_of(str(i), 4) for i in range(8)] == [ar.shard_of(str(i), 4) for i in range(8)]
    assert ar.shard_of("wiki-1", 4) == int.from_bytes(
        __import__("hashlib").blake2b(b"wiki-1", digest_size=8).digest(), "little"
    ) % 4
    counts = [0] * 4
    for i in range(4000):
        counts[ar.shard_of(str(i), 4)] += 1
    assert min(counts) > 850


def test_the_shards_hold_every_document_once(sharded_paths: Dict[int, Path]) -> None:
    layout = ar.Layout.read(sharded_paths[4])
    assert layout.shards == 4 and sum(layout.documents) == 1744
    for shard, directory in enumerate(layout.dirs):
        with apcache.Index(directory, threads=1) as index:
            assert len(index) == layout.documents[shard] > 300
            doc = index.doc(0)
            assert ar.shard_of(doc["id"], 4) == shard


def test_collection_stats_sum_to_the_whole(four: ar.ShardedIndex, single: apcache.Index) -> None:
    for query in ["river valley", '"new york" city', "+griffith +observatory"]:
        whole = single.collection_stats(query)
        assert four.collection_stats(query) == whole
        assert set(whole) == {"doc_count", "total_tokens", "doc_freqs"}


def test_search_with_given_stats_equals_the_whole(sharded_paths: Dict[int, Path], single: apcache.Index) -> None:
    # The bindings alone: a shard scored with the whole's statistics scores as the whole.
    query = "river valley"
    stats = single.collection_stats(query)
    whole = {h.id: h.score for h in single.search(query, k=2000, fields=False)}
    with apcache.Index(ar.Layout.read(sharded_paths[4]).dirs[0], threads=1) as shard:
        own = shard.search(query, k=2000, fields=False)
        scored = shard.search(query, k=2000, fields=False, stats=stats)
        assert [h.id for h in own] and all(whole[h.id] == h.score for h in scored)
        assert any(whole[h.id] != h.score for h in own)
        total, exact, hits = shard.search_with_total(query, 3, stats=stats, fields=False)
        assert exact and total == shard.count(query) and hits == scored[:3]
    with pytest.raises(KeyError):
        single.search(query, stats={"doc_count": 1})
    with pytest.raises(TypeError):
        single.search(query, stats=[1, 2])


@pytest.mark.parametrize("query", QUERIES)
def test_four_shards_equal_one(four: ar.ShardedIndex, one: ar.ShardedIndex, single: apcache.Index, query: str) -> None:
    expected = [(h.id, h.score) for h in single.search(query, k=10, fields=False)]
    count = single.count(query)
    for index in (four, one):
        result = index.search(query, k=10, count=True, fields=False)
        assert result.exact and result.total == count
        assert [h.id for h in result.hits] == [e[0] for e in expected]
        for hit, (_, score) in zip(result.hits, expected):
            assert hit.score == pytest.approx(score, rel=1e-6)
        assert index.count(query) == count


def test_shards_with_a_postings_cache_score_the_same(
    sharded_paths: Dict[int, Path], single: apcache.Index, tmp_path: Path
) -> None:
    # Each shard's own postings cache in a directory tier: the statistics reach the cache
    # modes' query path too.
    options = {"threads": 1, "mode": "hybrid-prefetch", "cache_size": "8MiB", "tier_dir": str(tmp_path)}
    with ar.ShardedIndex(sharded_paths[4], index_options=options, num_cpus=0.1) as cached:
        for query in QUERIES[::3]:
            expected = [(h.id, h.score) for h in single.search(query, k=10, fields=False)]
            result = cached.search(query, k=10, count=True, fields=False)
            assert [(h.id, h.score) for h in result.hits] == expected, query
            assert result.total == single.count(query)
        stats = cached.shard_stats()
        assert {s["mode"] for s in stats} == {"hybrid-prefetch"}
        assert sum(s["cache_hits"] + s["cache_misses"] for s in stats) > 0


def test_the_query_set_is_not_trivial(single: apcache.Index) -> None:
    assert len(QUERIES) >= 70
    assert sum(1 for q in QUERIES if single.count(q) >= 10) >= 20


def test_offset_pages_the_merged_ranking(four: ar.ShardedIndex, single: apcache.Index) -> None:
    whole = [h.id for h in single.search("river", k=30, fields=False)]
    assert [h.id for h in four.search("river", k=10, offset=20).hits] == whole[20:30]


def test_a_bad_query_raises_query_error(four: ar.ShardedIndex) -> None:
    with pytest.raises(apcache.QueryError):
        four.search("(unbalanced")


def test_a_dead_shard_fails_the_query_by_name(sharded_paths: Dict[int, Path]) -> None:
    index = ar.ShardedIndex(sharded_paths[4], index_options={"threads": 1}, num_cpus=0.1)
    errors: List[BaseException] = []
    answered = threading.Event()

    def load() -> None:
        try:
            for _ in range(100_000):
                index.search("river valley", k=10, count=True)
                answered.set()
        except BaseException as error:  # noqa: BLE001 - the test looks at what it was
            errors.append(error)

    worker = threading.Thread(target=load)
    worker.start()
    assert answered.wait(60)
    ray.kill(index.actors[2])
    worker.join(60)
    assert not worker.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], ar.ShardError), errors
    assert isinstance(errors[0], apcache.ApcacheError)
    assert errors[0].shards == [2] and "shard 2" in str(errors[0])
    # And after it: every query fails, none is answered by three shards.
    with pytest.raises(ar.ShardError, match="shard 2"):
        index.search("river")
    with pytest.raises(ar.ShardError, match="shard 2"):
        index.count("river")
    # Over HTTP: a 503 naming the shard (the front's handler, called without Serve).
    from starlette.requests import Request

    from apcache.ray._http import SearchFront

    scope = {"type": "http", "method": "GET", "path": "/indexes/wiki/search", "query_string": b"q=river", "headers": []}
    response = asyncio.run(SearchFront("wiki", index)(Request(scope)))
    body = json.loads(response.body)
    assert response.status_code == 503
    assert body["error"]["type"] == "search_phase_execution_exception" and "shard 2" in body["error"]["reason"]
    index.close()


def test_a_replica_takes_over_a_dead_one(sharded_paths: Dict[int, Path], single: apcache.Index) -> None:
    index = ar.ShardedIndex(sharded_paths[4], index_options={"threads": 1}, replicas=2, num_cpus=0.1)
    expected = [(h.id, h.score) for h in single.search("river valley", k=10, fields=False)]
    errors: List[BaseException] = []
    answered = threading.Event()
    stop = threading.Event()

    def load() -> None:
        try:
            while not stop.is_set():
                result = index.search("river valley", k=10, count=True, fields=False)
                assert [(h.id, h.score) for h in result.hits] == expected
                answered.set()
        except BaseException as error:  # noqa: BLE001 - the test looks at what it was
            errors.append(error)

    worker = threading.Thread(target=load)
    worker.start()
    assert answered.wait(60)
    ray.kill(index.replicas[2][0])
    time.sleep(1.0)
    stop.set()
    worker.join(60)
    assert errors == []
    for query in QUERIES[:10]:
        assert [h.id for h in index.search(query, fields=False).hits] == [
            h.id for h in single.search(query, fields=False)
        ]
    ray.kill(index.replicas[2][1])
    with pytest.raises(ar.ShardError, match="shard 2") as raised:
        index.search("river")
    assert raised.value.shards == [2]
    index.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, body: Any = None) -> Tuple[int, Dict[str, Any]]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def fronts(four: ar.ShardedIndex, cli_index: Path) -> Iterator[Tuple[str, str]]:
    """(the sharded front's URL, `apcache serve`'s URL), both serving the index as "wiki"."""
    sharded = ar.serve_sharded(four, "wiki", port=free_port())
    port = free_port()
    server = subprocess.Popen(
        [str(apcache_bin()), "serve", f"wiki={cli_index}", "--addr", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    native = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                fetch(native + "/health")
                break
            except OSError:
                time.sleep(0.05)
        yield sharded, native
    finally:
        server.terminate()
        server.wait(30)


def without(body: Dict[str, Any], *keys: str) -> Dict[str, Any]:
    return {k: v for k, v in body.items() if k not in keys}


@pytest.mark.parametrize(
    "path",
    [
        "/indexes/wiki/search?q=river+valley&k=5",
        "/indexes/wiki/search?q=%2Bgriffith+%2Bobservatory&count=true",
        "/indexes/wiki/search?q=%22new+york%22&k=3&offset=2&count=true",
        "/indexes/wiki/search?q=the+Rivers&default_operator=and&k=2",
        "/indexes/wiki/search?q=(unbalanced",
        "/indexes/nothere/search?q=river",
        "/indexes/wiki/search?k=3",
    ],
)
def test_the_native_search_answers_as_apcache_serve(fronts: Tuple[str, str], path: str) -> None:
    sharded, native = fronts
    ours, theirs = fetch(sharded + path), fetch(native + path)
    assert ours[0] == theirs[0]
    if ours[0] == 200:
        assert without(ours[1], "took_us") == without(theirs[1], "took_us")
    else:
        assert ours[1]["error"]["type"] == theirs[1]["error"]["type"]


@pytest.mark.parametrize(
    "path, body",
    [
        ("/wiki/_search?q=river&size=3", None),
        ("/wiki/_search", {"query": {"match": {"body": "c++ river -valley"}}, "size": 4}),
        ("/wiki/_search", {"query": {"query_string": {"query": "+music +jazz"}}, "track_total_hits": True, "from": 2}),
        ("/wiki/_search", {"query": {"match": {"body": {"query": "new york", "operator": "and"}}}, "_source": ["title"]}),
        ("/wiki/_search", {"query": {"match_all": {}}, "size": 3, "from": 5}),
        ("/wiki/_count?q=river", None),
        ("/wiki/_count", {"query": {"match": {"body": "river valley"}}}),
        ("/wiki/_search", {"query": {"match": {"title": "river"}}}),
    ],
)
def test_the_elasticsearch_subset_answers_as_apcache_serve(fronts: Tuple[str, str], path: str, body: Any) -> None:
    sharded, native = fronts
    ours, theirs = fetch(sharded + path, body), fetch(native + path, body)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != 200:
        assert ours[1]["error"]["type"] == theirs[1]["error"]["type"]
        return
    ours_body, theirs_body = without(ours[1], "took", "_shards"), without(theirs[1], "took", "_shards")
    assert ours_body == theirs_body
    assert ours[1]["_shards"]["total"] == 4 and ours[1]["_shards"]["failed"] == 0


def test_the_front_answers_as_the_coordinator(fronts: Tuple[str, str], four: ar.ShardedIndex) -> None:
    sharded, _ = fronts
    status, body = fetch(sharded + "/indexes/wiki/search?q=station+railway&k=10&count=true")
    assert status == 200
    result = four.search("station railway", k=10, count=True)
    assert body["total"] == {"value": result.total, "exact": True}
    assert [h["id"] for h in body["hits"]] == [h.id for h in result.hits]
    assert [h["score"] for h in body["hits"]] == pytest.approx([h.score for h in result.hits], rel=1e-7)
    status, root = fetch(sharded + "/")
    assert status == 200 and root["version"]["number"].startswith("8.")
    status, doc = fetch(sharded + "/wiki/_doc/17")
    assert status == 200 and doc["found"] and doc["_source"]["title"] == four.document("17")["title"]
