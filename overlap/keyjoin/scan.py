"""The streamed key join of a training side read by columns: every batch against the benchmarks' keys, and
the whole-side counts gathered on the way, so memory is the benchmarks, a batch and the bounded state below.

`stream_train(source, columns, benches)` returns a `Dataset` whose `items` and `keys` hold only the items
that have a key some benchmark has (a superset of the items in a pair: the joins run on them unchanged), and
whose `totals` hold what the outputs count over the whole side. `duplicates` is the side's
`overlap.join.duplicates` table. What is kept, and why it is bounded:

- rows with an id, one fixed-width fact each (a hash of the id, row, project code, filled columns, keys by
  kind): in a `Spill` (memory up to `spill_rows`, then hash partitions on disk); read back partition by
  partition, a row whose id hash no other row has is an item; the rows whose hash others share are read
  back as strings and grouped on their ids: the first row of each id is an item, the others are repeats
  (kept: their rows, so nothing of theirs is counted);
- task-kind keys (OSS-Fuzz, CVE, fix commit, PR) as (hash of kind and value, row): a second `Spill`; per
  partition, the rows whose key hash another item shares are read back as strings, and the (kind, value)
  held by two items or more are the side's duplicate groups;
- the ids and the task keys as strings, in row order (`RowStore`s: memory, then one file): read back only
  for the rows the passes above name (so a hash collision costs a lookup, never a wrong count);
- every row's OSS-Fuzz keys as strings (the id description, the chance baselines and the related bugs read
  them): an `OssfuzzKeys` store (memory up to `spill_rows`, then a file) that outlives the scan and is read
  back a batch at a time without the repeats' keys (a side of distinct OSS-Fuzz ids has one a row);
- the matched rows (items and keys): bounded by the benchmarks.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..allocator import objects_frozen
from ..errors import InputError
from ..ids.recognise import RecognitionReport
from ..join import duplicates
from ..model import Dataset, Problem, SideTotals
from ..sources.rows.assemble import LABEL, at_other_base, other_base_problem, unrecognised_problem
from ..sources.rows.columns import GenericColumns
from ..sources.rows.generic import _file_source, iter_key_batches
from ..sources.rows.row_checks import CHECKS
from .batch import (
    FACT_SCHEMA,
    ID_STRING_SCHEMA,
    KEY_STRING_SCHEMA,
    KIND_CODES,
    PRESENT_COLUMNS,
    PROBLEM_SCHEMA,
    TASK_KEY_SCHEMA,
    UNRECOGNISED_BIT,
    BatchJoin,
    BatchPart,
    BenchKeys,
    unpack_kinds,
)
from .clean import clean_ids, locate
from .first_rows import FirstRows
from .hashing import hash64, shared_hashes
from .ossfuzz_keys import OssfuzzKeys
from .row_bits import RowBits
from .spill import RowStore, Spill, in_sorted

BATCH_ROWS = 262_144  # rows of one batch read (fewer, larger batches: each step's fixed cost is paid less often)
SPILL_ROWS = 1_000_000  # rows of each spill held in memory before it goes to disk (~100 MB)
# A spill partition of up to this many spills' worth of facts (30 bytes a row: ~120 MB at 1M) is held whole
# for the items pass: at 100M rows a partition is ~1.6M rows, and counting one a piece at a time costs ~1.5 s
# where holding it costs ~0.05. Only a side far larger, or one id on millions of rows, is counted.
HELD_SPILLS = 4
DUPLICATE_DETAIL = "a repeated id keeps its first row; `filter` drops or keeps every copy with it"
NO_ROW = np.iinfo(np.int64).max
# the ids of rows whose id hash another row shares, by that hash (`_group_shared`)
SHARED_ID_SCHEMA = pa.schema([("hash", pa.uint64()), ("row", pa.int64()), ("item_id", pa.string()),
                              ("base_commit", pa.string())])


@dataclass
class _State:
    facts: Spill
    task_keys: Spill
    ids: RowStore
    key_strings: RowStore
    problem_rows: RowStore
    ossfuzz: OssfuzzKeys  # every row's, until the repeats are known (read back without them)
    projects: list[str] = field(default_factory=list)  # project names by code
    pr_repos: list[str] = field(default_factory=list)  # canonical repos of PR tasks by code
    rows: int = 0
    missing: int = 0
    first_missing: tuple[str, int] | None = None
    # the first row of each id only (`first_rows`): held by the distinct ids, however often a side repeats them
    matched: FirstRows = field(default_factory=FirstRows)  # the matched items, following them their keys

    def add(self, part: BatchPart) -> None:
        self.matched.schema = self.matched.schema or part.matched_items.schema  # for a side where no row matched
        self.rows += part.rows
        self.missing += part.missing
        self.first_missing = self.first_missing or part.first_missing
        self.facts.add(part.facts)
        self.task_keys.add(part.task_keys)
        self.ids.add(part.id_strings)
        self.key_strings.add(part.key_strings)
        self.problem_rows.add(part.problem_rows)
        self.ossfuzz.add(part.ossfuzz)
        self.matched.add(part.matched_items, part.matched_keys)


def stream_train(source: str | os.PathLike, columns: GenericColumns, benches: list[Dataset], *,
                 split: str | None = None, filesystem: Any = None, mapping: Any = None,
                 mapping_for: Callable[[], Any] | None = None, engine: str = "local", ray_address: str | None = None,
                 workers: int | None = None, batch_rows: int | None = None, spill_rows: int | None = None,
                 spill_folder: str | None = None) -> tuple[Dataset, pd.DataFrame]:
    """(the training side as a streamed Dataset, its duplicates table), read from `source` by `columns`
    against the keys of `benches` (canonical already). `mapping`: the OSS-Fuzz mapping, or `mapping_for()`
    called at the first OSS-Fuzz key (its result is kept in `joiner.mapping`). `engine`: "local", or "ray"
    (the batches' keys derived on Ray, `ray_address` / `workers` as the text scan's): the same result."""
    batch_rows, spill_rows = batch_rows or BATCH_ROWS, spill_rows or SPILL_ROWS
    report = RecognitionReport(scheme=columns.scheme)
    joiner = BatchJoin(BenchKeys.of(benches), mapping=mapping, mapping_for=mapping_for)
    state = _State(Spill(FACT_SCHEMA, "hash", max_rows=spill_rows, folder=spill_folder),
                   Spill(TASK_KEY_SCHEMA, "hash", max_rows=spill_rows, folder=spill_folder),
                   RowStore(ID_STRING_SCHEMA, max_rows=spill_rows, folder=spill_folder, consecutive=True),
                   RowStore(KEY_STRING_SCHEMA, max_rows=spill_rows, folder=spill_folder),
                   RowStore(PROBLEM_SCHEMA, max_rows=spill_rows, folder=spill_folder),
                   OssfuzzKeys(max_rows=spill_rows, folder=spill_folder), joiner.projects, joiner.pr_repos)
    try:
        with objects_frozen():
            if engine == "ray":
                from .engine_ray import ray_key_batches

                stream = ray_key_batches(source, columns, report, split=split, batch_rows=batch_rows,
                                         address=ray_address, workers=workers)
            else:
                stream = iter_key_batches(source, columns, report, split=split, filesystem=filesystem,
                                          batch_rows=batch_rows)
            label, provenance = next(stream)
            for items, keys in stream:
                state.add(joiner.process(items, keys))
            if not state.rows:
                raise InputError(f"{label}: no usable rows (no rows read); check the files")
            dataset, dups = _finish(state, label, provenance, columns, report)
    except BaseException:
        state.ossfuzz.close()
        raise
    finally:
        for kept in (state.facts, state.task_keys, state.ids, state.key_strings, state.problem_rows):
            kept.close()
    dataset.source = _file_source(provenance, source)
    dataset.recognition = report  # type: ignore[attr-defined]
    dataset.generic_columns = columns  # type: ignore[attr-defined]
    dataset.mapping = joiner.mapping  # type: ignore[attr-defined]  # loaded at the first OSS-Fuzz key, or None
    repeats = dataset.totals.repeat_rows
    reading = {"split": split, "filesystem": filesystem, "batch_rows": batch_rows}
    dataset.totals.clean_ids = lambda matched: clean_ids(source, columns, repeats, matched, **reading)
    dataset.totals.locate = lambda ids, with_repeats: locate(source, columns, repeats, ids, with_repeats, **reading)
    return dataset, dups


@dataclass
class _Firsts:
    """What the items pass gathers over the first row of every id."""

    items: int = 0
    packed: Counter = field(default_factory=Counter)  # keys by kind
    projects: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # items per project code
    pr_repos: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # items per PR repo code
    present: int = 0
    alone: int = 0  # items whose id no scheme took and that have no key
    alone_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # the first three of them
    checks: np.ndarray = field(default_factory=lambda: np.zeros(len(CHECKS), np.int64))  # items per check held
    check_rows: np.ndarray = field(default_factory=lambda: np.full(len(CHECKS), NO_ROW, np.int64))  # first of each

    def add(self, rows: np.ndarray, project: np.ndarray, pr_repo: np.ndarray, present: np.ndarray,
            kinds: np.ndarray, problems: np.ndarray) -> None:
        self.items += len(rows)
        if problems.any():
            for bit in range(len(CHECKS)):
                held = ((problems >> bit) & 1).astype(bool)
                if held.any():
                    self.checks[bit] += int(held.sum())
                    self.check_rows[bit] = min(self.check_rows[bit], int(rows[held].min()))
        self.packed.update(unpack_kinds(kinds))
        self.present |= int(np.bitwise_or.reduce(present, initial=0))
        self.projects = _count_codes(self.projects, project)
        self.pr_repos = _count_codes(self.pr_repos, pr_repo)
        lone = (((present >> UNRECOGNISED_BIT) & 1) == 1) & (kinds == 0)
        if lone.any():
            self.alone += int(lone.sum())
            self.alone_rows = np.sort(np.concatenate([self.alone_rows, rows[lone]]))[:3]


def _count_codes(counts: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """`counts` (items per code) with the rows of `codes` added (-1: none)."""
    named = codes[codes >= 0]
    if not len(named):
        return counts
    more = np.bincount(named)
    if len(more) > len(counts):
        more[:len(counts)] += counts
        return more
    counts[:len(more)] += more
    return counts


@dataclass
class _Repeats:
    """The rows that repeat an earlier row's id, gathered a resolve at a time."""

    rows: RowBits = field(default_factory=RowBits)
    first: tuple[int, str] | None = None  # (row, id) of the first repeat
    other_base: int = 0  # repeats at another base commit than their id's first row
    other_base_first: tuple[int, str] | None = None


def _items_pass(state: _State) -> tuple[_Firsts, _Repeats]:
    """(first-row counts, the repeats). A row whose id hash is its own is an item. The rows whose hash others
    share are set aside (their facts in a spill of their own, their rows as bits) and grouped on their ids
    afterwards: their id strings are read back from the store once, in row order, and spilled by hash, so
    each id's rows meet in one partition however the side scatters them (`_group_shared`). A side whose rows
    repeat their ids is resolved in a few sequential passes, never a read of every id per million repeats."""
    firsts, repeats, shared = _Firsts(), _Repeats(), RowBits()
    shared_facts = Spill(FACT_SCHEMA, "hash", max_rows=state.facts.max_rows, folder=state.facts.folder)
    try:
        def keep(many: pa.Table) -> None:
            shared_facts.add(many)
            shared.add(many.column("row").to_numpy())

        for pieces in state.facts.by_partition():
            _own_rows(pieces, firsts, keep, HELD_SPILLS * state.facts.max_rows)
        if len(shared):
            first_rows = _group_shared(state, shared, repeats)
            for pieces in shared_facts.by_partition():
                for piece in pieces():
                    first = first_rows.holds(piece.column("row").to_numpy())
                    firsts.add(*(piece.column(c).to_numpy()[first] for c in FACT_COLUMNS))
    finally:
        shared_facts.close()
    return firsts, repeats


FACT_COLUMNS = ("row", "project", "pr_repo", "present", "kinds", "problems")  # what `_Firsts.add` counts of a row


def _own_rows(pieces: Callable[[], Iterator[pa.Table]], firsts: _Firsts, keep: Callable[[pa.Table], None],
              bound: int) -> None:
    """Counts the rows of a partition (read a piece at a time by `pieces()`) whose id hash is their own as
    items, and gives the others' facts to `keep`. A partition up to `bound` rows is held whole; a larger one
    (one id on millions of rows) has its hashes counted first, then is read again a piece at a time."""
    held, size = [], 0
    for piece in pieces():
        held.append(piece)
        size += piece.num_rows
        if size > bound:
            del held
            _own_rows_counted(pieces, firsts, keep, bound)
            return
    table = pa.concat_tables(held) if len(held) > 1 else held[0] if held else None
    if table is None or not table.num_rows:
        return
    own = ~shared_hashes(table.column("hash").to_numpy())  # no other row has this row's hash
    firsts.add(*(table.column(c).to_numpy()[own] for c in FACT_COLUMNS))
    if not own.all():
        keep(table.filter(pa.array(~own)))


def _own_rows_counted(pieces: Callable[[], Iterator[pa.Table]], firsts: _Firsts,
                      keep: Callable[[pa.Table], None], bound: int) -> None:
    """`_own_rows` of a partition too large to hold: what it holds is its distinct hashes and their counts,
    and up to `bound` more of each piece's before they are merged in (a merge per piece would sort the
    partition's distinct hashes once per piece: at 100M rows, ~100 pieces of 15k against 1.5M, minutes)."""
    distinct, counts = np.zeros(0, np.uint64), np.zeros(0, np.int64)
    waiting: list[tuple[np.ndarray, np.ndarray]] = []

    def merged() -> tuple[np.ndarray, np.ndarray]:
        hashes = np.concatenate([distinct, *(h for h, _ in waiting)])
        times = np.concatenate([counts, *(c for _, c in waiting)])
        found, where = np.unique(hashes, return_inverse=True)
        return found, np.bincount(where, weights=times, minlength=len(found)).astype(np.int64)

    for piece in pieces():
        waiting.append(np.unique(piece.column("hash").to_numpy(), return_counts=True))
        if sum(len(h) for h, _ in waiting) >= bound:
            distinct, counts = merged()
            waiting = []
    if waiting:
        distinct, counts = merged()
    for piece in pieces():
        own = counts[np.searchsorted(distinct, piece.column("hash").to_numpy())] == 1
        firsts.add(*(piece.column(c).to_numpy()[own] for c in FACT_COLUMNS))
        if not own.all():
            keep(piece.filter(pa.array(~own)))


def _group_shared(state: _State, shared: RowBits, repeats: _Repeats) -> RowBits:
    """The first row of each id among the `shared` rows (returned); the other rows are repeats. Their ids are
    read back from the store in one pass and spilled by the hash of the id, so all of an id's rows are in one
    partition and in row order; a partition is grouped a spill's worth of rows at a time, each id's first row
    kept (id, row, base commit) for the rows after it: one id repeated 10M times is grouped 1M rows at a
    time."""
    by_id = Spill(SHARED_ID_SCHEMA, "hash", max_rows=state.facts.max_rows, folder=state.facts.folder)
    first_rows = RowBits()
    try:
        for table in state.ids.tables():
            chosen = table.filter(pa.array(shared.holds(table.column("row").to_numpy())))
            by_id.add(pa.table({"hash": hash64(chosen.column("item_id")), "row": chosen.column("row"),
                                "item_id": chosen.column("item_id"), "base_commit": chosen.column("base_commit")},
                               schema=SHARED_ID_SCHEMA))
        for pieces in by_id.by_partition():
            known, chunk, held = None, [], 0
            for piece in pieces():
                chunk.append(piece)
                held += piece.num_rows
                if held >= by_id.max_rows:
                    known = _first_of_each(pa.concat_tables(chunk), known, first_rows, repeats)
                    chunk, held = [], 0
            if chunk:
                _first_of_each(pa.concat_tables(chunk), known, first_rows, repeats)
    finally:
        by_id.close()
    return first_rows


def _first_of_each(ids: pa.Table, known: pa.Table | None, first_rows: RowBits, repeats: _Repeats) -> pa.Table:
    """Groups `ids` (row, item_id, base_commit, rows rising) on their ids, after the rows of `known` (the first
    row of each id seen before): a row whose id is new and earliest is a first row, the others repeats.
    Returns `known` with this chunk's first rows added."""
    ids = ids.select(["item_id", "row", "base_commit"])
    rows = ids.column("row").to_numpy()
    seen = pc.is_in(ids.column("item_id"), value_set=known.column("item_id")) if known is not None \
        else pa.repeat(pa.scalar(False), ids.num_rows)
    fresh = ids.filter(pc.invert(seen))
    lowest = np.sort(fresh.group_by("item_id", use_threads=False).aggregate([("row", "min")])
                     .column("row_min").to_numpy())
    first = in_sorted(rows, lowest)
    first_rows.add(rows[first])
    new_firsts = fresh.filter(pa.array(in_sorted(fresh.column("row").to_numpy(), lowest)))
    known = new_firsts if known is None else pa.concat_tables([known, new_firsts])
    if not first.all():
        repeats.rows.add(rows[~first])
        later = ids.filter(pa.array(~first))
        repeats.first = _earliest(repeats.first, later)
        # no base commit on either side (a set without a base column): no repeat is at another base
        if later.column("base_commit").null_count < later.num_rows or \
                known.column("base_commit").null_count < known.num_rows:
            other = later.filter(at_other_base(known, later))
            repeats.other_base += other.num_rows
            repeats.other_base_first = _earliest(repeats.other_base_first, other)
    return known


def _earliest(known: tuple[int, str] | None, table: pa.Table) -> tuple[int, str] | None:
    """The (row, id) of whichever comes first: `known`, or the first row of `table` (in row order)."""
    if not table.num_rows:
        return known
    row = int(table.column("row")[0].as_py())
    return (row, table.column("item_id")[0].as_py()) if known is None or row < known[0] else known


def _check_problems(state: _State, firsts: _Firsts) -> list[Problem]:
    """The checks that hold for some item, counted over the items, each shown by its first item."""
    shown = state.problem_rows.select(firsts.check_rows[firsts.checks > 0])
    problems = []
    for bit, what in enumerate(CHECKS):
        if firsts.checks[bit]:
            row = shown.filter(pc.and_(pc.equal(shown.column("row"), int(firsts.check_rows[bit])),
                                       pc.equal(shown.column("what"), what)))
            problems.append(Problem(what, int(firsts.checks[bit]), row.column("example")[0].as_py(),
                                    row.column("detail")[0].as_py()))
    return problems


def _not_repeats(table: pa.Table, repeats: RowBits) -> pa.Table:
    if not len(repeats) or not table.num_rows:
        return table
    return table.filter(pa.array(~repeats.holds(table.column("row").to_numpy())))


def _duplicate_keys(state: _State, repeats: RowBits) -> pa.Table:
    """The task keys of items (first rows) whose (kind, value) another item also has: the rows whose key hash
    another item's key shares, read back as strings and grouped on them. A partition is read a piece at a
    time and its repeats' keys dropped from each piece: what is held is the items' keys, however often one id
    (and its keys) repeats."""
    candidates = []
    for pieces in state.task_keys.by_partition():
        rows, hashes = [], []
        for piece in pieces():
            row, hashed = piece.column("row").to_numpy(), piece.column("hash").to_numpy()
            kept = ~repeats.holds(row)
            rows.append(row[kept])
            hashes.append(hashed[kept])
        rows, hashes = np.concatenate(rows), np.concatenate(hashes)
        if not len(rows):
            continue
        candidates.append(rows[shared_hashes(hashes)])  # the rows whose key hash another key has
    rows = np.unique(np.concatenate(candidates)) if candidates else np.zeros(0, np.int64)
    keys = state.key_strings.select(rows)
    # an item is one row, and a row holds a (kind, value) once: its count is the count of items holding it
    counts = keys.group_by(["kind", "value"], use_threads=False).aggregate([("row", "count")])
    shared = counts.filter(pc.greater(counts.column("row_count"), 1)).select(["kind", "value"])
    keys = keys.join(shared, ["kind", "value"], join_type="inner", use_threads=False) if shared.num_rows \
        else keys.slice(0, 0)
    keys = keys.sort_by("row")
    ids = state.ids.select(keys.column("row").to_numpy())
    at = pc.index_in(keys.column("row"), value_set=ids.column("row"))
    project = _project_names(state, ids.column("project").take(at).to_numpy(zero_copy_only=False))
    item_ids = ids.column("item_id").take(at)
    return pa.table({"kind": KIND_CODES.take(keys.column("kind")), "value": keys.column("value"),
                     "raw": pc.coalesce(keys.column("raw"), keys.column("value")), "item_id": item_ids,
                     "row": keys.column("row"), "project": project})


def _project_names(state: _State, codes: np.ndarray) -> pa.Array:
    names = pa.array(state.projects, pa.string())
    return names.take(pa.array(codes, pa.int32(), mask=codes < 0)) if len(codes) else pa.array([], pa.string())


def _finish(state: _State, label: str, provenance, columns: GenericColumns, report: RecognitionReport):
    firsts, found = _items_pass(state)
    repeats = found.rows
    if not firsts.items:  # worded as `assemble` words it: every row lacks an id, so that is the reason
        reason = f" (missing_id: {state.first_missing[0]} row {state.first_missing[1]})" if state.missing else ""
        raise InputError(f"{label}: no usable rows (no row has an id in column '{columns.id}'){reason}; check the "
                         "files and their columns")
    alone_ids = state.ids.select(firsts.alone_rows).column("item_id").to_pylist()
    problems = [] if columns.scheme == LABEL else unrecognised_problem(firsts.alone, alone_ids, columns.scheme)
    if state.missing:
        file, file_row = state.first_missing
        problems.append(Problem("missing_id", state.missing, f"{file} row {file_row}",
                                "rows without an id cannot be joined or listed"))
    if len(repeats):
        problems.append(Problem("duplicate_id", int(len(repeats)), found.first[1], DUPLICATE_DETAIL))
        if columns.base:
            problems += other_base_problem(found.other_base, found.other_base_first[1] if found.other_base else "")
    problems += _check_problems(state, firsts)
    provenance.name = label
    dups, same_pr, grouped = _duplicates(label, provenance, _duplicate_keys(state, repeats))
    state.ossfuzz.finish(repeats)
    matched = _not_repeats(state.matched.table(), repeats)
    keys = state.matched.followed()
    projects = {state.projects[code]: int(count) for code, count in enumerate(firsts.projects) if count}
    pr_repos = {state.pr_repos[code]: int(count) for code, count in enumerate(firsts.pr_repos) if count}
    totals = SideTotals(items=firsts.items, keys_by_kind=dict(firsts.packed), projects=projects,
                        pr_repos=pr_repos, same_pr=same_pr,
                        ossfuzz_keys=state.ossfuzz, grouped_items=grouped, repeat_rows=repeats)
    dataset = Dataset(label, _items_frame(matched, firsts.present, columns), _matched_keys(matched, keys),
                      provenance, sorted(problems, key=lambda p: p.what), totals=totals)
    return dataset, dups


def _key_frame(item_id, kind, value, raw) -> pd.DataFrame:
    return pa.table({"item_id": item_id, "kind": kind, "value": value, "raw": raw}).to_pandas().astype("string")


def _matched_keys(matched: pa.Table, keys: pa.Table | None) -> pd.DataFrame:
    """Every key of the matched items, named by item id (as `read_generic` builds its key frame)."""
    if keys is None or not matched.num_rows:
        empty = pa.array([], pa.string())
        return _key_frame(empty, empty, empty, empty)
    where = pc.index_in(keys.column("row"), value_set=matched.column("row"))
    keys = keys.filter(pc.is_valid(where))
    item = matched.column("item_id").take(pc.drop_null(where))
    return _key_frame(item, keys.column("kind"), keys.column("value"), keys.column("raw"))


def _items_frame(matched: pa.Table, present: int, columns: GenericColumns) -> pd.DataFrame:
    """The matched items as `read_generic` types them, with the columns the whole side has: a column no item
    of the side fills is left out (however the matched ones fill it), unless the side declares it."""
    out = matched.drop_columns([c for c in matched.column_names if c.startswith("_")]).to_pandas()
    # Straight to Int64, as `assemble` does: through float64 (pandas' int column with nulls) a PR past 2**53
    # would lose digits
    out["pr"] = matched.column("pr").cast(pa.int64()).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    for column in out.columns:
        if column not in ("row", "file_row", "pr"):
            out[column] = out[column].astype("string")
    out = out[["item_id", *[c for c in out.columns if c != "item_id"]]]
    declared = ({"project"} if columns.project else set()) | (
        {"repo", "pr", "base_commit"} if columns.repo or columns.pr or columns.base else set())
    absent = [c for bit, c in enumerate(PRESENT_COLUMNS) if not present & (1 << bit) and c not in declared]
    return out.drop(columns=absent).reset_index(drop=True)


def _duplicates(label: str, provenance, keys: pa.Table) -> tuple[pd.DataFrame, dict[str, int], pd.DataFrame]:
    """`overlap.join.duplicates` of the side, from the keys that two items share (the same function on the
    items and keys that can be in a group, so the table is the one a Dataset of every row gives), the same-PR
    counts of the SWE section, and the grouped items (item_id, row, project: what the report shows of them)."""
    frame = keys.to_pandas()
    items = frame[["item_id", "row", "project"]].drop_duplicates("item_id").astype({"item_id": "string",
                                                                                     "project": "string"})
    mini = Dataset(label, items, frame[["item_id", "kind", "value", "raw"]].astype("string"), provenance)
    dups = duplicates(mini)
    same = dups[dups["kind"] == "repo_pr"] if len(dups) else dups
    grouped = items.sort_values("row").reset_index(drop=True)
    return dups, {"groups": int(len(same)), "items": int(same["items"].sum()) if len(same) else 0}, grouped

