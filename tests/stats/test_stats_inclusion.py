"""The SWE inclusion test on the stratified machinery, with hand-computed hypergeometric values."""

from __future__ import annotations

import json

import pytest

from overlap.stats.baselines import inclusion_test


def pr(repo, number, is_bench, included):
    return {"stratum": repo, "number": number, "is_bench": is_bench, "included": included}


# o/r1: bench PRs 10, 20, 30, 40; reference PRs 50, 60, 70, 80; the training set has 10, 20, 30 and 50.
# o/r2: bench PR 5, reference PR 6; the training set has neither (skipped).
ROWS = [
    pr("o/r1", 10, True, True), pr("o/r1", 20, True, True), pr("o/r1", 30, True, True),
    pr("o/r1", 40, True, False), pr("o/r1", 50, False, True), pr("o/r1", 60, False, False),
    pr("o/r1", 70, False, False), pr("o/r1", 80, False, False),
    pr("o/r2", 5, True, False), pr("o/r2", 6, False, False),
]


def test_upper_tail_by_hand():
    result = inclusion_test(ROWS)
    # o/r1: X ~ H(8, 4, 4); P(X ≥ 3) = (C(4,3)C(4,1) + C(4,4)) / C(8,4) = 17/70
    assert result["observed"] == 3
    assert result["p_upper"] == pytest.approx(17 / 70)
    assert result["p_lower"] == pytest.approx(69 / 70)
    assert result["expected"] == pytest.approx(2.0)
    assert result["bench_rate"] == pytest.approx(3 / 5)
    assert result["reference_rate"] == pytest.approx(1 / 5)
    assert result["strata_in_null"] == 1
    table = {row["stratum"]: row for row in result["strata"]}
    assert table["o/r1"]["bench_rate"] == pytest.approx(3 / 4)
    assert table["o/r1"]["reference_rate"] == pytest.approx(1 / 4)
    assert table["o/r2"]["in_null"] is False
    assert result["null"] == "inclusion" and result["restriction"] is None
    json.dumps(result, allow_nan=False)


def test_lower_tail_by_hand():
    rows = [pr("a/b", i, i <= 3, i > 3) for i in range(1, 7)]  # includes only the reference PRs
    result = inclusion_test(rows)
    assert result["observed"] == 0
    assert result["p_lower"] == pytest.approx(1 / 20)  # H(6, 3, 3): P(X = 0) = 1/20
    assert result["p_upper"] == 1.0
    assert result["bench_rate"] == 0.0 and result["reference_rate"] == 1.0


def test_restriction_to_the_training_sets_pr_range():
    rows = [*ROWS, pr("o/r1", None, False, False)]
    result = inclusion_test(rows, train_ranges={"o/r1": (10, 50)})
    # kept in o/r1: 10, 20, 30, 40 (bench) and 50 (reference): X ~ H(5, 4, 4) ∈ {3, 4}, P(3) = 4/5
    assert result["pool"] == 5
    assert result["p_upper"] == pytest.approx(1.0)
    assert result["p_lower"] == pytest.approx(4 / 5)
    assert result["restriction"] == {"rows_before": 11, "rows_kept": 5, "rows_outside_train_range": 5,
                                     "rows_without_number": 1}


def test_empty_and_degenerate():
    empty = inclusion_test([])
    assert empty["observed"] == 0 and empty["bench_rate"] is None and empty["reference_rate"] is None
    only_bench = inclusion_test([pr("a/b", 1, True, True), pr("a/b", 2, True, False)])
    assert only_bench["reference_rate"] is None and only_bench["p_upper"] == 1.0 and only_bench["z"] == 0.0
    json.dumps([empty, only_bench], allow_nan=False)
