"""Longest shared word run: exact, vectorised, same answer as a brute force."""

import numpy as np
import pytest

from overlap.text.runs import longest_common_run, longest_common_run_words


def brute(a, b):
    best = (0, -1, -1)
    for i in range(len(a)):
        for j in range(len(b)):
            k = 0
            while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k] and a[i + k] >= 0:
                k += 1
            if k > best[0]:
                best = (k, i, j)
    return best


@pytest.mark.parametrize("budget", [None, 0])  # 0 forces the rolling-hash method
def test_random_small_inputs_match_brute_force(budget):
    rng = np.random.default_rng(1 if budget is None else 2)
    kw = {} if budget is None else {"pair_budget": budget}
    for _ in range(1500):
        na, nb = rng.integers(0, 40, 2)
        vocab = int(rng.integers(1, 8))
        a = rng.integers(-1, vocab, na)  # -1: a word the other side does not have
        b = rng.integers(-1, vocab, nb)
        assert longest_common_run(a, b, **kw) == brute(a.tolist(), b.tolist()), (a, b)


def test_planted_run_and_ties():
    rng = np.random.default_rng(5)
    a = rng.integers(100, 10_000, 3000)
    b = rng.integers(10_000, 20_000, 2000)
    b[700:730] = a[1200:1230]
    assert longest_common_run(a, b) == (30, 1200, 700)
    assert longest_common_run(a, b, pair_budget=0) == (30, 1200, 700)
    # two maximal runs: the smallest position in a wins, then in b
    assert longest_common_run([1, 2, 9, 1, 2], [1, 2, 1, 2]) == (2, 0, 0)
    assert longest_common_run([5, 1, 2], [1, 2, 7, 1, 2]) == (2, 1, 0)


def test_repetitive_input_uses_the_bounded_method():
    a = np.zeros(20_000, np.int64)
    b = np.zeros(5_000, np.int64)  # 1e8 equal pairs: the diagonal method would not fit
    assert longest_common_run(a, b) == (5000, 0, 0)


def test_empty_and_disjoint():
    assert longest_common_run([], [1, 2]) == (0, -1, -1)
    assert longest_common_run([1, 2], [3, 4]) == (0, -1, -1)
    assert longest_common_run([-1, -1], [-1, -1]) == (0, -1, -1)


def test_words_helper():
    a = "the parser crashes on a very long header line".split()
    b = "when the parser crashes on a header it aborts".split()
    assert longest_common_run_words(a, b) == (5, 0, 1, "the parser crashes on a")
