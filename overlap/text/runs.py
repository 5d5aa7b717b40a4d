"""Pair view: the longest shared word run of two texts (exact longest common token substring).

``longest_common_run(a, b)`` works on token-id arrays (negative ids never match anything: they stand for
words the other side does not have). Two exact, vectorised methods:

* **diagonals** (the usual case): every pair of equal tokens ``(i, j)`` lies on diagonal ``i - j``; a
  shared run is a stretch of consecutive pairs on one diagonal. The equal pairs come from one sort of
  ``b`` and ``searchsorted``; one more sort groups them by diagonal. Cost ~ (pairs) log(pairs), where
  pairs = sum over words of count_a * count_b (small for prose).
* **binary search on the run length with rolling hashes** when repeated words would make too many equal
  pairs (e.g. ``"a a a ... a"``): a run of length L exists iff some length-L window hash of ``a`` is
  among ``b``'s, and runs are monotone in L, so ~log2(min(n, m)) rounds of O(n + m) numpy work. Every
  hash hit is verified token by token, so a collision cannot change the answer.

Both return the maximal length and, among all maximal runs, the one with the smallest ``a`` position
then the smallest ``b`` position, so the answer does not depend on the method.
"""

from __future__ import annotations

import numpy as np

__all__ = ["longest_common_run", "longest_common_run_words"]

PAIR_BUDGET = 4_000_000
_U64 = np.uint64
_B = 0xC2B2AE3D27D4EB4F
_BINV = pow(_B, -1, 1 << 64)


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64 of integer token ids: a well spread 64-bit value per id."""
    with np.errstate(over="ignore"):
        z = values.astype(np.int64).view(_U64) + _U64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        return z ^ (z >> _U64(31))


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore"):
        p = np.full(n, _U64(_B))
        p[0] = 1
        q = np.full(n, _U64(_BINV))
        q[0] = 1
        return np.cumprod(p, dtype=_U64), np.cumprod(q, dtype=_U64)


def _windows(x: np.ndarray, length: int, bpow: np.ndarray, binv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hash, start) of every length-`length` window of x that has no negative id."""
    n = len(x)
    m = n - length + 1
    if m <= 0:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    with np.errstate(over="ignore"):
        vals = _mix(x) * bpow[:n]
        prefix = np.zeros(n + 1, _U64)
        np.cumsum(vals, out=prefix[1:])
        h = (prefix[length:] - prefix[:m]) * binv[:m]
    bad = np.zeros(n + 1, np.int64)
    np.cumsum(x < 0, out=bad[1:])
    ok = bad[length:] - bad[:m] == 0
    starts = np.flatnonzero(ok)
    return h[starts], starts


def _equal_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    order_b = np.argsort(b, kind="stable")
    sb = b[order_b]
    lo = np.searchsorted(sb, a, side="left")
    hi = np.searchsorted(sb, a, side="right")
    cnt = hi - lo
    cnt[a < 0] = 0
    return order_b, lo, cnt, int(cnt.sum())


def _by_diagonals(a: np.ndarray, b: np.ndarray, order_b: np.ndarray, lo: np.ndarray, cnt: np.ndarray,
                  total: int) -> tuple[int, int, int]:
    i = np.repeat(np.arange(len(a), dtype=np.int64), cnt)
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    j = order_b[lo[i] + within].astype(np.int64)
    key = (i - j + len(b)) * (len(a) + 1) + i  # sorted by diagonal, then by position in a
    order = np.argsort(key, kind="stable")
    key, i, j = key[order], i[order], j[order]
    brk = np.ones(total, dtype=bool)
    brk[1:] = key[1:] != key[:-1] + 1
    run_id = np.cumsum(brk) - 1
    run_len = np.bincount(run_id)
    best = int(run_len.max())
    starts = np.flatnonzero(brk)[run_len == best]
    pick = np.lexsort((j[starts], i[starts]))[0]
    return best, int(i[starts][pick]), int(j[starts][pick])


def _by_hashes(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    bpow, binv = _powers(max(len(a), len(b)) + 1)

    def first_match(length: int) -> tuple[int, int] | None:
        ha, sa = _windows(a, length, bpow, binv)
        hb, sb = _windows(b, length, bpow, binv)
        if len(ha) == 0 or len(hb) == 0:
            return None
        order = np.argsort(hb, kind="stable")
        hb_sorted, sb_sorted = hb[order], sb[order]
        k = np.minimum(np.searchsorted(hb_sorted, ha), len(hb_sorted) - 1)
        for idx in np.flatnonzero(hb_sorted[k] == ha):  # in increasing position of a
            i = int(sa[idx])
            lo = int(k[idx])
            hi = int(np.searchsorted(hb_sorted, ha[idx], side="right"))
            for j in np.sort(sb_sorted[lo:hi]):
                if np.array_equal(a[i : i + length], b[j : j + length]):
                    return i, int(j)
        return None

    lo, hi = 1, min(len(a), len(b))
    found = first_match(1)
    if found is None:
        return 0, -1, -1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        got = first_match(mid)
        if got is None:
            hi = mid - 1
        else:
            lo, found = mid, got
    found = first_match(lo)  # smallest positions at the maximal length
    assert found is not None
    return lo, found[0], found[1]


def longest_common_run(a, b, *, pair_budget: int = PAIR_BUDGET) -> tuple[int, int, int]:
    """(length, position in a, position in b) of the longest common token run; (0, -1, -1) if none."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if len(a) == 0 or len(b) == 0:
        return 0, -1, -1
    order_b, lo, cnt, total = _equal_pairs(a, b)
    if total == 0:
        return 0, -1, -1
    if total <= pair_budget:
        return _by_diagonals(a, b, order_b, lo, cnt, total)
    return _by_hashes(a, b)


def longest_common_run_words(a: list[str], b: list[str]) -> tuple[int, int, int, str]:
    """Convenience for token lists: (length, pos a, pos b, the shared words joined by spaces)."""
    vocab: dict[str, int] = {}
    ia = np.array([vocab.setdefault(w, len(vocab)) for w in a], dtype=np.int64)
    ib = np.array([vocab.get(w, -1) for w in b], dtype=np.int64)
    length, i, j = longest_common_run(ia, ib)
    return length, i, j, " ".join(a[i : i + length]) if length else ""
