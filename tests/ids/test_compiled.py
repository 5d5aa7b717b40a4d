"""The recognisers' compiled loops give what their Arrow path gives, on generated values of every id form,
with junk, Unicode, blanks and nulls, and on arrays that are slices of larger ones."""

from __future__ import annotations

from unittest import mock

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.ids import compiled, id_arrays, pr_columns, recognise
from overlap.sources.rows import batch_keys

numba = pytest.importorskip("numba")  # a dependency: without it the Arrow path is all there is


def test_the_loops_compile_and_pass_their_smoke_test():
    assert compiled.kernels(compiled.COMPILED_FROM) is not None

PIECES = st.one_of(
    st.text("0123456789", min_size=1, max_size=20),
    st.sampled_from(["arvo", "ARVO", "oss-fuzz", "OssFuzz", "cve-", "CVE-2021-", "GHSA-", "ghsa", "/commit/", "#",
                     "github.com", "GitHub.COM", "__", "_", "-", ":", ".", "/", " ", "é", "１", "owner", "Name",
                     "a-b", "x.y", "\n", "\t"]),
    st.text(max_size=3),
)
NAME = st.text("aZ09-_.#/ é", max_size=6)
OWNER = st.one_of(st.text("aZ09-", min_size=1, max_size=5), NAME)  # mostly a valid owner, sometimes not
REPO_NAME = st.one_of(st.text("aZ09-_.", max_size=6), NAME)
DIGITS = st.one_of(st.text("0123456789", max_size=20), st.text("0123456789a-", max_size=4))
# the forms themselves, with parts that bend their rules (`_` in an owner, `.` in a name, no digits, ...)
FORMS = st.one_of(
    st.tuples(OWNER, REPO_NAME, DIGITS).map(lambda t: f"{t[0]}__{t[1]}-{t[2]}"),
    st.tuples(st.sampled_from(["arvo", "oss-fuzz", "ARVO", "ossfuzz"]), st.sampled_from([":", "_", "-", ""]),
              DIGITS).map("".join),
    st.tuples(OWNER, REPO_NAME, DIGITS).map(lambda t: f"{t[0]}/{t[1]}#{t[2]}"),
    st.tuples(st.sampled_from(["CVE", "cve", "x.cve"]), st.sampled_from(["-2021-", "-1998-"]),
              DIGITS).map("".join),
    st.lists(st.text("23456789cfghjmpqrvwxA", min_size=4, max_size=4), min_size=3, max_size=3).map(
        lambda t: "GHSA-" + "-".join(t)),
    st.tuples(st.sampled_from(["https://github.com/", "GitHub.com/", "gitlab.com/"]), OWNER, st.just("/"),
              REPO_NAME, st.sampled_from(["/commit/", "/Commit/", "/pull/"]),
              st.text("0123456789abcdefX", min_size=6, max_size=12)).map("".join),
)
VALUES = st.one_of(st.none(), FORMS, FORMS, st.lists(PIECES, max_size=6).map("".join))
ARRAYS = st.tuples(st.lists(VALUES, max_size=40), st.integers(0, 3), st.integers(0, 3))


def _array(drawn) -> pa.Array:
    """The values as a string array, cut out of a larger one (so its offsets do not start at zero)."""
    values, before, after = drawn
    padded = ["pad__x-1"] * before + values + ["arvo:1"] * after
    return pa.array(padded, pa.string()).slice(before, len(values))


def arrow_path(function, *args, **kwargs):
    """`function` run with the compiled loops turned off."""
    with mock.patch.object(compiled, "kernels", lambda length: None):
        return function(*args, **kwargs)


@pytest.fixture(autouse=True)
def _compiled_path():
    """Every batch, however small, goes through the compiled loops (unless `arrow_path` turns them off)."""
    with mock.patch.object(compiled, "COMPILED_FROM", 0):
        yield


@settings(max_examples=300, deadline=None)
@given(ARRAYS, st.lists(st.sampled_from(id_arrays.LITERALS), min_size=1, max_size=3, unique=True))
def test_the_literal_test_is_arrows(drawn, needles):
    values = _array(drawn)
    found = compiled.literal_bits(values, id_arrays.LITERALS, compiled.kernels(len(values)))
    got = id_arrays._holds(values, {"_literals": pa.array(found)}, *needles)
    assert got.to_pylist() == id_arrays._holds(values, {}, *needles).to_pylist()


@settings(max_examples=300, deadline=None)
@given(ARRAYS)
def test_the_owner_form_is_arrows(drawn):
    """Which values are of the form, their repo, PR number and `repo#N` key: the one compiled pass gives the
    Arrow path's (or, for digits too long for int64, hands the batch to it)."""
    values = _array(drawn)
    got = pr_columns._owner_form(values)
    want = arrow_path(pr_columns._owner_form, values)
    assert [part.to_pylist() for part in got] == [part.to_pylist() for part in want]
    assert [part.type for part in got] == [pa.bool_(), pa.string(), pa.int64(), pa.string()]


@settings(max_examples=200, deadline=None)
@given(ARRAYS, st.sampled_from([None, "ossfuzz", "github_pr", "cve", "fix_commit"]))
def test_recognition_is_the_arrow_paths(drawn, scheme):
    values = _array(drawn)
    context = {"cve": pa.array(["CVE-2022-23529"] * len(values))}  # a GHSA id is read through it
    got = recognise.recognise(values, scheme=scheme, context=context)
    want = arrow_path(recognise.recognise, values, scheme=scheme, context=context)
    assert got.keys.to_pylist() == want.keys.to_pylist()
    assert got.recogniser.to_pylist() == want.recogniser.to_pylist()
    assert got.report.to_dict() == want.report.to_dict()


@settings(max_examples=200, deadline=None)
@given(st.tuples(st.lists(st.one_of(st.none(), NAME, DIGITS), max_size=30), st.integers(0, 3), st.integers(0, 3)),
       st.lists(st.one_of(st.none(), DIGITS), max_size=30))
def test_joining_pr_key_values_is_arrows(left, right):
    right = (right + [None] * 30)[:len(left[0])]
    first, second = _array(left), pa.array(right, pa.string())
    assert pr_columns._joined(first, second).to_pylist() == arrow_path(pr_columns._joined, first, second).to_pylist()


KEY_VALUES = st.one_of(st.tuples(NAME, st.integers(0, 10**18)).map(lambda t: f"{t[0]}#{t[1]}"),
                       st.tuples(NAME, DIGITS).map(lambda t: f"{t[0]}#{t[1]}"), NAME)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.tuples(
    st.integers(0, n - 1), st.sampled_from(["repo_pr", "repo_pr_exact", "base_pr", "base", "ossfuzz"]), KEY_VALUES),
    max_size=20))), st.booleans())
def test_reading_each_rows_pr_and_repo_from_its_keys_is_arrows(drawn, want_repo):
    n, keys = drawn
    rows, kinds, values = (list(column) for column in zip(*keys, strict=True)) if keys else ([], [], [])
    table = pa.table({"row": pa.array(rows, pa.int64()), "kind": pa.array(kinds, pa.string()),
                      "value": pa.array(values, pa.string())})
    try:
        want = arrow_path(batch_keys._from_pr_keys, table, n, want_repo=want_repo)
    except (pa.ArrowInvalid, IndexError):  # a value Arrow cannot read: the compiled pass gives it back to Arrow
        with pytest.raises((pa.ArrowInvalid, IndexError)):
            batch_keys._from_pr_keys(table, n, want_repo=want_repo)
        return
    got = batch_keys._from_pr_keys(table, n, want_repo=want_repo)
    assert got[0].to_pylist() == want[0].to_pylist()
    assert (got[1].to_pylist() if want_repo else got[1]) == (want[1].to_pylist() if want_repo else want[1])


CELLS = st.one_of(st.none(), NAME, DIGITS, st.sampled_from(["Owner/Name", " a/b ", "django/django", "", "12",
                                                            "abc1234", "ABCDEF1234567"]))


@settings(max_examples=200, deadline=None)
@given(ARRAYS, st.sampled_from([None, "ossfuzz", "github_pr"]), st.lists(st.sampled_from(["repo", "pr", "base"]),
                                                                         unique=True, max_size=3),
       st.lists(st.tuples(CELLS, CELLS, CELLS), min_size=50, max_size=50), st.booleans())
def test_the_pr_and_repo_a_recognition_carries_are_what_its_keys_say(drawn, scheme, named, cells, compiled_loops):
    """What a reader takes from `Recognition.pr_fields` is what it would parse back out of the keys (the
    reference, `batch_keys._pr_from_keys` and `_repo_from_keys`), whichever recognisers took which rows."""
    values = _array(drawn)
    context = {name: pa.array([row[i] for row in cells[:len(values)]], pa.string())
               for i, name in enumerate(("repo", "pr", "base")) if name in named}
    run = recognise.recognise if compiled_loops else (lambda *a, **k: arrow_path(recognise.recognise, *a, **k))
    got = run(values, scheme=scheme, context=context)
    if got.pr_fields is None:  # only when a scalar parser made keys
        assert not all(v is None or v.isascii() for v in values.to_pylist())
        return
    pr, repo = got.pr_fields
    assert pr.to_pylist() == batch_keys._pr_from_keys(got.keys, len(values)).to_pylist()
    assert repo.to_pylist() == batch_keys._repo_from_keys(got.keys, len(values)).to_pylist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text("aZ09-", min_size=1, max_size=4), st.text("aZ09-_.", min_size=1, max_size=4),
                          st.one_of(st.text("0123456789", min_size=1, max_size=22),
                                    st.sampled_from(["0", "000", "007", "1" * 18, "9" * 19]))), max_size=40))
def test_the_owner_form_in_one_pass_is_the_documented_rule(parts):
    """The compiled pass against the form's rule written out: an owner of letters, digits and dashes not
    starting with a dash, `__`, a name of letters, digits, `.`, `_`, `-`, then `-` and the digits; the number
    is the digits' value unless zero, the key `owner/name#N`; digits longer than 18 hand the batch back."""
    values = pa.array([f"{owner}__{name}-{digits}" for owner, name, digits in parts], pa.string())
    want = []
    for value in values.to_pylist():
        # the last `-` splits: a name's own trailing `-12` is digits of its own, so the rule reads from the end
        head, _, tail = value.rpartition("-")
        owner, _, name = head.partition("__")
        form = (owner != "" and not owner.startswith("-") and "_" not in owner and name != ""
                and all(c.isascii() and (c.isalnum() or c in "._-") for c in name))
        number = int(tail) if form and int(tail) else None
        want.append((form, f"{owner}/{name}" if form else None, number, f"{owner}/{name}#{number}" if number else None,
                     form and len(tail) > 18))
    got = compiled.owner_form_keys(values, compiled.kernels(len(values)))
    if any(long for *_, long in want):
        assert got is None
        return
    ok, repo, number, key = got
    assert list(zip(ok.tolist(), repo.to_pylist(), number.to_pylist(), key.to_pylist(), strict=True)) == \
        [w[:4] for w in want]


@settings(max_examples=300, deadline=None)
@given(ARRAYS)
def test_the_byte_flags_are_arrows(drawn):
    """A value flagged as not ASCII is one Arrow calls not ASCII, and a value not flagged as trimmable is one
    Arrow's whitespace trim leaves as it is (the one-pass preparation relies on both)."""
    values = _array(drawn)
    _, wide, edge = compiled.literal_bits_and_flags(values, id_arrays.LITERALS, compiled.kernels(len(values)))
    assert (~wide).tolist() == pc.fill_null(pc.string_is_ascii(values), True).to_pylist()
    trimmed = pc.utf8_trim_whitespace(values).to_pylist()
    assert all(after == before for after, before, flagged in zip(trimmed, values.to_pylist(), edge, strict=True)
               if not flagged)
