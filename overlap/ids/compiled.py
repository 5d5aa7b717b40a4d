"""When the recognisers use their compiled loops (`overlap.ids.kernels`), and what they are given.

A batch of `COMPILED_FROM` values or more goes through the compiled loops; a smaller one, or any batch where
numba cannot be imported or cannot compile (or `OVERLAP_IDS_JIT=0`), through the Arrow kernels, which are the
reference: `tests/ids/test_compiled.py` holds the two equal on generated values. Loading numba costs about a
second once per process, so a small compare never pays it.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

COMPILED_FROM = 20_000
_STATE: list = []


def kernels(length: int):
    """The compiled loops for a batch of `length` values, or None (the Arrow path)."""
    if length < COMPILED_FROM:
        return None
    if not _STATE:
        module = None
        if os.environ.get("OVERLAP_IDS_JIT", "1") != "0":
            try:
                from . import kernels as module

                _smoke(module)
            except Exception:  # noqa: BLE001 - numba missing, or its compiler failing here: the Arrow path
                module = None
        _STATE.append(module)
    return _STATE[0]


def _smoke(module) -> None:
    """Compile (or load) every loop on a tiny input, so a failure shows here, not mid-batch."""
    values = pa.array(["owner__name-12", None, "ARVO:3"], pa.string())
    assert literal_bits(values, ("arvo", "__"), module).tolist() == [2, 0, 1]
    ok, repo, number, keys = owner_form_keys(pa.array(["owner__name-012", None, "o__n-0", "ARVO:3"]), module)
    assert ok.tolist() == [True, False, True, False] and repo.to_pylist() == ["owner/name", None, "o/n", None]
    assert number.to_pylist() == [12, None, None, None] and keys.to_pylist() == ["owner/name#12", None, None, None]
    assert join_pairs(repo, pa.array(["12", "1", "2", "3"]), "#", module).to_pylist()[0] == "owner/name#12"
    number, head = by_row_after_last(keys, np.array([1, 0, 0, 0]), np.array([True, False, False, False]),
                                     np.array([True, False, False, False]), "#", 2, module)
    assert number.to_pylist() == [None, 12] and head.to_pylist() == [None, "owner/name"]


def string_buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets as int64, bytes, validity as bool) of a string or large_string array, its slice offset applied."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    validity, offsets_buffer, data_buffer = values.buffers()
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    offsets = np.frombuffer(offsets_buffer, width, count=n + 1, offset=values.offset * np.dtype(width).itemsize)
    data = np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    valid = np.ones(n, bool) if validity is None else values.is_valid().to_numpy(zero_copy_only=False)
    return offsets.astype(np.int64), data, valid


def literal_bits(values: pa.Array, needles: tuple[str, ...], module) -> np.ndarray:
    """Per value, bit k set when the value, ASCII letters lowered, holds needles[k] (lowercase; at most 16)."""
    return literal_bits_and_flags(values, needles, module)[0]


def literal_bits_and_flags(values: pa.Array, needles: tuple[str, ...], module) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
    """(`literal_bits`, whether each value has a byte past ASCII, whether its first or last byte is a space,
    a control byte or past ASCII: one that trimming whitespace might change), in one pass over the bytes."""
    offsets, data, valid = string_buffers(values)
    encoded = [n.encode() for n in needles]
    joined = np.frombuffer(b"".join(encoded), np.uint8)
    starts = np.cumsum([0] + [len(e) for e in encoded]).astype(np.int64)
    first = np.zeros(256, bool)
    first[[e[0] for e in encoded]] = True
    out, flags = np.empty(len(valid), np.uint16), np.empty(len(valid), np.uint8)
    module.literal_bits(offsets, data, valid, joined, starts, first, out, flags)
    return out, (flags & 1) != 0, (flags & 2) != 0


def _strings(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray) -> pa.Array:
    """A string array of the buffers a loop wrote (past 2 GiB of bytes, the cast says so as Arrow would)."""
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    payload = pa.py_buffer(data[:offsets[-1]].copy())
    if offsets[-1] > np.iinfo(np.int32).max:
        return pa.LargeStringArray.from_buffers(len(valid), pa.py_buffer(offsets), payload, bitmap).cast(pa.string())
    return pa.StringArray.from_buffers(len(valid), pa.py_buffer(offsets.astype(np.int32)), payload, bitmap)


# per byte, whether an owner (a repo name) of the `owner__name-N` form may hold it
_OWNER_BYTE = np.zeros(256, bool)
_OWNER_BYTE[list(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")] = True
_NAME_BYTE = _OWNER_BYTE.copy()
_NAME_BYTE[list(b"._")] = True


def owner_form_keys(values: pa.Array, module) -> tuple[np.ndarray, pa.Array, pa.Array, pa.Array] | None:
    """(ok, repo `owner/name`, PR number, key `owner/name#N`) of `owner__name-N` values, in one pass: repo null
    where not ok, number and key null where not ok or the digits are no PR number (zero). None when some
    value of the form has digits too long for int64 (the caller's Arrow path reads the batch)."""
    offsets, data, valid = string_buffers(values)
    n = len(valid)
    ok, number, has_number = np.empty(n, bool), np.zeros(n, np.int64), np.empty(n, bool)
    room = max(int(offsets[-1] - offsets[0]) + n, 1)  # a key is its value's bytes less "__" plus "/" and "#"
    repo_offsets, key_offsets = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    repo_data, key_data = np.empty(room, np.uint8), np.empty(room, np.uint8)
    if module.owner_form_keys(offsets, data, valid, _OWNER_BYTE, _NAME_BYTE, ok, number, has_number, repo_offsets,
                              repo_data, key_offsets, key_data) < 0:
        return None
    return (ok, _strings(repo_offsets, repo_data, ok), pa.array(number, pa.int64(), mask=~has_number),
            _strings(key_offsets, key_data, has_number))


def join_pairs(left: pa.Array, right: pa.Array, separator: str, module) -> pa.Array:
    """`left + separator + right` of each pair, null where either side is null (`binary_join_element_wise`)."""
    left_offsets, left_data, left_valid = string_buffers(left)
    right_offsets, right_data, right_valid = string_buffers(right)
    valid = left_valid & right_valid
    n = len(valid)
    room = max(int(left_offsets[-1] - left_offsets[0] + right_offsets[-1] - right_offsets[0]) + n, 1)
    out_offsets, out_data = np.empty(n + 1, np.int64), np.empty(room, np.uint8)
    module.join_pairs(left_offsets, left_data, right_offsets, right_data, valid, np.uint8(ord(separator)),
                      out_offsets, out_data)
    return _strings(out_offsets, out_data, valid)


def by_row_after_last(values: pa.Array, rows: np.ndarray, number_from: np.ndarray, head_from: np.ndarray,
                      separator: str, n: int, module) -> tuple[pa.Array, pa.Array] | None:
    """Per row of an n-row batch (`rows`: each value's row; a later value wins): the int64 after the last
    `separator` of its last value where `number_from`, and the part before it of its last value where
    `head_from`; null where a row has none. None when some chosen value has no separator or no 1 to 18 digits
    after it (the caller's Arrow path then decides)."""
    offsets, data, _ = string_buffers(values)
    number, has_number = np.zeros(n, np.int64), np.zeros(n, bool)
    head_offsets = np.empty(n + 1, np.int64)
    head_data = np.empty(max(int(offsets[-1] - offsets[0]), 1), np.uint8)
    found = module.by_row_after_last(offsets, data, rows.astype(np.int64), number_from, head_from,
                                     np.uint8(ord(separator)), n, number, has_number, head_offsets, head_data)
    if found < 0:
        return None
    has_head = np.zeros(n, bool)
    has_head[rows[head_from]] = True
    return pa.array(number, pa.int64(), mask=~has_number), _strings(head_offsets, head_data, has_head)
