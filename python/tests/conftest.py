"""Fixtures of the Python bindings' tests: the bundled sample indexed by the `apcache` binary
and by `apcache.IndexWriter`, and the binary itself, whose results the bindings must equal.

Environment:
  APCACHE_BIN   the binary (default target/release/apcache, relative to the repository)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

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
