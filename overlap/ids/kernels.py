"""The recognisers' inner loops compiled with numba (loaded through `overlap.ids.compiled`, which falls back to
the Arrow path). Each loop computes exactly what its Arrow counterpart in `overlap.ids.recognise` computes,
one pass over a string array's bytes instead of several kernels and temporaries."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def contains_any_lowered(offsets, data, valid, needles, needle_offsets, out):
    """out[i]: whether value i, ASCII letters lowered (`pc.ascii_lower`), holds any needle (lowercase bytes,
    `needles[needle_offsets[k]:needle_offsets[k + 1]]`) as a substring; False for a null value."""
    for i in range(len(out)):
        out[i] = False
        if not valid[i]:
            continue
        start, stop = offsets[i], offsets[i + 1]
        for k in range(len(needle_offsets) - 1):
            first, last = needle_offsets[k], needle_offsets[k + 1]
            size = last - first
            for p in range(start, stop - size + 1):
                q = 0
                while q < size:
                    b = data[p + q]
                    if 65 <= b <= 90:
                        b += 32
                    if b != needles[first + q]:
                        break
                    q += 1
                if q == size:
                    out[i] = True
                    break
            if out[i]:
                break


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
        for q in range(start, owner_end):
            repo_data[at_repo] = data[q]
            at_repo += 1
        repo_data[at_repo] = 47  # "/"
        at_repo += 1
        for q in range(name_start, dash):
            repo_data[at_repo] = data[q]
            at_repo += 1
        for q in range(dash + 1, stop):
            digit_data[at_digits] = data[q]
            at_digits += 1
    repo_offsets[len(ok)] = at_repo
    digit_offsets[len(ok)] = at_digits


@njit(cache=True, nogil=True)
def after_last(offsets, data, valid, separator, cut, number, ok):
    """For each value: cut[i], the position of its last `separator` byte (-1: none), and ok[i], number[i]:
    whether what follows it is 1 to 18 ASCII digits, and their value."""
    for i in range(len(ok)):
        ok[i] = False
        number[i] = 0
        cut[i] = -1
        if not valid[i]:
            continue
        start, stop = offsets[i], offsets[i + 1]
        p = stop - 1
        while p >= start and data[p] != separator:
            p -= 1
        if p < start:
            continue
        cut[i] = p
        if stop - p - 1 < 1 or stop - p - 1 > 18:
            continue
        value = 0
        good = True
        for q in range(p + 1, stop):
            b = data[q]
            if b < 48 or b > 57:
                good = False
                break
            value = value * 10 + (b - 48)
        ok[i] = good
        number[i] = value


@njit(cache=True, nogil=True)
def copy_spans(starts, stops, data, out_offsets, out_data):
    """Bytes data[starts[i]:stops[i]] of each span, one after another, as Arrow string buffers."""
    at = 0
    for i in range(len(starts)):
        out_offsets[i] = at
        for q in range(starts[i], stops[i]):
            out_data[at] = data[q]
            at += 1
    out_offsets[len(starts)] = at
