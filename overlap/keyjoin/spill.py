"""Rows of one schema, held in memory up to a bound and past it written to disk in hash partitions, then read
back one partition at a time: what lets a count over every row of a side (distinct ids, keys shared by two
items) stay within a bounded memory whatever the side's size.

Below `max_rows` nothing is hashed or written: the rows come back as one partition. Past it, each flush sorts
the buffered rows by partition (a hash of one string column, `hashing.partition_of`) and writes one Arrow IPC
file holding one record batch per partition; a partition read back is the concatenation of its batches.
Equal strings always share a partition, and every decision is taken on the strings themselves.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from .hashing import partition_of

PARTITIONS = 64


class Spill:
    def __init__(self, schema: pa.Schema, column: str, *, max_rows: int, partitions: int = PARTITIONS,
                 folder: str | None = None) -> None:
        self.schema, self.column, self.max_rows, self.partitions = schema, column, max_rows, partitions
        self._folder = folder
        self._dir: Path | None = None
        self._parts: list[pa.Table] = []
        self._buffered = 0
        self.files: list[Path] = []
        self.rows = 0

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
        table = pa.concat_tables(self._parts).combine_chunks()
        self._parts, self._buffered = [], 0
        where = partition_of(table.column(self.column), self.partitions)
        order = np.argsort(where, kind="stable")
        bounds = np.searchsorted(where[order], np.arange(self.partitions + 1))
        table = table.take(pa.array(order))
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="overlap-spill-", dir=self._folder))
        path = self._dir / f"{len(self.files):05d}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, self.schema) as writer:
            for p in range(self.partitions):
                piece = table.slice(int(bounds[p]), int(bounds[p + 1] - bounds[p]))
                writer.write_batch(pa.record_batch([piece.column(i).combine_chunks() for i in range(piece.num_columns)],
                                                   schema=self.schema))
        self.files.append(path)

    def partitions_read(self) -> Iterator[pa.Table]:
        """Every row once, grouped so that rows with equal `column` values come in the same table."""
        if not self.files:
            yield pa.concat_tables(self._parts) if self._parts else self.schema.empty_table()
            return
        self._flush()
        # read, not memory-mapped: a mapped file's pages stay resident once touched, and over all partitions
        # the whole spill would count in the process's memory
        handles = [pa.OSFile(str(path), "rb") for path in self.files]
        try:
            readers = [pa.ipc.open_file(handle) for handle in handles]
            for p in range(self.partitions):
                yield pa.Table.from_batches([r.get_batch(p) for r in readers], schema=self.schema)
        finally:
            for handle in handles:
                handle.close()

    def close(self) -> None:
        self._parts = []
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
