"""The ids of a streamed side that are in no pair, in source order: the id column (with the repo and PR
columns, when the set has both) read again, the rows that repeat an earlier id and the paired ids left out. A
list of every id is what streaming avoids holding, so it is produced on demand, as train_clean_ids.txt is
written."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..sources.batches import open_batches
from ..sources.generic import GenericColumns, clean_id_columns, item_ids_of_batch
from .spill import in_sorted


def clean_ids(source: str | os.PathLike, columns: GenericColumns, repeats: np.ndarray, matched: set[str], *,
              split: str | None = None, filesystem: Any = None, batch_rows: int = 65536) -> Iterator[pa.Array]:
    """The clean ids a batch at a time (string arrays): a side of 100M ids is never one list. Each row's id is
    the scan's (`item_ids_of`: a row without an id cell has its PR's conventional id when the set has repo and
    PR columns)."""
    matched_ids = pa.array(sorted(matched), pa.string())
    wanted = clean_id_columns(columns)
    row = 0
    for batch in open_batches(source, wanted[:1], optional=wanted[1:], split=split, batch_rows=batch_rows,
                              filesystem=filesystem):
        ids = item_ids_of_batch(batch, columns)
        keep = pc.and_(pc.is_valid(ids), pc.invert(pc.is_in(ids, value_set=matched_ids)))
        if len(repeats):
            rows = np.arange(row, row + batch.num_rows)
            keep = pc.and_(keep, pa.array(~in_sorted(rows, repeats)))
        row += batch.num_rows
        yield ids.filter(pc.fill_null(keep, False))
