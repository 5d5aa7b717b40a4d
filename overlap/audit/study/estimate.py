"""What a sample count says about the whole image set: the share and its 95 % Wilson score interval.

A set's tasks are drawn without replacement from a set of known size (``--benchmark … --sample N``), so the
interval is Wilson's with the finite-population correction: the sample of ``n`` counts as ``n (N - 1) / (N - n)``
independent draws. A sample of the whole set has no sampling error (the interval is the share itself); with no
known size the set is taken as unbounded (plain Wilson). ``scipy.stats.binomtest(...).proportion_ci`` gives the
plain interval for whole draws only, so the few lines are written here.
"""

from __future__ import annotations

from math import floor, inf, sqrt

Z95 = 1.959963984540054  # the 97.5 % point of the standard normal


def effective_draws(sample: int, population: int | None) -> float:
    """How many independent draws a sample without replacement is worth (inf when it is the whole set)."""
    if population is None:
        return float(sample)
    if sample >= population:
        return inf
    return sample * (population - 1) / (population - sample)


def wilson(count: int, sample: int, population: int | None = None, z: float = Z95) -> tuple[float, float] | None:
    """The (low, high) share of the whole set holding what ``count`` of ``sample`` tasks hold; None for no sample."""
    if sample <= 0:
        return None
    share = count / sample
    m = effective_draws(sample, population)
    if m == inf:
        return share, share
    centre = (share + z * z / (2 * m)) / (1 + z * z / m)
    half = z * sqrt(share * (1 - share) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return max(0.0, centre - half), min(1.0, centre + half)


def estimate(count: int, sample: int, population: int | None) -> dict | None:
    """The JSON of one cell's estimate: ``share``, ``low``, ``high`` (fractions, 4 decimals)."""
    bounds = wilson(count, sample, population)
    if bounds is None:
        return None
    return {"share": round(count / sample, 4), "low": round(bounds[0], 4), "high": round(bounds[1], 4)}


def percent(value: float) -> str:
    """A share as a whole percentage, "42 %"."""
    return f"{floor(value * 100 + 0.5):d} %"  # half up: 24.5 % is 25 % (round() would give 24)


def interval_text(est: dict | None) -> str:
    """"25 %–61 %"; "exact" when every task of the set was audited (no sampling error); "" with no estimate."""
    if not est:
        return ""
    return "exact" if est["low"] == est["high"] else f"{percent(est['low'])}–{percent(est['high'])}"
