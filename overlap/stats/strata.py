"""Per-stratum counts for the chance baselines: the pool, bench, train and shared counts of each stratum.

A stratum is a part of the pool the nulls keep fixed (e.g. an OSS-Fuzz project); items without one go to
the explicit `unknown` stratum. Counts that cannot describe a pool (negative, K > N, n > N, not whole
numbers) raise `InputError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError

UNKNOWN = "unknown"  # the stratum of pool items without a project (or other stratum value)


def as_count(value: Any, what: str) -> int:
    """A non-negative integer count, or InputError."""
    if isinstance(value, bool | np.bool_):
        raise InputError(f"{what}: expected a count, got {value!r}")
    if isinstance(value, float | np.floating) and not float(value).is_integer():
        raise InputError(f"{what}: expected a whole number, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what}: expected a count, got {value!r}") from None
    if number < 0:
        raise InputError(f"{what}: a count cannot be negative ({number})")
    return number


def check_pool(N: Any, K: Any, n: Any, x: Any, where: str = "") -> tuple[int, int, int, int]:
    """(N, K, n, x) as counts that can describe a pool (K ≤ N, n ≤ N), or InputError naming `where`."""
    label = f"{where}: " if where else ""
    N, K, n, x = (as_count(v, f"{label}{w}") for v, w in ((N, "pool N"), (K, "bench K"), (n, "train n"),
                                                              (x, "shared x")))
    if K > N:
        raise InputError(f"{label}bench K = {K} exceeds the pool N = {N}")
    if n > N:
        raise InputError(f"{label}train n = {n} exceeds the pool N = {N}")
    return N, K, n, x


@dataclass(frozen=True)
class Stratum:
    """One stratum's counts: pool items N_s, bench items K_s, train items n_s, shared x_s."""

    name: str
    pool: int
    bench: int
    train: int
    shared: int

    def __post_init__(self) -> None:
        N, K, n, x = check_pool(self.pool, self.bench, self.train, self.shared, f"stratum {self.name!r}")
        object.__setattr__(self, "pool", N)
        object.__setattr__(self, "bench", K)
        object.__setattr__(self, "train", n)
        object.__setattr__(self, "shared", x)


def as_strata(strata: Any) -> list[Stratum]:
    """Strata from a list of `Stratum`, of dicts / a DataFrame with columns stratum, pool, bench, train,
    shared (the strata table of a result), or of (name, pool, bench, train, shared) tuples. Sorted by name
    (a stable order makes the permutation stream reproducible). Names must be unique."""
    if hasattr(strata, "to_dict") and hasattr(strata, "columns"):
        strata = strata.to_dict(orient="records")
    out: list[Stratum] = []
    for entry in strata:
        if isinstance(entry, Stratum):
            out.append(entry)
        elif isinstance(entry, Mapping):
            try:
                out.append(Stratum(str(entry["stratum"]), entry["pool"], entry["bench"], entry["train"],
                                   entry["shared"]))
            except KeyError as exc:
                raise InputError(f"strata table: missing column {exc.args[0]!r}") from None
        else:
            name, pool, bench, train, shared = entry
            out.append(Stratum(str(name), pool, bench, train, shared))
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"strata: stratum {dup!r} is given twice")
    return sorted(out, key=lambda s: s.name)


def count_strata(
    pool_ids: Iterable[Any],
    pool_strata: Iterable[Any],
    bench_ids: Iterable[Any],
    train_ids: Iterable[Any],
) -> list[Stratum]:
    """Per-stratum counts from membership: `pool_ids` with their stratum labels (parallel iterables),
    and the ids of each side. Ids outside the pool are ignored here (callers count and report them).
    A missing/blank stratum label goes to the explicit `unknown` stratum. A pool id listed twice counts
    once (its first label wins)."""
    bench, train = set(bench_ids), set(train_ids)
    counts: dict[str, list[int]] = {}
    seen: set[Any] = set()
    for item, label in zip(pool_ids, pool_strata, strict=True):
        if item in seen:
            continue
        seen.add(item)
        name = stratum_label(label)
        row = counts.setdefault(name, [0, 0, 0, 0])
        in_bench, in_train = item in bench, item in train
        row[0] += 1
        row[1] += in_bench
        row[2] += in_train
        row[3] += in_bench and in_train
    return as_strata([(name, *row) for name, row in counts.items()])


def stratum_label(value: Any) -> str:
    """The stratum name for a raw label: missing, NaN or blank → `unknown`."""
    if value is None:
        return UNKNOWN
    try:
        if value != value:  # NaN / pd.NA-safe check below
            return UNKNOWN
    except (TypeError, ValueError):
        return UNKNOWN
    text = str(value).strip()
    return text if text and text.lower() not in {"nan", "<na>", "none"} else UNKNOWN
