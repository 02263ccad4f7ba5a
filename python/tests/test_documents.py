"""JSON documents through `apcache.IndexWriter` under a mapping, searched with field queries,
filters, sorts and default fields; documents that do not fit are refused; the older
(id, title, body) form keeps working beside them."""

from __future__ import annotations

import pytest

import apcache

MAPPING = {
    "properties": {
        "package": {"type": "keyword"},
        "summary": {"type": "text"},
        "description": {"type": "text"},
        "section": {"type": "keyword"},
        "size": {"type": "long"},
        "rating": {"type": "double"},
        "released": {"type": "date"},
        "essential": {"type": "boolean"},
        "homepage": {"type": "keyword"},
    }
}

PACKAGES = [
    {"_id": "gnuchess", "package": "gnuchess", "summary": "chess engine of the GNU project",
     "description": "plays chess against you", "section": "games", "size": 1200, "rating": 4.5,
     "released": "2020-05-01", "essential": False, "homepage": "https://gnu.org/chess"},
    {"_id": "stockfish", "package": "stockfish", "summary": "strong chess engine",
     "description": "a chess engine with a UCI interface", "section": "games", "size": 300,
     "rating": 4.9, "released": "2023-01-15", "essential": False},
    {"_id": "xboard", "package": "xboard", "summary": "graphical chess board",
     "description": "a board for chess engines", "section": "games", "rating": 3.7,
     "released": "2019-11-30", "homepage": "https://gnu.org/xboard"},
    {"_id": "vim", "package": "vim", "summary": "text editor", "description": "an editor that plays no chess",
     "section": "editors", "size": 3000, "rating": 4.2, "released": "2022-06-01", "essential": True},
    {"_id": "nano", "package": "nano", "summary": "small text editor", "description": "easy to learn",
     "section": "editors", "size": 600, "released": "2021-03-10", "essential": True,
     "homepage": "https://nano-editor.org"},
]


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> apcache.Index:
    path = tmp_path_factory.mktemp("documents") / "packages"
    writer = apcache.IndexWriter(path, mapping=MAPPING)
    assert writer.add_many(iter(PACKAGES)) == len(PACKAGES) == len(writer)
    report = writer.commit()
    assert report["documents"] == len(PACKAGES)
    with apcache.Index(path, threads=2) as index:
        yield index


def ids(hits) -> list:
    return [h.id for h in hits]


def test_hits_carry_the_id_and_the_source_as_given(packages):
    hits = packages.search("strong OR package:stockfish")
    assert ids(hits) == ["stockfish"]
    hit = hits[0]
    assert hit._id == hit.id == "stockfish"
    given = {k: v for k, v in PACKAGES[1].items() if k != "_id"}
    assert hit._source == given
    assert list(hit._source) == list(given)  # the document's key order
    assert hit.sort is None  # ranked by score
    assert hit.to_dict()["_source"] == given and "sort" not in hit.to_dict()
    assert packages.search("strong", fields=False)[0]._source is None
    assert packages.doc("nano")["_source"]["homepage"] == "https://nano-editor.org"
    assert packages.doc("nano")["_id"] == "nano"


def test_text_fields_are_searched_under_their_names(packages):
    assert sorted(ids(packages.search("summary:chess"))) == ["gnuchess", "stockfish", "xboard"]
    # vim's description mentions chess, its summary does not.
    assert sorted(ids(packages.search("description:chess"))) == ["gnuchess", "stockfish", "vim", "xboard"]
    assert sorted(ids(packages.search("chess"))) == ["gnuchess", "stockfish", "vim", "xboard"]
    assert sorted(ids(packages.search('summary:"text editor"'))) == ["nano", "vim"]
    assert packages.count("section:games") == 3
    assert packages.count("size:[500 TO *]") == 3
    assert sorted(ids(packages.search("_exists_:homepage"))) == ["gnuchess", "nano", "xboard"]
    assert packages.count("essential:true") == 2


def test_plain_words_search_every_text_field(packages):
    assert sorted(ids(packages.search("chess", parse="plain"))) == ["gnuchess", "stockfish", "vim", "xboard"]


def test_default_field_narrows_words_without_a_field(packages):
    assert sorted(ids(packages.search("chess", default_field=["summary"]))) == ["gnuchess", "stockfish", "xboard"]
    assert sorted(ids(packages.search("chess", default_field="summary"))) == ["gnuchess", "stockfish", "xboard"]
    assert sorted(ids(packages.search("chess", default_field=["summary", "description"]))) == [
        "gnuchess", "stockfish", "vim", "xboard"]
    # A boost on a field changes the ranking's scores, not its matches.
    plain = {h.id: h.score for h in packages.search("chess", default_field=["summary", "description"])}
    boosted = {h.id: h.score for h in packages.search("chess", default_field=["summary^3", "description"])}
    assert plain.keys() == boosted.keys()
    assert boosted["vim"] == pytest.approx(plain["vim"])  # its summary has no chess
    assert boosted["stockfish"] > plain["stockfish"]
    # The same words with plain parsing.
    assert sorted(ids(packages.search("chess", parse="plain", default_field=["summary"]))) == [
        "gnuchess", "stockfish", "xboard"]
    with pytest.raises(ValueError, match="section"):
        packages.search("chess", default_field=["section"])  # a keyword field
    with pytest.raises(ValueError, match="nothere"):
        packages.search("chess", default_field=["nothere"])


def test_filter_narrows_without_scoring(packages):
    unfiltered = {h.id: h.score for h in packages.search("chess")}
    filtered = packages.search("chess", filter="section:games AND size:[500 TO *]")
    assert ids(filtered) == ["gnuchess"]
    assert filtered[0].score == pytest.approx(unfiltered["gnuchess"])
    assert sorted(ids(packages.search("chess", filter="*:* NOT section:editors"))) == [
        "gnuchess", "stockfish", "xboard"]
    assert packages.count("chess", filter="section:editors") == 1
    total, exact, hits = packages.search_with_total("editor", filter="_exists_:homepage")
    assert (total, exact, ids(hits)) == (1, True, ["nano"])
    with pytest.raises(apcache.QueryError, match="filter"):
        packages.search("chess", filter="section:(")


def test_sort_by_fields_orders_and_shows_values(packages):
    hits = packages.search("*:*", sort=["size:desc"])
    assert ids(hits) == ["vim", "gnuchess", "nano", "stockfish", "xboard"]
    assert [h.sort for h in hits] == [[3000], [1200], [600], [300], [None]]  # missing last
    hits = packages.search("*:*", sort=[("size", "asc")])
    assert ids(hits) == ["stockfish", "nano", "gnuchess", "vim", "xboard"]  # missing last again
    hits = packages.search("*:*", sort="section,package:desc")
    assert ids(hits) == ["vim", "nano", "xboard", "stockfish", "gnuchess"]
    assert hits[0].sort == ["editors", "vim"]
    hits = packages.search("*:*", sort=["rating:desc"])
    assert [h.sort[0] for h in hits] == [4.9, 4.5, 4.2, 3.7, None]
    hits = packages.search("*:*", sort=["released"])
    assert ids(hits) == ["xboard", "gnuchess", "nano", "vim", "stockfish"]
    assert hits[0].sort == [1575072000000]  # 2019-11-30, milliseconds since the epoch
    hits = packages.search("*:*", sort=["essential:desc", "package"])
    assert ids(hits) == ["nano", "vim", "gnuchess", "stockfish", "xboard"]
    assert [h.sort[0] for h in hits] == [True, True, False, False, None]
    assert packages.search("*:*", k=2, sort=["_doc"])[1].sort == [1]


def test_sort_with_a_query_filter_and_the_score(packages):
    hits = packages.search("chess", filter="section:games", sort=["homepage", "_score"])
    assert ids(hits) == ["gnuchess", "xboard", "stockfish"]
    assert hits[2].sort[0] is None
    scores = {h.id: h.score for h in packages.search("chess")}
    assert hits[2].sort[1] == pytest.approx(scores["stockfish"])
    assert hits[0].score == pytest.approx(scores["gnuchess"])
    # Sorted by fields only, no score is computed.
    unscored = packages.search("chess", sort=["package"])
    assert all(h.score != h.score for h in unscored)  # NaN
    total, exact, hits = packages.search_with_total("chess", k=1, sort=["package"])
    assert (total, exact, ids(hits)) == (4, True, ["gnuchess"])


def test_bad_sorts_name_the_key(packages):
    with pytest.raises(ValueError, match=r"\[summary\] is a text field"):
        packages.search("chess", sort=["summary"])
    with pytest.raises(ValueError, match=r"\[nothere\]"):
        packages.search("chess", sort=["nothere:desc"])
    with pytest.raises(ValueError, match="asc"):
        packages.search("chess", sort=["size:up"])
    with pytest.raises(TypeError):
        packages.search("chess", sort=[3])
    with pytest.raises(ValueError, match="sort"):
        packages.search("chess", sort=[], k=3)


def test_a_document_that_does_not_fit_is_refused_and_named(tmp_path):
    writer = apcache.IndexWriter(tmp_path / "refusing", mapping=MAPPING)
    writer.add({"_id": "one", "summary": "fine", "size": 1})
    with pytest.raises(ValueError, match=r'document 1 \(_id "two"\) refused: field \[size\]') as raised:
        writer.add({"_id": "two", "summary": "a word where a number goes", "size": "big"})
    assert "integer" in str(raised.value)
    with pytest.raises(ValueError, match=r'"one"'):
        writer.add_many([{"_id": "three", "summary": "new"}, {"_id": "one", "summary": "again"}])
    with pytest.raises(ValueError, match=r"\[_private\]"):
        writer.add({"_private": 1})
    with pytest.raises(ValueError, match="JSON"):
        writer.add({"summary": float("nan")})
    assert len(writer) == 2  # one and three
    writer.commit()
    with apcache.Index(tmp_path / "refusing") as index:
        assert sorted(ids(index.search("*:*"))) == ["one", "three"]


def test_a_mapping_that_cannot_be_read_is_refused(tmp_path):
    with pytest.raises(ValueError, match="mapping"):
        apcache.IndexWriter(tmp_path / "x", mapping={"properties": {"a": {"type": "nosuchtype"}}})
    with pytest.raises(TypeError):
        apcache.IndexWriter(tmp_path / "x", mapping="properties")


def test_dynamic_mapping_and_an_id_field(tmp_path):
    path = tmp_path / "dynamic"
    with apcache.IndexWriter(path, id_field="name") as writer:
        writer.add({"name": "a", "text": "the quick fox", "count": 3})
        writer.add({"name": "b", "text": "the lazy dog", "count": 7})
        with pytest.raises(ValueError, match=r"\[count\]"):
            writer.add({"name": "c", "text": "x", "count": "many"})  # count was inferred a long
    with apcache.Index(path) as index:
        mapping = index.stats()["mapping"]["properties"]
        assert mapping["count"]["type"] == "long" and mapping["text"]["type"] == "text"
        assert ids(index.search("text:fox")) == ["a"]
        assert ids(index.search("*:*", sort=["count:desc"])) == ["b", "a"]
        # Dynamic strings get a keyword sub-field, which sorts.
        assert ids(index.search("*:*", sort=["text.keyword"])) == ["b", "a"]
        assert index.search("fox")[0]._source == {"name": "a", "text": "the quick fox", "count": 3}


def test_a_writer_takes_one_form(tmp_path):
    json_writer = apcache.IndexWriter(tmp_path / "json")
    json_writer.add({"title": "A", "body": "first"})  # a dict: a JSON document
    with pytest.raises(ValueError, match="one form"):
        json_writer.add("x", "title", "body")
    with pytest.raises(ValueError, match="one form"):
        json_writer.add_many([("y", "title", "body")])
    old_writer = apcache.IndexWriter(tmp_path / "old")
    old_writer.add("x", "title", "body")
    with pytest.raises(ValueError, match="one form"):
        old_writer.add({"_id": "y", "title": "t"})
    # Made with a mapping, a writer takes JSON documents from the start.
    with pytest.raises(ValueError, match="one form"):
        apcache.IndexWriter(tmp_path / "m", mapping=MAPPING).add("x", "t", "b")
    with pytest.raises(TypeError, match="iterable"):
        old_writer.add_many({"id": "z", "title": "t", "body": "b"})


def test_the_title_body_form_keeps_working(tmp_path):
    path = tmp_path / "old"
    with apcache.IndexWriter(path) as writer:
        writer.add("a", "River", "the arno river valley")
        writer.add(id="b", title="Valley", body="a valley with no name")
        writer.add_many([("c", "Lake", "a lake"), {"id": "d", "title": "Sea", "contents": "the sea and a river"}])
    with apcache.Index(path) as index:
        hits = index.search("river")
        assert sorted(ids(hits)) == ["a", "d"]
        assert all(h._id is None and h._source is None and h.sort is None for h in hits)
        assert hits[0].title in ("River", "Sea")
        assert "_source" not in index.doc("a")
        with pytest.raises(apcache.QueryError):
            index.search("title:river")  # one text field: no field names
        with pytest.raises(ValueError, match="default_field"):
            index.search("river", default_field=["title"])
    # A first dict of only id, title and body is the older form too.
    with apcache.IndexWriter(tmp_path / "dicts") as writer:
        writer.add_many([{"id": 1, "title": "One", "body": "a river"}])
    with apcache.Index(tmp_path / "dicts") as index:
        assert ids(index.search("river")) == ["1"] and index.search("river")[0]._id is None


def test_collection_stats_carry_the_text_fields(packages):
    stats = packages.collection_stats("summary:chess")
    assert stats["fields"]["summary"]["documents"] == 5
    # Given back, they score as the index's own do.
    assert packages.search("summary:chess", stats=stats) == packages.search("summary:chess")
    with pytest.raises(ValueError, match="sort"):
        packages.search("chess", stats=stats, sort=["size"])
