"""Option values are range-checked at parse time and usage errors are one line; `--fail-on`
is finite and ≥ 0 and names each benchmark that crossed it."""

from __future__ import annotations

import pytest
from corpus_contract import FAST, check_contract, cyber_data, data_args, invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.cli.fail_on import parse_fail_on as _parse_fail_on

# No dataset named here exists: a range error must be found while parsing, before anything is read.
COMPARE = ["compare", "no-such-train", "no-such-bench", "--no-report"]
NGRAM = ["ngram", "no-such-train", "no-such-bench", "--field", "a:b"]

BAD_OPTIONS = [
    (COMPARE, "--ngram", "99999999999999999999"), (COMPARE, "--ngram", "0"), (COMPARE, "--ngram", "65"),
    (COMPARE, "--ngram", "-3"), (COMPARE, "--ngram", "x"),
    (COMPARE, "--permutations", "99999999999"), (COMPARE, "--permutations", "10000001"),
    (COMPARE, "--permutations", "-1"),
    (COMPARE, "--seed", "-1"), (COMPARE, "--seed", str(2**32)), (COMPARE, "--seed", "1e3"),
    (COMPARE, "--fail-on", "nan%"), (COMPARE, "--fail-on", "nan"), (COMPARE, "--fail-on", "inf"),
    (COMPARE, "--fail-on", "inf%"), (COMPARE, "--fail-on", "-1"), (COMPARE, "--fail-on", "-5%"),
    (COMPARE, "--fail-on", "101%"), (COMPARE, "--fail-on", "1.5"), (COMPARE, "--fail-on", "lots"),
    (COMPARE, "--fail-on", ""), (COMPARE, "--fail-on", "%"),
    (NGRAM, "--n", "0"), (NGRAM, "--n", "65"), (NGRAM, "--n", "99999999999999999999"),
]


@pytest.mark.parametrize(("base", "option", "value"), BAD_OPTIONS, ids=[f"{o}={v}" for _, o, v in BAD_OPTIONS])
def test_bad_option_values_are_one_line_at_parse_time(tmp_path, base, option, value):
    run = check_contract(invoke(option, [*base, option, value], root=tmp_path), expect=2)
    assert option in run.first_line and "no-such" not in run.first_line, run.first_line


USAGE = [
    ["compare", "--bogus"], ["compare"], ["compare", "a", "b", "--format", "xml"], ["no-such-command"],
    ["matrix"], ["report"], ["card", "no-such-folder"], ["ngram", "a", "b"], ["compare", "a", "b", "--ngram"],
]


@pytest.mark.parametrize("args", USAGE, ids=[" ".join(a) for a in USAGE])
def test_usage_errors_are_one_line(tmp_path, args):
    run = check_contract(invoke("usage", args, root=tmp_path), expect=2)
    assert "Usage:" not in run.stderr and "Try " not in run.stderr
    assert run.first_line.endswith("--help`)"), run.first_line


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(st.integers(max_value=0), st.integers(min_value=65)))
def test_any_out_of_range_ngram_is_refused(tmp_path, value):
    check_contract(invoke("ngram", [*COMPARE, "--ngram", str(value)], root=tmp_path), expect=2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(st.integers(max_value=-1), st.integers(min_value=10_000_001)))
def test_any_out_of_range_permutations_is_refused(tmp_path, value):
    check_contract(invoke("permutations", [*COMPARE, "--permutations", str(value)], root=tmp_path), expect=2)


@given(text=st.one_of(st.text(max_size=12), st.floats().map(str), st.floats().map(lambda f: f"{f}%"),
                      st.integers().map(str)))
def test_fail_on_parses_to_a_finite_non_negative_limit_or_refuses(text):
    import typer

    try:
        parsed = _parse_fail_on(text)
    except typer.BadParameter as exc:
        assert "\n" not in str(exc)
        return
    limit, is_share = parsed
    assert limit == limit and 0 <= limit < float("inf") and (limit <= 1 or not is_share)


def test_fail_on_counts_and_shares_still_work_and_name_the_benchmark(tmp_path):
    data = cyber_data(tmp_path / "data")
    args = ["compare", "sec-bench", "cybergym", *data_args(data), *FAST, "--no-report", "--format", "json"]
    crossed = check_contract(invoke("count", [*args, "--fail-on", "2"], root=tmp_path), expect=1)
    lines = crossed.stderr.strip().splitlines()
    assert lines == ["overlap: cybergym: 2 of 7 bench items matched (28.6%) ≥ --fail-on 2"], lines
    share = check_contract(invoke("share", [*args, "--fail-on", "5%"], root=tmp_path), expect=1)
    assert "(28.6%) ≥ --fail-on 5%" in share.stderr
    for below in ("3", "50%"):
        assert check_contract(invoke("below", [*args, "--fail-on", below], root=tmp_path), expect=0).stderr == ""
