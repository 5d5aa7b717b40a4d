"""The recognisers' inner loops compiled with numba (loaded through `overlap.ids.compiled`, which falls back to
the Arrow path). Each loop computes exactly what its Arrow counterpart in `overlap.ids.recognise`,
`overlap.ids.id_arrays` or `overlap.ids.pr_columns` computes, one pass over a string array's bytes instead of
several kernels and temporaries."""

from __future__ import annotations

import numpy as np

from ..jit import njit


@njit(cache=True, nogil=True)
def literal_bits(offsets, data, valid, needles, needle_offsets, starts_a_needle, out, flags):
    """out[i]: bit k set when value i, ASCII letters lowered (`pc.ascii_lower`), holds needle k (lowercase
    bytes, `needles[needle_offsets[k]:needle_offsets[k + 1]]`) as a substring; 0 for a null value. One pass
    over the bytes: only a byte that starts some needle (`starts_a_needle`) is looked at further. flags[i]:
    bit 0 when the value has a byte past ASCII, bit 1 when its first or last byte is a space, a control byte
    or past ASCII (trimming might change it); 0 for a null value."""
    for i in range(len(out)):
        out[i] = 0
        flags[i] = 0
        if not valid[i]:
            continue
        start, stop = offsets[i], offsets[i + 1]
        if stop > start and (data[start] <= 32 or data[start] >= 127 or data[stop - 1] <= 32 or data[stop - 1] >= 127):
            flags[i] = 2
        for p in range(start, stop):
            b = data[p]
            if b >= 128:
                flags[i] |= 1
            if 65 <= b <= 90:
                b += 32
            if not starts_a_needle[b]:
                continue
            for k in range(len(needle_offsets) - 1):
                first, last = needle_offsets[k], needle_offsets[k + 1]
                size = last - first
                if needles[first] != b or p + size > stop:
                    continue
                q = 1
                while q < size:
                    c = data[p + q]
                    if 65 <= c <= 90:
                        c += 32
                    if c != needles[first + q]:
                        break
                    q += 1
                if q == size:
                    out[i] |= np.uint16(1) << np.uint16(k)


@njit(cache=True, nogil=True)
def owner_form_keys(offsets, data, valid, owner_byte, name_byte, ok, number, has_number, repo_offsets, repo_data,
                    key_offsets, key_data):
    """Values of the form `^[A-Za-z0-9][A-Za-z0-9-]*__[A-Za-z0-9._-]+-[0-9]+$` (`pr_columns._OWNER_FORM`): ok[i];
    for those the repo `owner/name`, and where the digits are a PR number (1 to 18 digits, not zero:
    `id_arrays._numbers`) that number and the key `owner/name#N` (N without leading zeros), both written as
    Arrow string buffers (an empty slot elsewhere). The owner ends at the first `_` (it has none) and the
    digits follow the last `-` (they have none), as the Arrow path splits them. `owner_byte` / `name_byte`:
    per byte, whether an owner (a name) may hold it. Returns -1 when some value of the form has more than 18
    digits (the caller's reference path reads the batch), else 0."""
    at_repo = 0
    at_key = 0
    for i in range(len(ok)):
        repo_offsets[i] = at_repo
        key_offsets[i] = at_key
        ok[i] = False
        has_number[i] = False
        if not valid[i]:
            continue
        start, stop = offsets[i], offsets[i + 1]
        if stop - start < 5 or data[start] == 45 or not owner_byte[data[start]]:
            continue
        p = start + 1
        while p < stop and owner_byte[data[p]]:
            p += 1
        if p + 1 >= stop or data[p] != 95 or data[p + 1] != 95:  # "__"
            continue
        owner_end = p
        name_start = p + 2
        dash = stop - 1  # the digits run back from the end to the last `-`
        while dash > name_start and 48 <= data[dash] <= 57:
            dash -= 1
        if dash == stop - 1 or dash <= name_start or data[dash] != 45:
            continue
        good = True
        for q in range(name_start, dash):
            if not name_byte[data[q]]:
                good = False
                break
        if not good:
            continue
        if stop - dash - 1 > 18:
            return -1
        ok[i] = True
        value = 0
        first = stop  # the first digit that is not a leading zero
        for q in range(dash + 1, stop):
            if first == stop and data[q] != 48:
                first = q
            value = value * 10 + (data[q] - 48)
        repo_start = at_repo
        at_repo = _write_joined(repo_data, at_repo, data, start, owner_end, np.uint8(47), data, name_start, dash)  # "/"
        if value == 0:
            continue
        number[i] = value
        has_number[i] = True
        at_key = _write_joined(key_data, at_key, repo_data, repo_start, at_repo, np.uint8(35), data, first, stop)  # "#"
    repo_offsets[len(ok)] = at_repo
    key_offsets[len(ok)] = at_key
    return 0


@njit(cache=True, nogil=True, inline="always")
def _write_joined(out, at, left, left_start, left_stop, separator, right, right_start, right_stop):
    """Writes `left[left_start:left_stop] + separator + right[right_start:right_stop]` into `out` at `at`;
    returns where the next write goes."""
    # byte loops, inlined: a slice is an array view (its reference counted) per copy, and the copies are a
    # few bytes (measured on owner__name-N ids: 82 ns a row with slices, 55 inlined)
    for q in range(left_start, left_stop):
        out[at] = left[q]
        at += 1
    out[at] = separator
    at += 1
    for q in range(right_start, right_stop):
        out[at] = right[q]
        at += 1
    return at


@njit(cache=True, nogil=True)
def join_pairs(left_offsets, left_data, right_offsets, right_data, valid, separator, out_offsets, out_data):
    """`left + separator + right` of each pair where `valid` (both sides there), else an empty slot."""
    at = 0
    for i in range(len(valid)):
        out_offsets[i] = at
        if valid[i]:
            at = _write_joined(out_data, at, left_data, left_offsets[i], left_offsets[i + 1], separator, right_data,
                               right_offsets[i], right_offsets[i + 1])
    out_offsets[len(valid)] = at


@njit(cache=True, nogil=True)
def by_row_after_last(offsets, data, rows, number_from, head_from, separator, n, number, has_number,
                      head_offsets, head_data):
    """Per row of an n-row batch, from the values whose `number_from` (`head_from`) holds, the last one's
    number after its last `separator` (1 to 18 digits: else the result is -1, for the caller's reference
    path) and the bytes before it, written as Arrow string buffers (a row with none gets an empty slot).
    `rows`: each value's row. Returns 0, or -1 when some chosen value cannot be read."""
    last_head = np.full(n, -1, np.int64)
    cuts = np.full(len(rows), -1, np.int64)
    for i in range(len(rows)):
        if not (number_from[i] or head_from[i]):
            continue
        start, stop = offsets[i], offsets[i + 1]
        p = stop - 1
        while p >= start and data[p] != separator:
            p -= 1
        if p < start or stop - p - 1 < 1 or stop - p - 1 > 18:
            return -1
        value = 0
        for q in range(p + 1, stop):
            b = data[q]
            if b < 48 or b > 57:
                return -1
            value = value * 10 + (b - 48)
        cuts[i] = p
        if number_from[i]:
            number[rows[i]] = value
            has_number[rows[i]] = True
        if head_from[i]:
            last_head[rows[i]] = i
    at = 0
    for r in range(n):
        head_offsets[r] = at
        i = last_head[r]
        if i >= 0:
            for q in range(offsets[i], cuts[i]):
                head_data[at] = data[q]
                at += 1
    head_offsets[n] = at
    return 0
