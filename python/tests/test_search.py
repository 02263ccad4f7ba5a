"""Searching from Python gives what `apcache search` gives; errors are exceptions."""

from __future__ import annotations

import builtins

import pytest

import apcache
from conftest import cli_search, run_cli

QUERIES = [
    "river",
    "river valley",
    "+river +valley",
    "+griffith +observatory",
    "bowel obstruction -surgery",
    "new york city",
    "music AND (jazz OR blues) NOT rock",
    "wi-fi",
    "c++ programming",
    "zzzznotaword",
    "the",
    "station railway line opened",
]

BAD_QUERIES = ["title:river", "wild*", "(unbalanced", "[a TO b]", "river~2"]


@pytest.fixture(scope="module")
def index(cli_index):
    with apcache.Index(cli_index, threads=2) as opened:
        yield opened


@pytest.mark.parametrize("query", QUERIES)
def test_search_equals_the_cli(index, cli_index, query):
    expected = cli_search(cli_index, query, 10)
    hits = index.search(query, k=10)
    assert [(h.id, h.score, h.title) for h in hits] == [
        (h["id"], pytest.approx(h["score"], rel=0, abs=0), h["title"]) for h in expected["hits"]
    ]
    for hit in hits:
        assert hit.body and hit.doc == int(hit.id)


@pytest.mark.parametrize("query", QUERIES[:6])
def test_count_equals_the_cli(index, cli_index, query):
    assert index.count(query) == cli_search(cli_index, query, 1, "--count")["total"]["value"]


def test_an_index_built_from_python_ranks_the_same(index, python_index):
    with apcache.Index(python_index) as built:
        assert len(built) == len(index) == 1744
        for query in QUERIES:
            ours = [(h.id, h.score) for h in built.search(query, k=20)]
            theirs = [(f"wiki-{h.id}", h.score) for h in index.search(query, k=20)]
            assert ours == theirs, query


def test_external_ids_reach_the_cli(python_index):
    answer = cli_search(python_index, "+river +valley", 3)
    assert [h["id"] for h in answer["hits"]] == ["wiki-1564", "wiki-1098", "wiki-861"]


@pytest.mark.parametrize("query", BAD_QUERIES)
def test_bad_queries_raise_query_error(index, query):
    with pytest.raises(apcache.QueryError) as raised:
        index.search(query)
    assert isinstance(raised.value, apcache.ApcacheError)
    assert str(raised.value)
    with pytest.raises(apcache.QueryError):
        index.count(query)
    # As words they are fine.
    index.search(query, parse="plain")


def test_a_missing_index_raises(tmp_path):
    with pytest.raises(apcache.IndexError) as raised:
        apcache.Index(tmp_path / "nothing-here")
    assert "no index at" in str(raised.value)
    assert isinstance(raised.value, apcache.ApcacheError)
    assert not isinstance(raised.value, builtins.IndexError)


def test_a_damaged_index_raises(tmp_path, cli_index):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "MANIFEST").write_text("not a manifest")
    with pytest.raises(apcache.IndexError):
        apcache.Index(broken)


def test_bad_settings_raise_value_error(cli_index):
    with pytest.raises(ValueError):
        apcache.Index(cli_index, mode="fastest")
    with pytest.raises(ValueError):
        apcache.Index(cli_index, cache_size="lots")
    with pytest.raises(ValueError):
        apcache.Index(cli_index, threads=0)


@pytest.mark.parametrize("threads", [None, 1, 3])
def test_batch_search_equals_search_per_query(index, threads):
    queries = {f"q{i}": text for i, text in enumerate(QUERIES)}
    for parse in ["plain", "lucene"]:
        results = index.batch_search(queries, k=10, threads=threads, parse=parse, fields=True)
        assert list(results) == list(queries)
        for qid, text in queries.items():
            assert results[qid] == index.search(text, k=10, parse=parse), (parse, text)


def test_batch_search_takes_pairs_and_texts(index):
    by_pairs = index.batch_search([("a", "river"), (7, "valley")], k=3)
    assert list(by_pairs) == ["a", "7"]
    by_texts = index.batch_search(["river", "valley"], k=3)
    assert [h.id for h in by_texts["0"]] == [h.id for h in by_pairs["a"]]
    assert by_pairs["a"][0].title is None  # fields=False by default
    with pytest.raises(TypeError):
        index.batch_search("river")
    with pytest.raises(apcache.QueryError, match="query bad"):
        index.batch_search({"bad": "title:x"}, parse="lucene")


def test_plain_text_never_fails(index):
    for text in ["c++", "u.s. state: washington", "don't (panic", "AT&T / 3M", "!!!", ""]:
        index.search(text, parse="plain")
    assert index.search("!!!", parse="plain") == []


def test_doc_by_id(index, python_index):
    doc = index.doc("1564")
    assert doc["title"] == "Valdarno" and doc["doc"] == 1564 and doc["body"]
    assert index.doc(1564) == doc
    with pytest.raises(KeyError):
        index.doc("999999")
    with apcache.Index(python_index) as built:
        assert built.doc("wiki-1564")["title"] == "Valdarno"
        with pytest.raises(KeyError):
            built.doc("1564")


def test_stats_and_analyze(index):
    stats = index.stats()
    assert stats["documents"] == 1744 and stats["mode"] == "base" and stats["threads"] == 2
    assert index.analyze("Wi-Fi C++") == ["wi", "fi", "c"]


def test_a_closed_index_raises(cli_index):
    opened = apcache.Index(cli_index)
    opened.close()
    with pytest.raises(apcache.ApcacheError, match="closed"):
        opened.search("river")


def test_cache_mode_gives_the_same_results(index, cli_index, tmp_path):
    with apcache.Index(cli_index, mode="hybrid", cache_size="16MiB", tier_dir=tmp_path, loader="pread") as cached:
        assert cached.stats()["mode"] == "hybrid"
        for query in QUERIES:
            assert cached.search(query) == index.search(query)


def test_writer_refuses_bad_input(tmp_path):
    with pytest.raises(ValueError):
        apcache.IndexWriter(tmp_path / "x", codec="zip")
    writer = apcache.IndexWriter(tmp_path / "x")
    with pytest.raises(ValueError, match="whitespace"):
        writer.add("two words", "t", "b")
    with pytest.raises(ValueError):
        writer.add("", "t", "b")
    with pytest.raises(TypeError):
        writer.add_many([("only", "two")])
    with pytest.raises(KeyError):
        writer.add_many([{"title": "no id", "body": "b"}])
    with pytest.raises(apcache.IndexError, match="nothing to commit"):
        writer.commit()


def test_writer_refuses_a_duplicate_id(tmp_path):
    writer = apcache.IndexWriter(tmp_path / "dup")
    writer.add("d1", "One", "the first")
    with pytest.raises(ValueError, match='document id "d1" was already added'):
        writer.add("d1", "Again", "a second document under the same id")
    writer.add(7, "Seven", "an int id")
    with pytest.raises(ValueError, match='document id "7" was already added'):
        writer.add("7", "Seven again", "the same id as text")
    with pytest.raises(ValueError, match='document id "d1" was already added'):
        writer.add_many([("d2", "Two", "new"), {"id": "d1", "title": "x", "body": "y"}])
    assert len(writer) == 3  # d1, 7, d2: nothing of the refused ones
    writer.commit()
    with apcache.Index(tmp_path / "dup") as index:
        assert index.stats()["documents"] == 3
        assert sorted(h.id for h in index.search("first OR int OR new")) == ["7", "d1", "d2"]


def test_writer_refuses_a_bool_id(tmp_path):
    writer = apcache.IndexWriter(tmp_path / "bool")
    for bad in [True, False]:
        with pytest.raises(TypeError, match="not a bool"):
            writer.add(bad, "t", "b")
    with pytest.raises(TypeError, match="not a bool"):
        writer.add_many([(True, "t", "b")])
    assert len(writer) == 0
    writer.add(1, "t", "an int is still an id")
    assert len(writer) == 1


def test_committing_over_an_index_names_the_python_argument(tmp_path):
    path = tmp_path / "there"
    with apcache.IndexWriter(path) as writer:
        writer.add("a", "A", "first build")
    writer = apcache.IndexWriter(path)
    writer.add("b", "B", "second build")
    with pytest.raises(apcache.IndexError, match="pass overwrite=True") as raised:
        writer.commit()
    assert "--force" not in str(raised.value)


def test_positions_are_kept_unless_refused(tmp_path):
    for positions in [True, False]:
        path = tmp_path / f"positions-{positions}"
        with apcache.IndexWriter(path, positions=positions) as writer:
            writer.add("a", "One", "the river valley of the arno")
            writer.add("b", "Two", "a valley with a river in it")
        with apcache.Index(path) as index:
            assert sorted(h.id for h in index.search("river valley")) == ["a", "b"]
            if positions:
                assert [h.id for h in index.search('"river valley"')] == ["a"]
            else:
                with pytest.raises(apcache.IndexError, match="positions"):
                    index.search('"river valley"')


def test_writer_commits_again_and_as_a_context(tmp_path):
    path = tmp_path / "small"
    with apcache.IndexWriter(path) as writer:
        writer.add(1, "Alpha", "the first document about rivers")
        writer.add_many([{"id": "b", "title": "Beta", "body": "a second one, on valleys"}])
    with apcache.Index(path) as index:
        assert [h.id for h in index.search("rivers")] == ["1"]
    writer = apcache.IndexWriter(path)
    writer.add("c", "Gamma", "rivers again")
    with pytest.raises(apcache.IndexError):
        writer.commit()  # an index is there and overwrite is off
    writer = apcache.IndexWriter(path, overwrite=True)
    writer.add("c", "Gamma", "rivers again")
    writer.commit()
    writer.add("d", "Delta", "more rivers, rivers")
    writer.commit()  # rebuilds with both
    with apcache.Index(path) as index:
        assert sorted(h.id for h in index.search("rivers")) == ["c", "d"]
    run_cli("check", str(path))
