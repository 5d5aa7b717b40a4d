"""The ids of a streamed side that are in no pair, in source order: the id column (with the repo and PR
columns, when the set has both) read again, the rows that repeat an earlier id and the paired ids left out. A
list of every id is what streaming avoids holding, so it is produced on demand, as train_clean_ids.txt is
written."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..sources.formats.batches import open_batches
from ..sources.rows.batch_keys import clean_id_columns, item_ids_of_batch
from ..sources.rows.columns import GenericColumns
from .row_bits import RowBits


def id_batches(source: str | os.PathLike, columns: GenericColumns, *, split: str | None = None,
               filesystem: Any = None, batch_rows: int = 65536) -> Iterator[tuple[str, int, int, pa.Array]]:
    """(file name, the batch's first position in that file, its first row across files, each row's item id)
    per batch of the source read again: rows numbered as the scan numbered them."""
    wanted = clean_id_columns(columns)
    # the files were hashed for the provenance when the scan read them: a re-read only needs the rows
    batches = open_batches(source, wanted[:1], optional=wanted[1:], split=split, batch_rows=batch_rows,
                           filesystem=filesystem, hash_files=False)
    offset = 0
    for data_file, file_batches in batches.iter_files():
        file_row = 0
        for batch in file_batches:
            yield data_file.name, file_row, offset + file_row, item_ids_of_batch(batch, columns)
            file_row += batch.num_rows
        offset += file_row


def clean_ids(source: str | os.PathLike, columns: GenericColumns, repeats: RowBits, matched: set[str],
              **reading: Any) -> Iterator[pa.Array]:
    """The clean ids a batch at a time (string arrays): a side of 100M ids is never one list. Each row's id is
    the scan's (`item_ids_of`: a row without an id cell has its PR's conventional id when the set has repo and
    PR columns)."""
    matched_ids = pa.array(sorted(matched), pa.string())
    for _, _, first, ids in id_batches(source, columns, **reading):
        keep = pc.and_(pc.is_valid(ids), pc.invert(pc.is_in(ids, value_set=matched_ids)))
        if len(repeats):
            keep = pc.and_(keep, pa.array(~repeats.holds(np.arange(first, first + len(ids)))))
        yield ids.filter(pc.fill_null(keep, False))


def locate(source: str | os.PathLike, columns: GenericColumns, repeat_rows: RowBits, ids: set[str],
           repeats: bool, **reading: Any) -> pd.DataFrame:
    """item_id, file, file_row, row, first (False: the row repeats an earlier row's id) of every row whose id
    is one of `ids`, and of every repeat row when `repeats`, in source order: what a filter drops, found by
    reading the id column again (only those rows are held)."""
    wanted = pa.array(sorted(ids), pa.string())
    found = []
    for name, file_row, first, item_ids in id_batches(source, columns, **reading):
        n = len(item_ids)
        rows = np.arange(first, first + n)
        repeat = repeat_rows.holds(rows)
        hit = pc.fill_null(pc.is_in(item_ids, value_set=wanted), False).to_numpy(zero_copy_only=False)
        if repeats:
            hit |= repeat & pc.is_valid(item_ids).to_numpy(zero_copy_only=False)
        if hit.any():
            found.append(pd.DataFrame({"item_id": item_ids.filter(pa.array(hit)).to_pylist(), "file": name,
                                       "file_row": np.arange(file_row, file_row + n)[hit], "row": rows[hit],
                                       "first": ~repeat[hit]}))
    if not found:
        return pd.DataFrame({"item_id": [], "file": [], "file_row": np.zeros(0, np.int64),
                             "row": np.zeros(0, np.int64), "first": np.zeros(0, bool)})
    return pd.concat(found, ignore_index=True)
