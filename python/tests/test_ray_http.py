"""apcache.ray's HTTP front against `apcache serve` on the same documents: the same paths,
JSON shapes, status codes and error bodies, for the searches of both APIs, `/indexes`,
`/_cat/indices`, `/metrics`, `/ui`, the query limits, parse errors with their position, the
deadline (504) and admission (503).

`fronts` (conftest.py) serves the sample as 4 shards through Ray Serve and, beside it, the
binary's index of the sample with `apcache serve`; `shard_server` serves the four shard
directories themselves with `apcache serve`, whose figures the front's must sum to. The
504 and 503 tests call the front's handler directly (no Serve), with a short deadline or a
queue of one, so that they are deterministic.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from starlette.requests import Request

import apcache.ray as ar
from apcache.ray._limits import parsed_depth, text_nesting
from apcache.ray._metrics import format_float
from conftest import Answer, http, start_server

# Ray Serve's own modules warn of deprecations in their dependencies (pydantic).
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def without(body: Dict[str, Any], *keys: str) -> Dict[str, Any]:
    return {k: v for k, v in body.items() if k not in keys}


def q(text: str, **params: Any) -> str:
    """A native search path for query text `text`."""
    return "/indexes/wiki/search?" + urllib.parse.urlencode({"q": text, **params})


def same_error(ours: Answer, theirs: Answer) -> None:
    """Equal error answers: status, and the whole body (type, reason, position, root_cause)
    except for a malformed body, whose reason is the JSON parser's own words."""
    assert ours.status == theirs.status, (ours, theirs)
    assert ours.headers["content-type"] == theirs.headers["content-type"] == "application/json"
    a, b = ours.json(), theirs.json()
    assert set(a) == set(b) == {"error", "status"}
    if b["error"]["type"] == "parse_exception":
        assert a["error"]["type"] == "parse_exception" and a["status"] == b["status"]
        assert set(a["error"]) == set(b["error"])
        assert a["error"]["reason"].startswith("the request body is not valid")
    else:
        assert a == b


# ---- searches ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        q("river valley", k=5),
        q("+griffith +observatory", count="true"),
        q('"new york"', k=3, offset=2, count="true"),
        q("the Rivers", default_operator="and", k=2),
        q('"new york"~2 city', k=4),
        q("-river"),
        "/indexes/nothere/search?q=river",
        "/indexes/wiki/search?k=3",
        q("river", k="ten"),
        q("river", k="-1"),
        q("river", offset="x"),
        q("river", count="maybe"),
        q("river", default_operator="xor"),
        q("river", highlight="sometimes"),
        q("river", k=10, offset=9_990),
        q("river", k=11, offset=9_990),
    ],
)
def test_the_native_search_answers_as_apcache_serve(fronts: Tuple[str, str], path: str) -> None:
    sharded, native = fronts
    ours, theirs = http(sharded + path), http(native + path)
    assert ours.status == theirs.status, (path, ours, theirs)
    assert ours.headers["x-elastic-product"] == theirs.headers["x-elastic-product"] == "Elasticsearch"
    if ours.status == 200:
        assert without(ours.json(), "took_us") == without(theirs.json(), "took_us")  # type: ignore[arg-type]
        assert isinstance(ours.json()["took_us"], int)  # type: ignore[index]
    else:
        same_error(ours, theirs)


@pytest.mark.parametrize(
    "body",
    [
        {"q": "river", "k": 5, "offset": 1, "count": True},
        {"q": "music jazz", "default_operator": "AND"},
        {"q": "river", "k": -1},
        {"q": "river", "k": "5"},
        {"q": "river", "unknown": 1},
        {"k": 3},
        b"",
        b"{not json",
        [1, 2],
    ],
)
def test_the_native_search_by_post_answers_as_apcache_serve(fronts: Tuple[str, str], body: Any) -> None:
    sharded, native = fronts
    path = "/indexes/wiki/search"
    ours, theirs = http(sharded + path, body, method="POST"), http(native + path, body, method="POST")
    assert ours.status == theirs.status, (body, ours, theirs)
    if ours.status == 200:
        assert without(ours.json(), "took_us") == without(theirs.json(), "took_us")  # type: ignore[arg-type]
    else:
        same_error(ours, theirs)


@pytest.mark.parametrize(
    "text, params",
    [
        ("river valley", {"k": 5}),
        ("+river +valley", {"k": 3, "offset": 1}),
        ('"new york"', {"k": 4}),
        ('"new york"~3 city', {"k": 3}),
        ("river -valley", {"k": 3}),
        ("music AND (jazz OR blues) NOT rock", {"k": 3, "default_operator": "and"}),
        ("zzzznotaword", {}),
    ],
)
def test_the_native_highlight_answers_as_apcache_serve(fronts: Tuple[str, str], text: str, params: Dict[str, Any]) -> None:
    # What the search page asks for: each hit's body fragments, marked with <em>. Counted,
    # so that the totals are exact on both (a lower bound may differ: docs/distributed.md).
    sharded, native = fronts
    params = {**params, "count": "true"}
    for flag in ("true", "1", ""):
        path = q(text, highlight=flag, **params)
        ours, theirs = http(sharded + path), http(native + path)
        assert ours.status == theirs.status == 200
        assert without(ours.json(), "took_us") == without(theirs.json(), "took_us")  # type: ignore[arg-type]
        assert all("highlight" in hit for hit in ours.json()["hits"])  # type: ignore[index]
    body = {"q": text, "highlight": True, **{k: int(v) if k in ("k", "offset") else v == "true" if k == "count" else v for k, v in params.items()}}
    ours, theirs = http(sharded + "/indexes/wiki/search", body), http(native + "/indexes/wiki/search", body)
    assert ours.status == theirs.status == 200
    assert without(ours.json(), "took_us") == without(theirs.json(), "took_us")  # type: ignore[arg-type]
    # Not asked for, none given.
    assert all("highlight" not in hit for hit in http(sharded + q(text, highlight="false")).json()["hits"])  # type: ignore[index]


def test_native_highlights_mark_the_querys_words(fronts: Tuple[str, str]) -> None:
    sharded, _ = fronts
    hits = http(sharded + q('"new york"', k=5, highlight="true")).json()["hits"]  # type: ignore[index]
    assert hits and all(hit["highlight"] for hit in hits)
    for hit in hits:
        for fragment in hit["highlight"]:
            assert re.search(r"<em>new</em>\W+<em>york</em>", fragment, re.IGNORECASE), fragment


@pytest.mark.parametrize(
    "path, body",
    [
        ("/wiki/_search?q=river&size=3", None),
        ("/wiki/_search?q=river&size=2&_source=title", None),
        ("/wiki/_search?q=river&track_total_hits=true&size=1&from=3", None),
        ("/wiki/_search", {"query": {"match": {"body": "c++ river -valley"}}, "size": 4}),
        ("/wiki/_search", {"query": {"query_string": {"query": "+music +jazz"}}, "track_total_hits": True, "from": 2}),
        ("/wiki/_search", {"query": {"match": {"body": {"query": "new york", "operator": "and"}}}, "_source": ["title"]}),
        ("/wiki/_search", {"query": {"match_all": {}}, "size": 3, "from": 5}),
        ("/wiki/_search", {"query": {"match_all": {}}, "size": 2, "highlight": {"fields": {"body": {}}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"fields": {"body": {}}}}),
        ("/wiki/_search", {"query": {"query_string": {"query": "+river +valley"}}, "size": 3, "highlight": {"fields": {"*": {}}}}),
        ("/wiki/_search", {"query": {"query_string": {"query": '"new york" -city'}}, "size": 4, "highlight": {
            "pre_tags": ["["], "post_tags": ["]"], "fragment_size": 30, "number_of_fragments": 2,
            "fields": {"body": {"number_of_fragments": 1}, "title": {"number_of_fragments": 0}}}}),
        ("/wiki/_search", {"query": {"match": {"body": {"query": "jazz music", "operator": "and"}}}, "_source": False,
         "highlight": {"fields": [{"body": {"fragment_size": 1}}, {"title": {}}, {"body": {"pre_tags": "<b>", "post_tags": "</b>"}}],
                       "type": "unified", "require_field_match": False}}),
        ("/wiki/_search?q=observatory&size=2&_source=title", {"highlight": {"fields": {"body": {"number_of_fragments": 0}}}}),
        ("/wiki/_search", {"query": {"match": {"body": "zzzznotaword"}}, "highlight": {"fields": {"body": {}}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "size": 2, "highlight": None}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"fields": None}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"fields": "body"}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"fields": [{"body": {}, "title": {}}]}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"fields": {"body": {"fragment_size": 0}}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"number_of_fragments": 101, "fields": {"body": {}}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"pre_tags": [], "fields": {"body": {}}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"zzz": 1, "boundary": 2, "fields": {"body": {}}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"fields": {"title": 5}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": [1]}),
        ("/wiki/_search", {"query": {"query_string": {"query": "river", "analyze_wildcard": True}}, "sort": ["_score"], "size": 2}),
        ("/wiki/_search", {"query": {"match": {"title": "river"}}}),
        ("/wiki/_search", {"query": {"term": {"body": "river"}}}),
        ("/wiki/_search", {"query": {"match": {"body": "river"}}, "highlight": {"fields": {"abstract": {}}}}),
        ("/wiki/_search", {"size": "3"}),
        ("/wiki/_search", {"_source": 5}),
        ("/wiki/_search", {"track_total_hits": "all"}),
        ("/wiki/_search", {"from": 9_999, "size": 2}),
        ("/wiki/_search", {"query": {"query_string": {"query": "river (history"}}}),
        ("/wiki/_count?q=river", None),
        ("/wiki/_count", {"query": {"match": {"body": "river valley"}}}),
        ("/wiki/_count", {"query": {"match_all": {}}}),
        ("/nothere/_search?q=river", None),
        ("/wiki/_doc/17", None),
        ("/wiki/_doc/no-such-document", None),
    ],
)
def test_the_elasticsearch_subset_answers_as_apcache_serve(fronts: Tuple[str, str], path: str, body: Any) -> None:
    sharded, native = fronts
    method = "GET" if body is None else "POST"
    ours, theirs = http(sharded + path, body, method=method), http(native + path, body, method=method)
    assert ours.status == theirs.status, (path, body, ours, theirs)
    if ours.status >= 400 and "error" in theirs.json():  # type: ignore[operator]
        same_error(ours, theirs)
        return
    a, b = ours.json(), theirs.json()
    assert without(a, "took", "_shards") == without(b, "took", "_shards")  # type: ignore[arg-type]
    if "_shards" in b:  # type: ignore[operator]
        assert a["_shards"] == {"total": 4, "successful": 4, "skipped": 0, "failed": 0}  # type: ignore[index]
        assert set(a["_shards"]) == set(b["_shards"])  # type: ignore[index]


def test_elasticsearch_highlights_are_given(fronts: Tuple[str, str]) -> None:
    sharded, _ = fronts
    body = {"query": {"match": {"body": "river"}}, "size": 3, "highlight": {"fields": {"*": {}}}}
    hits = http(sharded + "/wiki/_search", body).json()["hits"]["hits"]  # type: ignore[index]
    assert len(hits) == 3
    for hit in hits:
        assert set(hit["highlight"]) <= {"title", "body"} and hit["highlight"]["body"]
        assert all("<em>" in fragment.lower() for fragment in hit["highlight"]["body"])


def test_the_front_answers_as_the_coordinator(fronts: Tuple[str, str], four: ar.ShardedIndex) -> None:
    sharded, _ = fronts
    answer = http(sharded + q("station railway", k=10, count="true"))
    assert answer.status == 200
    body = answer.json()
    result = four.search("station railway", k=10, count=True)
    assert body["total"] == {"value": result.total, "exact": True}  # type: ignore[index]
    assert [h["id"] for h in body["hits"]] == [h.id for h in result.hits]  # type: ignore[index]
    assert [h["score"] for h in body["hits"]] == pytest.approx([h.score for h in result.hits], rel=1e-7)  # type: ignore[index]


# ---- documents, routes, methods, bodies ----------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/indexes/wiki/docs/17",
        "/indexes/wiki/docs/1743",
        "/indexes/wiki/docs/1744",
        "/indexes/wiki/docs/no-such-document",
        "/indexes/nothere/docs/17",
        "/health",
        "/",
        "/no/such/path/here",
        "/health/_search?q=river",
        "/indexes/_search",
        "/indexes/wiki/",
    ],
)
def test_other_routes_answer_as_apcache_serve(fronts: Tuple[str, str], path: str) -> None:
    sharded, native = fronts
    ours, theirs = http(sharded + path), http(native + path)
    assert ours.status == theirs.status, (path, ours, theirs)
    if ours.status == 200:
        assert ours.json() == theirs.json()
    else:
        same_error(ours, theirs)


@pytest.mark.parametrize("method, path", [("DELETE", "/indexes"), ("PUT", "/indexes/wiki/search"), ("POST", "/_cat/indices"), ("POST", "/wiki/_doc/3")])
def test_a_wrong_method_answers_405_as_apcache_serve(fronts: Tuple[str, str], method: str, path: str) -> None:
    sharded, native = fronts
    ours, theirs = http(sharded + path, b"", method=method), http(native + path, b"", method=method)
    assert ours.status == theirs.status == 405
    assert ours.headers["allow"] == theirs.headers["allow"]
    same_error(ours, theirs)


def test_a_body_over_the_limit_answers_413_as_apcache_serve(fronts: Tuple[str, str]) -> None:
    sharded, native = fronts
    body = json.dumps({"q": "river " * ((1 << 20) // 6 + 1000)}).encode()
    for path in ("/indexes/wiki/search", "/wiki/_search"):
        ours, theirs = http(sharded + path, body), http(native + path, body)
        assert ours.status == theirs.status == 413
        same_error(ours, theirs)


def test_a_browser_is_sent_to_the_search_page_which_is_the_servers(fronts: Tuple[str, str]) -> None:
    sharded, native = fronts
    for base in (sharded, native):
        answer = http(base + "/", headers={"Accept": "text/html,application/xhtml+xml"}, method="GET")
        # urllib follows the redirect: the page is where `/` sends a browser.
        assert answer.status == 200 and answer.headers["content-type"].startswith("text/html")
    ours, theirs = http(sharded + "/ui"), http(native + "/ui")
    assert ours.status == theirs.status == 200
    assert ours.body == theirs.body and b'id="q"' in ours.body
    for header in ("content-type", "cache-control"):
        assert ours.headers[header] == theirs.headers[header]


# ---- /indexes and /_cat/indices: the shards' figures, summed -----------------------------------


@pytest.fixture(scope="module")
def shard_server(sharded_paths: Dict[int, Path]) -> Iterator[str]:
    """`apcache serve` of the four shard directories themselves (s0 ... s3)."""
    layout = ar.Layout.read(sharded_paths[4])
    server, url = start_server([f"s{i}={d}" for i, d in enumerate(layout.dirs)])
    try:
        yield url
    finally:
        server.terminate()
        server.wait(30)


def test_indexes_sum_what_the_server_says_of_each_shard(fronts: Tuple[str, str], shard_server: str) -> None:
    sharded, native = fronts
    ours, theirs = http(sharded + "/indexes"), http(native + "/indexes")
    assert ours.status == theirs.status == 200
    (mine,) = ours.json()["indexes"]  # type: ignore[index]
    (whole,) = theirs.json()["indexes"]  # type: ignore[index]
    assert set(mine) == set(whole)
    shards = http(shard_server + "/indexes").json()["indexes"]  # type: ignore[index]
    assert len(shards) == 4
    for key in ("docs", "segments", "search_bytes", "store_bytes", "cache_segments"):
        assert mine[key] == sum(s[key] for s in shards), key
    assert mine["docs"] == whole["docs"] == 1744
    assert mine["name"] == "wiki" and mine["mode"] == whole["mode"] == "base"
    assert http(sharded + "/indexes/wiki").json() == mine
    same_error(http(sharded + "/indexes/nothere"), http(native + "/indexes/nothere"))


def test_cat_indices_answers_as_apcache_serve(fronts: Tuple[str, str], shard_server: str) -> None:
    sharded, native = fronts
    shards = http(shard_server + "/_cat/indices?format=json").json()
    for suffix in ("", "?v"):
        ours, theirs = http(sharded + "/_cat/indices" + suffix), http(native + "/_cat/indices" + suffix)
        assert ours.status == theirs.status == 200
        assert ours.headers["content-type"] == theirs.headers["content-type"]
        our_lines, their_lines = ours.body.decode().splitlines(), theirs.body.decode().splitlines()
        assert len(our_lines) == len(their_lines) == (2 if suffix else 1)
        if suffix:
            assert our_lines[0] == their_lines[0]
    ours, theirs = http(sharded + "/_cat/indices?format=json"), http(native + "/_cat/indices?format=json")
    (mine,), (whole,) = ours.json(), theirs.json()  # type: ignore[misc]
    assert set(mine) == set(whole) and all(isinstance(v, str) for v in mine.values())
    assert without(mine, "pri", "store.size") == without(whole, "pri", "store.size")
    assert mine["pri"] == "4" and mine["rep"] == "0"
    assert int(mine["store.size"]) == sum(int(s["store.size"]) for s in shards)  # type: ignore[union-attr]
    text = http(sharded + "/_cat/indices").body.decode().split()
    assert text == [mine[k] for k in ("health", "status", "index", "uuid", "pri", "rep", "docs.count", "docs.deleted", "store.size")]


# ---- query limits and parse errors ---------------------------------------------------------------

DEEP = 32


@pytest.mark.parametrize(
    "text",
    [
        " ".join(f"term{i}" for i in range(1024)),
        " ".join(f"term{i}" for i in range(1025)),
        "(" * DEEP + "river" + ")" * DEEP,
        "(" * (DEEP + 1) + "river" + ")" * (DEEP + 1),
        "(" * 101 + "river" + ")" * 101,
        " ".join(["(a b"] * (DEEP - 1)) + ")" * (DEEP - 1),
        " ".join(["(a b"] * DEEP) + ")" * DEEP,
        "-(" * (DEEP - 1) + "a b" + ")" * (DEEP - 1),
        "-(" * DEEP + "a b" + ")" * DEEP,
        "+(" * DEEP + "a -b" + ")" * DEEP,
        "river " * 2730 + "x",
        "river " * 2731 + "x",
        '"((((" ' + "(" * DEEP + "a" + ")" * DEEP,
        "\\(" * 40 + "river",
    ],
    ids=lambda text: f"{len(text)}-bytes-{text[:12]}",
)
def test_the_query_limits_answer_as_apcache_serve(fronts: Tuple[str, str], text: str) -> None:
    sharded, native = fronts
    ours, theirs = http(sharded + q(text, k=1, count="true")), http(native + q(text, k=1, count="true"))
    assert ours.status == theirs.status, (text[:80], ours, theirs)
    if ours.status == 200:
        assert without(ours.json(), "took_us") == without(theirs.json(), "took_us")  # type: ignore[arg-type]
    else:
        same_error(ours, theirs)
        assert theirs.json()["error"]["type"] in ("query_too_large", "query_parse_error")  # type: ignore[index]
    # _count checks the same limits, by its own path through the shards.
    ours, theirs = http(sharded + "/wiki/_count", {"query": {"query_string": {"query": text}}}), http(
        native + "/wiki/_count", {"query": {"query_string": {"query": text}}}
    )
    assert ours.status == theirs.status
    if ours.status != 200:
        same_error(ours, theirs)
    else:
        assert ours.json()["count"] == theirs.json()["count"]  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    ["(unbalanced", "river (history", "café (river", "river AND", "riv*", "river^x", "title:river",
     "[a TO b]", '"open quote', "ends with \\", "\\u12", "", "   ", "river~", "/regex/", "()", "+"],
)
def test_parse_errors_carry_the_servers_reason_and_position(fronts: Tuple[str, str], text: str) -> None:
    sharded, native = fronts
    ours, theirs = http(sharded + q(text)), http(native + q(text))
    assert ours.status == theirs.status == 400
    same_error(ours, theirs)
    error = ours.json()["error"]  # type: ignore[index]
    assert error["type"] == "query_parse_error"
    found = re.search(r"byte (\d+)", error["reason"])
    assert error.get("position") == (int(found.group(1)) if found else None)


def test_the_depth_of_a_canonical_query_is_the_servers() -> None:
    assert text_nesting("((a)) (b)") == 2 and text_nesting('\\( "(" a') == 0
    assert parsed_depth("river") == 0 and parsed_depth('"new york"~2') == 0
    assert parsed_depth("") == 1 and parsed_depth("-river") == 1 and parsed_depth("a b") == 1
    assert parsed_depth("+a +(b c)") == 2 and parsed_depth("a\\ b") == 0
    assert parsed_depth('"a ( b"') == 0 and parsed_depth("a (b (c d))") == 3


# ---- /metrics ------------------------------------------------------------------------------------


def samples(text: str) -> Dict[Tuple[str, str], float]:
    """{(name, labels): value} of a Prometheus text."""
    found = {}
    for line in text.splitlines():
        match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
        if match:
            found[(match.group(1), match.group(2) or "")] = float(match.group(3))
    return found


def families(text: str) -> Dict[str, str]:
    """{family: type} of a Prometheus text."""
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.MULTILINE))


def test_metrics_count_as_the_server_counts(fronts: Tuple[str, str]) -> None:
    sharded, native = fronts
    before = {base: samples(http(base + "/metrics").body.decode()) for base in fronts}
    for base in fronts:
        for path in (q("river"), q("river", k=2), q("(unbalanced"), "/no/such/path", "/wiki/_count?q=valley"):
            http(base + path)
    after = {base: http(base + "/metrics") for base in fronts}
    ours, theirs = after[sharded], after[native]
    assert ours.status == theirs.status == 200
    assert ours.headers["content-type"] == theirs.headers["content-type"]
    assert ours.body.decode().endswith("# EOF\n") and theirs.body.decode().rstrip().endswith("# EOF")

    def requests_delta(base: str) -> Dict[str, float]:
        now = samples(after[base].body.decode())
        return {
            labels: value - before[base].get((name, labels), 0.0)
            for (name, labels), value in now.items()
            if name == "apcache_http_requests_total" and 'endpoint="/metrics"' not in labels
            and value != before[base].get((name, labels), 0.0)
        }

    # The same requests, counted under the same route templates and statuses.
    assert requests_delta(sharded) == requests_delta(native) == {
        '{endpoint="/indexes/{name}/search",status="200"}': 2.0,
        '{endpoint="/indexes/{name}/search",status="400"}': 1.0,
        '{endpoint="unmatched",status="404"}': 1.0,
        '{endpoint="/{index}/_count",status="200"}': 1.0,
    }
    mine, whole = families(ours.body.decode()), families(theirs.body.decode())
    shared = {
        "apcache_http_requests", "apcache_http_request_duration_seconds", "apcache_queue_depth",
        "apcache_admitted", "apcache_rejected", "apcache_timeouts", "apcache_cancelled",
        "apcache_panics", "apcache_failed", "apcache_queries", "apcache_postings_cache_hits",
        "apcache_postings_cache_misses", "apcache_dram_bytes",
    }
    for family in shared:
        assert mine.get(family) == whole.get(family), family
    for family in ("apcache_shards", "apcache_shards_unavailable", "apcache_shard_queries", "apcache_shard_failures"):
        assert family in mine, family
    now = samples(ours.body.decode())
    assert now[("apcache_shards", '{index="wiki"}')] == 4
    assert now[("apcache_shards_unavailable", '{index="wiki"}')] == 0
    assert now[("apcache_queries_total", '{index="wiki"}')] - before[sharded].get(("apcache_queries_total", '{index="wiki"}'), 0) == 3
    assert sum(v for (n, _), v in now.items() if n == "apcache_shard_queries_total") > 0
    assert now[("apcache_dram_bytes", '{kind="process_rss_anon"}')] > 0
    # The latency histogram has the server's buckets, cumulative, for the same route.
    def buckets(text: str) -> List[Tuple[str, float]]:
        return [
            (labels.split('"')[1], value)
            for (name, labels), value in samples(text).items()
            if name == "apcache_http_request_duration_seconds_bucket" and 'endpoint="/indexes/{name}/search"' in labels
        ]

    our_buckets, their_buckets = buckets(ours.body.decode()), buckets(theirs.body.decode())
    assert [le for le, _ in our_buckets] == [le for le, _ in their_buckets] and our_buckets[-1][0] == "+Inf"
    assert [v for _, v in our_buckets] == sorted(v for _, v in our_buckets)


def test_floats_are_written_as_the_servers_encoder_writes_them() -> None:
    assert [format_float(x) for x in (50e-6, 0.0001, 26.2144, 2.3193e-05, 1.0, 0.0)] == [
        "0.00005", "0.0001", "26.2144", "0.000023193", "1.0", "0.0",
    ]
    assert format_float(float("inf")) == "+Inf" and format_float(1e-7) == "1e-7"


# ---- the deadline (504) and admission (503), through the handler itself --------------------------


def request(path: str, query: str = "") -> Request:
    """A GET of `path?query` with an empty body, as Serve hands one to the front."""
    scope = {
        "type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
        "query_string": query.encode(), "headers": [],
    }

    async def receive() -> Dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    return Request(scope, receive)


def front_of(index: ar.ShardedIndex, config: ar.FrontConfig) -> Any:
    """The front's handler, without Serve (imported here: Serve's import warns of its
    dependencies' deprecations, which the module's mark silences only inside tests)."""
    from apcache.ray._http import SearchFront

    return SearchFront("wiki", index, config)


def answer_of(response: Any) -> Tuple[int, Dict[str, Any], Dict[str, str]]:
    return response.status_code, json.loads(response.body), dict(response.headers)


def test_a_request_past_its_deadline_answers_504(four: ar.ShardedIndex, fronts: Tuple[str, str]) -> None:
    # 1 ms: less than one round trip to the shards, so every search runs past it.
    front = front_of(four, ar.FrontConfig(timeout_ms=1))
    status, body, _ = answer_of(asyncio.run(front(request("/indexes/wiki/search", "q=river+valley&count=true"))))
    assert status == 504
    cause = {"type": "timeout_exception", "reason": "the query ran past the 1 ms deadline and was cancelled"}
    assert body == {"error": {**cause, "root_cause": [cause]}, "status": 504}
    status, body, _ = answer_of(asyncio.run(front(request("/wiki/_count", "q=river"))))
    assert status == 504 and body["error"]["type"] == "timeout_exception"
    # Not a search: answered whatever the deadline.
    assert asyncio.run(front(request("/indexes/wiki/docs/17"))).status_code == 200
    metrics = samples(asyncio.run(front(request("/metrics"))).body.decode())
    assert metrics[("apcache_timeouts_total", '{index="wiki"}')] == 2
    assert metrics[("apcache_queries_total", '{index="wiki"}')] == 0
    # The error has the server's shape (its 504 cannot be forced on this small index).
    sharded, native = fronts
    same_shape = http(native + q("(x")).json()
    assert set(same_shape) == set(body) and set(same_shape["error"]) - {"position"} == set(body["error"])  # type: ignore[arg-type]


def test_a_full_queue_answers_503_at_once(four: ar.ShardedIndex) -> None:
    # One search runs, one waits, the third finds the queue full (as the server's test).
    front = front_of(four, ar.FrontConfig(threads=1, queue_depth=1))

    async def three() -> List[Any]:
        return await asyncio.gather(
            *(front(request("/indexes/wiki/search", f"q={word}")) for word in ("river", "valley", "town"))
        )

    answers = [answer_of(r) for r in asyncio.run(three())]
    assert [status for status, _, _ in answers] == [200, 200, 503]
    _, refused, headers = answers[2]
    cause = {"type": "rejected_execution_exception", "reason": "the request queue is full (1 waiting); retry later"}
    assert refused == {"error": {**cause, "root_cause": [cause]}, "status": 503}
    assert headers["retry-after"] == "1"
    metrics = samples(asyncio.run(front(request("/metrics"))).body.decode())
    assert metrics[("apcache_rejected_total", '{index="wiki"}')] == 1
    assert metrics[("apcache_admitted_total", '{index="wiki"}')] == 2
    assert metrics[("apcache_queue_depth", '{index="wiki"}')] == 0
    # With the queue empty again, the next search is admitted.
    assert asyncio.run(front(request("/indexes/wiki/search", "q=town"))).status_code == 200


def test_the_front_configuration_is_checked() -> None:
    with pytest.raises(ValueError):
        ar.FrontConfig(threads=0).resolved()
    with pytest.raises(ValueError):
        ar.FrontConfig(timeout_ms=0).resolved()
    with pytest.raises(ValueError):
        ar.QueryLimits(max_terms=0)
    resolved = ar.FrontConfig(threads=3).resolved()
    assert resolved.queue_depth == 24 and resolved.limits == ar.QueryLimits()
