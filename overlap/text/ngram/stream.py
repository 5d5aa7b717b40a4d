"""The streamed train scan: record batches -> bounded tasks -> a pool of worker processes -> one result.

The train side streams in chunks (rows of bounded total bytes) through a process pool; a row larger than
``long_row_bytes`` is a task of its own, scanned in blocks. Results are collected in input order.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, islice
from multiprocessing import get_context

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..cell_checks import CellCounts, text_cells
from ..string_arrays import _buffers, to_string_array
from .index import BenchIndex
from .memory import release_memory
from .workers import dump_index, init_worker, run_task, scan_task

# chunking of the train side (bytes of text per task; rows per task)
CHUNK_BYTES = 4 << 20
CHUNK_ROWS = 4096
LONG_ROW_BYTES = 8 << 20  # a row above this is scanned in blocks

FLAG_KEYS = ["train_row", "train_id", "n", "item", "shared", "train_start", "train_end", "bench_start", "bench_end"]
BOILERPLATE_KEYS = ["train_row", "train_id", "n", "hits", "train_start", "train_end"]


@dataclass
class ScanResult:
    """Raw scan output: flag rows, boilerplate rows, pair runs and counts (indexes, not ids)."""

    flags: dict[str, np.ndarray]  # train_row, train_id, n, item, shared, train_start/end, bench_start/end
    boilerplate: dict[str, np.ndarray]  # train_row, train_id, n, hits, train_start, train_end
    runs: dict[tuple[str, int], tuple[int, int, int]]  # (train_id, bench item) -> (len, train pos, bench pos)
    counts: dict
    short: dict[int, int]  # train items (with text) shorter than n tokens
    pair_seen: set[str] = field(default_factory=set)  # train ids of pairs that the stream held
    null_ids: set[str] = field(default_factory=set)  # ... of those, the ones with no (valid) text


def scan(
    index: BenchIndex,
    batches: Iterable,
    *,
    id_col: str = "item_id",
    text_col: str = "text",
    pairs: dict[str, list[int]] | None = None,
    workers: int = 2,
    chunk_bytes: int = CHUNK_BYTES,
    chunk_rows: int = CHUNK_ROWS,
    long_row_bytes: int = LONG_ROW_BYTES,
    progress=None,
    cells: CellCounts | None = None,
    pool_after_bytes: int = 0,
) -> ScanResult:
    """Stream train record batches through the index. ``pairs``: train id -> bench item indexes.

    ``cells`` counts the train cells that are not text (skipped) or over the field cap (truncated).
    ``pool_after_bytes`` (with ``workers`` > 1): scan the first tasks in this process and start the pool
    only once the stream went past this many bytes of text (a stream of unknown size: a short one never
    pays the pool's start-up)."""
    release_memory()  # e.g. what building the index left on the heap
    source = _TaskSource(batches, id_col, text_col, pairs or {}, workers > 1, chunk_bytes, chunk_rows,
                         long_row_bytes, cells)
    collector = _Collector(index.ns, progress)
    tasks = iter(source)
    if workers > 1 and pool_after_bytes > 0:
        for task, ids, base in tasks:
            collector.add(scan_task(index, task), ids, base, _has_text(task[1]))
            if collector.counts["bytes"] >= pool_after_bytes:
                break
    head = list(islice(tasks, 2))
    if workers > 1 and len(head) == 2:  # a pool only pays off from two tasks on
        _scan_in_pool(index, chain(head, tasks), workers, collector)
    else:
        for task, ids, base in chain(head, tasks):
            collector.add(scan_task(index, task), ids, base, _has_text(task[1]))
    return collector.result(source)


def _scan_in_pool(index: BenchIndex, tasks: Iterator, workers: int, collector: _Collector) -> None:
    ctx = get_context("spawn")  # not fork: the parent may hold Arrow / BLAS threads
    with tempfile.TemporaryDirectory(prefix="overlap-ngram-") as tmp, ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=init_worker, initargs=(dump_index(index, tmp),)
    ) as pool:
        inflight: deque = deque()

        def drain(keep: int) -> None:
            while len(inflight) > keep:
                fut, fids, fbase, has_text = inflight.popleft()
                collector.add(fut.result(), fids, fbase, has_text)

        for task, ids, base in tasks:
            if task[0] == "long":
                # a very long item is scanned here in blocks: shipping it to a worker would copy it
                # whole a few times, and results stay in input order
                drain(0)
                collector.add(scan_task(index, task), ids, base, _has_text(task[1]))
                continue
            inflight.append((pool.submit(run_task, task), ids, base, _has_text(task[1])))
            drain(2 * workers - 1)
        drain(0)


class _TaskSource:
    """Iterates (task, the task's train ids, global row of its first row), batch after batch.

    Notes on the way which train ids of ``pairs`` the stream held, which of those had no text, and how
    many texts were not valid UTF-8.
    """

    def __init__(self, batches: Iterable, id_col: str, text_col: str, pairs: dict[str, list[int]],
                 compact: bool, chunk_bytes: int, chunk_rows: int, long_row_bytes: int,
                 cells: CellCounts | None = None):
        self.batches, self.id_col, self.text_col, self.pairs = batches, id_col, text_col, pairs
        self.cells = cells
        self.compact = compact  # tasks go to other processes: slices pickle their whole buffer
        self.limits = (chunk_bytes, chunk_rows, long_row_bytes)
        self.pair_ids = pa.array(sorted(pairs), pa.string()) if pairs else None
        self.pair_seen: set[str] = set()
        self.null_ids: set[str] = set()
        self.non_utf8 = 0

    def __iter__(self) -> Iterator[tuple[tuple, pa.Array, int]]:
        row_base = 0
        for batch in self.batches:
            ids, texts, bad = _batch_columns(batch, self.id_col, self.text_col, self.cells)
            self.non_utf8 += bad
            if self.pair_ids is not None:
                in_pairs = np.flatnonzero(pc.is_in(ids, value_set=self.pair_ids).to_numpy(zero_copy_only=False))
            else:
                in_pairs = np.zeros(0, np.int64)
            for kind, s, e in _tasks_for_batch(texts, *self.limits):
                sub = texts.slice(s, e - s) if (s, e) != (0, len(texts)) else texts
                if self.compact and kind == "chunk" and (sub is not texts or texts.offset):
                    sub = pa.concat_arrays([sub])
                task_pairs = self._task_pairs(ids, texts, in_pairs[(in_pairs >= s) & (in_pairs < e)], s)
                yield (kind, sub, task_pairs), ids.slice(s, e - s), row_base + s
            row_base += len(texts)

    def _task_pairs(self, ids: pa.Array, texts: pa.Array, rows: np.ndarray, start: int) -> dict[int, list[int]]:
        """Row in the task -> bench items it is paired with, for the rows of the batch in ``pairs``."""
        task_pairs = {}
        for r in rows.tolist():
            tid = ids[r].as_py()
            self.pair_seen.add(tid)
            if not texts[r].is_valid:
                self.null_ids.add(tid)
            task_pairs[r - start] = self.pairs[tid]
        return task_pairs


class _Collector:
    """Adds up the task results, in input order, into the columns and counts of a ScanResult."""

    def __init__(self, ns: tuple[int, ...], progress) -> None:
        self.progress = progress
        self.flags: list[dict] = []
        self.bps: list[dict] = []
        self.runs: dict = {}
        # no_id: rows without an id, scanned but never flagged (a flag names its row by its id)
        self.counts = {"items": 0, "null": 0, "non_utf8": 0, "empty": 0, "bytes": 0, "tokens": 0, "no_id": 0}
        self.short = {n: 0 for n in ns}

    def add(self, result: dict, ids: pa.Array, base: int, has_text: np.ndarray | None) -> None:
        """One task's result; ``ids``: its train ids; ``base``: global row of its first row."""
        c = result["counts"]
        self.counts["items"] += c["rows"]
        self.counts["no_id"] += ids.null_count
        self.counts["null"] += c["null"]
        self.counts["bytes"] += c["bytes"]
        tpr = result["tokens_per_row"]
        self.counts["tokens"] += int(tpr.sum())
        valid = tpr if has_text is None else tpr[has_text]
        self.counts["empty"] += int((valid == 0).sum())
        for n in self.short:
            self.short[n] += int((valid < n).sum())
        if "row" in result:
            r = result["row"]
            self.flags.append(_named({
                "train_row": base + r,
                "train_id": ids.take(pa.array(r)),
                "n": result["n"], "item": result["item"], "shared": result["shared"],
                "train_start": result["train_start"], "train_end": result["train_end"],
                "bench_start": result["bench_start"], "bench_end": result["bench_end"],
            }))
        if "bp_row" in result:
            r = result["bp_row"]
            self.bps.append(_named({
                "train_row": base + r,
                "train_id": ids.take(pa.array(r)),
                "n": result["bp_n"], "hits": result["bp_hits"],
                "train_start": result["bp_start"], "train_end": result["bp_end"],
            }))
        for (r, it), v in result.get("runs", {}).items():
            if ids[int(r)].is_valid:
                self.runs[(ids[int(r)].as_py(), it)] = v
        if self.progress is not None:
            self.progress(c["rows"], c["bytes"])

    def result(self, source: _TaskSource) -> ScanResult:
        self.counts["non_utf8"] = source.non_utf8
        return ScanResult(flags=_concat(self.flags, FLAG_KEYS), boilerplate=_concat(self.bps, BOILERPLATE_KEYS),
                          runs=self.runs, counts=self.counts, short=self.short, pair_seen=source.pair_seen,
                          null_ids=source.null_ids)


def _named(part: dict) -> dict:
    """A task's flags (or boilerplate hits) of rows that have an id: a flag names its row by its id, and a row
    without one is counted (`counts["no_id"]`), never flagged under an empty name."""
    named = part["train_id"].is_valid().to_numpy(zero_copy_only=False)
    part["train_id"] = part["train_id"].to_numpy(zero_copy_only=False)
    return part if named.all() else {k: np.asarray(v)[named] for k, v in part.items()}


def _concat(parts: list[dict], keys: list[str]) -> dict[str, np.ndarray]:
    if not parts:
        return {k: np.zeros(0, dtype=object if k == "train_id" else np.int64) for k in keys}
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


def _batch_columns(batch, id_col: str, text_col: str, cells: CellCounts | None = None
                   ) -> tuple[pa.Array, pa.Array, int]:
    names = batch.schema.names
    for col in (id_col, text_col):
        if col not in names:
            raise KeyError(col)
    ids = batch.column(names.index(id_col))
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    ids = ids.cast(pa.string()) if not pa.types.is_string(ids.type) else ids
    texts, bad = to_string_array(text_cells(batch.column(names.index(text_col)), ids, cells))
    return ids, texts, bad


def _tasks_for_batch(texts: pa.Array, max_bytes: int, max_rows: int, long_bytes: int) -> list[tuple[str, int, int]]:
    """Split a batch into (kind, start, stop) row ranges of bounded bytes; long rows alone."""
    n = len(texts)
    if n == 0:
        return []
    offsets = _buffers(texts)[1] if not pa.types.is_null(texts.type) else np.zeros(n + 1, np.int64)
    sizes = np.diff(offsets)
    cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=cum[1:])
    long_rows = set(np.flatnonzero(sizes > long_bytes).tolist())
    tasks = []
    s = 0
    while s < n:
        if s in long_rows:
            tasks.append(("long", s, s + 1))
            s += 1
            continue
        # as many rows as fit in max_bytes (at least one), at most max_rows, never a long row
        e = int(np.searchsorted(cum, cum[s] + max_bytes, side="right")) - 1
        e = max(s + 1, min(e, s + max_rows, n))
        nxt_long = [r for r in range(s, e) if r in long_rows] if long_rows else []
        if nxt_long:
            e = nxt_long[0]
        tasks.append(("chunk", s, e))
        s = e
    return tasks


def _has_text(texts: pa.Array) -> np.ndarray | None:
    """Which rows of a task hold text (None: all of them)."""
    if texts.null_count == 0:
        return None
    return ~np.asarray(texts.is_null().to_numpy(zero_copy_only=False))


def available_workers(requested: int | None) -> int:
    """Worker processes for a scan: the number asked for, or (None) as many as cores, at most 2."""
    if requested is None:
        return max(1, min(2, os.cpu_count() or 1))
    return max(1, int(requested))
