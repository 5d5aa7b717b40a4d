"""One batch of a training side against the benchmarks' keys: what of it can be in a pair, and the facts of
its rows that the whole-side counts need (kept compact, never as pandas rows).

`BatchJoin.process(items, keys)` takes one batch as `overlap.sources.generic.iter_key_batches` yields it
(Arrow: items with item_id … file, file_row, row; keys row, kind, value, raw, rows counted across files) and
returns a `BatchPart`. The keys are the ones `read_generic` would give the batch's rows: OSS-Fuzz values made
canonical with the old→new mapping (loaded at the first OSS-Fuzz key when none was given), keys of rows
without an id dropped, a key repeated within a row kept once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..join import TASK_KINDS
from ..model import KEY_KINDS

KIND_CODES = pa.array(KEY_KINDS, pa.string())
# Bits of `present`: which item columns a row has a value in (a column no item has is left out of Items).
PRESENT_COLUMNS = ("project", "repo", "pr", "base_commit")

FACT_SCHEMA = pa.schema([("item_id", pa.string()), ("row", pa.int64()), ("project", pa.string()),
                         ("present", pa.uint8()), ("kinds", pa.uint64())])
TASK_KEY_SCHEMA = pa.schema([("kind", pa.string()), ("value", pa.string()), ("raw", pa.string()),
                             ("item_id", pa.string()), ("row", pa.int64()), ("project", pa.string())])


@dataclass
class BenchKeys:
    """What a training key must have to be in a pair with some benchmark: its canonical value among the
    benchmarks' values (the normalised join), or for a task kind its raw value among theirs (the plain join)."""

    values: pa.Array
    raws: pa.Array

    @classmethod
    def of(cls, benches) -> BenchKeys:
        frames = [b.keys for b in benches]
        keys = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["kind", "value", "raw"])
        task = keys[keys["kind"].isin(TASK_KINDS)]
        return cls(values=pa.array(sorted(set(keys["value"].dropna().astype(str))), pa.string()),
                   raws=pa.array(sorted(set(task["raw"].dropna().astype(str))), pa.string()))


@dataclass
class BatchPart:
    rows: int
    missing: int  # rows without an id
    first_missing: tuple[str, int] | None  # (file, file_row) of the first of them
    facts: pa.Table  # FACT_SCHEMA, one row per row with an id
    task_keys: pa.Table  # TASK_KEY_SCHEMA, the task-kind keys of rows with an id
    ossfuzz: pa.Table  # row, item_id, value, raw of the OSS-Fuzz keys, in scan order
    matched_items: pa.Table  # items of the rows that have a key some benchmark has
    matched_keys: pa.Table  # every key of those rows


class BatchJoin:
    """Processes batches against one set of bench keys; `mapping_for()` gives the OSS-Fuzz mapping when the
    first OSS-Fuzz key is met (the caller loads it then, as a compare loads it only when a side needs it)."""

    def __init__(self, bench: BenchKeys, mapping: Any = None, mapping_for: Callable[[], Any] | None = None):
        self.bench = bench
        self.mapping = mapping
        self._mapping_for = mapping_for
        self._old = self._new = None

    def _canonical(self, raw: pa.Array) -> pa.Array:
        """OSS-Fuzz raw ids as canonical values (`overlap.ids.ossfuzz.canonicalize_keys`, column-wise)."""
        if self.mapping is None and self._mapping_for is not None:
            self.mapping = self._mapping_for()
        if self.mapping is None:
            return raw
        if self._old is None:
            pairs = sorted(self.mapping.old_to_new.items())
            self._old = pa.array([int(o) for o, _ in pairs], pa.int64())
            self._new = pa.array([int(n) for _, n in pairs], pa.int64())
        numbers = pc.cast(raw, pa.int64())
        where = pc.index_in(numbers, value_set=self._old)
        return pc.cast(pc.coalesce(pc.take(self._new, where), numbers), pa.string())

    def process(self, items: pa.Table, keys: pa.Table) -> BatchPart:
        n = items.num_rows
        base = items.column("row")[0].as_py() if n else 0
        ids = items.column("item_id").combine_chunks()
        valid = pc.is_valid(ids).to_numpy(zero_copy_only=False)
        missing = int(n - valid.sum())
        first_missing = None
        if missing:
            at = int(np.argmin(valid))
            first_missing = (items.column("file")[at].as_py(), int(items.column("file_row")[at].as_py()))
        keys = keys.combine_chunks()
        local = keys.column("row").to_numpy() - base
        if missing and len(local):
            keep = valid[local]
            keys, local = keys.filter(pa.array(keep)), local[keep]
        kinds = keys.column("kind")
        oss = pc.equal(kinds, "ossfuzz")
        if len(local) and pc.any(oss).as_py():
            value = pc.if_else(oss, self._canonical(pc.if_else(oss, keys.column("raw"), "0")), keys.column("value"))
            keys = keys.set_column(2, "value", value)
        code = pc.fill_null(pc.index_in(kinds, value_set=KIND_CODES), len(KEY_KINDS)).to_numpy().astype(np.int64)
        keys, local, code = _first_copies(keys, local, code)
        facts = _facts(items, ids, valid, local, code)
        item_of_key = ids.take(pa.array(local, pa.int64()))
        task = pc.is_in(keys.column("kind"), value_set=pa.array(TASK_KINDS, pa.string()))
        task_keys = pa.table({"kind": keys.column("kind"), "value": keys.column("value"), "raw": keys.column("raw"),
                              "item_id": item_of_key, "row": keys.column("row"),
                              "project": items.column("project").take(pa.array(local, pa.int64()))},
                             schema=TASK_KEY_SCHEMA).filter(task)
        oss = pc.equal(keys.column("kind"), "ossfuzz")
        ossfuzz = pa.table({"row": keys.column("row"), "item_id": item_of_key, "value": keys.column("value"),
                            "raw": keys.column("raw")}).filter(oss)
        hit = pc.or_(pc.is_in(keys.column("value"), value_set=self.bench.values),
                     pc.and_(task, pc.is_in(keys.column("raw"), value_set=self.bench.raws)))
        hit = pc.fill_null(hit, False).to_numpy(zero_copy_only=False)
        matched_rows = np.unique(local[hit])
        matched_items = items.take(pa.array(matched_rows, pa.int64()))
        matched_keys = keys.filter(pa.array(np.isin(local, matched_rows)))
        return BatchPart(n, missing, first_missing, facts, task_keys, ossfuzz, matched_items, matched_keys)


def _first_copies(keys: pa.Table, local: np.ndarray, code: np.ndarray):
    """Each (row, kind, value, raw) once, in scan order (`model.make_keys` keeps the first copy): only keys
    whose (row, kind) repeats can be copies, so the four-column comparison runs on those alone."""
    if len(code) < 2:
        return keys, local, code
    pair = local * (len(KEY_KINDS) + 1) + code
    shared = pd.Series(pair).duplicated(keep=False).to_numpy()
    if not shared.any():
        return keys, local, code
    subset = keys.filter(pa.array(shared)).select(["row", "kind", "value", "raw"]).to_pandas()
    repeated = subset.duplicated().to_numpy()
    if not repeated.any():
        return keys, local, code
    keep = np.ones(len(code), bool)
    keep[np.flatnonzero(shared)[repeated]] = False
    return keys.filter(pa.array(keep)), local[keep], code[keep]


def _facts(items: pa.Table, ids, valid: np.ndarray, local: np.ndarray, code: np.ndarray) -> pa.Table:
    """One row per row with an id: its id, row, project, which item columns it fills, and its keys by kind
    (a count per kind packed in 8 bits each: a row has one or two keys of a kind)."""
    n = items.num_rows
    packed = np.zeros(n, np.uint64)
    for kind in np.unique(code):
        if kind < len(KEY_KINDS):
            counts = np.bincount(local[code == kind], minlength=n).astype(np.uint64)
            packed += counts << np.uint64(8 * int(kind))
    present = np.zeros(n, np.uint8)
    for bit, column in enumerate(PRESENT_COLUMNS):
        present |= (pc.is_valid(items.column(column)).to_numpy(zero_copy_only=False).astype(np.uint8) << bit)
    table = pa.table({"item_id": ids, "row": items.column("row"), "project": items.column("project"),
                      "present": pa.array(present), "kinds": pa.array(packed)}, schema=FACT_SCHEMA)
    return table.filter(pa.array(valid)) if not valid.all() else table


def unpack_kinds(packed: np.ndarray) -> dict[str, int]:
    """{kind: total} of packed per-row kind counts."""
    out = {}
    for index, kind in enumerate(KEY_KINDS):
        total = int(((packed >> np.uint64(8 * index)) & np.uint64(255)).sum())
        if total:
            out[kind] = total
    return out
