"""The inputs of the text check: train and bench tables, the id-matched pairs, and a tee that keeps the
identifier targets of the paired train rows while the train batches stream past."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .identifiers import Targets, extract_targets
from .tokenize import to_string_array


def table_from_frame(df: pd.DataFrame, columns: Sequence[str], what: str) -> pa.Table:
    """The named columns of a DataFrame as an Arrow table (mixed str / bytes columns become bytes)."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{what}: no column {', '.join(repr(c) for c in missing)} "
                         f"(columns: {', '.join(map(str, df.columns))})")
    arrays = {}
    for c in dict.fromkeys(columns):
        col = df[c]
        try:
            arrays[c] = pa.array(col, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # e.g. str and bytes mixed: keep as bytes
            arrays[c] = pa.array(col.astype(object), type=pa.large_binary(), from_pandas=True)
    return pa.table(arrays)


def train_batches(train, columns: Sequence[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
    """Record batches of the train side (DataFrame, Arrow table, batch, or iterable of those)."""
    if isinstance(train, pd.DataFrame):
        yield from table_from_frame(train, columns, "train").to_batches(max_chunksize=batch_rows)
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


def bench_table(bench, id_col: str, field_: str) -> pa.Table:
    """The id and text columns of the bench side (DataFrame or Arrow table)."""
    if isinstance(bench, pd.DataFrame):
        return table_from_frame(bench, [id_col, field_], "bench")
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
                    texts, _ = to_string_array(batch.column(batch.schema.names.index(self.field)).take(rows))
                    for i, t in zip(ids.take(rows).to_pylist(), texts.to_pylist(), strict=True):
                        if i not in self.values:  # keep the targets, not the (possibly long) text
                            self.values[i] = extract_targets(t)
            yield batch
