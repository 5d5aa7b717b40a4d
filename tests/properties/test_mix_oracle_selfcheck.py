"""The mix oracle (`mix_oracle.py`) checked by hand on small examples, so that a disagreement between it and the
tool points at the tool: every spelling it reads, the pair rule, duplicates, repeats and the forced scheme."""

from __future__ import annotations

import pytest
from mix_oracle import (
    Columns,
    Data,
    counts,
    cybergym,
    filter_plan,
    matched_bench,
    matrix_cells,
    row_keys,
)
from mix_strategies import column_view

AUTO = Columns()
ALL = Columns(repo="repo", pr="pr", base="base_commit")
FORCED = Columns(scheme="ossfuzz")
BASE = "a" * 40


def keys(value, columns=AUTO, **others):
    return sorted(row_keys({"task": value, **others}, columns))


@pytest.mark.parametrize("value", [
    "arvo:10055", "arvo_10055", "oss-fuzz:10055", "libxml2.ossfuzz-10055", " arvo:10055 ",
    "https://bugs.chromium.org/p/oss-fuzz/issues/detail?id=10055",
    "bugs.chromium.org/p/oss-fuzz/issues/detail?id=10055",
    "https://issues.oss-fuzz.com/issues/10055", "issues.oss-fuzz.com/issues/10055",
    "arvo:42471001", "oss-fuzz:42471001",  # the new id of the same bug
])
def test_every_ossfuzz_spelling_is_the_bug_under_its_new_id(value):
    assert keys(value) == [("ossfuzz", "42471001")]


@pytest.mark.parametrize("value", ["CVE-2023-50246", "cve-2023-50246", "jq.cve-2023-50246",
                                   "fix for CVE-2023-50246 in jq"])
def test_cve_spellings(value):
    assert keys(value) == [("cve", "CVE-2023-50246")]


@pytest.mark.parametrize("value", ["kbknapp__clap-rs-941", "clap-rs/clap#941", "https://github.com/Clap-RS/Clap/pull/941",
                                   "github.com/kbknapp/clap-rs/pull/941"])
def test_pr_spellings_meet_on_the_canonical_repo(value):
    assert keys(value) == [("repo_pr", "clap-rs/clap#941")]


def test_pr_keys_from_columns_and_base():
    assert keys("owner__repo-12", ALL, repo="Owner/Repo", pr="12.0", base_commit=BASE.upper()) == [
        ("base", BASE), ("base_pr", f"{BASE}#12"), ("repo_pr", "owner/repo#12")]
    # An id no scheme takes still gets the PR keys its columns give.
    assert keys("row 3", ALL, repo="jlongster/prettier", pr=77, base_commit=None) == [
        ("repo_pr", "prettier/prettier#77")]
    # Empty or malformed base commits are never keys.
    assert keys("owner/repo#12", ALL, repo="owner/repo", pr=12, base_commit="") == [("repo_pr", "owner/repo#12")]


def test_fix_commit_urls():
    sha = "9f81cadc34d91ed75dd6d2864170959e592ae815"
    assert keys(f"https://github.com/jqlang/jq/commit/{sha.upper()}") == [("fix_commit", sha)]


@pytest.mark.parametrize("value", ["arvo:0", "arvo:-1", "arvo:10055.5", "arvo:1e5", "arvo:0x12", "arvo:1234567890123",
                                   "CVE-1998-1234", "CVE-2023-123", "xcve-2023-1234", "cve_2023_1234", "owner/repo#0",
                                   "owner__repo-abc", "https://github.com/owner/repo/issues/12", "task-7", "10055",
                                   10055, 10055.0, None, "", "   ", "https://github.com/o/r/commit/xyz"])
def test_junk_and_bare_numbers_have_no_keys_without_a_forced_scheme(value):
    assert keys(value) == []


def test_a_repo_named_oss_fuzz_is_a_pr_not_an_ossfuzz_issue():
    assert keys("google__oss-fuzz-10340") == [("repo_pr", "google/oss-fuzz#10340")]
    assert keys("https://github.com/google/oss-fuzz/pull/10340") == [("repo_pr", "google/oss-fuzz#10340")]


@pytest.mark.parametrize(("value", "expected"), [
    ("arvo:10055", "42471001"), (10055, "42471001"), (10055.0, "42471001"), ("10055", "42471001"),
    ("task-10055", "42471001"), ("bug 10055", "42471001"), ("x#99", "99"), ("php.ossfuzz-42471001", "42471001"),
    ("https://github.com/google/oss-fuzz/pull/10340", None), ("https://github.com/Owner/Repo/pull/12", None),
    ("10055.0", None), ("10055.5", None), ("cve_2023_1234", None), ("arvo:-1", None), ("1e5", None), ("0x12", None),
    ("CVE-2023-50246", None), (0, None), ("1234567890123", None),
])
def test_forced_ossfuzz_scheme(value, expected):
    """The looser form reads only what no specific form takes: a PR URL stays a PR, a CVE a CVE."""
    found = keys(value, FORCED)
    assert [k for k in found if k[0] == "ossfuzz"] == ([("ossfuzz", expected)] if expected else [])
    if isinstance(value, str) and "/pull/" in value:
        assert [k[0] for k in found] == ["repo_pr"]
    if value == "CVE-2023-50246":
        assert found == [("cve", "CVE-2023-50246")]


def test_cybergym_as_the_oracle_reads_it():
    items = cybergym().items()
    assert len(items) == 10
    assert items["arvo:10055"].keys == {("ossfuzz", "42471001")}
    assert items["oss-fuzz:42471120"].keys == {("ossfuzz", "42471120")}  # arvo:11873 elsewhere
    assert items["arvo:10190"].keys == {("ossfuzz", "10190")}  # not in the mapping: as given


def test_pair_rule():
    for kinds in ({"ossfuzz"}, {"cve"}, {"fix_commit"}, {"repo_pr"}, {"base_pr", "base"}, {"repo_pr", "base"},
                  {"ossfuzz", "base"}):
        assert counts(kinds), kinds
    assert not counts({"base"})
    assert not counts(set())


def test_the_reported_mix_against_cybergym():
    train = Data("mix", [{"task": "arvo:10055"}, {"task": "https://github.com/Owner/Repo/pull/12"}])
    assert matched_bench(train, cybergym()) == {"arvo:10055"}


def test_translation_and_renames_between_datasets():
    train = Data("t", [{"task": "arvo_11873"}, {"task": "kbknapp__clap-rs-941"}, {"task": "oss-fuzz:42471005"}])
    bench = Data("b", [{"task": "clap-rs/clap#941"}])
    assert matched_bench(train, cybergym()) == {"oss-fuzz:42471120", "arvo:10340"}
    assert matched_bench(train, bench) == {"clap-rs/clap#941"}


def test_base_alone_is_reported_not_counted():
    other = "b" * 40
    train = Data("t", [{"task": "owner__repo-13", "base_commit": BASE},  # same base, another PR
                       {"task": "arvo:20001", "base_commit": other},  # same base, no PR on this side
                       {"task": "fork__ripgrep-5", "base_commit": "c" * 40}], Columns(base="base_commit"))
    bench = Data("b", [{"task": "owner__repo-12", "base_commit": BASE},
                       {"task": "instance_x", "base_commit": other},
                       {"task": "burntsushi__ripgrep-5", "base_commit": "c" * 40}], Columns(base="base_commit"))
    # Only the last: same PR at the same base under two repo names (base_pr).
    assert matched_bench(train, bench) == {"burntsushi__ripgrep-5"}


def test_filter_plan_repeats_and_duplicates():
    rows = [
        {"task": "arvo:10055"},  # 0 in cybergym
        {"task": "arvo:20001"},  # 1 clean, first copy of 20001
        {"task": " arvo:20001"},  # 2 another item, the same bug: dup
        {"task": "arvo:20001"},  # 3 repeats item 1: dup
        {"task": "arvo:10055"},  # 4 repeats item 0: goes with it
        {"task": None},  # 5 no item: kept
        {"task": "oss-fuzz:42471001"},  # 6 the bug of row 0 under its new id: in cybergym
        {"task": "zz"},  # 7 unrecognised: kept
        {"task": "zz"},  # 8 repeats it: dup
    ]
    plan = filter_plan(Data("t", rows), [cybergym()])
    assert plan.kept == [1, 5, 7]
    assert plan.removed == {0: "id", 4: "id", 6: "id", 2: "dup", 3: "dup", 8: "dup"}
    only_id = filter_plan(Data("t", rows), [cybergym()], reasons=("id",))
    assert only_id.kept == [1, 2, 3, 5, 7, 8]


def test_filter_keeps_the_first_copy_nothing_else_drops():
    rows = [{"task": "arvo:10055", "repo": "clap-rs/clap", "pr": 941},  # in cybergym, and PR 941 by its columns
            {"task": "clap-rs/clap#941", "repo": "clap-rs/clap", "pr": "941", "base_commit": "d" * 40},
            {"task": "kbknapp__clap-rs-941", "repo": "kbknapp/clap-rs", "pr": 941.0}]
    columns = Columns(repo="repo", pr="pr", base="base_commit")
    plan = filter_plan(Data("t", rows, columns), [cybergym()])
    # Row 0 goes for its OSS-Fuzz id; the three are one PR: the first copy nothing else drops (row 1) stays.
    assert plan.kept == [1]
    assert plan.removed == {0: "id", 2: "dup"}


def test_matrix_cells_translate_and_count_per_pair():
    a = Data("a", [{"task": "arvo_42471001"}, {"task": "https://github.com/Owner/Repo/pull/12"}])
    b = Data("b", [{"task": "owner__repo-12"}, {"task": "psf__requests-1"}])
    cells = matrix_cells([a, b, cybergym()])
    assert cells[("a", "cybergym")] == 1 and cells[("cybergym", "a")] == 1
    assert cells[("a", "b")] == 1 and cells[("b", "a")] == 1
    assert cells[("b", "cybergym")] == 0


def test_column_view_follows_arrow_types():
    assert column_view(["a", 1, 2.0, 2.5, None]) == ["a", "1", "2", "2.5", None]
    assert column_view([1, 2.0, None]) == [1.0, 2.0, None]
    assert column_view([1, None]) == [1, None]
