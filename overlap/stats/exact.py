"""Exact chance nulls: the hypergeometric pmf, exact convolution across strata, and the result fields.

`uniform_baseline` and `stratified_baseline`; the field conventions and degenerate cases are described in
`overlap.stats.baselines`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..words import plural
from .strata import as_strata, check_pool

LEVEL = 0.95
_EPS = 1e-12


@dataclass(frozen=True)
class NullDistribution:
    """An exact distribution on the integers offset … offset + len(pmf) − 1: pmf[k] = P(X = offset + k)."""

    offset: int
    pmf: np.ndarray

    @property
    def support(self) -> tuple[int, int]:
        return self.offset, self.offset + len(self.pmf) - 1

    def at_least(self, x: int) -> float:
        """P(X ≥ x), summed over the upper tail (no 1 − cdf cancellation)."""
        index = x - self.offset
        if index <= 0:
            return 1.0
        if index >= len(self.pmf):
            return 0.0
        return _prob(self.pmf[index:].sum())

    def at_most(self, x: int) -> float:
        """P(X ≤ x)."""
        index = x - self.offset
        if index < 0:
            return 0.0
        if index >= len(self.pmf) - 1:
            return 1.0
        return _prob(self.pmf[: index + 1].sum())

    def at(self, x: int) -> float:
        index = x - self.offset
        return _prob(self.pmf[index]) if 0 <= index < len(self.pmf) else 0.0

    def interval(self, level: float = LEVEL) -> tuple[int, int]:
        """Equal-tailed central interval: smallest k with P(X ≤ k) ≥ (1−level)/2, and ≥ (1+level)/2."""
        cdf = np.cumsum(self.pmf)
        last = len(self.pmf) - 1
        lo = min(int(np.searchsorted(cdf, (1 - level) / 2 - _EPS, side="left")), last)
        hi = min(int(np.searchsorted(cdf, (1 + level) / 2 - _EPS, side="left")), last)
        return self.offset + lo, self.offset + hi

    def moments(self) -> tuple[float, float]:
        """Mean and variance computed from the pmf (for checks; results use the closed forms)."""
        k = np.arange(len(self.pmf), dtype=float) + self.offset
        mean = float((k * self.pmf).sum())
        return mean, float(((k - mean) ** 2 * self.pmf).sum())


def _prob(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def hypergeom_moments(N: int, K: int, n: int) -> tuple[float, float]:
    """Mean nK/N and variance n·K/N·(N−K)/N·(N−n)/(N−1); both 0 when N ≤ 1 (no spread is possible)."""
    if N == 0:
        return 0.0, 0.0
    mean = n * K / N
    if N == 1:
        return mean, 0.0
    var = n * K * (N - K) * (N - n) / (N * N * (N - 1))
    return mean, max(0.0, var)


def hypergeom_null(N: int, K: int, n: int) -> NullDistribution:
    """The exact pmf of the shared count of a random n-subset with a fixed K-subset of N items.

    A point mass when the outcome is forced (K or n is 0 or N, N ≤ 1): scipy's pmf is not used there, so
    N = 0 and N = 1 never produce NaN."""
    N, K, n, _ = check_pool(N, K, n, 0)
    lo, hi = max(0, n + K - N), min(K, n)
    if lo == hi:
        return NullDistribution(lo, np.ones(1))
    from scipy.stats import hypergeom

    pmf = hypergeom.pmf(np.arange(lo, hi + 1), N, K, n)
    pmf = np.clip(np.nan_to_num(pmf, nan=0.0), 0.0, None)
    return NullDistribution(lo, pmf / pmf.sum())


def convolve(dists: Iterable[NullDistribution]) -> NullDistribution:
    """The exact distribution of a sum of independent variables (numpy direct convolution: exact sums of
    non-negative products, no FFT round-off, so no negative probabilities)."""
    offset, pmf = 0, np.ones(1)
    for dist in dists:
        offset += dist.offset
        pmf = np.convolve(pmf, dist.pmf) if len(dist.pmf) > 1 else pmf * dist.pmf[0]
    total = pmf.sum()
    return NullDistribution(offset, pmf / total if total > 0 else pmf)


# --- summaries ------------------------------------------------------------------------------------


def _summarize(x: int, mean: float, var: float, upper: float, lower: float, point: float,
               dist: NullDistribution, level: float, notes: list[str]) -> dict[str, Any]:
    sd = math.sqrt(max(var, 0.0))
    if sd > _EPS:
        z: float | None = (x - mean) / sd
    elif abs(x - mean) <= 1e-9:
        z = 0.0
    else:
        z = None
    if sd <= _EPS:
        notes.append(f"the null is the single value {mean:g} (no spread): z is 0 when the observation equals "
                     "it and null otherwise; the tails are exact")
    lo, hi = dist.support
    if x < lo or x > hi:
        notes.append(f"the observed count {x} is outside the null's possible range [{lo}, {hi}]: impossible "
                     "under this null (p_upper = 0 or p_lower = 0); check the inputs")
    interval = dist.interval(level)
    return {
        "observed": int(x),
        "expected": float(mean),
        "sd": float(sd),
        "excess": float(x - mean),
        "ratio": float(x / mean) if mean > _EPS else None,
        "z": None if z is None else float(z),
        "p_upper": _prob(upper),
        "p_lower": _prob(lower),
        "mid_p_upper": _prob(upper - 0.5 * point),
        "mid_p_lower": _prob(lower - 0.5 * point),
        "expected_interval": [int(interval[0]), int(interval[1])],
        "interval_level": float(level),
        "notes": notes,
    }


def uniform_baseline(N: int, K: int, n: int, x: int, *, level: float = LEVEL) -> dict[str, Any]:
    """Uniform null: X ~ Hypergeometric(N, K, n) (scipy.stats.hypergeom); see `overlap.stats.baselines` for
    every field and convention.

    N pool items, K bench items in the pool, n train items in the pool, x observed shared items.
    """
    N, K, n, x = check_pool(N, K, n, x)
    mean, var = hypergeom_moments(N, K, n)
    dist = hypergeom_null(N, K, n)
    notes: list[str] = []
    if N == 0:
        notes.append("the pool is empty: nothing can be shared")
    elif K == 0 or n == 0:
        notes.append(f"no {'bench' if K == 0 else 'train'} items in the pool: nothing can be shared by chance")
    if len(dist.pmf) > 1:
        from scipy.stats import hypergeom

        upper = float(hypergeom.sf(x - 1, N, K, n))
        lower = float(hypergeom.cdf(x, N, K, n))
        point = float(hypergeom.pmf(x, N, K, n))
    else:
        upper, lower, point = dist.at_least(x), dist.at_most(x), dist.at(x)
    out = {"null": "uniform", "pool": N, "bench_in_pool": K, "train_in_pool": n}
    return out | _summarize(x, mean, var, upper, lower, point, dist, level, notes)


def stratified_baseline(strata: Any, *, level: float = LEVEL) -> dict[str, Any]:
    """Within-strata null: the exact convolution of per-stratum hypergeometric pmfs.

    `strata` as accepted by `as_strata`. Strata with n_s = 0 are skipped (they contribute 0 with
    certainty) but stay in the `strata` table with `in_null` false. The table is sorted by excess
    (shared − expected, largest first), then name. Fields as in `overlap.stats.baselines`, plus `strata_count`,
    `strata_in_null` and the pooled totals.
    """
    strata = as_strata(strata)
    active = [s for s in strata if s.train > 0]
    dist = convolve(hypergeom_null(s.pool, s.bench, s.train) for s in active)
    moments = {s.name: hypergeom_moments(s.pool, s.bench, s.train) for s in strata}
    mean = sum(moments[s.name][0] for s in active)
    var = sum(moments[s.name][1] for s in active)
    x = sum(s.shared for s in strata)
    notes: list[str] = []
    if not strata:
        notes.append("no strata: the pool is empty")
    elif not active:
        notes.append("no stratum has train items: nothing can be shared by chance")
    skipped = len(strata) - len(active)
    if skipped:
        notes.append(f"{plural(skipped, 'stratum')} without train items skipped (they contribute 0 with certainty)")
    impossible = [s.name for s in strata if s.shared > min(s.bench, s.train)]
    if impossible:
        verb = "shares" if len(impossible) == 1 else "share"
        notes.append(f"{plural(len(impossible), 'stratum')} {verb} more than min(bench, train), "
                     f"e.g. {impossible[0]!r}")
    rows = []
    for s in strata:
        s_mean, s_var = moments[s.name] if s.train > 0 else (0.0, 0.0)
        rows.append({
            "stratum": s.name, "pool": s.pool, "bench": s.bench, "train": s.train, "shared": s.shared,
            "expected": float(s_mean), "sd": float(math.sqrt(s_var)), "in_null": s.train > 0,
        })
    rows.sort(key=lambda r: (-(r["shared"] - r["expected"]), r["stratum"]))
    out = {
        "null": "stratified",
        "pool": sum(s.pool for s in strata),
        "bench_in_pool": sum(s.bench for s in strata),
        "train_in_pool": sum(s.train for s in strata),
        "strata_count": len(strata),
        "strata_in_null": len(active),
    }
    out |= _summarize(x, mean, var, dist.at_least(x), dist.at_most(x), dist.at(x), dist, level, notes)
    out["strata"] = rows
    return out
