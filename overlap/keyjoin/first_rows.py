"""Rows of a streamed side kept by their id (its OSS-Fuzz keys, its matched items and their keys), where only
an id's first row can be an item: the rows of a later copy are dropped as they come, so what is held is
bounded by the distinct ids, not by how often a side repeats them (an RL set that holds each task 16 times,
or one placeholder id on millions of rows).

Why dropping is safe: the item of an id is its first row over the whole side. If that row is among the rows
given here, it is the lowest row of its id among them and is kept; if it is not, every row of that id kept
here is a repeat, which the side's finish drops anyway (`_not_repeats`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .spill import in_sorted

COMPACT_FROM = 1 << 16  # rows held before the first compaction across batches


def at_first_rows(table: pa.Table) -> np.ndarray:
    """Whether each row of `table` (item_id, row, …) is at the lowest row of its id in `table` (every key of
    that row: a row can hold several)."""
    rows = table.column("row").to_numpy()
    if table.num_rows < 2:
        return np.ones(len(rows), bool)
    lowest = table.select(["item_id", "row"]).group_by("item_id", use_threads=False).aggregate([("row", "min")])
    return in_sorted(rows, np.sort(lowest.column("row_min").to_numpy()))


class FirstRows:
    """Tables appended batch by batch, kept to the lowest row of each id: within each batch at once, across
    batches whenever what is held has doubled since the last compaction (so a compaction's cost is paid
    back by the rows it drops, and a side without repeats is compacted a logarithmic number of times).
    `follow`: a second set of tables with a `row` column (the matched keys) kept to the rows kept here."""

    def __init__(self, schema: pa.Schema | None = None, follow_schema: pa.Schema | None = None) -> None:
        self.schema, self.follow_schema = schema, follow_schema
        self._tables: list[pa.Table] = []
        self._follow: list[pa.Table] = []
        self._held = 0
        self._bound = COMPACT_FROM

    def add(self, table: pa.Table, follow: pa.Table | None = None) -> None:
        if not table.num_rows:
            return
        self.schema = self.schema or table.schema
        keep = at_first_rows(table)
        if not keep.all():
            table = table.filter(pa.array(keep))
        self._tables.append(table)
        if follow is not None and follow.num_rows:
            self._follow.append(_rows_in(follow, table))
        self._held += table.num_rows
        if self._held > self._bound:
            self._compact()

    def _compact(self) -> None:
        whole = pa.concat_tables(self._tables, promote_options="permissive")
        keep = at_first_rows(whole)
        whole = whole.filter(pa.array(keep)) if not keep.all() else whole
        self._tables, self._held = [whole], whole.num_rows
        if self._follow:
            self._follow = [_rows_in(pa.concat_tables(self._follow, promote_options="permissive"), whole)]
        self._bound = max(self._bound, 2 * whole.num_rows)

    def table(self) -> pa.Table | None:
        """Everything held (None: nothing was ever added and no schema was given)."""
        if self._tables:
            return pa.concat_tables(self._tables, promote_options="permissive")
        return self.schema.empty_table() if self.schema is not None else None

    def followed(self) -> pa.Table | None:
        if self._follow:
            return pa.concat_tables(self._follow, promote_options="permissive")
        return self.follow_schema.empty_table() if self.follow_schema is not None else None


def _rows_in(table: pa.Table, kept: pa.Table) -> pa.Table:
    """The rows of `table` whose `row` is one of `kept`'s."""
    rows = np.sort(kept.column("row").to_numpy())
    inside = in_sorted(table.column("row").to_numpy(), rows)
    return table if inside.all() else table.filter(pa.array(inside))
