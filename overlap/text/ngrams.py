"""Bench n-gram index and a streamed, attributed train scan (issue 5): the public names in one place.

How it works, and where each part lives:

* :mod:`.ngram_hashing` - word ids get random 64-bit values; every window of n ids is hashed from one
  prefix sum, so the cost per token does not grow with n and both n share the prefix.
* :mod:`.ngram_index` - ``BenchIndex``: the bench vocabulary (a train word no bench item uses gets id -1
  and breaks every window), a bit-table pre-filter (~2% of train windows pass) and sorted hash tables.
* :mod:`.ngram_boilerplate` - an n-gram in >= T distinct bench items, or in a background corpus, is
  boilerplate; the bench tokens such n-grams cover are masked as spans and leave the index.
* :mod:`.ngram_build` - ``build_index``: tokenise the bench, hash, find boilerplate, build the tables.
* :mod:`.ngram_match` - candidate windows are verified token by token (a hash collision never flags) and
  must not cross a row; a train match touching a boilerplate span is not a flag, and is reported apart.
* :mod:`.ngram_chunk` - one task of train text: a chunk of rows, or one long row read in byte blocks
  with an n-1 token overlap (memory follows the block size, not the largest item).
* :mod:`.ngram_workers` / :mod:`.ngram_scan` - ``scan``: record batches become bounded tasks that a
  process pool scans; results come back in input order.

Every flag names the bench item and the token spans (train and bench) of its longest shared run.
"""

from __future__ import annotations

from .memory import release_memory
from .ngram_build import DEFAULT_BOILERPLATE_THRESHOLD, DEFAULT_NS, build_index
from .ngram_chunk import BLOCK_BYTES, scan_chunk, scan_long_row
from .ngram_hashing import HASH_SEED
from .ngram_index import BenchIndex, NgramTable
from .ngram_scan import CHUNK_BYTES, CHUNK_ROWS, LONG_ROW_BYTES, ScanResult, available_workers, scan

__all__ = [
    "BLOCK_BYTES",
    "CHUNK_BYTES",
    "CHUNK_ROWS",
    "DEFAULT_BOILERPLATE_THRESHOLD",
    "DEFAULT_NS",
    "HASH_SEED",
    "LONG_ROW_BYTES",
    "BenchIndex",
    "NgramTable",
    "ScanResult",
    "available_workers",
    "build_index",
    "release_memory",
    "scan",
    "scan_chunk",
    "scan_long_row",
]
