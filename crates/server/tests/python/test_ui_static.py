"""The search page (crates/server/assets/ui.html) against a stub of the API, without the Rust server.

A small http.server serves the page at /ui, as `apcache serve` does, and answers /indexes and
/indexes/{name}/search with made-up results in the shapes of docs/api.md. Which answer comes
back depends on the query:

  nothing       no match
  many          50,000 exact matches (paging stops at offset + k = 10,000)
  lower         a total that is a lower bound, exact with count=true
  script        a hit whose fields hold HTML, which must show as text
  c++           a parser note
  ( unbalanced  a query_parse_error whose position is the byte offset of the "("
  crash         a 500 with a plain-text body
  json          two hits of JSON documents (a `source`) and one of a tab-separated one
  anything else 35 matches, ids 0..34

GET /{name}/_mapping answers with MAPPING for wiki, and fails (500) for news.
"""

from __future__ import annotations

import time
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from playwright.sync_api import Page, expect

UI = Path(__file__).resolve().parents[2] / "assets" / "ui.html"

INDEXES = [
    {"name": "wiki", "docs": 35, "segments": 1, "search_bytes": 1000, "store_bytes": 2000,
     "mode": "hybrid-prefetch"},
    {"name": "news", "docs": 12, "segments": 1, "search_bytes": 500, "store_bytes": 900,
     "mode": "hybrid-prefetch"},
]
MAX_RESULTS = 10_000
HOSTILE_TITLE = "<script>window.__pwned = true</script> & <b>bold</b>"
HOSTILE_SNIPPET = '<img src=x onerror="window.__pwned = true"> snippet'


MAPPING = {
    "properties": {
        "title": {"type": "text", "fields": {"keyword": {"type": "keyword"}}},
        "body": {"type": "text"},
        "section": {"type": "keyword"},
        "size": {"type": "long"},
        "ratio": {"type": "double"},
        "tags": {"type": "keyword"},
        "when": {"type": "date"},
        "ok": {"type": "boolean"},
        "author": {"properties": {"name": {"type": "keyword"}, "bio": {"type": "text"}}},
    }
}
LONG_BODY = "word " * 100
JSON_SOURCE = {
    "title": "A <b>title</b>",
    "body": LONG_BODY,
    "section": '<img src=x onerror="window.__pwned = true">',
    "size": 9007199254740993,  # past 2^53: JavaScript's number would round it
    "ratio": 0.0,
    "tags": ["a", 'b "c" \\ d'],
    "when": "2021-03-04",
    "ok": False,
    "author": {"name": "Ann", "bio": "Writes."},
    "extra": None,
    "empty": [],
}
JSON_HITS = [
    {"id": "j1", "_id": "j1", "score": 3.0, "title": "A <b>title</b>", "snippet": "", "source": JSON_SOURCE},
    {"id": "j2", "_id": "j2", "score": 2.0, "title": "", "snippet": "", "source": {"section": "x"}},
    {"id": "0", "_id": "0", "score": 1.0, "title": "Tab-separated", "snippet": "its body",
     "source": {"title": "Tab-separated", "body": "its body"}},
]


def search(index: str, params: dict[str, str]) -> tuple[int, object]:
    q = params.get("q", "")
    try:
        k = int(params.get("k", "10"))
        offset = int(params.get("offset", "0"))
    except ValueError:
        return 400, error(400, "illegal_argument_exception", "k and offset must be integers")
    if k < 0 or offset < 0 or k + offset > MAX_RESULTS:
        return 400, error(400, "illegal_argument_exception", f"offset + k over {MAX_RESULTS}")
    if index not in {i["name"] for i in INDEXES}:
        return 404, error(404, "index_not_found_exception", f"no such index [{index}]")
    if "(" in q and ")" not in q:
        position = len(q[: q.index("(")].encode())
        body = error(400, "query_parse_error",
                     f"unbalanced parentheses: the parenthesis at byte {position} has no partner")
        body["error"]["position"] = position
        return 400, body
    if q == "crash":
        return 500, "internal failure\n"

    exact = True
    notes = []
    if q == "nothing":
        total = 0
    elif q == "many":
        total = 50_000
    elif q == "lower":
        total, exact = 57, params.get("count") == "true"
    else:
        total = 35
    if q == "c++":
        notes = ['"c++": the characters "++" were dropped by the analyzer']
    count = total
    if not exact:
        total = 20  # the bound that pruning proved, below the 57 that match
    hits = [
        {"id": str(i), "score": 12.5 - i * 0.01, "title": f"{q} document {i}",
         "snippet": f"Snippet of document {i} about {q}…"}
        for i in range(offset, min(offset + k, count))
    ]
    if q == "script":
        hits = [{"id": "<i>7</i>", "score": 1.0, "title": HOSTILE_TITLE, "snippet": HOSTILE_SNIPPET}]
        total = 1
    if q == "json":
        hits, total = JSON_HITS, len(JSON_HITS)
    if q == "marked":
        hits = [{"id": "3", "score": 2.0, "title": "Marked", "snippet": "unused",
                 "highlight": ["a <em>marked</em> word <b>not bold</b>", "and <em>again</em>"]}]
        total = 1
    body = {"index": index, "query": q, "total": {"value": total, "exact": exact},
            "took_us": 87, "offset": offset, "k": k, "hits": hits}
    if notes:
        body["notes"] = notes
    return 200, body


def error(status: int, kind: str, reason: str) -> dict:
    return {"error": {"type": kind, "reason": reason}, "status": status}


class Stub(BaseHTTPRequestHandler):
    requests: list[tuple[str, dict[str, str]]] = []
    mapping_requests: list[str] = []

    def do_GET(self):  # noqa: N802 (the name http.server calls)
        url = urlsplit(self.path)
        params = {key: values[-1] for key, values in parse_qs(url.query).items()}
        parts = [unquote(p) for p in url.path.split("/") if p]
        if url.path == "/ui":
            self.reply(200, UI.read_bytes(), "text/html; charset=utf-8")
        elif url.path == "/indexes":
            self.reply(200, {"indexes": INDEXES})
        elif url.path == "/wiki/_mapping":
            Stub.mapping_requests.append("wiki")
            self.reply(200, {"wiki": {"mappings": MAPPING}})
        elif url.path == "/news/_mapping":
            self.reply(500, error(500, "exception", "no mapping today"))
        elif len(parts) == 3 and parts[0] == "indexes" and parts[2] == "search":
            Stub.requests.append((parts[1], params))
            self.reply(*search(parts[1], params))
        else:
            self.reply(404, error(404, "resource_not_found_exception", f"no route {url.path}"))

    def reply(self, status: int, body, content_type: str = "application/json"):
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
        elif isinstance(body, str):
            data, content_type = body.encode(), "text/plain; charset=utf-8"
        else:
            data = body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def fresh_log():
    Stub.requests.clear()
    Stub.mapping_requests.clear()


def last_search() -> tuple[str, dict[str, str]]:
    assert Stub.requests, "the page sent no search"
    return Stub.requests[-1]


def wait_for_search(matches, timeout_s: float = 10.0) -> tuple[str, dict[str, str]]:
    """The last search the stub received once it satisfies `matches(index, params)`."""
    deadline = time.monotonic() + timeout_s
    while True:
        if Stub.requests and matches(*Stub.requests[-1]):
            return Stub.requests[-1]
        assert time.monotonic() < deadline, f"no such search reached the stub: {Stub.requests[-1:]}"
        time.sleep(0.02)


def search_for(page: Page, query: str) -> None:
    page.fill("#q", query)
    page.press("#q", "Enter")


def meta_ids(page: Page) -> list[str]:
    return [m.split(" · ")[0].removeprefix("id ") for m in page.locator(".hit .meta").all_inner_texts()]


def test_lists_indexes_and_searches_on_enter(page: Page, stub: str):
    page.goto(f"{stub}/ui")
    expect(page.locator("#q")).to_be_focused()
    expect(page.locator("#index option")).to_have_count(2)
    expect(page.locator("#index")).to_be_visible()
    expect(page.locator("label[for=index]")).to_have_text("Index")
    expect(page.locator("label[for=q]")).to_have_count(1)

    search_for(page, "river")
    expect(page.locator(".hit")).to_have_count(10)
    assert "index=wiki" in page.url and "q=river" in page.url and "page=1" in page.url
    index, params = last_search()
    assert index == "wiki"
    assert params == {"q": "river", "k": "10", "offset": "0", "highlight": "true"}

    expect(page.locator("#total")).to_have_text("35 results")
    expect(page.locator("#took")).to_contain_text("0.09 ms")
    expect(page.locator("#count-exact")).to_be_hidden()
    expect(page.locator("#notes")).to_be_hidden()
    expect(page.locator("#error")).to_be_hidden()
    first = page.locator(".hit").first
    expect(first.locator(".title")).to_have_text("river document 0")
    assert first.locator(".title").evaluate("e => getComputedStyle(e).fontWeight") == "700"
    expect(first.locator(".meta")).to_have_text("id 0 · score 12.5000")
    expect(first.locator(".snippet")).to_have_text("Snippet of document 0 about river…")
    assert page.title() == "river – apcache search"


def test_pages_forward_and_back(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=river&page=1")
    expect(page.locator(".hit")).to_have_count(10)
    expect(page.locator("#prev")).to_have_attribute("aria-disabled", "true")
    expect(page.locator("#pages a")).to_have_text(["1", "2", "3", "4"])
    expect(page.locator("#pages a[aria-current=page]")).to_have_text("1")

    page.click("#next")
    expect(page).to_have_url(f"{stub}/ui?index=wiki&q=river&page=2")
    expect(page.locator(".hit .title").first).to_have_text("river document 10")
    assert last_search()[1]["offset"] == "10"
    assert page.locator("#hits").get_attribute("start") == "11"

    page.click("#pages a[data-page='4']")
    expect(page.locator(".hit")).to_have_count(5)
    assert meta_ids(page) == ["30", "31", "32", "33", "34"]
    expect(page.locator("#next")).to_have_attribute("aria-disabled", "true")
    page.click("#next")  # disabled: nothing happens
    expect(page).to_have_url(f"{stub}/ui?index=wiki&q=river&page=4")

    page.go_back()
    expect(page).to_have_url(f"{stub}/ui?index=wiki&q=river&page=2")
    expect(page.locator(".hit .title").first).to_have_text("river document 10")
    page.go_forward()
    expect(page.locator(".hit")).to_have_count(5)
    page.click("#prev")
    expect(page).to_have_url(f"{stub}/ui?index=wiki&q=river&page=3")
    expect(page.locator(".hit .title").first).to_have_text("river document 20")


def test_paging_stops_at_the_result_window(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=many&page=1")
    expect(page.locator("#total")).to_have_text("50,000 results")
    expect(page.locator("#total")).to_have_attribute("data-value", "50000")
    expect(page.locator("#pages a").last).to_have_text("1000")

    page.goto(f"{stub}/ui?index=wiki&q=many&page=1000")
    expect(page.locator(".hit")).to_have_count(10)
    assert last_search()[1]["offset"] == "9990"
    expect(page.locator("#next")).to_have_attribute("aria-disabled", "true")

    page.goto(f"{stub}/ui?index=wiki&q=many&page=5000")  # clamped to the last page there is
    expect(page.locator(".hit")).to_have_count(10)
    assert last_search()[1]["offset"] == "9990"


def test_lower_bound_and_count_exactly(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=lower&page=2")
    expect(page.locator("#total")).to_have_text("at least 20 results")
    expect(page.locator("#total")).to_have_attribute("data-exact", "false")
    # The bound says 2 pages, but full pages keep coming: "next" stays open.
    expect(page.locator("#next")).not_to_have_attribute("aria-disabled", "true")
    page.click("#count-exact")
    expect(page.locator("#total")).to_have_text("57 results")
    assert last_search()[1] == {
        "q": "lower", "k": "10", "offset": "10", "count": "true", "highlight": "true"}
    assert "count=true" in page.url
    expect(page.locator("#count-exact")).to_be_hidden()
    expect(page.locator("#pages a").last).to_have_text("6")

    search_for(page, "lower")  # a new search asks for the quick count again
    expect(page.locator("#total")).to_have_text("at least 20 results")
    assert "count" not in last_search()[1]


def test_parse_error_shows_reason_and_caret(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=river&page=1")
    expect(page.locator(".hit")).to_have_count(10)
    search_for(page, "café (river")  # "(" is character 5 but byte 6
    error = page.locator("#error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("The query does not parse")
    expect(error).to_contain_text("the parenthesis at byte 6 has no partner")
    assert error.locator("pre").inner_text() == "café (river\n     ^"
    assert error.evaluate("e => getComputedStyle(e).color") == "rgb(161, 17, 27)"
    expect(page.locator(".hit")).to_have_count(0)
    expect(page.locator("#results")).to_be_hidden()

    page.go_back()
    expect(page.locator("#error")).to_be_hidden()
    expect(page.locator(".hit")).to_have_count(10)
    expect(page.locator("#q")).to_have_value("river")


def test_plain_text_server_error(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=crash&page=1")
    expect(page.locator("#error")).to_contain_text("Server error (500)")
    expect(page.locator("#error")).to_contain_text("internal failure")
    expect(page.locator("#error pre")).to_have_count(0)


def test_server_text_is_never_markup(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=script&page=1")
    hit = page.locator(".hit")
    expect(hit).to_have_count(1)
    expect(hit.locator(".title")).to_have_text(HOSTILE_TITLE)
    expect(hit.locator(".snippet")).to_have_text(HOSTILE_SNIPPET)
    expect(hit.locator(".meta")).to_contain_text("id <i>7</i>")
    assert hit.locator("script, img, b, i").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert hit.locator(".meta a").get_attribute("href").endswith("/indexes/wiki/docs/%3Ci%3E7%3C%2Fi%3E")


def test_notes_and_empty_result(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=c%2B%2B&page=1")
    expect(page.locator("#notes")).to_be_visible()
    expect(page.locator("#notes li")).to_have_text(['"c++": the characters "++" were dropped by the analyzer'])

    search_for(page, "nothing")
    expect(page.locator("#total")).to_have_text("0 results")
    expect(page.locator("#empty")).to_be_visible()
    expect(page.locator("#empty")).to_contain_text("Nothing in wiki matches nothing")
    expect(page.locator(".hit")).to_have_count(0)
    expect(page.locator("#notes")).to_be_hidden()
    expect(page.locator("#pager")).to_be_hidden()


def test_index_choice_is_in_the_url(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=river&page=3")
    expect(page.locator(".hit")).to_have_count(10)
    page.select_option("#index", "news")
    expect(page).to_have_url(f"{stub}/ui?index=news&q=river&page=1")
    # The URL changes before the new search reaches the stub, and the old page's hits stay
    # visible until its answer comes: wait for the search itself.
    wait_for_search(lambda name, _: name == "news")
    expect(page.locator(".hit").first).to_be_visible()

    page.reload()
    expect(page.locator("#index")).to_have_value("news")
    expect(page.locator(".hit").first).to_be_visible()

    page.goto(f"{stub}/ui?index=gone&q=river")
    expect(page.locator("#error")).to_contain_text('no index named "gone"')


def test_keyboard_only(page: Page, stub: str):
    page.goto(f"{stub}/ui")
    # The box takes the focus once the page's script has run; typing before that is lost.
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type("river")
    page.keyboard.press("Enter")
    expect(page.locator(".hit")).to_have_count(10)
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type("lake")
    page.keyboard.press("Enter")
    expect(page.locator(".hit .title").first).to_have_text("lake document 0")


def test_highlighted_fragments_are_marked_and_never_parsed_as_html(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=marked&page=1")
    snippet = page.locator(".hit .snippet").first
    expect(snippet.locator("mark")).to_have_count(2)
    expect(snippet.locator("mark").first).to_have_text("marked")
    expect(snippet).to_have_text("a marked word <b>not bold</b> … and again")
    expect(snippet.locator("b")).to_have_count(0)


def field_cells(hit) -> dict[str, str]:
    names = hit.locator("dl.fields dt").all_inner_texts()
    return dict(zip(names, hit.locator("dl.fields dd").all_inner_texts()))


def test_json_documents_show_their_fields(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=wiki&q=json&page=1")
    hits = page.locator(".hit")
    expect(hits).to_have_count(3)
    first = hits.first
    expect(first.locator(".title")).to_have_text("A <b>title</b>")
    expect(first.locator("dl.fields dt")).to_have_text([
        "title", "body", "section", "size", "ratio", "tags", "when", "ok", "author.name",
        "author.bio", "extra", "empty"])
    assert field_cells(first) == {
        "title": "A <b>title</b>",
        "body": LONG_BODY[:300].rstrip() + "…",
        "section": '<img src=x onerror="window.__pwned = true">',
        "size": "9007199254740993",
        "ratio": "0.0",
        "tags": 'a, b "c" \\ d',
        "when": "2021-03-04",
        "ok": "false",
        "author.name": "Ann",
        "author.bio": "Writes.",
        "extra": "null",
        "empty": "(empty)",
    }
    assert first.locator("b, img, script").count() == 0
    assert page.evaluate("window.__pwned") is None
    # Text fields and nulls are not links; the rest are, each value its own.
    links = first.locator("dl.fields a")
    expect(links).to_have_text([
        '<img src=x onerror="window.__pwned = true">', "9007199254740993", "0.0", "a",
        'b "c" \\ d', "2021-03-04", "false", "Ann"])
    assert [a.get_attribute("data-filter") for a in links.all()] == [
        'section:"<img src=x onerror=\\"window.__pwned = true\\">"', 'size:"9007199254740993"',
        'ratio:"0.0"', 'tags:"a"', 'tags:"b \\"c\\" \\\\ d"', 'when:"2021-03-04"', 'ok:"false"',
        'author.name:"Ann"']
    # An untitled document is titled by its _id. In an index of JSON documents (as the
    # mapping says), a source of a title and a body is one too.
    expect(hits.nth(1).locator(".title")).to_have_text("j2")
    expect(hits.nth(2).locator(".title")).to_have_text("Tab-separated")
    expect(hits.nth(2).locator(".snippet")).to_have_text("its body")
    expect(hits.nth(2).locator("dl.fields dt")).to_have_text(["title", "body"])

    # A filter goes through the URL and history.
    first.locator("dl.fields a", has_text='b "c"').click()
    wait_for_search(lambda _, params: params.get("q", "").endswith('d"'))
    assert last_search() == ("wiki", {
        "q": '(json) AND tags:"b \\"c\\" \\\\ d"', "k": "10", "offset": "0", "highlight": "true"})
    expect(page.locator("#q")).to_have_value('(json) AND tags:"b \\"c\\" \\\\ d"')
    page.go_back()
    expect(page.locator("#q")).to_have_value("json")
    expect(hits).to_have_count(3)
    # The mapping was asked once for the index, however many searches.
    assert Stub.mapping_requests == ["wiki"]


def test_json_documents_without_a_mapping(page: Page, stub: str):
    page.goto(f"{stub}/ui?index=news&q=json&page=1")  # news's mapping fails
    hits = page.locator(".hit")
    expect(hits).to_have_count(3)
    expect(hits.first.locator("dl.fields dt")).to_have_count(12)
    expect(hits.first.locator("dl.fields a")).to_have_count(0)
    expect(page.locator("#error")).to_be_hidden()
    # Without the mapping to say so, a source of a title and a body is a tab-separated one's,
    # which looks as it always has.
    expect(hits.nth(2).locator("dl.fields")).to_have_count(0)
    expect(hits.nth(2).locator(".title")).to_have_text("Tab-separated")
    expect(hits.nth(2).locator(".snippet")).to_have_text("its body")
