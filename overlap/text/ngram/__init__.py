"""Bench n-gram index and a streamed, attributed train scan: the public names in one place.

How it works, and where each part lives:

* :mod:`.hashing` - word ids get random 64-bit values; every window of n ids is hashed from one
  prefix sum, so the cost per token does not grow with n and both n share the prefix.
* :mod:`.index` - ``BenchIndex``: the bench vocabulary (a train word no bench item uses gets id -1
  and breaks every window), a blocked Bloom pre-filter (~0.3% of train windows pass) and sorted hash tables.
* :mod:`.boilerplate` - an n-gram in >= T distinct bench items, or in a background corpus, is
  boilerplate; the bench tokens such n-grams cover are masked as spans and leave the index.
* :mod:`.build` - ``build_index``: tokenise the bench, hash, find boilerplate, build the tables.
* :mod:`.match` - candidate windows are verified token by token (a hash collision never flags) and
  must not cross a row; a train match touching a boilerplate span is not a flag, and is reported apart.
* :mod:`.jit` / :mod:`.kernels` / :mod:`.kernels_tokens` - the compiled path (numba): tokens and values,
  candidate windows, their word-by-word check, pair runs; the numpy path when numba cannot load.
* :mod:`.chunk` - one task of train text: a chunk of rows, or one long row read in byte blocks
  with an n-1 token overlap (memory follows the block size, not the largest item).
* :mod:`.workers` / :mod:`.stream` - ``scan``: record batches become bounded tasks that a
  process pool scans; results come back in input order.

Every flag names the bench item and the token spans (train and bench) of its longest shared run.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Public name -> the submodule that defines it. The names load on first use, so a spawned scan worker
# (which imports `overlap.text.ngram.workers`, and so this package first) does not load the streamed
# scan and, through it, pandas.
_WHERE = {
    "BLOCK_BYTES": "chunk",
    "CHUNK_BYTES": "stream",
    "CHUNK_ROWS": "stream",
    "DEFAULT_BOILERPLATE_THRESHOLD": "build",
    "DEFAULT_NS": "build",
    "HASH_SEED": "hashing",
    "LONG_ROW_BYTES": "stream",
    "BenchIndex": "index",
    "NgramTable": "index",
    "ScanResult": "stream",
    "available_workers": "stream",
    "build_index": "build",
    "release_memory": "memory",
    "scan": "stream",
    "scan_chunk": "chunk",
    "scan_long_row": "chunk",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
