"""What the bindings give that `apcache serve` reports, equal to the server's answers on the
same index: highlights (`Index.highlight` against the native `highlight=true` and the
Elasticsearch `highlight`), the position of a query parse error (`QueryError.position`),
and an index's bytes and cache segments (`Index.stats()` against `GET /indexes`)."""

from __future__ import annotations

import pickle
import urllib.parse
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import apcache
from conftest import http, start_server

HIGHLIGHTED = [
    "river valley",
    "+river +valley",
    '"new york"',
    '"new york"~3 city',
    "river -valley",
    "music AND (jazz OR blues) NOT rock",
    "The Rivers",
    "c++ programming",
    "zzzznotaword",
    "zürich",
]


@pytest.fixture(scope="module")
def index(cli_index: Path) -> Iterator[apcache.Index]:
    with apcache.Index(cli_index, threads=2) as opened:
        yield opened


@pytest.fixture(scope="module")
def server(cli_index: Path) -> Iterator[str]:
    """`apcache serve` of the same index, as "wiki"."""
    process, url = start_server([f"wiki={cli_index}"])
    try:
        yield url
    finally:
        process.terminate()
        process.wait(30)


def native(server: str, query: str, **params: Any) -> Dict[str, Any]:
    answer = http(server + "/indexes/wiki/search?" + urllib.parse.urlencode({"q": query, **params}))
    assert answer.status == 200, answer
    return answer.json()  # type: ignore[return-value]


# ---- highlighting --------------------------------------------------------------------------------


@pytest.mark.parametrize("query", HIGHLIGHTED)
def test_highlight_equals_the_native_searchs(index: apcache.Index, server: str, query: str) -> None:
    answer = native(server, query, k=10, highlight="true")
    hits = index.search(query, k=10)
    assert [h.id for h in hits] == [h["id"] for h in answer["hits"]]
    for hit, theirs in zip(hits, answer["hits"]):
        assert index.highlight(query, hit.body) == theirs["highlight"], (query, hit.id)
    if answer["hits"] and query != "river -valley":
        assert any(h["highlight"] for h in answer["hits"]), query


@pytest.mark.parametrize(
    "query, options",
    [
        ("river valley", {"pre_tags": ["["], "post_tags": ["]"], "fragment_size": 40, "number_of_fragments": 2}),
        ('"new york" city', {"number_of_fragments": 0}),
        ("jazz music", {"fragment_size": 1, "number_of_fragments": 100}),
        ("observatory", {"pre_tags": "<b>", "post_tags": "</b>", "fragment_size": 500, "number_of_fragments": 1}),
    ],
)
def test_highlight_options_equal_the_elasticsearch_highlights(
    index: apcache.Index, server: str, query: str, options: Dict[str, Any]
) -> None:
    body = {"query": {"query_string": {"query": query}}, "size": 5, "highlight": {**options, "fields": {"*": {}}}}
    answer = http(server + "/wiki/_search", body)
    assert answer.status == 200, answer
    kwargs = {
        "pre_tag": (lambda t: t[0] if isinstance(t, list) else t)(options.get("pre_tags", "<em>")),
        "post_tag": (lambda t: t[0] if isinstance(t, list) else t)(options.get("post_tags", "</em>")),
        "fragment_size": options.get("fragment_size", 100),
        "number_of_fragments": options.get("number_of_fragments", 5),
    }
    hits = answer.json()["hits"]["hits"]  # type: ignore[index]
    assert hits
    for hit in hits:
        stored = index.doc(hit["_id"])
        ours = {
            field: fragments
            for field in ("title", "body")
            if (fragments := index.highlight(query, stored[field], **kwargs))
        }
        assert ours == hit["highlight"], (query, hit["_id"])


def test_highlight_marks_what_the_query_matches(index: apcache.Index) -> None:
    text = "New shoes in New York, new york. The River Arno, a river; the city."
    whole = {"number_of_fragments": 0}
    # A phrase marks its occurrences only; a prohibited clause marks nothing.
    assert index.highlight('"new york" -city', text, **whole) == [
        "New shoes in <em>New</em> <em>York</em>, <em>new</em> <em>york</em>. "
        "The River Arno, a river; the city."
    ]
    assert index.highlight("RIVER", text, pre_tag="[", post_tag="]", **whole) == [
        "New shoes in New York, new york. The [River] Arno, a [river]; the city."
    ]
    assert index.highlight("zebra", text) == []
    assert index.highlight("arno", "", **whole) == []
    # Cut near the marks, at whitespace.
    long = "x " * 200 + "alpha " + "y " * 200 + "beta " + "z " * 200
    fragments = index.highlight("alpha beta", long, fragment_size=20, pre_tag="[", post_tag="]")
    assert len(fragments) == 2 and "[alpha]" in fragments[0] and "[beta]" in fragments[1]
    assert all(len(f) <= 30 for f in fragments), fragments
    assert index.highlight("alpha beta", long, fragment_size=20, number_of_fragments=1) == [fragments[0].replace("[", "<em>").replace("]", "</em>")]
    # Bag-of-words text and the default operator are read as in search.
    assert index.highlight("c++ (river", "C and the river", parse="plain", **whole) == ["<em>C</em> and the <em>river</em>"]
    assert index.highlight("river arno", "river Arno", default_op="and", **whole) == ["<em>river</em> <em>Arno</em>"]


def test_highlight_refuses_what_search_refuses(index: apcache.Index) -> None:
    with pytest.raises(apcache.QueryError) as raised:
        index.highlight("(river", "the river")
    assert raised.value.position == 0
    with pytest.raises(ValueError, match="fragment_size"):
        index.highlight("river", "the river", fragment_size=0)
    with pytest.raises(ValueError):
        index.highlight("river", "the river", parse="regex")
    with pytest.raises(OverflowError):
        index.highlight("river", "the river", number_of_fragments=-1)


# ---- QueryError.position -------------------------------------------------------------------------

PARSE_ERRORS = [
    "(unbalanced", "river (history", "café (river", "river AND", "riv*", "river^x", "title:river",
    "[a TO b]", '"open quote', "ends with \\", "\\u12", "", "   ", "river~", "/regex/", "()", "+",
    "river)",
]


@pytest.mark.parametrize("query", PARSE_ERRORS)
def test_query_errors_carry_the_servers_position(index: apcache.Index, server: str, query: str) -> None:
    answer = http(server + "/indexes/wiki/search?" + urllib.parse.urlencode({"q": query}))
    assert answer.status == 400
    error = answer.json()["error"]  # type: ignore[index]
    assert error["type"] == "query_parse_error"
    for call in (index.search, index.count, index.collection_stats, index.parse_query, lambda q: index.highlight(q, "text")):
        with pytest.raises(apcache.QueryError) as raised:
            call(query)
        # The message is the engine's (the server's reason) followed by the query.
        assert str(raised.value).startswith(error["reason"] + " (in "), (str(raised.value), error)
        assert raised.value.position == error.get("position"), query


def test_query_error_positions_are_the_engines(index: apcache.Index) -> None:
    expected = {"(river": 0, "river AND": 6, "riv*": 3, "a b ^": 4, "café (x": 6, "": None, "title:x": None}
    for query, position in expected.items():
        with pytest.raises(apcache.QueryError) as raised:
            index.search(query)
        assert raised.value.position == position, query
    # batch_search names the query, and keeps the position.
    with pytest.raises(apcache.QueryError, match="^query bad: ") as raised:
        index.batch_search({"good": "river", "bad": "river AND"}, parse="lucene")
    assert raised.value.position == 6
    # Pickled (as Ray carries a shard's error back), the position stays.
    with pytest.raises(apcache.QueryError) as raised:
        index.search("riv*")
    again = pickle.loads(pickle.dumps(raised.value))
    assert type(again) is apcache.QueryError and again.position == 3 and str(again) == str(raised.value)
    # One made in Python has none.
    assert apcache.QueryError("made by hand").position is None


# ---- Index.stats(): what GET /indexes says -----------------------------------------------------


def described(url: str) -> List[Dict[str, Any]]:
    answer = http(url + "/indexes")
    assert answer.status == 200
    return answer.json()["indexes"]  # type: ignore[index,return-value]


def test_stats_give_the_servers_bytes(index: apcache.Index, server: str) -> None:
    (theirs,) = described(server)
    stats = index.stats()
    for key in ("search_bytes", "store_bytes", "cache_segments"):
        assert stats[key] == theirs[key], key
    assert stats["search_bytes"] > 0 and stats["store_bytes"] > 0 and stats["cache_segments"] == 0


def test_stats_give_the_servers_cache_segments(cli_index: Path, tmp_path: Path) -> None:
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    settings: List[Tuple[str, str]] = [("mode", "hybrid-prefetch"), ("cache-size", "8MiB")]
    process, url = start_server(
        [f"wiki={cli_index}"], *[f"--{k}={v}" for k, v in settings], f"--tier-dir={tmp_path / 'theirs'}"
    )
    try:
        (theirs,) = described(url)
    finally:
        process.terminate()
        process.wait(30)
    with apcache.Index(cli_index, mode="hybrid-prefetch", cache_size="8MiB", tier_dir=tmp_path / "ours") as cached:
        stats = cached.stats()
    assert theirs["mode"] == stats["mode"] == "hybrid-prefetch"
    for key in ("search_bytes", "store_bytes", "cache_segments"):
        assert stats[key] == theirs[key], key
    assert stats["cache_segments"] > 0
