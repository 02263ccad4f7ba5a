"""Fixtures for the tests of `apcache serve` that run against a live server.

`server` builds an index of the bundled Wikipedia sample and starts the binary on a free
loopback port, once per session; its teardown is itself a test: SIGTERM must stop the server
with exit status 0 within 10 s. `json_server` does the same for a small index of JSON documents
under a mapping (JSON_DOCS, JSON_MAPPING), served by a second server. `browser` is headless Chromium under Playwright, taken from
the system (Debian's package), never downloaded.

Environment:
  APCACHE_BIN         the binary (default target/release/apcache, relative to the repository)
  CHROMIUM            the browser (default /usr/bin/chromium)
  APCACHE_SCREENSHOT  where test_ui.py saves a screenshot of a results page (unset: none)
  APCACHE_SCREENSHOT_JSON  where test_ui_json.py saves one of JSON documents (unset: none)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

HERE = Path(__file__).resolve().parent
# crates/server/tests/python -> the repository root.
REPO = HERE.parents[3]
SAMPLE = REPO / "data" / "enwiki-sample.tsv"
INDEX_NAME = "sample"
JSON_INDEX_NAME = "shelf"

HEALTH_TIMEOUT_S = 60
SHUTDOWN_TIMEOUT_S = 10
INDEX_TIMEOUT_S = 600


@dataclass(frozen=True)
class Server:
    """A running `apcache serve`."""

    url: str
    """The base URL, without a trailing slash: http://127.0.0.1:PORT."""
    index: str
    """The name the sample index is served under."""


def apcache_bin() -> Path:
    path = Path(os.environ.get("APCACHE_BIN", "target/release/apcache"))
    if not path.is_absolute():
        path = REPO / path
    if not path.is_file():
        pytest.fail(
            f"no apcache binary at {path}: build it (cargo build --release -p apcache-cli) "
            "or point APCACHE_BIN at one",
            pytrace=False,
        )
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tail(path: Path, limit: int = 8000) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return text[-limit:] or "(nothing)"


# The JSON documents of `json_server`: 20 books in 4 sections, with a text summary, a long size,
# a keyword array, a date, a boolean and a nested object. Book 0 has a long summary, book 3
# no title (its hit is titled by its _id), book 7 a value with a quote and a backslash.
SECTIONS = ["poetry", "history", "science", "travel"]
JSON_MAPPING = {
    "properties": {
        "title": {"type": "text", "fields": {"keyword": {"type": "keyword"}}},
        "summary": {"type": "text"},
        "section": {"type": "keyword"},
        "size": {"type": "long"},
        "tags": {"type": "keyword"},
        "published": {"type": "date"},
        "in_print": {"type": "boolean"},
        "publisher": {"properties": {"name": {"type": "keyword"}, "city": {"type": "keyword"}}},
    }
}


def json_doc(i: int) -> dict:
    summary = f"A book about the river, number {i}. " + (
        "It follows the river from its source to the sea, through every town. " * 12 if i == 0 else ""
    )
    return {
        "_id": f"book-{i}",
        "title": "" if i == 3 else f"River book {i}",
        "summary": summary,
        "section": SECTIONS[i % 4],
        "size": 120 + 13 * i,
        "tags": ["river", "odd" if i % 2 else "even"] + (['say "hi" \\ bye'] if i == 7 else []),
        "published": f"2021-03-{i + 1:02d}",
        "in_print": i % 3 == 0,
        "publisher": {"name": f"Press {i % 3}", "city": "Paris" if i % 2 else "Lyon"},
    }


JSON_DOCS = [json_doc(i) for i in range(20)]


def build_index(binary: Path, inputs: list[Path], index_dir: Path, *extra: str) -> None:
    built = subprocess.run(
        [str(binary), "index", *map(str, inputs), "-o", str(index_dir), "--force", *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=INDEX_TIMEOUT_S,
    )
    if built.returncode != 0:
        pytest.fail(
            f"apcache index failed ({built.returncode}):\n{built.stdout}\n{built.stderr}",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory):
    binary = apcache_bin()
    work = tmp_path_factory.mktemp("apcache")
    index_dir = work / INDEX_NAME
    build_index(binary, [SAMPLE], index_dir)
    with serving(binary, work, f"{INDEX_NAME}={index_dir}") as url:
        yield Server(url=url, index=INDEX_NAME)


@pytest.fixture(scope="session")
def json_server(tmp_path_factory: pytest.TempPathFactory):
    """A second server, of the index JSON_INDEX_NAME of JSON_DOCS under JSON_MAPPING."""
    binary = apcache_bin()
    work = tmp_path_factory.mktemp("apcache-json")
    docs, mapping = work / "docs.jsonl", work / "mapping.json"
    docs.write_text("".join(json.dumps(doc) + "\n" for doc in JSON_DOCS))
    mapping.write_text(json.dumps(JSON_MAPPING))
    index_dir = work / JSON_INDEX_NAME
    build_index(binary, [docs], index_dir, "--mapping", str(mapping))
    with serving(binary, work, f"{JSON_INDEX_NAME}={index_dir}") as url:
        yield Server(url=url, index=JSON_INDEX_NAME)


@contextmanager
def serving(binary: Path, work: Path, *indexes: str):
    """`apcache serve INDEXES` on a free loopback port, healthy: its URL. On exit, SIGTERM must
    stop it with status 0 within SHUTDOWN_TIMEOUT_S (a failed test otherwise)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    stdout_path, stderr_path = work / "serve.stdout", work / "serve.stderr"
    with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(
            [str(binary), "serve", *indexes, "--addr", f"127.0.0.1:{port}"],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
    try:
        wait_healthy(process, url, stderr_path)
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait()
        raise

    try:
        yield url
    except BaseException:
        if process.poll() is None:
            process.kill()
            process.wait()
        raise

    if process.poll() is not None:
        pytest.fail(
            f"the server died during the tests with status {process.returncode}; "
            f"stderr:\n{tail(stderr_path)}",
            pytrace=False,
        )
    process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(timeout=SHUTDOWN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(
            f"the server did not stop within {SHUTDOWN_TIMEOUT_S} s of SIGTERM; "
            f"stderr:\n{tail(stderr_path)}",
            pytrace=False,
        )
    assert status == 0, (
        f"SIGTERM must stop the server cleanly, but it exited with {status}; "
        f"stderr:\n{tail(stderr_path)}"
    )


def wait_healthy(process: subprocess.Popen, url: str, stderr_path: Path) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    last = "no answer yet"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"apcache serve exited with {process.returncode} before it was healthy; "
                f"stderr:\n{tail(stderr_path)}",
                pytrace=False,
            )
        try:
            response = requests.get(f"{url}/health", timeout=2)
            if response.status_code == 200:
                return
            last = f"{response.status_code} {response.text[:200]}"
        except requests.RequestException as error:
            last = str(error)
        time.sleep(0.1)
    process.kill()
    process.wait()
    pytest.fail(
        f"GET /health did not answer 200 within {HEALTH_TIMEOUT_S} s (last: {last}); "
        f"stderr:\n{tail(stderr_path)}",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def browser():
    # Imported here so that the tests without a browser run without Playwright installed.
    from playwright.sync_api import sync_playwright

    executable = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(executable).exists():
        pytest.fail(
            f"no Chromium at {executable}: apt-get install chromium, or set CHROMIUM",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A fresh browser context (no history, no cache) for each test."""
    context = browser.new_context(viewport={"width": 1100, "height": 900}, locale="en-US")
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"uncaught JavaScript errors: {errors}"
