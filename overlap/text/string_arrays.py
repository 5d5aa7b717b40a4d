"""Anything text-like as a valid UTF-8 Arrow string array, and a string array's bytes and row offsets.

`to_string_array` counts and nulls the rows that are not valid UTF-8 (never raises on them): what it returns
is what every tokenizer and the n-gram scan read. `_buffers` gives the bytes and offsets without a copy.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _invalid_rows(arr: pa.Array, start: int = 0) -> list[int]:
    """Rows of a binary array that are not valid UTF-8, by bisection (vectorised casts)."""
    try:
        arr.cast(pa.large_string())
        return []
    except pa.ArrowInvalid:
        pass
    if len(arr) == 1:
        return [start]
    half = len(arr) // 2
    return _invalid_rows(arr.slice(0, half), start) + _invalid_rows(arr.slice(half), start + half)


def to_string_array(values) -> tuple[pa.Array, int]:
    """Make ``values`` a valid UTF-8 Arrow string array. Returns (array, rows nulled as non-UTF-8).

    Accepts Arrow arrays/chunked arrays of string, binary or null type, and Python sequences or pandas
    Series of str, bytes and None (mixed allowed). Bytes that are not valid UTF-8 become null and are
    counted, never raised.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if not isinstance(values, pa.Array):
        try:
            values = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            values = pa.array(values, type=pa.large_binary(), from_pandas=True)
    t = values.type
    if pa.types.is_dictionary(t):
        values = values.cast(t.value_type)
        t = values.type
    if pa.types.is_null(t):
        return pa.nulls(len(values), pa.string()), 0
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        try:
            values.validate(full=True)
            return values, 0
        except pa.ArrowInvalid:  # a string array holding invalid UTF-8: re-check it as bytes
            values = values.view(pa.binary() if pa.types.is_string(t) else pa.large_binary())
            t = values.type
    if pa.types.is_fixed_size_binary(t):
        values = values.cast(pa.binary())
        t = values.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        bad = _invalid_rows(values)
        if bad:
            mask = np.zeros(len(values), dtype=bool)
            mask[bad] = True
            values = pc.if_else(pa.array(mask), pa.scalar(None, values.type), values)
        target = pa.string() if pa.types.is_binary(t) else pa.large_string()
        return values.cast(target), len(bad)
    raise TypeError(f"expected text, got Arrow type {t}")


def _buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, row byte offsets starting at 0) of a string array without copying."""
    offset_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=offset_type)[arr.offset : arr.offset + len(arr) + 1]
    if len(offsets) == 0:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    lo, hi = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi] if bufs[2] is not None and hi > lo else np.zeros(0, np.uint8)
    return data, offsets.astype(np.int64) - lo
