"""The id recognisers: each on real-looking values, forced schemes, the report, and property tests that the
vectorised path reads every value exactly as the scalar parsers do (and counts add up)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap.errors import InputError
from overlap.ids.cve import find_cve, raw_cve
from overlap.ids.github import parse_instance_id, pr_keys
from overlap.ids.ossfuzz import trailing_int
from overlap.ids.recognise import RECOGNISERS, recognise

SHA = "3a6c0d0c5e5f0b7b7d2b1f1e0a8c9d7e6f5a4b3c"


def _keys(values, **kw):
    result = recognise(pa.array(values), **kw)
    return [(r["row"], r["kind"], r["value"], r["raw"]) for r in result.keys.to_pylist()], result.report


@pytest.mark.parametrize("value,number", [
    ("arvo:10340", 10340), ("arvo_42470443", 42470443), ("ARVO:10340", 10340), ("oss-fuzz:42537168", 42537168),
    ("php.ossfuzz-42491394", 42491394), ("libxml2.ossfuzz-385167047", 385167047),
    ("https://bugs.chromium.org/p/oss-fuzz/issues/detail?id=54839", 54839),
    ("bugs.chromium.org/p/oss-fuzz/issues/detail?id=54839&q=x", 54839),
    ("https://issues.oss-fuzz.com/issues/42519792", 42519792), ("issues.oss-fuzz.com/issues/385167047/", 385167047),
])
def test_ossfuzz_forms(value, number):
    keys, report = _keys([value])
    assert keys == [(0, "ossfuzz", str(number), str(number))]
    assert report.taken["ossfuzz"].count == 1 and report.taken["ossfuzz"].example == value
    if not value.endswith(("&q=x", "/")):
        assert trailing_int(value) == number  # the registered adapters read the same number


@pytest.mark.parametrize("value", ["arvo:1e5", "arvo:-1", "arvo:10055.5", "arvo:0", "arvo:１０３４０", "arvo:١٠٣٤٠",
                                   "arvo:" + "9" * 25, "issues.oss-fuzz.com/issues/x1", "12345"])
def test_ossfuzz_refusals(value):
    keys, report = _keys([value])
    assert keys == [] and report.unrecognised == 1 and report.unrecognised_examples == [value]


def test_forced_ossfuzz_never_reads_a_github_url_as_an_issue():
    """GitHub issue and PR numbers overlap old OSS-Fuzz ids: under --id-scheme ossfuzz a GitHub issue URL or an
    API link must not become an OSS-Fuzz issue (ASCII values and, through the scalar parsers, others)."""
    values = ["https://github.com/acme/widget/issues/10102", "https://api.github.com/repos/acme/widget/pulls/10340",
              "https://GitHub.com/acme/wïdget/issues/10055", "task-10055"]
    keys, report = _keys(values, scheme="ossfuzz")
    assert [(k[0], k[2]) for k in keys] == [(3, "10055")]
    assert report.unrecognised == 3


def test_forced_ossfuzz_takes_any_trailing_issue_number_and_whole_floats_only():
    keys, report = _keys(["10055", "task-77"], scheme="ossfuzz")
    assert [k[2] for k in keys] == ["10055", "77"]
    keys, report = _keys([10055.0, 10055.5, 7, None], scheme="ossfuzz")
    assert [(k[0], k[2]) for k in keys] == [(0, "10055"), (2, "7")]
    # a fraction in a number column is no id, as the side's items count it
    assert report.unrecognised_examples == [] and report.missing == 2


@pytest.mark.parametrize("value,kind,canonical", [
    ("https://github.com/o/r/pull/10340", "repo_pr", "o/r#10340"), ("django__django-11099", "repo_pr",
                                                                     "django/django#11099"),
    ("jq.cve-2023-50246", "cve", "CVE-2023-50246"), ("https://github.com/o/r/commit/abcdef1", "fix_commit", "abcdef1"),
    ("arvo:10055", "ossfuzz", "10055"),
])
@pytest.mark.parametrize("scheme", ["ossfuzz", "fix_commit", "cve", "github_pr"])
def test_a_forced_scheme_reads_only_what_no_specific_form_takes(value, kind, canonical, scheme):
    """A PR URL is never OSS-Fuzz issue 10340 under --id-scheme ossfuzz; a CVE stays a CVE."""
    keys, report = _keys([value, "task-77"], scheme=scheme)
    assert (0, kind, canonical) in [(k[0], k[1], k[2]) for k in keys]
    assert not [k for k in keys if k[0] == 0 and k[1] != kind and k[1] in ("ossfuzz", "cve", "fix_commit")]


@pytest.mark.parametrize("value,canonical,raw", [
    ("CVE-2023-50246", "CVE-2023-50246", "CVE-2023-50246"), ("jq.cve-2023-50246", "CVE-2023-50246", "cve-2023-50246"),
    ("fixes (CVE-2021-44228) in log4j", "CVE-2021-44228", "CVE-2021-44228"),
    ("Vulnérabilité CVE-2021-44228 corrigée", "CVE-2021-44228", "CVE-2021-44228"),
])
def test_cve_anywhere(value, canonical, raw):
    keys, _ = _keys([value])
    assert keys == [(0, "cve", canonical, raw)]
    assert (find_cve(value), raw_cve(value)) == (canonical, raw)


@pytest.mark.parametrize("value", ["cve_2023_1234", "xcve-2023-1234", "CVE-1998-1234", "CVE-2023-１２３４",
                                   "éCVE-2023-1234", "CVE-2023-12345678901234"])
def test_cve_refusals(value):
    assert _keys([value])[0] == []


def test_ghsa_through_the_cve_column():
    keys, report = _keys(["GHSA-7rjr-3q55-vv33", "GHSA-7rjr-3q55-vv33"],
                         context={"cve": pa.array(["CVE-2022-23529", None])})
    assert keys == [(0, "cve", "CVE-2022-23529", "CVE-2022-23529")]
    assert report.taken["ghsa"].count == 1 and report.unrecognised == 1
    assert _keys(["GHSA-7rjr-3q55-vv33"])[1].unrecognised == 1  # no CVE column: not an identity we can join


@pytest.mark.parametrize("value,repo,pr", [
    ("kbknapp__clap-rs-941", "kbknapp/clap-rs", 941), ("django__django-11099", "django/django", 11099),
    ("BurntSushi/ripgrep#1294", "BurntSushi/ripgrep", 1294),
    ("https://github.com/keras-team/keras/pull/19284", "keras-team/keras", 19284),
    ("github.com/keras-team/keras/pull/19284/files", "keras-team/keras", 19284),
])
def test_github_pr_forms(value, repo, pr):
    keys, report = _keys([value], context={"base": pa.array([SHA.upper()])})
    assert [k[1:] for k in keys] == pr_keys(repo, pr, SHA.upper())
    assert report.taken["github_pr"].count == 1


def test_github_pr_columns_win_over_the_id():
    keys, _ = _keys(["kbknapp__clap-rs-941"], context={"repo": pa.array(["clap-rs/clap"]), "pr": pa.array([942])})
    assert [k[1:] for k in keys] == pr_keys("clap-rs/clap", 942, None)
    keys, _ = _keys(["a__b-1"], context={"pr": pa.array(["19284.0"])})
    assert ("repo_pr_exact", "a/b#19284", "a/b#19284") in [k[1:] for k in keys]


@pytest.mark.parametrize("value", ["django__django-0", "django__django-x1", "-__x-1", "own/er/repo#1",
                                   "owner/repo#１２"])
def test_github_pr_refusals(value):
    assert _keys([value])[0] == []


def test_fix_commit_urls_and_forced_bare_shas():
    keys, _ = _keys([f"https://github.com/jqlang/jq/commit/{SHA.upper()}", SHA])
    assert keys == [(0, "fix_commit", SHA, SHA.upper())]
    keys, _ = _keys([SHA, "not a sha"], scheme="fix_commit")
    assert keys == [(0, "fix_commit", SHA, SHA)]


def test_report_and_unknown_scheme():
    values = ["arvo:1", "CVE-2023-50246", "x1", "", None, "y", "z", "w", "v"]
    result = recognise(pa.array(values))
    report = result.report
    assert report.to_dict()["unrecognised"] == {"count": 5, "examples": ["x1", "y", "z", "w", "v"]}
    assert report.missing == 2 and report.values == len(values)
    assert "ossfuzz 1 (e.g. arvo:1)" in report.summary()
    with pytest.raises(InputError, match="id scheme 'nope'"):
        recognise(pa.array(["x"]), scheme="nope")
    assert all(r.example and r.description for r in RECOGNISERS.values())


def test_every_example_is_recognised_by_its_recogniser():
    for name, recogniser in RECOGNISERS.items():
        context = {"cve": pa.array(["CVE-2022-23529"])} if name == "ghsa" else None
        result = recognise(pa.array([recogniser.example]), context=context)
        assert result.recogniser.to_pylist() == [name]


# --- properties ----------------------------------------------------------------------------------------

DIGITS = st.text("0123456789", min_size=1, max_size=22)
UNICODE_DIGITS = st.sampled_from(["１", "٣", "߂", "৪", "²", "Ⅻ"])
PIECES = st.one_of(
    DIGITS, UNICODE_DIGITS, st.sampled_from(["arvo", "oss-fuzz", "ossfuzz", "cve", "CVE", "__", "_", "-", ":", ".",
                                             "#", "/", "e", "x", " ", "é", "github.com/", "pull", "é", "1.0", "+"]),
    st.text(max_size=3))
VALUES = st.lists(PIECES, max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES, max_size=12))
def test_vectorised_reading_matches_the_scalar_parsers(values):
    forced_oss = recognise(pa.array(values, pa.string()), scheme="ossfuzz")
    expect = {i: str(trailing_int(v)) for i, v in enumerate(values) if v.strip() and trailing_int(v) is not None}
    assert {r["row"]: r["value"] for r in forced_oss.keys.to_pylist()} == expect
    forced_cve = recognise(pa.array(values, pa.string()), scheme="cve")
    expect = {i: (find_cve(v), raw_cve(v)) for i, v in enumerate(values) if find_cve(v)}
    assert {r["row"]: (r["value"], r["raw"]) for r in forced_cve.keys.to_pylist()} == expect
    forced_pr = recognise(pa.array(values, pa.string()), scheme="github_pr")
    for row in forced_pr.keys.to_pylist():
        assert parse_instance_id(values[row["row"]].strip()) or "#" in values[row["row"]] \
            or "/pull/" in values[row["row"]]


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES, max_size=12))
def test_auto_counts_add_up_and_no_value_is_read_as_an_id_it_is_not(values):
    result = recognise(pa.array(values, pa.string()))
    report = result.report
    assert report.values == len(values)
    assert len(report.unrecognised_examples) == min(report.unrecognised, 5)
    for row in result.keys.to_pylist():
        value = values[row["row"]]
        if row["kind"] == "ossfuzz":
            assert trailing_int(value) == int(row["value"])  # never a number the scalar parser would not read
            assert value.strip().isascii()
        if row["kind"] == "cve":
            assert find_cve(value) == row["value"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True), st.integers(-5, 10**15), st.none()), max_size=10))
def test_numbers_as_ids(values):
    floats = [float(v) if v is not None else None for v in values]
    result = recognise(pa.array(floats, pa.float64()), scheme="ossfuzz")
    got = {r["row"]: r["value"] for r in result.keys.to_pylist()}
    for i, v in enumerate(floats):
        whole = v is not None and v == v and abs(v) != float("inf") and v.is_integer() and abs(v) <= 2**53
        expected = trailing_int(int(v)) if whole else None
        assert got.get(i) == (str(expected) if expected is not None else None)
    assert result.report.values == len(values)
