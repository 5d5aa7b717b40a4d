"""The cells of a text column before the text check: what is not text, and what is too long.

Rule: a text cell is a ``str`` (or ``bytes``, checked for UTF-8 later). Null cells (None, NaN, NA) are
counted as ``null`` as before. Every other cell (int, float, bool, list, dict, ...) is **not text**: it
is counted (``non_text_cells``, with an example item id and the types seen) and skipped like a null; it
is never converted, because no conversion is right for every dataset (``42`` as the words "42", a list of
messages joined how?), and a number in a text column is almost always a column mix-up worth seeing.

A text over the field cap (:data:`overlap.model.FIELD_CAP_BYTES` of UTF-8) is truncated on a character
boundary for matching and counted (``truncated``: fields, column, an example item id), so one huge field
costs at most the cap, wherever it came from (a local file, a lazily fetched column, an Arrow table).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model import FIELD_CAP_BYTES, utf8_cut


@dataclass
class CellCounts:
    """What :func:`text_cells` skipped or cut in one text column."""

    column: str
    cap: int = FIELD_CAP_BYTES
    non_text: int = 0
    non_text_example: str | None = None
    non_text_types: Counter = field(default_factory=Counter)
    truncated: int = 0
    truncated_example: str | None = None

    def note_non_text(self, ids, rows, types) -> None:
        rows = list(rows)
        if not rows:
            return
        self.non_text += len(rows)
        self.non_text_types.update(types)
        if self.non_text_example is None:
            self.non_text_example = _id_at(ids, rows[0])

    def summary(self) -> dict:
        """Keys added to the text check's per-side counts (``train`` / ``bench`` of its summary)."""
        return {
            "non_text_cells": self.non_text,
            "non_text_example": self.non_text_example,
            "non_text_types": dict(sorted(self.non_text_types.items())),
            "truncated": {"fields": self.truncated, "column": self.column, "example": self.truncated_example,
                          "cap_bytes": self.cap},
        }


def _id_at(ids, row: int) -> str | None:
    if ids is None:
        return None
    value = ids[row]
    value = value.as_py() if isinstance(value, pa.Scalar) else value
    return None if value is None else str(value)


def is_null_cell(value: object) -> bool:
    """None, NaN, pandas NA / NaT."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def python_cells(values, ids=None, counts: CellCounts | None = None) -> pa.Array:
    """A sequence of Python cells as a string or binary Arrow array: str/bytes kept, null cells null, every
    other cell counted in ``counts`` and null."""
    out: list = []
    bad_rows: list[int] = []
    bad_types: list[str] = []
    for row, value in enumerate(values):
        if isinstance(value, (str, bytes)):
            out.append(value)
        elif isinstance(value, (bytearray, memoryview)):
            out.append(bytes(value))
        elif is_null_cell(value):
            out.append(None)
        else:
            out.append(None)
            bad_rows.append(row)
            bad_types.append(type(value).__name__)
    if counts is not None:
        counts.note_non_text(ids, bad_rows, bad_types)
    try:
        return pa.array(out, type=pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # bytes among the strings: all bytes, UTF-8 checked later
        return pa.array(out, type=pa.large_binary())


def _is_texty(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_null(t))


def text_cells(values, ids=None, counts: CellCounts | None = None) -> pa.Array:
    """``values`` (Arrow array / chunked array, pandas Series or Python sequence) as a string, binary or null
    Arrow array: non-text cells null (and counted), texts over the cap truncated and counted. Without
    ``counts`` nothing is truncated (the scan itself reads a long text in blocks)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if not isinstance(values, pa.Array):
        try:
            values = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            values = python_cells(values, ids, counts)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not _is_texty(values.type):
        valid = np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False))
        if counts is not None:
            counts.note_non_text(ids, valid.tolist(), [str(values.type)] * len(valid))
        return pa.nulls(len(values), pa.string())
    if pa.types.is_fixed_size_binary(values.type):
        values = values.cast(pa.binary())
    return cap_array(values, ids, counts) if counts is not None else values


def cap_array(values: pa.Array, ids=None, counts: CellCounts | None = None) -> pa.Array:
    """Texts longer than the cap (bytes) cut on a UTF-8 character boundary; counted in ``counts``."""
    cap = counts.cap if counts is not None else FIELD_CAP_BYTES
    if pa.types.is_null(values.type) or len(values) == 0:
        return values
    lengths = pc.binary_length(values)
    if (pc.max(lengths).as_py() or 0) <= cap:
        return values
    over = np.flatnonzero(pc.fill_null(pc.greater(lengths, cap), False).to_numpy(zero_copy_only=False))
    cut = []
    for row in over.tolist():
        head = values[row].as_buffer()[: cap + 4].to_pybytes()  # only the head is copied
        cut.append(head[: utf8_cut(head, cap)])
    mask = np.zeros(len(values), dtype=bool)
    mask[over] = True
    if counts is not None:
        counts.truncated += len(over)
        if counts.truncated_example is None:
            counts.truncated_example = _id_at(ids, int(over[0]))
    return pc.replace_with_mask(values, pa.array(mask), pa.array(cut, type=values.type))
