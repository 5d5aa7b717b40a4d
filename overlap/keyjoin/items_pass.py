"""The items pass of a streamed side: which rows are items (the first row of each id) and which repeat one.

A row whose id hash no other row has is an item; the rows whose hash others share are grouped on their id
strings, a spill partition at a time, so memory stays bounded however the side repeats its ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..sources.rows.assemble import at_other_base
from ..sources.rows.row_checks import CHECKS
from .batch import FACT_SCHEMA, UNRECOGNISED_BIT, unpack_kinds
from .hashing import hash64, shared_hashes
from .row_bits import RowBits
from .scan_state import _State
from .spill import Spill, in_sorted

# A spill partition of up to this many spills' worth of facts (30 bytes a row: ~120 MB at 1M) is held whole
# for the items pass: at 100M rows a partition is ~1.6M rows, and counting one a piece at a time costs ~1.5 s
# where holding it costs ~0.05. Only a side far larger, or one id on millions of rows, is counted.
HELD_SPILLS = 4
NO_ROW = np.iinfo(np.int64).max
# the ids of rows whose id hash another row shares, by that hash (`_group_shared`)
SHARED_ID_SCHEMA = pa.schema([("hash", pa.uint64()), ("row", pa.int64()), ("item_id", pa.string()),
                              ("base_commit", pa.string())])


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
