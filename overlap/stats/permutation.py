"""The seeded permutation engine: within-stratum shuffles of train membership.

`permutation_check` cross-checks an exact result (`overlap.stats.exact`) by Monte Carlo;
`shuffled_memberships`/`permutation_distribution` are the same shuffle for any statistic without a
closed form.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..errors import InputError
from .strata import as_count, as_strata

AGREEMENT_SE = 4.0  # permutation vs exact: deviations beyond this many standard errors disagree
# Fewer draws say nothing either way: each standard error is floored at 1/draws, so one draw "agreed" always
AGREEMENT_MIN_DRAWS = 100

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
    draws = as_count(draws, "draws")
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
    exactly 0 or 1 is matched exactly or almost; below `AGREEMENT_MIN_DRAWS` draws agreement is not judged
    (None, with a note).
    """
    strata = as_strata(strata)
    draws = as_count(draws, "draws")
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
        if draws < AGREEMENT_MIN_DRAWS:
            out["notes"].append(f"{draws} draws are too few to cross-check the exact result (agreement is judged "
                                f"from {AGREEMENT_MIN_DRAWS} draws)")
        else:
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
    for start in range(0, as_count(draws, "draws"), chunk):
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
