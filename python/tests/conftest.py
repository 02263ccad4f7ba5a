"""Fixtures of the Python bindings' tests: the bundled sample indexed by the `apcache` binary
and by `apcache.IndexWriter`, and the binary itself, whose results the bindings must equal;
for apcache.ray's tests (test_ray.py, test_ray_http.py), one local Ray for the whole session,
the sample built as sharded indexes, and the HTTP front beside `apcache serve`.

Environment:
  APCACHE_BIN   the binary (default target/release/apcache, relative to the repository)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

HERE = Path(__file__).resolve().parent
# python/tests -> the repository root.
REPO = HERE.parents[1]
SAMPLE = REPO / "data" / "enwiki-sample.tsv"
TIMEOUT_S = 600


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


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Runs the binary; a failure is the test's failure, with its output."""
    done = subprocess.run(
        [str(apcache_bin()), *args], capture_output=True, text=True, timeout=TIMEOUT_S
    )
    if done.returncode != 0:
        pytest.fail(f"apcache {' '.join(args)} failed ({done.returncode}):\n{done.stderr}", pytrace=False)
    return done


def cli_search(index: Path, query: str, k: int = 10, *extra: str) -> dict:
    """`apcache search --json`'s answer."""
    return json.loads(run_cli("search", str(index), query, "-k", str(k), "--json", *extra).stdout)


def sample_documents():
    """The sample's (title, body) pairs, in input order (the TSV form: title, tab, body)."""
    with open(SAMPLE, encoding="utf-8") as lines:
        for line in lines:
            title, body = line.rstrip("\n").split("\t", 1)
            yield title, body


@pytest.fixture(scope="session")
def cli_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample, indexed by `apcache index` (ids are numbers in input order)."""
    path = tmp_path_factory.mktemp("cli") / "sample"
    run_cli("index", str(SAMPLE), "-o", str(path))
    return path


@pytest.fixture(scope="session")
def python_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample, indexed through `apcache.IndexWriter` with ids "wiki-<number>"."""
    import apcache

    path = tmp_path_factory.mktemp("py") / "sample"
    writer = apcache.IndexWriter(path)
    # A generator: add_many reads one document at a time.
    added = writer.add_many((f"wiki-{i}", title, body) for i, (title, body) in enumerate(sample_documents()))
    assert added == len(writer) > 1000
    report = writer.commit()
    assert report["documents"] == added
    return path


# ---- apcache.ray: one Ray session, shared by its test modules --------------------------------


@pytest.fixture(scope="session")
def local_ray() -> Iterator[None]:
    """A local Ray on two CPUs (the machine's), started once: starting one costs seconds."""
    import ray  # a missing Ray is a failure of the tests that need it, never a skip

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    try:
        from ray import serve

        serve.shutdown()
    finally:
        ray.shutdown()


def numbered_documents() -> Iterator[Tuple[str, str, str]]:
    """The sample as (id, title, body), ids its numbers in input order, as `apcache index`
    gives them: sharded answers compare with the binary's index of the sample and its server."""
    for i, (title, body) in enumerate(sample_documents()):
        yield str(i), title, body


@pytest.fixture(scope="session")
def sharded_paths(local_ray: None, tmp_path_factory: pytest.TempPathFactory) -> Dict[int, Path]:
    """The sample built as 4 shards and as 1 by `apcache.ray.build_sharded`."""
    import apcache.ray as ar

    paths = {}
    for shards in (4, 1):
        path = tmp_path_factory.mktemp("ray") / f"sharded{shards}"
        report = ar.build_sharded(numbered_documents(), path, shards=shards)
        assert report["documents"] == 1744
        assert len(report["shard_reports"]) == shards
        paths[shards] = path
    return paths


@pytest.fixture(scope="session")
def four(sharded_paths: Dict[int, Path]) -> Iterator["apcache.ray.ShardedIndex"]:
    """The 4-shard index served by Ray actors (one query thread each)."""
    import apcache.ray as ar

    with ar.ShardedIndex(sharded_paths[4], index_options={"threads": 1}, num_cpus=0.1) as index:
        yield index


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Answer:
    """An HTTP answer: status, headers (lower-case names) and body bytes."""

    status: int
    headers: Dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


def http(url: str, body: object = None, *, method: Optional[str] = None, headers: Optional[Dict[str, str]] = None) -> Answer:
    """One request: `body` JSON-encoded (bytes as they are); errors are answers too."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    request = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return Answer(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


def start_server(indexes: List[str], *extra: str) -> Tuple[subprocess.Popen, str]:
    """`apcache serve` of `indexes` (`NAME=PATH`) on a free port, once it answers /health."""
    port = free_port()
    server = subprocess.Popen(
        [str(apcache_bin()), "serve", *indexes, "--addr", f"127.0.0.1:{port}", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"apcache serve {' '.join(indexes)} exited with {server.returncode}", pytrace=False)
        try:
            if http(url + "/health").status == 200:
                return server, url
        except OSError:
            time.sleep(0.05)
    server.kill()
    pytest.fail("apcache serve did not answer /health within 60 s", pytrace=False)


@pytest.fixture(scope="session")
def fronts(four: "apcache.ray.ShardedIndex", cli_index: Path) -> Iterator[Tuple[str, str]]:
    """(the sharded front's URL, `apcache serve`'s URL), both serving the sample as "wiki"."""
    import apcache.ray as ar

    sharded = ar.serve_sharded(four, "wiki", port=free_port())
    server, native = start_server([f"wiki={cli_index}"])
    try:
        yield sharded, native
    finally:
        server.terminate()
        server.wait(30)
