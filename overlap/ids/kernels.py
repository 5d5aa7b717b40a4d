"""The recognisers' inner loops compiled with numba (loaded through `overlap.ids.compiled`, which falls back to
the Arrow path). Each loop computes exactly what its Arrow counterpart in `overlap.ids.recognise` computes,
one pass over a string array's bytes instead of several kernels and temporaries."""

from __future__ import annotations

import numpy as np
from numba import njit


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
def _owner_char(b):
    return (48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b == 45  # [A-Za-z0-9-]


@njit(cache=True, nogil=True)
def owner_form(offsets, data, valid, ok, repo_offsets, repo_data, digit_offsets, digit_data):
    """Values of the form `^[A-Za-z0-9][A-Za-z0-9-]*__[A-Za-z0-9._-]+-[0-9]+$` (`recognise._OWNER_FORM`): ok[i],
    and for those the repo `owner/name` and the PR digits, written as Arrow string buffers (offsets one longer
    than ok; a value not of the form gets empty strings, its validity is `ok`). The owner ends at the first
    `_` (it has none), and the digits follow the last `-` (they have none), as the Arrow path splits them."""
    at_repo = 0
    at_digits = 0
    for i in range(len(ok)):
        repo_offsets[i] = at_repo
        digit_offsets[i] = at_digits
        ok[i] = False
        if not valid[i]:
            continue
        start, stop = offsets[i], offsets[i + 1]
        # the owner: one letter or digit, then letters, digits and dashes up to `__`
        if stop - start < 5 or data[start] == 45 or not _owner_char(data[start]):
            continue
        p = start + 1
        while p < stop and _owner_char(data[p]):
            p += 1
        if p + 1 >= stop or data[p] != 95 or data[p + 1] != 95:
            continue
        owner_end = p
        name_start = p + 2
        # the name and the digits: [A-Za-z0-9._-], the last `-` followed by digits only
        dash = -1
        good = True
        for q in range(name_start, stop):
            b = data[q]
            if b == 45:
                dash = q
            elif not ((48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b == 46 or b == 95):
                good = False
                break
        if not good or dash <= name_start or dash == stop - 1:
            continue
        for q in range(dash + 1, stop):
            if not (48 <= data[q] <= 57):
                good = False
                break
        if not good:
            continue
        ok[i] = True
        at_repo = _write_joined(repo_data, at_repo, data, start, owner_end, np.uint8(47), data, name_start, dash)  # "/"
        for q in range(dash + 1, stop):
            digit_data[at_digits] = data[q]
            at_digits += 1
    repo_offsets[len(ok)] = at_repo
    digit_offsets[len(ok)] = at_digits


@njit(cache=True, nogil=True)
def _write_joined(out, at, left, left_start, left_stop, separator, right, right_start, right_stop):
    """Writes `left[left_start:left_stop] + separator + right[right_start:right_stop]` into `out` at `at`;
    returns where the next write goes."""
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


@njit(cache=True, nogil=True)
def numbered_keys(repo_offsets, repo_data, repo_valid, digit_offsets, digit_data, digit_valid, number,
                  has_number, key_offsets, key_data):
    """Per pair of a repo and its PR digits: the PR number where the digits are there (`recognise._numbers`: 1
    to 18 digits, not zero) and, where the repo is there too, the key `repo#N` with N in its decimal form (no
    leading zeros), written as Arrow string buffers (an empty slot elsewhere). Returns -1 when some digits are
    too long for int64 or not digits (the caller's reference path reads those), else 0."""
    at = 0
    for i in range(len(digit_valid)):
        key_offsets[i] = at
        has_number[i] = False
        if not digit_valid[i]:
            continue
        start, stop = digit_offsets[i], digit_offsets[i + 1]
        if stop - start > 18:
            return -1
        value = 0
        first = -1  # the first digit that is not a leading zero
        for q in range(start, stop):
            b = digit_data[q]
            if b < 48 or b > 57:
                return -1
            if first < 0 and b != 48:
                first = q
            value = value * 10 + (b - 48)
        if value == 0:
            continue
        number[i] = value
        has_number[i] = True
        if not repo_valid[i]:
            continue
        at = _write_joined(key_data, at, repo_data, repo_offsets[i], repo_offsets[i + 1], np.uint8(35),  # "#"
                           digit_data, first, stop)
    key_offsets[len(digit_valid)] = at
    return 0
