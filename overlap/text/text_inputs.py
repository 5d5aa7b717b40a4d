"""The inputs of the text check: train and bench tables, the id-matched pairs, and a tee that keeps the
identifier targets of the paired train rows while the train batches stream past."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..sources.formats.in_memory import kind_of, memory_input
from .cell_checks import CellCounts, python_cells, text_cells
from .identifiers import Targets, extract_targets
from .string_arrays import to_string_array


def table_from_frame(df: pd.DataFrame, columns: Sequence[str], what: str,
                     counts: dict[str, CellCounts] | None = None, id_col: str | None = None) -> pa.Table:
    """The named columns of a DataFrame as an Arrow table (mixed str / bytes columns become bytes).

    A column Arrow cannot type (e.g. text mixed with numbers or lists) keeps its text cells; its other cells
    become null, counted in ``counts[column]`` when given (the text check's ``non_text_cells``).
    """
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{what}: no column {', '.join(repr(c) for c in missing)} "
                         f"(columns: {', '.join(map(str, df.columns))})")
    arrays = {}
    ids = df[id_col].tolist() if id_col is not None and id_col in df.columns else None
    for c in dict.fromkeys(columns):
        col = df[c]
        try:
            arrays[c] = pa.array(col, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            if c == id_col:  # ids of mixed types: as written
                arrays[c] = pa.array([None if v is None else str(v) for v in col.astype(object)], pa.string())
            else:  # keep the text (str / bytes) cells, count and null the others
                arrays[c] = python_cells(col.tolist(), ids, (counts or {}).get(c))
    return pa.table(arrays)


def train_batches(train, columns: Sequence[str], batch_rows: int, counts: dict[str, CellCounts] | None = None,
                  id_col: str | None = None) -> Iterator[pa.RecordBatch]:
    """Record batches of the train side (DataFrame, Arrow table, batch, or iterable of those)."""
    if isinstance(train, pd.DataFrame):
        yield from table_from_frame(train, columns, "train", counts, id_col).to_batches(max_chunksize=batch_rows)
        return
    if isinstance(train, pa.Table):
        missing = [c for c in columns if c not in train.column_names]
        if missing:
            raise InputError(f"train: no column {', '.join(repr(c) for c in missing)}")
        yield from train.select(list(dict.fromkeys(columns))).to_batches(max_chunksize=batch_rows)
        return
    if isinstance(train, pa.RecordBatch):
        train = [train]
    for batch in train:
        if isinstance(batch, pa.Table):
            yield from train_batches(batch, columns, batch_rows)
            continue
        missing = [c for c in columns if c not in batch.schema.names]
        if missing:
            raise InputError(f"train: no column {', '.join(repr(c) for c in missing)}")
        yield batch


def _other_memory_kind(value) -> bool:
    """An in-memory dataset this module does not read as it is (a pandas frame, an Arrow table and an iterable
    of record batches it does)."""
    return kind_of(value) not in (None, "pandas.DataFrame", "pyarrow.Table", "pyarrow.RecordBatchReader")


def in_memory_train(train, columns: Sequence[str], batch_rows: int):
    """`train`, or for a `datasets` Dataset, DatasetDict (one split), IterableDataset, polars frame or pyarrow
    dataset its record batches of the asked `columns` (`overlap.sources.formats.in_memory`), streamed a batch at a
    time."""
    if not _other_memory_kind(train):
        return train
    memory = memory_input(train)
    missing = [c for c in dict.fromkeys(columns) if memory.columns() is not None and c not in memory.columns()]
    if missing:
        raise InputError(f"train: no column {', '.join(repr(c) for c in missing)} (columns: "
                         f"{', '.join(memory.columns() or [])})")
    wanted = list(dict.fromkeys(columns))
    return (batch.select(wanted) for batch in memory.raw_batches(batch_rows, wanted))


def in_memory_bench(bench, columns: Sequence[str]):
    """`bench`, or for an in-memory dataset `bench_table` does not read as it is, its asked `columns` as one Arrow
    table (a benchmark is held whole)."""
    if not _other_memory_kind(bench) and kind_of(bench) != "pyarrow.RecordBatchReader":
        return bench
    memory = memory_input(bench)
    wanted = list(dict.fromkeys(columns))
    batches = list(memory.raw_batches(65536, wanted))
    missing = [c for c in wanted if c not in (batches[0].schema.names if batches else memory.columns() or [])]
    if missing:
        raise InputError(f"bench: no column {', '.join(repr(c) for c in missing)}")
    if not batches:
        return pa.table({c: pa.array([], pa.string()) for c in wanted})
    return pa.Table.from_batches([b.select(wanted) for b in batches])


def bench_table(bench, id_col: str, field_: str, counts: dict[str, CellCounts] | None = None) -> pa.Table:
    """The id and text columns of the bench side (DataFrame or Arrow table)."""
    if isinstance(bench, pd.DataFrame):
        return table_from_frame(bench, [id_col, field_], "bench", counts, id_col)
    if isinstance(bench, pa.Table):
        missing = [c for c in (id_col, field_) if c not in bench.column_names]
        if missing:
            raise InputError(f"bench: no column {', '.join(repr(c) for c in missing)}")
        return bench.select(list(dict.fromkeys([id_col, field_])))
    raise InputError("bench must be a pandas DataFrame or an Arrow table")


def pair_list(pairs) -> list[tuple[str, str]]:
    """Sorted distinct (train id, bench id) pairs from a DataFrame or an iterable of pairs."""
    if pairs is None:
        return []
    if isinstance(pairs, pd.DataFrame):
        for c in ("train_id", "bench_id"):
            if c not in pairs.columns:
                raise InputError(f"pairs: no column '{c}'")
        t = pairs["train_id"].astype("string")
        b = pairs["bench_id"].astype("string")
        keep = t.notna() & b.notna()
        return sorted(set(zip(t[keep].tolist(), b[keep].tolist(), strict=True)))
    return sorted({(str(t), str(b)) for t, b in pairs})


class IdentifierTee:
    """Passes batches through while keeping the identifier targets of the rows in pairs."""

    def __init__(self, batches: Iterable[pa.RecordBatch], id_col: str, field_: str | None, wanted: pa.Array):
        self.batches, self.id_col, self.field, self.wanted = batches, id_col, field_, wanted
        self.values: dict[str, Targets] = {}

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for batch in self.batches:
            if self.field is not None and len(self.wanted):
                ids = batch.column(batch.schema.names.index(self.id_col)).cast(pa.string())
                hit = pc.is_in(ids, value_set=self.wanted)
                if pc.any(hit).as_py():
                    rows = pa.array(np.flatnonzero(hit.to_numpy(zero_copy_only=False)))
                    column = batch.column(batch.schema.names.index(self.field)).take(rows)
                    texts, _ = to_string_array(text_cells(column))
                    for i, t in zip(ids.take(rows).to_pylist(), texts.to_pylist(), strict=True):
                        if i not in self.values:  # keep the targets, not the (possibly long) text
                            self.values[i] = extract_targets(t)
            yield batch
