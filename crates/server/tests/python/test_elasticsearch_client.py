"""`apcache serve` driven by the official Elasticsearch Python client (8.x), unchanged.

The client checks `X-Elastic-Product: Elasticsearch` on its first successful answer, sends
`application/vnd.elasticsearch+json; compatible-with=8` as Accept and Content-Type, and turns
4xx answers into typed exceptions: these tests pass only if the server looks enough like
Elasticsearch for all of that. The last test holds the Elasticsearch API to the native one.
"""

from __future__ import annotations

import pytest
import requests
from elasticsearch import BadRequestError, Elasticsearch, NotFoundError

# Words of the sample (data/enwiki-sample.tsv): common ones, rarer ones, and combinations.
QUERIES = ["river", "history", "+new +york", "music OR war", "history -war", "(river OR lake) AND city"]


@pytest.fixture(scope="module")
def es(server):
    client = Elasticsearch(server.url, request_timeout=30)
    yield client
    client.close()


@pytest.fixture(scope="module")
def doc_count(server) -> int:
    indexes = requests.get(f"{server.url}/indexes", timeout=10).json()["indexes"]
    (sample,) = [i for i in indexes if i["name"] == server.index]
    assert sample["docs"] > 1000, sample
    return sample["docs"]


def native(server, q: str, k: int = 10, **params) -> dict:
    response = requests.get(
        f"{server.url}/indexes/{server.index}/search",
        params={"q": q, "k": k, **params},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def ids(response) -> list[str]:
    return [hit["_id"] for hit in response["hits"]["hits"]]


def query_string(query: str, **options) -> dict:
    return {"query_string": {"query": query, **options}}


def test_info(es):
    info = es.info()
    assert info["version"]["number"]
    for field in ("name", "cluster_name", "tagline"):
        assert isinstance(info[field], str), field


def test_query_string_search(es, server):
    response = es.search(index=server.index, query=query_string("river"))
    assert response["timed_out"] is False
    assert response["_shards"]["failed"] == 0
    hits = response["hits"]["hits"]
    assert len(hits) == 10
    scores = [hit["_score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert response["hits"]["max_score"] == pytest.approx(scores[0])
    for hit in hits:
        assert hit["_index"] == server.index
        assert isinstance(hit["_id"], str)
        assert set(hit["_source"]) == {"title", "body"}
        text = f'{hit["_source"]["title"]} {hit["_source"]["body"]}'.lower()
        assert "river" in text
    assert response["hits"]["total"]["relation"] in ("eq", "gte")
    assert response["hits"]["total"]["value"] >= 10


def test_q_parameter_is_query_string(es, server):
    by_body = es.search(index=server.index, query=query_string("+new +york"))
    by_q = es.search(index=server.index, q="+new +york")
    assert ids(by_q) == ids(by_body)


@pytest.mark.parametrize("q", ["history", "music OR war"])
def test_paging_agrees_with_one_bigger_page(es, server, q):
    whole = es.search(index=server.index, query=query_string(q), size=30)
    assert len(whole["hits"]["hits"]) == 30
    paged = []
    for start in (0, 10, 20):
        page = es.search(index=server.index, query=query_string(q), from_=start, size=10)
        paged += page["hits"]["hits"]
    assert [h["_id"] for h in paged] == ids(whole)
    assert [h["_score"] for h in paged] == pytest.approx([h["_score"] for h in whole["hits"]["hits"]], rel=1e-6)


def test_track_total_hits_counts_exactly(es, server):
    exact = es.search(index=server.index, query=query_string("history"), track_total_hits=True)
    assert exact["hits"]["total"]["relation"] == "eq"
    quick = es.search(index=server.index, query=query_string("history"), track_total_hits=False)
    relation = quick["hits"]["total"]["relation"]
    assert relation in ("eq", "gte")
    if relation == "eq":
        assert quick["hits"]["total"]["value"] == exact["hits"]["total"]["value"]
    else:
        assert quick["hits"]["total"]["value"] <= exact["hits"]["total"]["value"]
    assert native(server, "history", count="true")["total"] == {
        "value": exact["hits"]["total"]["value"],
        "exact": True,
    }


def test_match_query(es, server):
    plain = es.search(index=server.index, query={"match": {"body": "river"}}, track_total_hits=True)
    same = es.search(index=server.index, query=query_string("river"), track_total_hits=True)
    assert ids(plain) == ids(same)
    assert plain["hits"]["total"] == same["hits"]["total"]

    both = es.search(
        index=server.index,
        query={"match": {"body": {"query": "new york", "operator": "and"}}},
        track_total_hits=True,
    )
    required = es.search(index=server.index, query=query_string("+new +york"), track_total_hits=True)
    anded = es.search(
        index=server.index,
        query=query_string("new york", default_operator="AND"),
        track_total_hits=True,
    )
    assert ids(both) == ids(required) == ids(anded)
    assert both["hits"]["total"] == required["hits"]["total"] == anded["hits"]["total"]
    either = es.search(index=server.index, query={"match": {"body": "new york"}}, track_total_hits=True)
    assert either["hits"]["total"]["value"] > both["hits"]["total"]["value"]


def test_match_all(es, server, doc_count):
    response = es.search(index=server.index, query={"match_all": {}}, track_total_hits=True)
    assert response["hits"]["total"] == {"value": doc_count, "relation": "eq"}
    assert len(response["hits"]["hits"]) == 10
    assert len(set(ids(response))) == 10


def test_source_filtering(es, server):
    none = es.search(index=server.index, query=query_string("river"), _source=False)
    assert all("_source" not in hit for hit in none["hits"]["hits"])
    titles = es.search(index=server.index, query=query_string("river"), _source=["title"])
    assert all(set(hit["_source"]) == {"title"} for hit in titles["hits"]["hits"])
    assert ids(none) == ids(titles)


def test_filtered_sorted_search_pages_with_search_after(es, server):
    """A filter scores nothing, a sort by document order shows no scores, and search_after
    pages through exactly what one big page holds."""
    text = {"match": {"body": "river"}}
    query = {"bool": {"must": text, "filter": [{"match": {"body": "city"}}]}}
    scored = es.search(index=server.index, query=query, size=50)
    alone = {hit["_id"]: hit["_score"] for hit in es.search(index=server.index, query=text, size=10_000)["hits"]["hits"]}
    assert scored["hits"]["hits"], "pick words that meet in the sample"
    for hit in scored["hits"]["hits"]:
        assert hit["_score"] == pytest.approx(alone[hit["_id"]], rel=1e-6)

    whole = es.search(index=server.index, query=query, sort=["_doc"], size=10_000)
    expected = ids(whole)
    assert whole["hits"]["max_score"] is None
    assert all(hit["_score"] is None for hit in whole["hits"]["hits"])
    assert [hit["sort"][0] for hit in whole["hits"]["hits"]] == sorted(int(i) for i in expected)
    paged, after = [], None
    while True:
        extra = {"search_after": after} if after else {}
        page = es.search(index=server.index, query=query, sort=["_doc"], size=7, **extra)
        hits = page["hits"]["hits"]
        if not hits:
            break
        assert page["hits"]["total"] == whole["hits"]["total"]
        paged += [hit["_id"] for hit in hits]
        after = hits[-1]["sort"]
    assert paged == expected

    with pytest.raises(BadRequestError) as caught:
        es.search(index=server.index, query={"term": {"title": "river"}})
    assert "title" in caught.value.body["error"]["reason"]


def test_count(es, server, doc_count):
    exact = native(server, "river", count="true")["total"]["value"]
    assert es.count(index=server.index, query=query_string("river"))["count"] == exact
    assert es.count(index=server.index, q="river")["count"] == exact
    assert es.count(index=server.index)["count"] == doc_count


def test_get_a_document_found_by_search(es, server):
    hit = es.search(index=server.index, query=query_string("river"), size=1)["hits"]["hits"][0]
    doc = es.get(index=server.index, id=hit["_id"])
    assert doc["found"] is True
    assert doc["_index"] == server.index
    assert doc["_id"] == hit["_id"]
    assert doc["_source"] == hit["_source"]
    native_doc = requests.get(f"{server.url}/indexes/{server.index}/docs/{hit['_id']}", timeout=10)
    assert native_doc.status_code == 200
    native_doc = native_doc.json()
    assert native_doc["id"] == native_doc["_id"] == hit["_id"]
    assert native_doc["source"] == hit["_source"]
    assert {field: native_doc[field] for field in ("title", "body")} == hit["_source"]


def test_missing_document(es, server):
    for missing in ("no-such-document", "99999999"):
        with pytest.raises(NotFoundError):
            es.get(index=server.index, id=missing)
    raw = requests.get(f"{server.url}/{server.index}/_doc/no-such-document", timeout=10)
    assert raw.status_code == 404
    assert raw.json()["found"] is False


def test_unknown_index(es):
    with pytest.raises(NotFoundError) as caught:
        es.search(index="no-such-index", query=query_string("river"))
    assert caught.value.error == "index_not_found_exception"


def test_malformed_query(es, server):
    with pytest.raises(BadRequestError) as caught:
        es.search(index=server.index, query=query_string("(unbalanced"))
    error = caught.value.body["error"]
    assert error["root_cause"] and error["reason"]
    assert "parenthes" in error["reason"]


@pytest.mark.parametrize("window", [{"size": 20_000}, {"from_": 9_995, "size": 10}])
def test_result_window_is_bounded(es, server, window):
    with pytest.raises(BadRequestError) as caught:
        es.search(index=server.index, query=query_string("river"), **window)
    assert caught.value.error == "illegal_argument_exception"
    assert es.search(index=server.index, query=query_string("river"), from_=9_990, size=10)["hits"]["hits"] == []


def test_negative_size(es, server):
    with pytest.raises(BadRequestError):
        es.search(index=server.index, query=query_string("river"), size=-1)


def test_cat_indices(es, server, doc_count):
    text = es.cat.indices()
    assert server.index in text.body.split()
    rows = es.cat.indices(format="json").body
    (row,) = [row for row in rows if row["index"] == server.index]
    assert int(row["docs.count"]) == doc_count


@pytest.mark.parametrize("q", QUERIES)
def test_native_and_elasticsearch_agree(es, server, q):
    mine = native(server, q, k=10, count="true")
    theirs = es.search(index=server.index, query=query_string(q), size=10, track_total_hits=True)
    assert mine["total"]["exact"] is True
    assert theirs["hits"]["total"] == {"value": mine["total"]["value"], "relation": "eq"}
    assert mine["total"]["value"] > 0, f"{q!r} matches nothing in the sample: pick another query"
    assert ids(theirs) == [hit["id"] for hit in mine["hits"]]
    assert [hit["_score"] for hit in theirs["hits"]["hits"]] == pytest.approx(
        [hit["score"] for hit in mine["hits"]], rel=1e-6
    )
    titles = [hit["_source"]["title"] for hit in theirs["hits"]["hits"]]
    assert titles == [hit["title"] for hit in mine["hits"]]


@pytest.fixture(scope="module")
def es_json(json_server):
    client = Elasticsearch(json_server.url, request_timeout=30)
    yield client
    client.close()


def scores(response) -> dict[str, float]:
    return {hit["_id"]: hit["_score"] for hit in response["hits"]["hits"]}


def test_text_fields_through_the_client(es_json, json_server):
    """An index of JSON documents: each text field searched and scored on its own, and the
    DSL's combinations of them as Elasticsearch combines them."""
    index = json_server.index
    title = scores(es_json.search(index=index, query={"match": {"title": "river"}}, size=20))
    summary = scores(es_json.search(index=index, query={"match": {"summary": "river"}}, size=20))
    # Book 3 has no title; every summary names the river.
    assert len(title) == 19 and "book-3" not in title
    assert len(summary) == 20
    best = es_json.search(
        index=index,
        query={"multi_match": {"query": "river", "fields": ["title^2", "summary"], "tie_breaker": 0.5}},
        size=20,
    )
    assert len(best["hits"]["hits"]) == 20
    for id_, score in scores(best).items():
        a, b = 2 * title.get(id_, 0.0), summary[id_]
        want = max(a, b) + 0.5 * min(a, b)
        assert abs(score - want) <= 1e-5 * max(1.0, want), (id_, score, want)
    summed = scores(
        es_json.search(
            index=index,
            query={"multi_match": {"query": "river", "fields": ["title", "summary"], "type": "most_fields"}},
            size=20,
        )
    )
    for id_, score in summed.items():
        want = title.get(id_, 0.0) + summary[id_]
        assert abs(score - want) <= 1e-5 * max(1.0, want), (id_, score, want)
    phrase = es_json.search(index=index, query={"match_phrase": {"summary": "number river"}}, size=20)
    assert phrase["hits"]["total"]["value"] == 0
    phrase = es_json.search(index=index, query={"match_phrase": {"summary": "about the river"}}, size=20)
    assert phrase["hits"]["total"]["value"] == 20
    # A text match filtered by a keyword and sorted by a number.
    sorted_poetry = es_json.search(
        index=index,
        query={"bool": {"must": {"match": {"title": "book"}}, "filter": {"term": {"section": "poetry"}}}},
        sort=[{"size": "desc"}],
        size=20,
    )
    hits = sorted_poetry["hits"]["hits"]
    assert hits and all(hit["_source"]["section"] == "poetry" for hit in hits)
    sizes = [hit["sort"][0] for hit in hits]
    assert sizes == sorted(sizes, reverse=True)
    # A range on a text field is refused by name.
    with pytest.raises(BadRequestError) as refused:
        es_json.search(index=index, query={"range": {"title": {"gte": "a"}}})
    assert "title" in str(refused.value)
