"""The filtered split of an in-memory training set in the form it was given (`overlap.sources.formats.in_memory`): the
kept rows (`kept_split`) and the removed ones with why each went (`removed_rows`), cut by the filter's mask."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from .in_memory import DICT_KINDS, MemoryInput, kind_of

REASON_COLUMNS = ("overlap_reasons", "overlap_bench_ids")  # added to the removed rows: why each went


def kept_split(memory: MemoryInput, keep: Any, shard: str) -> Any:
    """The kept rows in the type `memory` was given in. Held data is cut by the mask in its own library (a
    `datasets.Dataset` by `select`, keeping its features and order; a DataFrame by boolean indexing, keeping its
    index; a DatasetDict has its split replaced). A stream, which can only be read again, is given back over the
    written and verified parquet `shard`: an IterableDataset streaming it, a RecordBatchReader of its batches, a
    pyarrow dataset of it."""
    import numpy as np

    keep = np.asarray(keep, dtype=bool)
    kind, value = memory.kind, memory.value
    if kind == "datasets.Dataset":
        kept = value.select(np.flatnonzero(keep))
    elif kind == "pandas.DataFrame":
        kept = value[keep]
    elif kind == "polars.DataFrame":
        kept = value.filter(keep)
    elif kind == "pyarrow.Table":
        kept = value.filter(pa.array(keep))
    elif kind == "datasets.IterableDataset":
        import datasets  # imported here: the caller gave a datasets object, so it is installed

        kept = datasets.load_dataset("parquet", data_files={"train": shard}, split="train", streaming=True)
        if value.features is not None:
            kept = kept.cast(value.features)
    elif kind == "pyarrow.RecordBatchReader":
        import pyarrow.parquet as pq

        handle = pq.ParquetFile(shard)
        kept = pa.RecordBatchReader.from_batches(handle.schema_arrow, handle.iter_batches())
    else:
        import pyarrow.dataset as pads

        kept = pads.dataset(shard, format="parquet")
    if memory.given in DICT_KINDS:
        kept = type(memory.original)({**memory.original, memory.split: kept})
    return kept


def removed_rows(memory: MemoryInput, keep: Any, removed: Any) -> Any:
    """The removed rows with why each went (`overlap_reasons`, `overlap_bench_ids`, from `removed`: the filter's
    removed table, one row per removed row in source order): held data in its own type (a DatasetDict gives
    the split's Dataset), a stream's as a pyarrow Table (read again: only the removed rows are held)."""
    import numpy as np

    keep = np.asarray(keep, dtype=bool)
    gone = np.flatnonzero(~keep)
    reasons = [list(removed["reasons"].astype(str)), list(removed["bench_ids"].fillna("").astype(str))]
    kind, value = memory.kind, memory.value
    if kind == "datasets.Dataset":
        from datasets import utils as datasets_bars  # imported here: the caller gave a datasets object

        quiet = datasets_bars.are_progress_bars_disabled()
        datasets_bars.disable_progress_bars()  # adding a column to a selection shows one: not the user's step
        try:
            rows = value.select(gone)
            for name, values in zip(REASON_COLUMNS, reasons, strict=True):
                rows = rows.add_column(name, values)
        finally:
            if not quiet:
                datasets_bars.enable_progress_bars()
        return rows
    if kind == "pandas.DataFrame":
        return value[~keep].assign(**dict(zip(REASON_COLUMNS, reasons, strict=True)))
    if kind == "polars.DataFrame":
        import polars  # imported here: the caller gave a polars frame

        return value.filter(~keep).with_columns(*(polars.Series(n, v, dtype=polars.String)
                                                 for n, v in zip(REASON_COLUMNS, reasons, strict=True)))
    if kind == "pyarrow.Table":
        table = value.take(pa.array(gone, pa.int64()))
    else:
        pieces, offset = [], 0
        for batch in memory.raw_batches(65536):
            here = gone[(gone >= offset) & (gone < offset + batch.num_rows)] - offset
            if len(here):
                pieces.append(pa.Table.from_batches([batch.take(pa.array(here, pa.int64()))]))
            offset += batch.num_rows
        schema = memory.schema() or (pieces[0].schema if pieces else pa.schema([]))
        table = pa.concat_tables(pieces, promote_options="permissive") if pieces else schema.empty_table()
    for name, values in zip(REASON_COLUMNS, reasons, strict=True):
        table = table.append_column(name, pa.array(values, pa.string()))
    return table


def readable_again(value: Any) -> bool:
    """Whether reading `value` leaves it as it was (a RecordBatchReader is used up)."""
    return kind_of(value) != "pyarrow.RecordBatchReader"
