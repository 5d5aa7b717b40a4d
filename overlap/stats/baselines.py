"""Chance baselines for an observed overlap: exact hypergeometric nulls, uniform and within strata.

The setting: a pool of N items (e.g. the 4,993 bugs of ARVO's first release). A benchmark holds K of
them and a training set n of them; they share x. If the two sets were drawn independently of each other
from the pool, how many would they share by chance?

- **Uniform** (`uniform_baseline`): the train set is a uniformly random n-subset of the pool, so the
  shared count X ~ Hypergeometric(N, K, n) (scipy.stats.hypergeom).
- **Within strata** (`stratified_baseline`): the train set is a uniformly random n_s-subset of each
  stratum s (e.g. an OSS-Fuzz project) with its observed size. X = Σ X_s with independent
  X_s ~ Hypergeometric(N_s, K_s, n_s); the exact pmf of X is the convolution of the per-stratum pmfs.
  This is the right null when both sets favour the same projects: two sets that both love libxml2
  share libxml2 bugs without one copying the other.
- **Permutation cross-check** (`permutation_check`): a seeded Monte Carlo that shuffles train
  membership within strata and counts the shared items; it must agree with the exact result within
  Monte Carlo error. `shuffled_memberships`/`permutation_distribution` are the same shuffle for any
  statistic that has no closed form.
- **Inclusion test** (`inclusion_test`, SWE training sets): within each repo, does the training set
  contain benchmark PRs at the rate it contains a reference set of comparable PRs? Same machinery with
  pool = benchmark ∪ reference PRs of the repo, "bench" = the benchmark PRs, "train" = the PRs the
  training set contains.

Every result is a JSON-ready dict (Python ints/floats/None only). Field conventions, shared by all:

- `expected` = E[X], `sd` = sd(X), `excess` = x − E[X], `ratio` = x / E[X] (None when E[X] = 0).
- `z` = (x − E[X]) / sd. When sd = 0 (the null is a single value) `z` is 0.0 if x equals that value and
  None otherwise; the exact tails below still say everything. z is never NaN or infinite.
- `p_upper` = P(X ≥ x) and `p_lower` = P(X ≤ x), exact. `mid_p_upper` = P(X > x) + ½P(X = x) and
  `mid_p_lower` = P(X < x) + ½P(X = x). For x outside the null's support the tails are 0 or 1 exactly
  and a note says the observation is impossible under the null.
- `expected_interval` = [lo, hi], the central `interval_level` (95 %) range of the chance count: lo is
  the smallest k with P(X ≤ k) ≥ 2.5 %, hi the smallest k with P(X ≤ k) ≥ 97.5 % (the equal-tailed
  quantiles of the null, as scipy's `ppf`). Chance alone lands in it at least 95 % of the time.
- `notes` lists, in words, every degenerate case met (empty pool, no train or bench items, a point-mass
  null, an impossible observation, skipped strata).

Degenerate inputs give defined results, never NaN or an exception: K = 0 or n = 0 (X ≡ 0), N = 1,
N = 0 (everything 0), x > min(K, n) (impossible: p_upper = 0, p_lower = 1), a stratum where everything
is shared (N_s = K_s = n_s: X_s ≡ N_s), strata with n_s = 0 (skipped: they contribute 0 with
certainty). Counts that cannot describe a pool at all (negative, K > N, n > N, not integers) raise
`InputError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError

UNKNOWN = "unknown"  # the stratum of pool items without a project (or other stratum value)
LEVEL = 0.95
AGREEMENT_SE = 4.0  # permutation vs exact: deviations beyond this many standard errors disagree
_EPS = 1e-12


# --- counts ---------------------------------------------------------------------------------------


def _count(value: Any, what: str) -> int:
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


def _check_pool(N: Any, K: Any, n: Any, x: Any, where: str = "") -> tuple[int, int, int, int]:
    label = f"{where}: " if where else ""
    N, K, n, x = (_count(v, f"{label}{w}") for v, w in ((N, "pool N"), (K, "bench K"), (n, "train n"),
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
        N, K, n, x = _check_pool(self.pool, self.bench, self.train, self.shared, f"stratum {self.name!r}")
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


# --- null distributions ---------------------------------------------------------------------------


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
    N, K, n, _ = _check_pool(N, K, n, 0)
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
    """Uniform null: X ~ Hypergeometric(N, K, n) (scipy.stats.hypergeom); see the module docstring for
    every field and convention.

    N pool items, K bench items in the pool, n train items in the pool, x observed shared items.
    """
    N, K, n, x = _check_pool(N, K, n, x)
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
    (shared − expected, largest first), then name. Fields as in the module docstring, plus `strata_count`,
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
        notes.append(f"{skipped} stratum(s) without train items skipped (they contribute 0 with certainty)")
    impossible = [s.name for s in strata if s.shared > min(s.bench, s.train)]
    if impossible:
        notes.append(f"{len(impossible)} stratum(s) share more than min(bench, train), e.g. {impossible[0]!r}")
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


# --- permutation ----------------------------------------------------------------------------------

PERMUTATION_METHOD = ("within-stratum shuffle of train membership: each draw fills every stratum's train "
                      "slots one by one without replacement and counts the bench items drawn")


def simulate_shared_counts(strata: Any, *, draws: int, seed: int, chunk: int = 1 << 17) -> np.ndarray:
    """`draws` totals of the shared count under within-stratum shuffles of train membership.

    For each stratum the n_s train slots are filled one at a time, without replacement, from its N_s pool
    items of which K_s are bench items (slot j takes a bench item with probability
    remaining bench / remaining items); when n_s > N_s / 2 the N_s − n_s non-train slots are filled
    instead. This is exactly the count a full random permutation of the train labels within the stratum
    gives, without materialising the permutation, and uses only uniform random numbers (no
    hypergeometric code), so it is an independent check of the exact convolution. Vectorised over draws;
    strata whose outcome is forced (K_s or n_s is 0 or N_s) add a constant. Same strata, draws, seed and
    chunk → the same array.
    """
    strata = as_strata(strata)
    draws = _count(draws, "draws")
    rng = np.random.default_rng(seed)
    constant, free = 0, []
    for s in strata:
        N, K, n = s.pool, s.bench, s.train
        if n == 0 or K == 0:
            continue
        if K == N or n == N:
            constant += n if K == N else K
            continue
        free.append((N, K, n))
    totals = np.full(draws, constant, dtype=np.int64)
    for start in range(0, draws, chunk):
        block = totals[start:start + chunk]
        for N, K, n in free:
            block += _urn(rng, N, K, n, len(block))
    return totals


def _urn(rng: np.random.Generator, N: int, K: int, n: int, size: int) -> np.ndarray:
    take = min(n, N - n)
    remaining = np.full(size, K, dtype=np.int64)
    for j in range(take):
        remaining -= rng.random(size) * (N - j) < remaining
    drawn = K - remaining
    return drawn if take == n else K - drawn


def permutation_check(strata: Any, *, draws: int = 100_000, seed: int = 0,
                      exact: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Monte Carlo cross-check of a stratified (or, with one stratum, uniform) exact result.

    Reports the draws and seed, the simulated mean and sd, the estimated tails P̂(X ≥ x) and P̂(X ≤ x)
    (plain proportions of draws, comparable to the exact tails) with their standard errors, and, when
    `exact` (a `stratified_baseline`/`uniform_baseline` result) is given, whether every one of mean,
    p_upper and p_lower lies within 4 standard errors of the exact value (`agrees_with_exact`) and the
    largest deviation in standard errors. A standard error is floored at 1/draws, so a tail that is
    exactly 0 or 1 is matched exactly or almost.
    """
    strata = as_strata(strata)
    draws = _count(draws, "draws")
    x = sum(s.shared for s in strata)
    out: dict[str, Any] = {"method": PERMUTATION_METHOD, "draws": draws, "seed": int(seed), "observed": x}
    if draws == 0:
        out |= {"mean": None, "sd": None, "p_upper": None, "p_lower": None, "p_upper_se": None,
                "p_lower_se": None, "agrees_with_exact": None, "largest_deviation_se": None,
                "notes": ["no draws requested: the permutation check was not run"]}
        return out
    totals = simulate_shared_counts(strata, draws=draws, seed=seed)
    p_upper = float(np.count_nonzero(totals >= x) / draws)
    p_lower = float(np.count_nonzero(totals <= x) / draws)
    out |= {
        "mean": float(totals.mean()),
        "sd": float(totals.std()),
        "p_upper": p_upper,
        "p_lower": p_lower,
        "p_upper_se": math.sqrt(p_upper * (1 - p_upper) / draws),
        "p_lower_se": math.sqrt(p_lower * (1 - p_lower) / draws),
        "agrees_with_exact": None,
        "largest_deviation_se": None,
        "notes": [],
    }
    if exact is not None:
        floor = 1.0 / draws
        deviations = [abs(out["mean"] - exact["expected"]) / max(exact["sd"] / math.sqrt(draws), floor)]
        for tail in ("p_upper", "p_lower"):
            p = exact[tail]
            deviations.append(abs(out[tail] - p) / max(math.sqrt(p * (1 - p) / draws), floor))
        out["largest_deviation_se"] = float(max(deviations))
        out["agrees_with_exact"] = bool(out["largest_deviation_se"] <= AGREEMENT_SE)
    return out


def shuffled_memberships(strata_codes: np.ndarray, members: np.ndarray, *, draws: int, seed: int,
                         chunk: int = 256) -> Iterator[np.ndarray]:
    """The general permutation path, for statistics without a closed form.

    `strata_codes` (int, one per pool item) and `members` (bool, e.g. train membership) are parallel
    arrays. Yields boolean arrays of shape (rows ≤ chunk, N), `draws` rows in all: each row is `members`
    permuted uniformly at random within strata (the number of members per stratum is kept). Costs
    O(N log N) per draw, so use it for statistics the count path (`simulate_shared_counts`) cannot give.
    """
    codes = np.asarray(strata_codes)
    members = np.asarray(members, dtype=bool)
    if codes.shape != members.shape or codes.ndim != 1:
        raise InputError("shuffled_memberships: strata codes and members must be 1-d arrays of one length")
    _, dense = np.unique(codes, return_inverse=True)
    order = np.argsort(dense, kind="stable")
    sorted_codes = dense[order].astype(float)
    sorted_members = members[order]
    rng = np.random.default_rng(seed)
    for start in range(0, _count(draws, "draws"), chunk):
        rows = min(chunk, draws - start)
        # keys in [code, code + 1): sorting a row keeps every stratum's block in place and shuffles inside it.
        perm = np.argsort(rng.random((rows, len(codes))) + sorted_codes, axis=1, kind="stable")
        out = np.empty((rows, len(codes)), dtype=bool)
        out[:, order] = sorted_members[perm]
        yield out


def permutation_distribution(statistic: Callable[[np.ndarray], np.ndarray], strata_codes: np.ndarray,
                             members: np.ndarray, *, draws: int, seed: int, chunk: int = 256) -> np.ndarray:
    """`statistic` (shuffled membership rows → one value per row) over `draws` within-strata shuffles."""
    parts = [np.asarray(statistic(rows)) for rows in shuffled_memberships(strata_codes, members, draws=draws,
                                                                           seed=seed, chunk=chunk)]
    return np.concatenate(parts) if parts else np.empty(0)


# --- inclusion test (SWE) -------------------------------------------------------------------------


def inclusion_test(rows: Any, *, train_ranges: Mapping[str, tuple[int, int]] | None = None,
                   level: float = LEVEL) -> dict[str, Any]:
    """Does a training set contain benchmark PRs at the rate it contains comparable reference PRs?

    `rows`: one row per PR of the benchmark ∪ reference set (a DataFrame or dicts) with `stratum` (the
    canonical repo), `is_bench` (True for a benchmark PR, False for a reference PR), `included` (the
    training set contains it) and, for the range restriction, `number` (the PR number).

    Within each repo the null is that inclusion does not depend on being a benchmark PR: of the repo's
    N_r PRs, the n_r included ones are a random subset, so the included benchmark PRs
    X_r ~ Hypergeometric(N_r, K_r benchmark PRs, n_r); the total is the exact convolution
    (`stratified_baseline`). `p_upper` small: the training set holds benchmark PRs more often than
    comparable PRs of the same repos (it drew on the benchmark, or both on one collection); `p_lower`
    small: less often (e.g. the benchmark was filtered out). Repos where the training set includes
    nothing are skipped. `bench_rate` = included benchmark PRs / benchmark PRs, `reference_rate` =
    included reference PRs / reference PRs (None when the denominator is 0), overall and per repo.

    `train_ranges` (repo → (lowest, highest) PR number of the training set in that repo) restricts each
    repo to that range: PRs outside it, PRs of repos the training set does not have, and PRs without a
    number are left out and counted in `restriction`.
    """
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
        rows = rows.to_dict(orient="records")
    rows = list(rows)
    restriction = None
    if train_ranges is not None:
        kept, outside, no_number = [], 0, 0
        for row in rows:
            number = row.get("number")
            span = train_ranges.get(stratum_label(row.get("stratum")))
            if number is None or number != number:
                no_number += 1
            elif span is not None and span[0] <= int(number) <= span[1]:
                kept.append(row)
            else:
                outside += 1
        restriction = {"rows_before": len(rows), "rows_kept": len(kept), "rows_outside_train_range": outside,
                       "rows_without_number": no_number}
        rows = kept
    counts: dict[str, list[int]] = {}
    for row in rows:
        entry = counts.setdefault(stratum_label(row.get("stratum")), [0, 0, 0, 0])
        is_bench, included = bool(row.get("is_bench")), bool(row.get("included"))
        entry[0] += 1
        entry[1] += is_bench
        entry[2] += included
        entry[3] += is_bench and included
    result = stratified_baseline([(name, *c) for name, c in counts.items()], level=level)
    result["null"] = "inclusion"
    for table_row in result["strata"]:
        table_row |= _rates(table_row["pool"], table_row["bench"], table_row["train"], table_row["shared"])
    result |= _rates(result["pool"], result["bench_in_pool"], result["train_in_pool"], result["observed"])
    result["restriction"] = restriction
    return result


def _rates(pool: int, bench: int, included: int, shared: int) -> dict[str, float | None]:
    reference = pool - bench
    return {
        "bench_rate": shared / bench if bench else None,
        "reference_rate": (included - shared) / reference if reference else None,
    }
