"""Exact baselines against independent values: published numbers, exact rational arithmetic, hand sums."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import hypergeom, norm

from overlap.errors import InputError
from overlap.stats.baselines import (
    UNKNOWN,
    convolve,
    count_strata,
    hypergeom_null,
    stratified_baseline,
    uniform_baseline,
)

ISSUE_CASE = dict(N=4993, K=1368, n=710, x=219)


def exact_upper_tail(N: int, K: int, n: int, x: int) -> Fraction:
    """P(X ≥ x) as an exact fraction from binomial coefficients (no scipy)."""
    total = math.comb(N, n)
    return Fraction(sum(math.comb(K, k) * math.comb(N - K, n - k) for k in range(x, min(K, n) + 1)), total)


def strict_json(data) -> str:
    """Fails on NaN/inf and on numpy scalars (no default= fallback)."""
    return json.dumps(data, allow_nan=False)


# --- uniform ----------------------------------------------------------------------------------------


def test_issue_numbers_expected_sd_and_exact_tail():
    result = uniform_baseline(**ISSUE_CASE)
    assert round(result["expected"], 1) == 194.5
    assert round(result["sd"], 1) == 11.0
    assert round(result["p_upper"], 3) == 0.015
    # independent: exact rational arithmetic, no scipy
    assert result["p_upper"] == pytest.approx(float(exact_upper_tail(4993, 1368, 710, 219)), rel=1e-9)
    assert result["expected"] == pytest.approx(710 * 1368 / 4993, rel=1e-12)


def test_exact_tail_is_not_the_normal_approximation():
    result = uniform_baseline(**ISSUE_CASE)
    normal = float(norm.sf(result["z"]))
    assert round(normal, 3) == 0.013  # what a z-test would report
    assert round(result["p_upper"], 3) != round(normal, 3)
    assert result["p_upper"] - normal > 0.002  # the exact tail is heavier here, by more than rounding
    assert result["z"] == pytest.approx((219 - result["expected"]) / result["sd"])


def test_lower_tail_mid_p_and_interval():
    N, K, n, x = ISSUE_CASE.values()
    result = uniform_baseline(N, K, n, x)
    assert result["p_lower"] == pytest.approx(float(1 - exact_upper_tail(N, K, n, x + 1)), rel=1e-12)
    point = float(hypergeom.pmf(x, N, K, n))
    assert result["mid_p_upper"] == pytest.approx(result["p_upper"] - point / 2, rel=1e-12)
    assert result["mid_p_lower"] == pytest.approx(result["p_lower"] - point / 2, rel=1e-12)
    assert result["expected_interval"] == [int(hypergeom.ppf(0.025, N, K, n)), int(hypergeom.ppf(0.975, N, K, n))]
    assert result["expected_interval"][0] <= result["expected"] <= result["expected_interval"][1]
    assert result["interval_level"] == 0.95
    strict_json(result)


def test_small_case_by_hand():
    # N=5, K=2, n=2: P(X=0)=3/10, P(1)=6/10, P(2)=1/10
    result = uniform_baseline(5, 2, 2, 2)
    assert result["p_upper"] == pytest.approx(0.1)
    assert result["p_lower"] == pytest.approx(1.0)
    assert result["mid_p_upper"] == pytest.approx(0.05)
    assert result["expected"] == pytest.approx(0.8)
    assert result["sd"] == pytest.approx(math.sqrt(2 * 0.4 * 0.6 * 3 / 4))


# --- within strata ----------------------------------------------------------------------------------

# A: N=4, K=2, n=2 → P(0,1,2) = 1/6, 4/6, 1/6;  B: N=3, K=1, n=1 → P(0,1) = 2/3, 1/3.
# A+B: P(0)=1/9, P(1)=1/2, P(2)=1/3, P(3)=1/18; mean 4/3, var 1/3 + 2/9 = 5/9.
TWO_STRATA = [("A", 4, 2, 2, 2), ("B", 3, 1, 1, 1)]


def test_two_strata_by_hand():
    result = stratified_baseline(TWO_STRATA)
    assert result["observed"] == 3
    assert result["expected"] == pytest.approx(4 / 3)
    assert result["sd"] == pytest.approx(math.sqrt(5) / 3)
    assert result["z"] == pytest.approx(math.sqrt(5))
    assert result["p_upper"] == pytest.approx(1 / 18)
    assert result["p_lower"] == pytest.approx(1.0)
    assert result["mid_p_upper"] == pytest.approx(1 / 36)
    assert result["mid_p_lower"] == pytest.approx(35 / 36)
    assert result["expected_interval"] == [0, 3]
    one = stratified_baseline([("A", 4, 2, 2, 1), ("B", 3, 1, 1, 0)])
    assert one["p_upper"] == pytest.approx(8 / 9)
    assert one["p_lower"] == pytest.approx(1 / 9 + 1 / 2)


def test_convolved_pmf_by_hand():
    dist = convolve([hypergeom_null(4, 2, 2), hypergeom_null(3, 1, 1)])
    assert dist.offset == 0
    assert dist.pmf == pytest.approx([1 / 9, 1 / 2, 1 / 3, 1 / 18])


def test_strata_table_skipped_and_unknown():
    strata = count_strata(
        pool_ids=[1, 2, 3, 4, 5, 6, 7, 8, 9],
        pool_strata=["a", "a", "a", "a", "b", "b", "b", None, ""],
        bench_ids=[1, 2, 5, 8, 100],  # 100 is outside the pool: ignored here
        train_ids=[1, 3, 6],
    )
    by_name = {s.name: s for s in strata}
    assert set(by_name) == {"a", "b", UNKNOWN}
    assert (by_name["a"].pool, by_name["a"].bench, by_name["a"].train, by_name["a"].shared) == (4, 2, 2, 1)
    assert (by_name[UNKNOWN].pool, by_name[UNKNOWN].bench, by_name[UNKNOWN].train) == (2, 1, 0)
    result = stratified_baseline(strata)
    table = {row["stratum"]: row for row in result["strata"]}
    assert table[UNKNOWN]["in_null"] is False and table[UNKNOWN]["expected"] == 0.0
    assert table["a"] == {"stratum": "a", "pool": 4, "bench": 2, "train": 2, "shared": 1, "expected": 1.0,
                          "sd": pytest.approx(math.sqrt(1 / 3)), "in_null": True}
    assert result["strata_count"] == 3 and result["strata_in_null"] == 2
    assert any("skipped" in note for note in result["notes"])
    strict_json(result)


def test_one_stratum_equals_uniform():
    uniform = uniform_baseline(**ISSUE_CASE)
    single = stratified_baseline([("all", 4993, 1368, 710, 219)])
    for field in ("expected", "sd", "z", "p_upper", "p_lower", "mid_p_upper", "mid_p_lower"):
        assert single[field] == pytest.approx(uniform[field], rel=1e-9), field
    assert single["expected_interval"] == uniform["expected_interval"]


def test_closed_form_moments_match_the_convolved_pmf():
    rng = np.random.default_rng(7)
    strata = []
    for index in range(30):
        N = int(rng.integers(1, 80))
        K, n = int(rng.integers(0, N + 1)), int(rng.integers(0, N + 1))
        strata.append((f"s{index}", N, K, n, min(K, n) // 2))
    result = stratified_baseline(strata)
    dist = convolve(hypergeom_null(N, K, n) for _, N, K, n, _ in strata if n > 0)
    mean, var = dist.moments()
    assert result["expected"] == pytest.approx(mean, rel=1e-9)
    assert result["sd"] == pytest.approx(math.sqrt(var), rel=1e-9)
    assert float(dist.pmf.sum()) == pytest.approx(1.0)
    assert (dist.pmf >= 0).all()


# --- degenerate inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "N, K, n, x, expected, p_upper, p_lower, z",
    [
        (100, 0, 10, 0, 0.0, 1.0, 1.0, 0.0),  # K = 0
        (100, 10, 0, 0, 0.0, 1.0, 1.0, 0.0),  # n = 0
        (100, 0, 10, 1, 0.0, 0.0, 1.0, None),  # K = 0 but something shared: impossible
        (1, 1, 1, 1, 1.0, 1.0, 1.0, 0.0),  # N = 1
        (1, 0, 1, 0, 0.0, 1.0, 1.0, 0.0),
        (1, 1, 0, 0, 0.0, 1.0, 1.0, 0.0),
        (1, 1, 1, 0, 1.0, 1.0, 0.0, None),
        (0, 0, 0, 0, 0.0, 1.0, 1.0, 0.0),  # empty pool
        (3, 3, 3, 3, 3.0, 1.0, 1.0, 0.0),  # everything shared
    ],
)
def test_degenerate_uniform(N, K, n, x, expected, p_upper, p_lower, z):
    result = uniform_baseline(N, K, n, x)
    assert result["expected"] == expected
    assert result["sd"] == 0.0
    assert result["p_upper"] == p_upper and result["p_lower"] == p_lower
    assert result["z"] == z
    assert result["notes"]  # every degenerate case says so
    strict_json(result)


def test_observed_above_min_bench_train_is_impossible_not_an_error():
    result = uniform_baseline(10, 3, 4, 5)  # x > min(K, n) = 3
    assert result["p_upper"] == 0.0 and result["mid_p_upper"] == 0.0
    assert result["p_lower"] == 1.0
    assert math.isfinite(result["z"]) and result["z"] > 0
    assert any("impossible" in note for note in result["notes"])
    strat = stratified_baseline([("a", 10, 3, 4, 5), ("b", 5, 2, 2, 0)])
    # the total (5) is still possible: X_a = 3 and X_b = 2
    assert strat["p_upper"] == pytest.approx(float(hypergeom.pmf(3, 10, 3, 4) * hypergeom.pmf(2, 5, 2, 2)))
    assert any(note.startswith("1 stratum shares more than") for note in strat["notes"])
    strict_json(strat)


def test_stratum_where_everything_is_shared():
    # stratum a is forced (X_a = 3); the total is 3 + X_b with X_b ~ H(10, 4, 3)
    result = stratified_baseline([("a", 3, 3, 3, 3), ("b", 10, 4, 3, 1)])
    assert result["expected"] == pytest.approx(3 + 3 * 4 / 10)
    assert result["p_upper"] == pytest.approx(float(hypergeom.sf(0, 10, 4, 3)))
    assert result["p_lower"] == pytest.approx(float(hypergeom.cdf(1, 10, 4, 3)))
    only = stratified_baseline([("a", 3, 3, 3, 3)])
    assert (only["p_upper"], only["p_lower"], only["z"], only["sd"]) == (1.0, 1.0, 0.0, 0.0)
    strict_json(only)


def test_no_strata_and_no_train_items():
    empty = stratified_baseline([])
    assert (empty["observed"], empty["expected"], empty["p_upper"], empty["z"]) == (0, 0.0, 1.0, 0.0)
    skipped = stratified_baseline([("a", 5, 2, 0, 0), ("b", 4, 0, 0, 0)])
    assert skipped["strata_in_null"] == 0 and skipped["p_lower"] == 1.0
    assert any("no stratum has train items" in note for note in skipped["notes"])
    strict_json([empty, skipped])


@pytest.mark.parametrize("args", [(5, 6, 1, 0), (5, 1, 6, 0), (-1, 0, 0, 0), (5, 1, 1, -1), (5.5, 1, 1, 0),
                                  (5, True, 1, 0), (5, "two", 1, 0)])
def test_counts_that_describe_no_pool_raise_input_error(args):
    with pytest.raises(InputError):
        uniform_baseline(*args)


def test_integral_floats_and_numpy_ints_are_counts():
    result = uniform_baseline(np.int64(10), 3.0, np.int32(4), 1)
    strict_json(result)
    assert result["pool"] == 10 and isinstance(result["pool"], int)


def test_duplicate_stratum_names_raise():
    with pytest.raises(InputError):
        stratified_baseline([("a", 2, 1, 1, 0), ("a", 3, 1, 1, 0)])
