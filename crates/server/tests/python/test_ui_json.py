"""The search page on an index of JSON documents, in headless Chromium, against the real server.

`json_server` (conftest.py) serves 20 books under a mapping. A hit shows its document's fields
as a table (objects flattened to dotted names, arrays joined with commas, long text cut); the
values of keyword, numeric, date and boolean fields are links that add `field:"value"` to the
query. With APCACHE_SCREENSHOT_JSON set, the test saves a screenshot of a results page there.
The page is the copy compiled into the binary (include_str!): rebuild it after editing ui.html.
"""

from __future__ import annotations

import json
import os
import re
from urllib.parse import parse_qs, urlsplit

import requests
from playwright.sync_api import Page, expect

MAX_TEXT = 300  # the characters of a value the page shows before its ellipsis


def native(server, q: str, **params) -> dict:
    response = requests.get(
        f"{server.url}/indexes/{server.index}/search",
        params={"q": q, "k": 10, "offset": 0, **params},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def flatten(value, name: str = "", rows: dict | None = None) -> dict[str, list]:
    """The fields of a source as the page lists them: dotted names, in document order."""
    rows = {} if rows is None else rows
    if isinstance(value, list):
        rows.setdefault(name, []) if not value else None
        for item in value:
            flatten(item, name, rows)
    elif isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{name}.{key}" if name else key, rows)
    else:
        rows.setdefault(name, []).append(value)
    return rows


def shown(value) -> str:
    """A value as the page writes it: strings as they are (cut), the rest as JSON writes it."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text[:MAX_TEXT].rstrip() + "…" if len(text) > MAX_TEXT else text


def query_of(page: Page) -> str:
    return parse_qs(urlsplit(page.url).query)["q"][0]


def shown_ids(page: Page) -> list[str]:
    return [meta.split(" · ")[0].removeprefix("id ") for meta in page.locator(".hit .meta").all_inner_texts()]


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_fields_and_filters(page: Page, json_server):
    server = json_server
    page.goto(f"{server.url}/ui?index={server.index}&q=river&page=1")
    first = native(server, "river")
    expect(page.locator(".hit")).to_have_count(len(first["hits"]))
    assert shown_ids(page) == [hit["_id"] for hit in first["hits"]]
    # A hit's title is its document's, else its _id.
    expect(page.locator(".hit .title")).to_have_text(
        [hit["title"] or hit["_id"] for hit in first["hits"]])

    # The first hit's fields, in the order and with the values the API gives.
    hit = first["hits"][0]
    rows = flatten(hit["source"])
    table = page.locator(".hit").first.locator("dl.fields")
    expect(table.locator("dt")).to_have_text(list(rows))
    expect(table.locator("dd")).to_have_text([", ".join(map(shown, values)) for values in rows.values()])
    for i, other in enumerate(first["hits"]):
        other_rows = flatten(other["source"])
        expect(page.locator(".hit").nth(i).locator("dl.fields dd")).to_have_text(
            [", ".join(map(shown, values)) for values in other_rows.values()])
    # Keyword, numeric, date and boolean values are links; text is not.
    for name in ["section", "size", "tags", "published", "in_print", "publisher.name", "publisher.city"]:
        expect(table.locator(f'dd[data-field="{name}"] a')).to_have_count(len(rows[name]))
    for name in ["title", "summary"]:
        expect(table.locator(f'dd[data-field="{name}"] a')).to_have_count(0)

    if path := os.environ.get("APCACHE_SCREENSHOT_JSON"):
        page.screenshot(path=path, full_page=True)

    # A keyword value, by keyboard: focus its link and press Enter.
    section = hit["source"]["section"]
    table.locator('dd[data-field="section"] a').focus()
    page.keyboard.press("Enter")
    filtered_q = f'(river) AND section:"{section}"'
    expect(page).to_have_url(re.compile(r"[?&]page=1(&|$)"))
    expect(page.locator("#q")).to_have_value(filtered_q)
    assert query_of(page) == filtered_q
    filtered = native(server, filtered_q)
    assert filtered["hits"] and filtered["total"]["value"] < first["total"]["value"]
    expect(page.locator(".hit")).to_have_count(len(filtered["hits"]))
    assert shown_ids(page) == [h["_id"] for h in filtered["hits"]]
    expect(page.locator('.hit dd[data-field="section"]')).to_have_text([section] * len(filtered["hits"]))

    # A number, by mouse: the filters pile up.
    size = hit["source"]["size"]
    page.locator(".hit").first.locator('dd[data-field="size"] a').click()
    expect(page.locator("#q")).to_have_value(f'({filtered_q}) AND size:"{size}"')
    expect(page.locator(".hit")).to_have_count(1)

    page.go_back()
    expect(page.locator("#q")).to_have_value(filtered_q)
    expect(page.locator(".hit")).to_have_count(len(filtered["hits"]))
    page.go_back()
    expect(page.locator("#q")).to_have_value("river")
    assert query_of(page) == "river"
    expect(page.locator(".hit")).to_have_count(len(first["hits"]))
    assert shown_ids(page) == [hit["_id"] for hit in first["hits"]]


def test_a_value_with_quote_and_backslash(page: Page, json_server):
    server = json_server
    # Book 7 alone has the size 211, and the tag `say "hi" \ bye`.
    page.goto(f"{server.url}/ui?index={server.index}&q=size%3A211&page=1")
    expect(page.locator(".hit")).to_have_count(1)
    tag = 'say "hi" \\ bye'
    expect(page.locator('.hit dd[data-field="tags"]')).to_have_text(f"river, odd, {tag}")
    page.locator('.hit dd[data-field="tags"] a', has_text="hi").click()
    expected = f"(size:211) AND tags:{quoted(tag)}"
    assert expected == '(size:211) AND tags:"say \\"hi\\" \\\\ bye"'
    expect(page.locator("#q")).to_have_value(expected)
    expect(page.locator("#error")).to_be_hidden()
    expect(page.locator(".hit")).to_have_count(1)
    assert native(server, expected)["hits"][0]["_id"] == "book-7"
    assert shown_ids(page) == ["book-7"]


def test_long_text_is_cut(page: Page, json_server):
    server = json_server
    page.goto(f"{server.url}/ui?index={server.index}&q=size%3A120&page=1")  # book 0
    summary = native(server, "size:120")["hits"][0]["source"]["summary"]
    assert len(summary) > MAX_TEXT
    cell = page.locator('.hit dd[data-field="summary"]')
    expect(cell).to_have_text(summary[:MAX_TEXT].rstrip() + "…")
    expect(page.locator(".hit .title")).to_have_text("River book 0")


def test_untitled_document_shows_its_id(page: Page, json_server):
    server = json_server
    page.goto(f"{server.url}/ui?index={server.index}&q=size%3A159&page=1")  # book 3, untitled
    expect(page.locator(".hit")).to_have_count(1)
    expect(page.locator(".hit .title")).to_have_text("book-3")
    expect(page.locator('.hit dd[data-field="title"]')).to_have_text("")


def test_without_the_mapping_no_filter_links(page: Page, json_server):
    server = json_server
    page.route(re.compile(r".*/_mapping$"), lambda route: route.fulfill(status=500, body="down"))
    page.goto(f"{server.url}/ui?index={server.index}&q=river&page=1")
    expect(page.locator(".hit").first.locator("dl.fields dt").first).to_be_visible()
    rows = flatten(native(server, "river")["hits"][0]["source"])
    expect(page.locator(".hit").first.locator("dl.fields dt")).to_have_text(list(rows))
    expect(page.locator(".hit dl.fields a")).to_have_count(0)
    expect(page.locator("#error")).to_be_hidden()
