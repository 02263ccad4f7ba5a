"""The search page served by `apcache serve`, in headless Chromium, against the real index.

test_ui_static.py covers the page's corners against a stub; this test walks one visit through
the real server: redirect, search, paging, a parse error, back. With APCACHE_SCREENSHOT set, it
saves a full-page screenshot of the first results page there (the project keeps docs/ui.png).
"""

from __future__ import annotations

import os
import re

import requests
from playwright.sync_api import Page, expect


def native(server, **params) -> dict:
    response = requests.get(f"{server.url}/indexes/{server.index}/search", params=params, timeout=30)
    return response.json()


def shown_ids(page: Page) -> list[str]:
    return [meta.split(" · ")[0].removeprefix("id ") for meta in page.locator(".hit .meta").all_inner_texts()]


def test_a_visit(page: Page, server):
    page.goto(f"{server.url}/")
    expect(page).to_have_url(re.compile(rf"^{re.escape(server.url)}/ui(\?.*)?$"))
    expect(page.locator("#q")).to_be_focused()

    page.keyboard.type("river")
    page.keyboard.press("Enter")
    expect(page.locator(".hit").first).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]q=river(&|$)"))
    first = native(server, q="river", k=10, offset=0)
    expect(page.locator(".hit")).to_have_count(len(first["hits"]))
    assert shown_ids(page) == [hit["id"] for hit in first["hits"]]
    expect(page.locator(".hit .title").first).to_have_text(first["hits"][0]["title"])
    expect(page.locator("#total")).to_have_attribute("data-value", str(first["total"]["value"]))
    expect(page.locator("#total")).to_contain_text(re.compile(r"\d+ results"))
    expect(page.locator("#took")).to_have_text(re.compile(r"^in [\d.,]+ ms$"))
    expect(page.locator("#error")).to_be_hidden()
    # Tab-separated documents have no table of fields.
    expect(page.locator(".hit .fields")).to_have_count(0)

    if path := os.environ.get("APCACHE_SCREENSHOT"):
        page.screenshot(path=path, full_page=True)

    page.click("#next")
    expect(page).to_have_url(re.compile(r"[?&]page=2(&|$)"))
    second = native(server, q="river", k=10, offset=10)
    expect(page.locator(".hit .title").first).to_have_text(second["hits"][0]["title"])
    assert shown_ids(page) == [hit["id"] for hit in second["hits"]]
    assert not set(shown_ids(page)) & {hit["id"] for hit in first["hits"]}

    page.fill("#q", "(unbalanced")
    page.press("#q", "Enter")
    reason = native(server, q="(unbalanced")["error"]["reason"]
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#error")).to_contain_text(reason)
    expect(page.locator("#error pre")).to_have_text("(unbalanced\n^")
    expect(page.locator(".hit")).to_have_count(0)

    page.go_back()
    expect(page).to_have_url(re.compile(r"[?&]q=river&page=2(&|$)"))
    expect(page.locator("#error")).to_be_hidden()
    expect(page.locator("#q")).to_have_value("river")
    expect(page.locator(".hit .title").first).to_have_text(second["hits"][0]["title"])
