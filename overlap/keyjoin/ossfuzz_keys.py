"""The OSS-Fuzz keys of a streamed side, kept on disk past a bound and read back a batch at a time.

The chance baselines, the id description and the related bugs read every OSS-Fuzz key of a side. Held as
one frame they grow with the side: a side of distinct OSS-Fuzz ids holds one key per row (10M rows half
`arvo_<n>`: 5M keys, ~1 GB as a pandas frame of strings). Here they wait in a `RowStore` (memory up to a
spill's worth of rows, then one LZ4 Arrow file in the temp folder) as every row's keys came, repeats
included; the side's repeat rows are known only at its end, and are left out as the keys are read back.

Which keys are read back is the held path's: the keys of the side's items (an id's first row), in row
order, so each consumer's result is the held path's, read a frame at a time (`frames()`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .spill import RowStore, Spill

# The canonical ids by a mix of their number (the spill partitions by a hash's low bits)
ID_SCHEMA = pa.schema([("hash", pa.uint64()), ("id", pa.int64())])

OSSFUZZ_SCHEMA = pa.schema([("row", pa.int64()), ("item_id", pa.string()), ("value", pa.string()),
                            ("raw", pa.string())])


class OssfuzzKeys:
    """Appended batch by batch while a side streams; after `finish(repeats)`, `frames()` gives its items'
    OSS-Fuzz keys (KEY_COLUMNS, kind `ossfuzz`) in row order, as often as asked. The temp file goes with
    the object (or at exit), since the outputs read the keys after the scan's own stores are closed."""

    def __init__(self, *, max_rows: int, folder: str | None = None) -> None:
        self._store = RowStore(OSSFUZZ_SCHEMA, max_rows=max_rows, folder=folder)
        self._max_rows, self._folder = max_rows, folder
        self._distinct: int | None = None
        self._repeats = None
        self.close = weakref.finalize(self, self._store.close)

    def add(self, table: pa.Table) -> None:
        self._store.add(table)

    def finish(self, repeats) -> None:
        """`repeats`: the side's repeat rows (`holds(rows)`, `len()`), whose keys are left out."""
        self._repeats = repeats

    def tables(self) -> Iterator[pa.Table]:
        """The items' keys (OSS-Fuzz schema: row, item_id, value, raw), a stored table at a time."""
        for table in self._store.tables():
            if self._repeats is not None and len(self._repeats) and table.num_rows:
                table = table.filter(pa.array(~self._repeats.holds(table.column("row").to_numpy())))
            if table.num_rows:
                yield table

    def held_rows(self) -> int:
        """Keys held in memory (the rest are in the file): at most a spill's worth."""
        return self._store.held_rows()

    def distinct_values(self) -> int:
        """How many distinct canonical ids (as numbers) the items' keys hold: counted a hash partition at a
        time (equal ids share one), so within a spill's rows however many there are."""
        if self._distinct is None:
            by_id = Spill(ID_SCHEMA, "hash", max_rows=self._max_rows, folder=self._folder)
            try:
                for table in self.tables():
                    ids = pc.cast(table.column("value"), pa.int64()).to_numpy()
                    by_id.add(pa.table({"hash": _mixed(ids), "id": ids}, schema=ID_SCHEMA))
                self._distinct = sum(len(np.unique(np.concatenate([p.column("id").to_numpy() for p in pieces()])))
                                     for pieces in by_id.by_partition())
            finally:
                by_id.close()
        return self._distinct

    def frames(self) -> Iterator[pd.DataFrame]:
        """The items' keys as KEY_COLUMNS frames, a stored table at a time (at most a batch's rows each)."""
        for table in self.tables():
            yield key_frame(table)

    def frame(self) -> pd.DataFrame:
        """Every key in one frame: what a consumer that needs them at once holds (grows with the side)."""
        tables = list(self.tables())
        return key_frame(pa.concat_tables(tables) if tables else OSSFUZZ_SCHEMA.empty_table())


def key_frame(table: pa.Table) -> pd.DataFrame:
    """KEY_COLUMNS of OSS-Fuzz keys (row, item_id, value, raw), typed as `read_generic` types its keys."""
    kind = pa.repeat(pa.scalar("ossfuzz"), table.num_rows)
    return pa.table({"item_id": table.column("item_id"), "kind": kind, "value": table.column("value"),
                     "raw": table.column("raw")}).to_pandas().astype("string")


def _mixed(numbers: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser of each number: every bit of it in the low bits that pick a partition."""
    with np.errstate(over="ignore"):
        x = numbers.astype(np.uint64)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))
