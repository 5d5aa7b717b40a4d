"""Where a streamed side's per-row facts wait for the whole-side passes, within a bounded memory whatever the
side's size: held in memory up to a bound, past it written to disk.

`Spill`: rows read back one hash partition at a time (what lets a count over every row, distinct ids or keys
shared by two items, run a partition at a time). Below `max_rows` nothing is written: the rows come back as
one partition. Past it, each flush sorts the buffered rows by partition (`hashing.partition_order` of one
column: a hash already, or a string hashed) and writes one Arrow IPC file holding one record batch per
partition; a partition read back is the concatenation of its batches. Equal values always share a partition.

`RowStore`: tables appended in row order and read back only for the rows asked for (the strings behind the
hashes, for the few rows the passes name).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .hashing import partition_order

PARTITIONS = 64
# LZ4 frames: ids and rows shrink ~2.5x, and compressing them costs less CPU than copying the bytes saved
# through the kernel's page cache (measured here: writing 0.12 instead of 0.23 CPU s per 76 MB of ids).
WRITE = pa.ipc.IpcWriteOptions(compression="lz4")
# Rows of fixed-width numbers, a random hash among them, barely compress: written as they are, they cost half
# the CPU to write and a quarter to read back (measured: 24 + 7 against 41 + 28 ms per million facts).
PLAIN = pa.ipc.IpcWriteOptions()


class Spill:
    def __init__(self, schema: pa.Schema, column: str, *, max_rows: int, partitions: int = PARTITIONS,
                 folder: str | None = None) -> None:
        self.schema, self.column, self.max_rows, self.partitions = schema, column, max_rows, partitions
        self.folder = folder
        self._dir: Path | None = None
        self._parts: list[pa.Table] = []
        self._buffered = 0
        self.files: list[Path] = []
        self.rows = 0
        self._options = WRITE if any(pa.types.is_string(f.type) for f in schema) else PLAIN

    def add(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self._parts.append(table)
        self._buffered += table.num_rows
        self.rows += table.num_rows
        if self._buffered >= self.max_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buffered:
            return
        with _writing(self.folder):
            self._flush_to_disk()

    def _flush_to_disk(self) -> None:
        table = pa.concat_tables(self._parts).combine_chunks()
        self._parts, self._buffered = [], 0
        order, bounds = partition_order(table.column(self.column), self.partitions)
        # one record batch in partition order, written a slice per partition (a slice is a view, not a copy)
        ordered = pa.record_batch([column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
                                   for column in table.cast(self.schema).columns], schema=self.schema)
        ordered = ordered.take(pa.array(order))
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="overlap-spill-", dir=self.folder))
        path = self._dir / f"{len(self.files):05d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, self.schema, options=self._options) as writer:
            for p in range(self.partitions):
                writer.write_batch(ordered.slice(int(bounds[p]), int(bounds[p + 1] - bounds[p])))
        self.files.append(path)

    def partitions_read(self) -> Iterator[pa.Table]:
        """Every row once, grouped so that rows with equal `column` values come in the same table."""
        for pieces in self.by_partition():
            yield pa.Table.from_batches([b for piece in pieces() for b in piece.to_batches()], schema=self.schema)

    def by_partition(self) -> Iterator[Callable[[], Iterator[pa.Table]]]:
        """Per partition, a function giving its rows a piece at a time (a spill file's part: at most `max_rows`
        and a batch), in the order added, as often as it is called while the partition is the current one: a
        partition that one value fills (an id on millions of rows) is never read at once."""
        if not self.files:
            whole = pa.concat_tables(self._parts) if self._parts else self.schema.empty_table()
            yield lambda: iter([whole])
            return
        self._flush()
        # read, not memory-mapped: a mapped file's pages stay resident once touched, and over all partitions
        # the whole spill would count in the process's memory
        handles = [pa.OSFile(str(path), "rb") for path in self.files]
        try:
            readers = [pa.ipc.open_file(handle) for handle in handles]
            for p in range(self.partitions):
                yield lambda p=p: (pa.Table.from_batches([r.get_batch(p)], schema=self.schema) for r in readers)
        finally:
            for handle in handles:
                handle.close()

    def close(self) -> None:
        self._parts = []
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


class RowStore:
    """Tables of one schema with a `row` column, appended batch by batch; `select(rows)` gives the rows asked
    for, in the order they were added. Held in memory up to `max_rows`, then every table goes to one Arrow IPC
    file; each table's lowest and highest row are kept, so a selection reads only the tables that can hold its
    rows. `consecutive`: each table holds every row from its lowest to its highest once, in order (one row of
    the side each), so its `row` column is not written but made again when read (8 bytes a row less to
    compress and keep)."""

    def __init__(self, schema: pa.Schema, *, max_rows: int, folder: str | None = None,
                 consecutive: bool = False) -> None:
        self.schema, self.max_rows, self._folder = schema, max_rows, folder
        self.consecutive = consecutive
        self._written = pa.schema([f for f in schema if f.name != "row"]) if consecutive else schema
        self._held: list[pa.Table] = []
        self._spans: list[tuple[int, int]] = []  # (lowest row, highest row) of each table, held or written
        self._rows = 0
        self._dir: Path | None = None
        self._sink = self._writer = None

    def add(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        low, high = (bound.as_py() for bound in pc.min_max(table.column("row")).values())
        if self.consecutive and high - low + 1 != table.num_rows:
            raise ValueError(f"RowStore: rows {low}..{high} in a table of {table.num_rows} are not consecutive")
        self._spans.append((low, high))
        self._rows += table.num_rows
        if self._writer is None and self._rows <= self.max_rows:
            self._held.append(table)
            return
        with _writing(self._folder):
            self._write_to_disk(table)

    def _write_to_disk(self, table: pa.Table) -> None:
        if self._writer is None:
            self._dir = Path(tempfile.mkdtemp(prefix="overlap-store-", dir=self._folder))
            self._sink = pa.OSFile(str(self._dir / "rows.arrow"), "wb")
            self._writer = pa.ipc.new_file(self._sink, self._written, options=WRITE)
            for held in self._held:
                self._write(held)
            self._held = []
        self._write(table)

    def _write(self, table: pa.Table) -> None:
        """One record batch per table: batch i of the file is table i (the spans' index)."""
        table = table.cast(self.schema)
        if self.consecutive:
            table = table.drop_columns(["row"])
        self._writer.write_batch(table.combine_chunks().to_batches()[0])

    def held_rows(self) -> int:
        """Rows held in memory: up to `max_rows`, none once the tables go to the file."""
        return sum(table.num_rows for table in self._held)

    def select(self, rows: np.ndarray) -> pa.Table:
        """The stored rows whose `row` is in `rows`, in the order added (no more tables can be added after)."""
        rows = np.unique(np.asarray(rows, np.int64))
        if not len(rows) or not self._spans:
            return self.schema.empty_table()
        first = np.array([a for a, _ in self._spans], np.int64)
        last = np.array([b for _, b in self._spans], np.int64)
        wanted = np.flatnonzero(np.searchsorted(rows, first, "left") < np.searchsorted(rows, last, "right"))
        # one table read at a time and filtered at once: only the rows asked for are held
        found = [table.filter(_among(table.column("row"), rows)) for table in self.tables(wanted)]
        return pa.concat_tables(found) if found else self.schema.empty_table()

    def tables(self, which: Iterable[int] | None = None) -> Iterator[pa.Table]:
        """The tables added (those at the indices `which`, default all), one at a time, in the order added (no
        more tables can be added after)."""
        if self._writer is not None:
            self._writer.close()
            self._sink.close()
            self._writer = self._sink = None
        which = range(len(self._spans)) if which is None else which
        if self._dir is None:
            yield from (self._held[int(i)].cast(self.schema) for i in which)
            return
        with pa.OSFile(str(self._dir / "rows.arrow"), "rb") as handle:
            reader = pa.ipc.open_file(handle)
            for i in which:
                table = pa.Table.from_batches([reader.get_batch(int(i))])
                if self.consecutive:
                    low, high = self._spans[int(i)]
                    table = table.add_column(self.schema.get_field_index("row"), "row",
                                             pa.array(np.arange(low, high + 1, dtype=np.int64)))
                yield table.cast(self.schema)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._sink.close()
            self._writer = self._sink = None
        self._held = []
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


@contextmanager
def _writing(folder: str | None):
    """An OS error while spilling (a full disk, a temp folder that cannot be written) as one line naming the
    folder and what to do: it is the temp folder, not the user's --out, that needs the room."""
    try:
        yield
    except OSError as exc:
        where = folder or tempfile.gettempdir()
        reason = os.strerror(exc.errno) if exc.errno else (exc.strerror or str(exc) or type(exc).__name__)
        raise InputError(f"{where}: {reason} while spilling rows of the training side to disk (past 1M rows they "
                         "wait there for the whole-side counts); free some space there or set TMPDIR to a folder "
                         "with room") from None


def in_sorted(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether each of `values` is in `rows` (sorted): a binary search per value. Asked batch after batch
    against millions of rows (the repeats, the rows a pass names), a hash set or `np.isin` would rebuild its
    index of `rows` every time and cost more than the batch."""
    if not len(rows):
        return np.zeros(len(values), bool)
    at = np.minimum(np.searchsorted(rows, values), len(rows) - 1)
    return rows[at] == values


def _among(column, rows: np.ndarray) -> pa.Array:
    return pa.array(in_sorted(column.to_numpy(zero_copy_only=False), rows))
