"""The scan's worker processes: each loads the bench index once, then scans the tasks it is sent.

A task is ``(kind, texts, pairs)``: kind ``"chunk"`` (rows of bounded total bytes; ``pairs`` maps a row
to bench item indexes) or ``"long"`` (one row read in blocks; ``pairs`` maps row 0 to its items).
"""

from __future__ import annotations

import os
import pickle

from .chunk import scan_chunk, scan_long_row
from .index import BenchIndex
from .memory import release_memory

_WORKER_INDEX: BenchIndex | None = None


def scan_task(index: BenchIndex, task: tuple) -> dict:
    """Scan one task, in this process."""
    kind, texts, pairs = task
    if kind == "long":
        return scan_long_row(index, texts, pairs.get(0) if pairs else None)
    return scan_chunk(index, texts, pairs)


def dump_index(index: BenchIndex, folder: str) -> str:
    """Write the index where the workers will load it; returns the file path."""
    path = os.path.join(folder, "index.pickle")
    with open(path, "wb") as fh:
        pickle.dump(index, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def init_worker(path: str) -> None:
    """Load the index from a file: every worker starts at once (a pipe would feed them one by one)."""
    global _WORKER_INDEX
    with open(path, "rb") as fh:
        _WORKER_INDEX = pickle.load(fh)
    _ = _WORKER_INDEX.prefilter


def run_task(task: tuple) -> dict:
    """Scan one task in a worker, with the index ``init_worker`` loaded."""
    assert _WORKER_INDEX is not None
    out = scan_task(_WORKER_INDEX, task)
    if task[0] == "long":
        release_memory()
    return out
