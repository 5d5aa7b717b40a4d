"""The ids of a streamed side that are in no pair, in source order: the id column read again (ids only), the
rows that repeat an earlier id and the paired ids left out. A list of every id is what streaming avoids
holding, so it is produced on demand, as train_clean_ids.txt is written."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..ids.recognise import id_strings
from ..sources.batches import open_batches
from .spill import in_sorted


def item_ids(values) -> pa.Array:
    """An id column as item ids (`read_generic`'s: the id as text, null where it is missing or blank)."""
    text = id_strings(values)
    blank = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(text), ""), True)
    return pc.if_else(blank, pa.scalar(None, pa.string()), text)


def clean_ids(source: str | os.PathLike, id_column: str, repeats: np.ndarray, matched: set[str], *,
              split: str | None = None, filesystem: Any = None, batch_rows: int = 65536) -> Iterator[pa.Array]:
    """The clean ids a batch at a time (string arrays): a side of 100M ids is never one list."""
    matched_ids = pa.array(sorted(matched), pa.string())
    row = 0
    for batch in open_batches(source, [id_column], split=split, batch_rows=batch_rows, filesystem=filesystem):
        ids = item_ids(batch.column(0))
        keep = pc.and_(pc.is_valid(ids), pc.invert(pc.is_in(ids, value_set=matched_ids)))
        if len(repeats):
            rows = np.arange(row, row + batch.num_rows)
            keep = pc.and_(keep, pa.array(~in_sorted(rows, repeats)))
        row += batch.num_rows
        yield ids.filter(pc.fill_null(keep, False))
