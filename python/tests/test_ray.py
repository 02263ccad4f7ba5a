"""apcache.ray: a sharded index on a local Ray gives one index's counts, top 10 and scores;
a shard that dies fails the query by name, a query past its deadline fails with QueryTimeout.
The HTTP front is tested in test_ray_http.py (the same Ray session: conftest.py).

The queries are drawn from the shared query sets (luceneutil's tasks: terms, conjunctions,
disjunctions, phrases; the search-benchmark-game's unions, intersections and phrases).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Dict, Iterator, List

import pytest
import ray  # a missing Ray is a failure, never a skip

import apcache
import apcache.ray as ar
from conftest import REPO, http, start_server

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
        # `fields`: the named text fields' figures (none in a title/body index).
        assert set(whole) == {"doc_count", "total_tokens", "doc_freqs", "fields"}


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
        # The front's description: what `apcache serve` says of each shard in the same mode,
        # summed (the postings caches' segments among it).
        dirs = ar.Layout.read(sharded_paths[4]).dirs
        (tmp_path / "server").mkdir()
        server, url = start_server(
            [f"s{i}={d}" for i, d in enumerate(dirs)],
            "--mode", "hybrid-prefetch", "--cache-size", "8MiB", "--tier-dir", str(tmp_path / "server"),
        )
        try:
            shards = http(url + "/indexes").json()["indexes"]
        finally:
            server.terminate()
            server.wait(30)
        described = cached.describe()
        assert described["mode"] == "hybrid-prefetch" and described["cache_segments"] > 0
        for key in ("docs", "segments", "search_bytes", "store_bytes", "cache_segments"):
            assert described[key] == sum(s[key] for s in shards), key


def test_the_query_set_is_not_trivial(single: apcache.Index) -> None:
    assert len(QUERIES) >= 70
    assert sum(1 for q in QUERIES if single.count(q) >= 10) >= 20


def test_offset_pages_the_merged_ranking(four: ar.ShardedIndex, single: apcache.Index) -> None:
    whole = [h.id for h in single.search("river", k=30, fields=False)]
    assert [h.id for h in four.search("river", k=10, offset=20).hits] == whole[20:30]


def test_a_bad_query_raises_query_error(four: ar.ShardedIndex) -> None:
    with pytest.raises(apcache.QueryError) as raised:
        four.search("river (unbalanced")
    # Carried back from a shard's actor with the byte it points at.
    assert raised.value.position == 6 and "byte 6" in str(raised.value)
    with pytest.raises(apcache.QueryError) as raised:
        four.count("river AND")
    assert raised.value.position == 6


def test_highlights_are_made_by_the_shards_as_by_one_index(four: ar.ShardedIndex, single: apcache.Index) -> None:
    fields = {"body": {}, "title": {"number_of_fragments": 0, "pre_tag": "[", "post_tag": "]"}}
    for query in ("river valley", '"new york" -city', "+music +jazz"):
        result = four.search(query, k=5, highlight=fields, fields=False)
        assert result.hits
        for hit in result.hits:
            stored = single.doc(hit.id)
            expected = {"body": single.highlight(query, stored["body"]),
                        "title": single.highlight(query, stored["title"], **fields["title"])}
            assert hit.highlight == {k: v for k, v in expected.items() if v}, (query, hit.id)
            assert hit.title is None and hit.body is None  # highlighted, not shipped
    assert all(hit.highlight is None for hit in four.search("river", k=3).hits)
    with pytest.raises(ValueError, match="abstract"):
        four.search("river", highlight={"abstract": {}})
    with pytest.raises(ValueError, match="pre_tags"):
        four.search("river", highlight={"body": {"pre_tags": ["<b>"]}})
    with pytest.raises(ValueError, match="fragment_size"):
        four.search("river", highlight={"body": {"fragment_size": 0}})


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


def test_a_passed_deadline_runs_no_phase(four: ar.ShardedIndex) -> None:
    # The HTTP front's 504: a deadline already past when the query starts runs nothing.
    with pytest.raises(ar.QueryTimeout) as raised:
        four.search("river", deadline=time.monotonic())
    assert raised.value.phase == "statistics" and isinstance(raised.value, apcache.ApcacheError)
    with pytest.raises(ar.QueryTimeout):
        four.count("river", deadline=time.monotonic() - 1)
    # A deadline far enough ahead changes nothing.
    assert four.count("river", deadline=time.monotonic() + 60) == four.count("river")


def test_the_shards_check_the_parsed_query_against_the_limits(four: ar.ShardedIndex) -> None:
    many = " ".join(f"word{i}" for i in range(20))
    with pytest.raises(ar.QueryTooLarge, match="the query has 20 clauses; at most 19 are accepted"):
        four.search(many, limits=(19, 32))
    with pytest.raises(ar.QueryTooLarge, match="20 clauses"):
        four.count(many, limits=(19, 32))
    # A word written twice is two clauses, as `apcache serve` counts them.
    twice = " ".join(["river"] * 20)
    with pytest.raises(ar.QueryTooLarge, match="20 clauses"):
        four.search(twice, limits=(19, 32))
    assert four.search(many, limits=(20, 32)).total == four.search(many).total
    # Three groups in one another, under an outer group of two clauses: 4 levels.
    nested = "a (b (c (d e)))"
    with pytest.raises(ar.QueryTooLarge, match="the query nests 4 levels deep; at most 3 are accepted"):
        four.search(nested, limits=(1024, 3))
    assert four.count(nested, limits=(1024, 4)) == four.count(nested)
    # Parsing comes first: a query that does not parse is a QueryError, whatever the limits.
    with pytest.raises(apcache.QueryError):
        four.search("(a", limits=(0, 0))
