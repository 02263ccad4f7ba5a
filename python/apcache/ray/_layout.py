"""How a sharded index lies on disk, and which shard a document belongs to.

A sharded index is a directory holding one ordinary apcache index per shard (``shard-0``,
``shard-1``, ...) and ``shards.json``, which names them. Beside each shard's index,
``input_order.u64`` holds, for each of the shard's documents in order, its place in the
input of the whole build: the coordinator breaks ties in score by it, so that a sharded
ranking equals one index's, whose ties go by input order.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import List, Union

from .._apcache import IndexError as ApcacheIndexError

LAYOUT_FILE = "shards.json"
"""The sharded index's description, in its directory."""

ORDER_FILE = "input_order.u64"
"""Each of a shard's documents' place in the whole input (u64, little-endian, in order)."""

HASH_NAME = "blake2b-64"
"""The shard hash, as `shards.json` names it."""

PathLike = Union[str, "os.PathLike[str]"]


def shard_of(doc_id: str, shards: int) -> int:
    """The shard of the document with external id `doc_id`, among `shards`.

    The first 8 bytes of the id's BLAKE2b digest (UTF-8), little-endian, modulo `shards`:
    the same in every process and every Python (unlike the builtin ``hash``, salted per
    process), so a document's shard can be found again from its id alone.
    """
    if shards < 1:
        raise ValueError("shards must be at least 1")
    digest = hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % shards


def shard_dir(path: PathLike, shard: int) -> Path:
    """The directory of shard `shard`'s index."""
    return Path(path) / f"shard-{shard}"


@dataclass(frozen=True)
class Layout:
    """What `shards.json` says: the number of shards and their documents."""

    path: Path
    shards: int
    documents: List[int]
    hash: str = HASH_NAME

    @property
    def dirs(self) -> List[Path]:
        """Each shard's index directory, in shard order."""
        return [shard_dir(self.path, i) for i in range(self.shards)]

    def write(self) -> None:
        """Writes `shards.json` (atomically: a temporary file renamed over it)."""
        body = {"shards": self.shards, "hash": self.hash, "documents": self.documents}
        tmp = self.path / (LAYOUT_FILE + ".tmp")
        tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path / LAYOUT_FILE)

    @staticmethod
    def read(path: PathLike) -> "Layout":
        """The layout of the sharded index at `path` (apcache.IndexError if there is none)."""
        path = Path(path)
        try:
            body = json.loads((path / LAYOUT_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ApcacheIndexError(
                f"no sharded index at {path}: it has no {LAYOUT_FILE} "
                "(build one with apcache.ray.build_sharded)"
            ) from None
        except (OSError, ValueError) as error:
            raise ApcacheIndexError(f"cannot read {path / LAYOUT_FILE}: {error}") from None
        if body.get("hash") != HASH_NAME:
            raise ApcacheIndexError(
                f"{path / LAYOUT_FILE}: shard hash {body.get('hash')!r}, expected {HASH_NAME!r}"
            )
        return Layout(path=path, shards=int(body["shards"]), documents=list(body["documents"]))


def write_order(directory: Path, order: "array[int]") -> None:
    """Writes a shard's input order beside its index."""
    if array("Q").itemsize != 8:  # pragma: no cover - every supported platform
        raise RuntimeError("the input order needs 8-byte unsigned integers")
    with open(directory / ORDER_FILE, "wb") as out:
        out.write(order.tobytes() if sys.byteorder == "little" else _swapped(order).tobytes())


def read_order(directory: Path) -> "array[int]":
    """A shard's input order (an empty array when the shard has no such file)."""
    order = array("Q")
    try:
        order.frombytes((directory / ORDER_FILE).read_bytes())
    except FileNotFoundError:
        return order
    return order if sys.byteorder == "little" else _swapped(order)


def _swapped(order: "array[int]") -> "array[int]":
    copy = array("Q", order)
    copy.byteswap()
    return copy
