"""Status codes, error bodies and the operational endpoints of `apcache serve` (docs/api.md)."""

from __future__ import annotations

import json
import re

import pytest
import requests

MAX_BODY = 1 << 20
MAX_RESULTS = 10_000


def get(server, path: str, **kwargs) -> requests.Response:
    return requests.get(f"{server.url}{path}", timeout=30, **kwargs)


def search(server, **params) -> requests.Response:
    return get(server, f"/indexes/{server.index}/search", params=params)


def error_of(response: requests.Response, status: int) -> dict:
    """The native error body, checked for shape: {"error": {"type", "reason", ...}, "status"}."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["status"] == status
    assert isinstance(body["error"]["type"], str) and body["error"]["type"]
    assert isinstance(body["error"]["reason"], str) and body["error"]["reason"]
    return body["error"]


def test_health(server):
    response = get(server, "/health")
    assert response.status_code == 200
    assert response.json()["status"] == "green"


def test_unknown_index(server):
    native = error_of(get(server, "/indexes/no-such-index/search", params={"q": "river"}), 404)
    assert native["type"] == "index_not_found_exception"

    elastic = get(server, "/no-such-index/_search", params={"q": "river"})
    assert elastic.status_code == 404
    body = elastic.json()
    assert body["status"] == 404
    assert body["error"]["type"] == "index_not_found_exception"
    assert body["error"]["reason"]
    assert body["error"]["root_cause"][0]["type"] == "index_not_found_exception"


def test_unknown_document_and_path(server):
    error_of(get(server, f"/indexes/{server.index}/docs/no-such-document"), 404)
    error_of(get(server, f"/indexes/{server.index}/docs/99999999"), 404)
    error_of(get(server, "/no/such/path/here"), 404)


@pytest.mark.parametrize(
    "params",
    [{"k": "-1"}, {"k": str(MAX_RESULTS + 1)}, {"k": "10", "offset": str(MAX_RESULTS - 9)}, {"offset": "-5"}],
    ids=["negative k", "k past the limit", "offset + k past the limit", "negative offset"],
)
def test_out_of_range_paging(server, params):
    error = error_of(search(server, q="river", **params), 400)
    assert error["type"] == "illegal_argument_exception"


@pytest.mark.parametrize("params", [{"k": "ten"}, {"k": "1.5"}, {"offset": "x"}])
def test_malformed_parameters(server, params):
    error_of(search(server, q="river", **params), 400)


def test_missing_query(server):
    error_of(search(server), 400)


def test_the_limit_itself_is_allowed(server):
    response = search(server, q="river", k="10", offset=str(MAX_RESULTS - 10))
    assert response.status_code == 200, response.text
    assert response.json()["hits"] == []


def test_post_takes_the_same_parameters(server):
    url = f"{server.url}/indexes/{server.index}/search"
    by_get = search(server, q="river", k="5", offset="5").json()
    by_post = requests.post(url, json={"q": "river", "k": 5, "offset": 5}, timeout=30)
    assert by_post.status_code == 200, by_post.text
    assert [h["id"] for h in by_post.json()["hits"]] == [h["id"] for h in by_get["hits"]]
    error_of(requests.post(url, json={"q": "river", "k": -1}, timeout=30), 400)
    error_of(requests.post(url, data="{not json", headers={"Content-Type": "application/json"}, timeout=30), 400)


def test_body_over_the_limit(server):
    body = json.dumps({"q": "river " * (MAX_BODY // 6 + 1000)})
    assert len(body) > MAX_BODY
    try:
        response = requests.post(
            f"{server.url}/indexes/{server.index}/search",
            data=body,
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
    except requests.ConnectionError as error:
        pytest.fail(
            "the connection broke instead of a 413 answer: the server must send its 413 "
            f"and let the client read it (e.g. read or drain the body before closing): {error}"
        )
    error_of(response, 413)


@pytest.mark.parametrize(
    "q, position",
    [("(unbalanced", 0), ("river (history", 6), ("café (river", 6), ("river AND", 6)],
)
def test_parse_error_has_a_byte_position(server, q, position):
    error = error_of(search(server, q=q), 400)
    assert error["type"] == "query_parse_error"
    assert error["position"] == position, error


def test_root_redirects_browsers_to_the_ui(server):
    response = get(
        server,
        "/",
        headers={"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
        allow_redirects=False,
    )
    assert response.status_code in (302, 303, 307, 308), response.status_code
    assert requests.compat.urljoin(f"{server.url}/", response.headers["Location"]) == f"{server.url}/ui"

    page = get(server, "/ui")
    assert page.status_code == 200
    assert page.headers["Content-Type"].startswith("text/html")
    assert 'id="q"' in page.text


@pytest.mark.parametrize("accept", ["application/json", "*/*"])
def test_root_gives_cluster_information_otherwise(server, accept):
    response = get(server, "/", headers={"Accept": accept}, allow_redirects=False)
    assert response.status_code == 200
    assert response.headers["X-Elastic-Product"] == "Elasticsearch"
    body = response.json()
    assert body["version"]["number"]
    assert body["cluster_name"] and body["tagline"]


def requests_total(server) -> float:
    response = get(server, "/metrics")
    assert response.status_code == 200
    content_type = response.headers["Content-Type"]
    assert content_type.startswith(("application/openmetrics-text", "text/plain")), content_type
    # Label values hold route templates such as "/{index}/_search": braces inside quotes.
    samples = re.findall(r"^apcache_http_requests_total(?:\{.*\})? (\S+)$", response.text, re.MULTILINE)
    assert samples, "no apcache_http_requests_total samples in /metrics"
    return sum(float(value) for value in samples)


def test_metrics_count_requests(server):
    before = requests_total(server)
    assert search(server, q="river").status_code == 200
    assert search(server, q="(unbalanced").status_code == 400
    after = requests_total(server)
    assert after >= before + 2
    text = get(server, "/metrics").text
    for name in ("apcache_http_request_duration_seconds", "apcache_queue_depth", "apcache_panics_total"):
        assert re.search(rf"^{name}", text, re.MULTILINE), name
    assert re.search(r'^apcache_http_requests_total\{.*status="400".*\} [1-9]', text, re.MULTILINE)
