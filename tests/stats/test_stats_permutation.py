"""The seeded permutation cross-check agrees with the exact convolution within Monte Carlo error."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from overlap.stats.baselines import (
    as_strata,
    permutation_check,
    permutation_distribution,
    shuffled_memberships,
    simulate_shared_counts,
    stratified_baseline,
    uniform_baseline,
)


def random_strata(seed: int, count: int = 60, pool: int = 4993):
    """Project-like strata: skewed sizes summing to about `pool`, bench ≈ 27 %, train ≈ 14 %."""
    rng = np.random.default_rng(seed)
    sizes = rng.pareto(1.2, count) + 1
    sizes = np.maximum(1, (sizes / sizes.sum() * pool).astype(int))
    strata = []
    for index, N in enumerate(sizes.tolist()):
        K, n = int(rng.binomial(N, 0.27)), int(rng.binomial(N, 0.14))
        x = int(rng.integers(0, min(K, n) + 1))
        strata.append((f"project{index:03d}", N, K, n, x))
    return strata


@pytest.mark.parametrize("seed", [1, 2])
def test_convolution_and_permutation_agree(seed):
    strata = random_strata(seed)
    exact = stratified_baseline(strata)
    check = permutation_check(strata, draws=100_000, seed=0, exact=exact)
    assert check["agrees_with_exact"] is True
    assert check["draws"] == 100_000 and check["seed"] == 0
    se_mean = exact["sd"] / math.sqrt(check["draws"])
    assert abs(check["mean"] - exact["expected"]) < 4 * se_mean
    assert check["sd"] == pytest.approx(exact["sd"], rel=0.02)
    for tail in ("p_upper", "p_lower"):
        p = exact[tail]
        assert abs(check[tail] - p) <= 4 * math.sqrt(p * (1 - p) / check["draws"]) + 1e-5
    json.dumps(check, allow_nan=False)


def test_permutation_distribution_matches_the_exact_pmf():
    strata = [("A", 40, 12, 9, 4), ("B", 25, 5, 20, 4), ("C", 7, 7, 3, 3), ("D", 30, 10, 0, 0)]
    totals = simulate_shared_counts(strata, draws=200_000, seed=3)
    from overlap.stats.baselines import convolve, hypergeom_null

    dist = convolve(hypergeom_null(N, K, n) for _, N, K, n, _ in strata if n > 0)
    counts = np.bincount(totals - dist.offset, minlength=len(dist.pmf))[: len(dist.pmf)] / len(totals)
    assert np.abs(counts - dist.pmf).max() < 4 * math.sqrt(0.25 / len(totals))
    assert totals.min() >= dist.offset and totals.max() <= dist.support[1]


def test_uniform_cross_check_at_the_issue_numbers():
    exact = uniform_baseline(4993, 1368, 710, 219)
    check = permutation_check([("all", 4993, 1368, 710, 219)], draws=100_000, seed=0, exact=exact)
    assert check["agrees_with_exact"] is True
    assert check["p_upper"] == pytest.approx(0.015, abs=0.002)


def test_seeded_and_reproducible():
    strata = random_strata(5, count=20, pool=800)
    first = permutation_check(strata, draws=20_000, seed=11)
    assert first == permutation_check(strata, draws=20_000, seed=11)
    assert first["mean"] != permutation_check(strata, draws=20_000, seed=12)["mean"]
    # the stream is tied to the sorted strata, not to the order they were given in
    assert first == permutation_check(list(reversed(strata)), draws=20_000, seed=11)


def test_forced_strata_and_no_draws():
    totals = simulate_shared_counts([("a", 3, 3, 3, 3), ("b", 4, 4, 2, 2), ("c", 5, 2, 5, 2)], draws=50, seed=0)
    assert (totals == 3 + 2 + 2).all()
    check = permutation_check([("a", 3, 3, 3, 3)], draws=1000, seed=0, exact=stratified_baseline([("a", 3, 3, 3, 3)]))
    assert check["p_upper"] == 1.0 and check["agrees_with_exact"] is True
    none = permutation_check([("a", 10, 3, 3, 1)], draws=0, seed=0)
    assert none["draws"] == 0 and none["agrees_with_exact"] is None and none["notes"]
    json.dumps(none, allow_nan=False)


def test_impossible_observation_is_never_simulated():
    exact = uniform_baseline(10, 3, 4, 5)
    check = permutation_check([("a", 10, 3, 4, 5)], draws=10_000, seed=0, exact=exact)
    assert check["p_upper"] == 0.0 and check["agrees_with_exact"] is True


def test_general_shuffle_path_keeps_strata_and_agrees():
    # 3 strata: pool items with a stratum code, bench and train flags.
    codes = np.array([0] * 12 + [1] * 8 + [2] * 5)
    bench = np.zeros(25, bool)
    bench[[0, 1, 2, 3, 12, 13, 20]] = True
    train = np.zeros(25, bool)
    train[[0, 5, 6, 12, 14, 15, 16, 21, 22]] = True
    seen = 0
    for rows in shuffled_memberships(codes, train, draws=300, seed=1, chunk=128):
        seen += len(rows)
        for code in range(3):
            assert (rows[:, codes == code].sum(axis=1) == train[codes == code].sum()).all()
    assert seen == 300
    shared = permutation_distribution(lambda rows: (rows & bench).sum(axis=1), codes, train, draws=20_000, seed=2)
    strata = as_strata([(str(c), int((codes == c).sum()), int(bench[codes == c].sum()),
                         int(train[codes == c].sum()), int((bench & train)[codes == c].sum())) for c in range(3)])
    exact = stratified_baseline(strata)
    assert abs(shared.mean() - exact["expected"]) < 4 * exact["sd"] / math.sqrt(len(shared))
    x = exact["observed"]
    p_hat = float((shared >= x).mean())
    assert abs(p_hat - exact["p_upper"]) < 4 * math.sqrt(exact["p_upper"] * (1 - exact["p_upper"]) / len(shared))


def test_too_few_draws_judge_no_agreement():
    """One draw cannot cross-check anything: with the standard errors floored at 1/draws it always 'agreed'."""
    from overlap.stats.permutation import AGREEMENT_MIN_DRAWS

    exact = stratified_baseline([("a", 10, 3, 4, 2)])
    for draws in (1, AGREEMENT_MIN_DRAWS - 1):
        check = permutation_check([("a", 10, 3, 4, 2)], draws=draws, seed=0, exact=exact)
        assert check["agrees_with_exact"] is None and "too few" in check["notes"][0]
    enough = permutation_check([("a", 10, 3, 4, 2)], draws=AGREEMENT_MIN_DRAWS, seed=0, exact=exact)
    assert enough["agrees_with_exact"] is not None
