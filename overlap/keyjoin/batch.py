"""One batch of a training side against the benchmarks' keys: what of it can be in a pair, and the facts of
its rows that the whole-side counts need (kept compact, never as pandas rows): fixed-width facts (a hash of
the row's id, its row, project code, filled columns, keys by kind) and task keys (a hash of kind and value,
row), which are what the whole-side passes sort and group; and the strings behind them (`id_strings`,
`key_strings`), which are only read back for the rows those passes name.

`BatchJoin.process(items, keys)` takes one batch as `overlap.sources.rows.generic.iter_key_batches` yields it
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
from ..sources.rows.row_checks import CHECKS, problem_rows
from .bench_lookup import BenchKeys, _among
from .hashing import hash64

KIND_CODES = pa.array(KEY_KINDS, pa.string())
OSSFUZZ = KEY_KINDS.index("ossfuzz")
TASK_CODES = [KEY_KINDS.index(k) for k in TASK_KINDS]
IS_TASK = np.isin(np.arange(len(KEY_KINDS) + 1), TASK_CODES)  # by kind code (the last: a kind not in KEY_KINDS)
# Bits of `present`: which item columns a row has a value in (a column no item has is left out of Items).
PRESENT_COLUMNS = ("project", "repo", "pr", "base_commit")
UNRECOGNISED_BIT = len(PRESENT_COLUMNS)  # and whether no id scheme took the row's id

FACT_SCHEMA = pa.schema([("hash", pa.uint64()), ("row", pa.int64()), ("project", pa.int32()),
                         ("pr_repo", pa.int32()), ("present", pa.uint8()), ("kinds", pa.uint64()),
                         ("problems", pa.uint8())])
TASK_KEY_SCHEMA = pa.schema([("hash", pa.uint64()), ("row", pa.int64())])
ID_STRING_SCHEMA = pa.schema([("row", pa.int64()), ("item_id", pa.string()), ("project", pa.int32()),
                              ("base_commit", pa.string())])
# One row per (row, check) that holds (`row_checks.problem_rows`): what the problem shows of its first item.
PROBLEM_SCHEMA = pa.schema([("row", pa.int64()), ("what", pa.string()), ("example", pa.string()),
                            ("detail", pa.string())])
# kind: its index in KEY_KINDS (a byte where the name took eleven in every row stored)
KEY_STRING_SCHEMA = pa.schema([("row", pa.int64()), ("kind", pa.int8()), ("value", pa.string()),
                               ("raw", pa.string())])


@dataclass
class BatchPart:
    rows: int
    missing: int  # rows without an id
    first_missing: tuple[str, int] | None  # (file, file_row) of the first of them
    facts: pa.Table  # FACT_SCHEMA, one row per row with an id
    task_keys: pa.Table  # TASK_KEY_SCHEMA, the task-kind keys of rows with an id
    id_strings: pa.Table  # ID_STRING_SCHEMA, the id and project code of each row (no pass asks for one without)
    key_strings: pa.Table  # KEY_STRING_SCHEMA, the task-kind keys (raw null: the value)
    problem_rows: pa.Table  # PROBLEM_SCHEMA, the checks that hold for rows with an id
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
        self.projects: list[str] = []  # project names by code (facts hold the code)
        self.pr_repos: list[str] = []  # the canonical repos of PR tasks by code (the SWE section's per-repo table)
        self._project_code: dict[str, int] = {}
        self._pr_repo_code: dict[str, int] = {}

    @staticmethod
    def _codes(cells, names: list[str], code_of: dict[str, int]) -> np.ndarray:
        """Each row's cell as its code in `names` (-1: none), the codes given in order of first sight."""
        if cells.null_count == len(cells):
            return np.full(len(cells), -1, np.int32)
        encoded = pc.dictionary_encode(cells).combine_chunks() if isinstance(cells, pa.ChunkedArray) \
            else pc.dictionary_encode(cells)
        seen = encoded.dictionary.to_pylist()
        for name in seen:
            if name not in code_of:
                code_of[name] = len(names)
                names.append(name)
        codes = np.array([code_of[name] for name in seen] + [-1], np.int32)
        where = pc.fill_null(encoded.indices, len(seen)).to_numpy(zero_copy_only=False)
        return codes[where]

    def _canonical(self, raw: pa.Array) -> pa.Array:
        """OSS-Fuzz raw ids as canonical values (`overlap.ids.ossfuzz.canonicalize_keys`, column-wise)."""
        if self.mapping is None and self._mapping_for is not None:
            self.mapping = self._mapping_for()
        if self.mapping is None:
            return raw
        if self._old is None:
            # sorted numpy arrays searched per batch: an Arrow value set would be rebuilt at every batch
            pairs = sorted((int(o), int(n)) for o, n in self.mapping.old_to_new.items())
            self._old = np.array([o for o, _ in pairs], np.int64)
            self._new = np.array([n for _, n in pairs], np.int64)
        numbers = pc.cast(raw, pa.int64())
        if not len(self._old):
            return pc.cast(numbers, pa.string())
        given = pc.fill_null(numbers, 0).to_numpy(zero_copy_only=False)
        at = np.minimum(np.searchsorted(self._old, given), len(self._old) - 1)
        renamed = self._old[at] == given
        if renamed.any():
            new = np.where(renamed, self._new[at], given)
            numbers = pa.array(new, pa.int64(), mask=pc.is_null(numbers).to_numpy(zero_copy_only=False))
        return pc.cast(numbers, pa.string())

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
        # The keys stay in their recogniser's pieces (a PR's repo_pr and repo_pr_exact pieces hold one array):
        # combined into one chunk, every key string would be copied once more, the shared array twice.
        code, copies = _kind_codes(keys.column("kind"))
        value_hashes = _chunk_hashes(keys.column("value"))
        local = keys.column("row").to_numpy() - base
        if missing and len(local):
            keep = valid[local]
            if not keep.all():  # a row without an id has keys only from its repo, PR or base cells
                keys, local, code = keys.filter(pa.array(keep)), local[keep], code[keep]
                value_hashes = value_hashes[keep]
        oss = code == OSSFUZZ
        if oss.any():  # made canonical on the OSS-Fuzz keys alone (a few in a mix of PR ids)
            at = np.flatnonzero(oss)
            value = keys.column("value")
            canonical = self._canonical(_one_chunk(keys.column("raw").take(pa.array(at))))
            changed = pc.fill_null(pc.not_equal(canonical, _one_chunk(value.take(pa.array(at)))), True)
            changed = changed.to_numpy(zero_copy_only=False)
            if changed.any():
                renamed = canonical.filter(pa.array(changed))
                keys = keys.set_column(keys.schema.get_field_index("value"), "value",
                                       _placed(value, at[changed], renamed))
                value_hashes[at[changed]] = hash64(renamed)
        if copies:
            kept = _first_copies(keys, local, code)
            if kept is not None:
                keys, local, code = keys.filter(pa.array(kept)), local[kept], code[kept]
                value_hashes = value_hashes[kept]
        projects = self._codes(items.column("project"), self.projects, self._project_code)
        pr_repos = self._codes(items.column("pr_repo"), self.pr_repos, self._pr_repo_code)
        bits, problem_rows = _problems(items, valid)
        facts = _facts(items, ids, valid, local, code, projects, pr_repos, bits)
        task = IS_TASK[code]
        task_keys, key_strings = _task_keys(keys, code, task, value_hashes[task])
        id_strings = pa.table({"row": items.column("row"), "item_id": ids, "project": projects,
                               "base_commit": items.column("base_commit")}, schema=ID_STRING_SCHEMA)
        oss = code == OSSFUZZ
        rows_of_oss = pa.array(local[oss], pa.int64())
        ossfuzz = pa.table({"row": keys.column("row").filter(pa.array(oss)), "item_id": ids.take(rows_of_oss),
                            "value": keys.column("value").filter(pa.array(oss)),
                            "raw": keys.column("raw").filter(pa.array(oss))})
        hit = _among(keys.column("value"), value_hashes, self.bench.values, self.bench.value_hashes)
        if task.any() and len(self.bench.raws):
            at = np.flatnonzero(task)
            raws = keys.column("raw")
            # most raw values are their value again (key_strings keeps a raw only where it differs): hashed once
            differ = key_strings.column("raw").is_valid().to_numpy(zero_copy_only=False)
            raw_hashes = value_hashes[at]
            if differ.any():
                raw_hashes[differ] = hash64(raws.take(pa.array(at[differ])))
            hit[at] |= _among(raws, raw_hashes, self.bench.raws, self.bench.raw_hashes, at)
        matched_rows = np.unique(local[hit])
        matched_items = items.take(pa.array(matched_rows, pa.int64()))
        matched = np.zeros(n, bool)
        matched[matched_rows] = True
        matched_keys = keys.filter(pa.array(matched[local]))
        return BatchPart(n, missing, first_missing, facts, task_keys, id_strings, key_strings, problem_rows, ossfuzz,
                         matched_items, matched_keys)


def _one_chunk(column) -> pa.Array:
    """The array of a column (no copy where it is one chunk already)."""
    if isinstance(column, pa.Array):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _placed(values: pa.ChunkedArray, where: np.ndarray, new: pa.Array) -> pa.ChunkedArray:
    """`values` with `new` at positions `where` (rising), chunk by chunk: only a chunk holding one of them is
    copied (one take each, cheaper than a masked replace of strings)."""
    chunks, start = [], 0
    for chunk in values.chunks:
        stop = start + len(chunk)
        low, high = np.searchsorted(where, [start, stop])
        if high > low:
            index = np.arange(len(chunk))
            index[where[low:high] - start] = len(chunk) + np.arange(high - low)
            chunk = pa.concat_arrays([chunk, new.slice(low, high - low).cast(chunk.type)]).take(pa.array(index))
        chunks.append(chunk)
        start = stop
    return pa.chunked_array(chunks, values.type)


def _same_array(a: pa.Array, b: pa.Array) -> bool:
    """Whether two arrays are one array (the same buffers, offset and length), without comparing values."""
    return a.offset == b.offset and len(a) == len(b) and a.type == b.type and all(
        (x is None and y is None) or (x is not None and y is not None and x.address == y.address and x.size == y.size)
        for x, y in zip(a.buffers(), b.buffers(), strict=True))


def _kind_codes(kinds) -> tuple[np.ndarray, bool]:
    """(each key's kind as its index in KEY_KINDS, whether a (row, kind) may repeat). The keys come in pieces
    of one kind each (one per recogniser and column), rows rising inside a piece: a chunk of one kind is coded
    without hashing a string, and only a kind found in two chunks (the id and a fix column) or a mixed chunk
    can hold a key twice for one row."""
    codes, seen, copies = [], set(), False
    for chunk in kinds.chunks if isinstance(kinds, pa.ChunkedArray) else [kinds]:
        if not len(chunk):
            continue
        first = chunk[0]
        # one comparison of the bytes against the first kind (a min-max of strings costs several)
        if not chunk.null_count and pc.all(pc.equal(chunk, first)).as_py():
            code = KEY_KINDS.index(first.as_py()) if first.as_py() in KEY_KINDS else len(KEY_KINDS)
            codes.append(np.full(len(chunk), code, np.int64))
            copies |= code in seen
            seen.add(code)
        else:
            found = pc.fill_null(pc.index_in(chunk, value_set=KIND_CODES), len(KEY_KINDS))
            codes.append(found.to_numpy().astype(np.int64))
            copies = True
    return (np.concatenate(codes) if codes else np.zeros(0, np.int64)), copies


def _task_keys(keys: pa.Table, code: np.ndarray, task: np.ndarray, value_hashes: np.ndarray) -> tuple[pa.Table,
                                                                                                       pa.Table]:
    """(hash of each task-kind key's kind and value with its row, the keys as strings), given the hashes of
    their values. A raw value equal to the value is left null (most are: it is the value again), which halves
    what is kept of them; a piece whose raw array is its value array is known to be so without comparing."""
    values, raws, start = [], [], 0
    for piece in keys.select(["value", "raw"]).to_batches():
        chosen = task[start:start + piece.num_rows]
        start += piece.num_rows
        if not chosen.any():
            continue
        value, raw = piece.column(0), piece.column(1)
        if _same_array(value, raw):
            raw = pa.nulls(len(raw), pa.string())
        else:
            raw = pc.if_else(pc.fill_null(pc.equal(value, raw), False), pa.scalar(None, pa.string()), raw)
        if not chosen.all():
            mask = pa.array(chosen)
            value, raw = value.filter(mask), raw.filter(mask)
        values.append(value)
        raws.append(raw)
    rows = keys.column("row").filter(pa.array(task))
    with np.errstate(over="ignore"):
        hashed = value_hashes + code[task].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return (pa.table({"hash": hashed, "row": rows}, schema=TASK_KEY_SCHEMA),
            pa.table({"row": rows, "kind": code[task].astype(np.int8), "value": pa.chunked_array(values, pa.string()),
                      "raw": pa.chunked_array(raws, pa.string())}, schema=KEY_STRING_SCHEMA))


def _first_copies(keys: pa.Table, local: np.ndarray, code: np.ndarray) -> np.ndarray | None:
    """Which keys to keep so that each (row, kind, value, raw) is there once, in scan order (`model.make_keys`
    keeps the first copy); None: all. Only keys whose (row, kind) repeats can be copies, so the four-column
    comparison runs on those alone."""
    if len(code) < 2:
        return None
    pair = local * (len(KEY_KINDS) + 1) + code
    shared = pd.Series(pair).duplicated(keep=False).to_numpy()
    if not shared.any():
        return None
    subset = keys.filter(pa.array(shared)).select(["row", "kind", "value", "raw"]).to_pandas()
    repeated = subset.duplicated().to_numpy()
    if not repeated.any():
        return None
    keep = np.ones(len(code), bool)
    keep[np.flatnonzero(shared)[repeated]] = False
    return keep


def _chunk_hashes(column) -> np.ndarray:
    """`hash64` of each value of a chunked column, a chunk at a time; a chunk that is the very array of an
    earlier one (same buffers, offset and length: a `repo_pr` key whose value is its exact key's) is hashed
    once."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    done: dict[tuple, np.ndarray] = {}
    parts = []
    for chunk in chunks:
        same = (chunk.offset, len(chunk), tuple(0 if b is None else b.address for b in chunk.buffers()))
        if same not in done:
            done[same] = hash64(chunk)
        parts.append(done[same])
    return np.concatenate(parts) if parts else np.zeros(0, np.uint64)


def _problems(items: pa.Table, valid: np.ndarray) -> tuple[np.ndarray, pa.Table]:
    """(each row's checks that hold, as bits in `CHECKS` order; those checks as PROBLEM_SCHEMA rows, rows with an
    id only): for a side with repo, PR or base columns, whose cells' problems are counted over its items."""
    bits = np.zeros(items.num_rows, np.uint8)
    if "_pr_from" not in items.column_names:
        return bits, PROBLEM_SCHEMA.empty_table()
    found = []
    for what, mask, example, detail in problem_rows(items):
        held = mask.to_numpy(zero_copy_only=False) & valid
        if held.any():
            bits |= held.astype(np.uint8) << CHECKS.index(what)
            chosen = pa.array(held)
            found.append(pa.table({"row": items.column("row").filter(chosen),
                                   "what": pa.repeat(pa.scalar(what), int(held.sum())),
                                   "example": example.filter(chosen), "detail": detail.filter(chosen)},
                                  schema=PROBLEM_SCHEMA))
    return bits, (pa.concat_tables(found) if found else PROBLEM_SCHEMA.empty_table())


def _facts(items: pa.Table, ids, valid: np.ndarray, local: np.ndarray, code: np.ndarray,
           projects: np.ndarray, pr_repos: np.ndarray, problems: np.ndarray) -> pa.Table:
    """One row per row with an id: a hash of its id, its row, project and PR repo codes, which item columns it
    fills, its keys by kind (a count per kind packed in 8 bits each: a row has one or two keys of a kind), and
    the checks of its cells that hold (bits)."""
    n = items.num_rows
    packed = np.zeros(n, np.uint64)
    for kind in np.flatnonzero(np.bincount(code, minlength=len(KEY_KINDS) + 1)):
        if kind < len(KEY_KINDS):
            counts = np.bincount(local[code == kind], minlength=n).astype(np.uint64)
            packed += counts << np.uint64(8 * int(kind))
    present = np.zeros(n, np.uint8)
    for bit, column in enumerate(PRESENT_COLUMNS):
        cells = items.column(column)
        if cells.null_count == 0:
            present |= np.uint8(1 << bit)
        elif cells.null_count < len(cells):
            present |= (pc.is_valid(cells).to_numpy(zero_copy_only=False).astype(np.uint8) << bit)
    if "_unrecognised" in items.column_names:  # no scheme took the row's id
        unrecognised = pc.fill_null(items.column("_unrecognised"), False)
        if "_pr_from" in items.column_names:
            # A PR task's identity is its repo, PR and base cells, or an id that should carry the PR (checked by
            # `row_checks`): its id is no scheme's to recognise (as `assemble` counts it).
            unrecognised = pc.and_(unrecognised, pc.is_null(items.column("_pr_from")))
        present |= unrecognised.to_numpy(zero_copy_only=False).astype(np.uint8) << UNRECOGNISED_BIT
    table = pa.table({"hash": hash64(ids), "row": items.column("row"), "project": projects, "pr_repo": pr_repos,
                      "present": present, "kinds": packed, "problems": problems}, schema=FACT_SCHEMA)
    return table.filter(pa.array(valid)) if not valid.all() else table


def unpack_kinds(packed: np.ndarray) -> dict[str, int]:
    """{kind: total} of packed per-row kind counts (byte k of the little-endian word is kind k's count). Rows
    share a few words (the same keys): each distinct word is unpacked once and weighted by its rows (a byte sum
    over every row was 17 ns a row, this 5)."""
    if not len(packed):
        return {}
    counts = pd.Series(packed, copy=False).value_counts(sort=False)
    words = np.ascontiguousarray(counts.index.to_numpy(np.uint64), "<u8")
    bytes_ = words.view(np.uint8).reshape(-1, 8).astype(np.int64)
    totals = (bytes_ * counts.to_numpy(np.int64)[:, None]).sum(axis=0)
    return {kind: int(totals[index]) for index, kind in enumerate(KEY_KINDS) if totals[index]}
