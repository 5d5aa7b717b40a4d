"""``newest_group`` on the four reference cases, plus ties, N < 10, k* = K and the
1 s spread floor."""

from __future__ import annotations

import calendar

import pytest

from overlap.audit.checks.times import compare_with_reference, group_size_cap, newest_group

T0 = calendar.timegm((2024, 1, 1, 10, 0, 0))
TOY = sorted(["README.md", "src/calc.py", "tests/test_calc.py", *(f"src/m{i}.py" for i in range(1, 31))])


def test_fresh_checkout_is_not_flagged():
    times = {p: T0 + (i % 3) * 0.7 for i, p in enumerate(TOY)}  # a checkout spreads over 0-2 s
    res = newest_group(times)
    assert res["status"] == "ran" and not res["flagged"]
    assert res["gap"] < 2


def test_apply_and_revert_seven_minutes_later():
    times = dict.fromkeys(TOY, float(T0))
    times["src/calc.py"] = times["tests/test_calc.py"] = T0 + 420.0
    res = newest_group(times)
    assert (res["k"], res["gap"], res["spread"], res["ratio"]) == (2, 420.0, 1.0, 420.0)
    assert res["flagged"] and not res["large_touched_set"]
    assert [g["path"] for g in res["group"]] == ["src/calc.py", "tests/test_calc.py"]
    cmp = compare_with_reference([g["path"] for g in res["group"]], set(times), {"src/calc.py", "tests/test_calc.py"})
    assert cmp["jaccard"] == 1.0 and cmp["precision"] == 1.0 and cmp["recall"] == 1.0


def test_host_copy_spread_over_two_years():
    day = 86400
    start = calendar.timegm((2022, 1, 1, 0, 0, 0))
    times = {p: float(start + (i + 1) * 22 * day) for i, p in enumerate(TOY)}
    times["README.md"] = times["src/m7.py"] = float(calendar.timegm((2024, 6, 1, 9, 0, 0)))
    res = newest_group(times)
    assert res["k"] == 2
    assert res["gap"] == pytest.approx(1.35e7, rel=0.01)
    assert res["ratio"] == pytest.approx(0.44, abs=0.01)
    assert not res["flagged"]


def test_everything_touched_to_one_time():
    res = newest_group(dict.fromkeys(TOY, float(T0)))
    assert res["gap"] == 0 and res["k"] == 1 and not res["flagged"]


def test_ties_pick_the_smaller_k():
    times = {f"f{i:02d}": float(T0) for i in range(40)}
    times["f00"] = T0 + 600.0  # gap_1 = 300
    times["f01"] = T0 + 300.0  # gap_2 = 300 as well
    res = newest_group(times)
    assert res["k"] == 1 and res["gap"] == 300.0 and res["second_gap"] == 300.0


def test_fewer_than_ten_files_is_not_applicable():
    res = newest_group({f"f{i}": float(T0 + i * 1000) for i in range(9)})
    assert res["status"] == "not_applicable" and res["reason"] == "too_few_files" and not res["flagged"]
    assert newest_group({f"f{i}": float(T0) for i in range(10)})["status"] == "ran"


def test_group_of_size_k_max_is_a_large_touched_set():
    n = 40
    assert group_size_cap(n) == 5
    times = {f"f{i:02d}": float(T0) for i in range(n)}
    for i in range(5):
        times[f"f{i:02d}"] = T0 + 3600.0
    res = newest_group(times)
    assert res["k"] == 5 == res["k_max"] and res["flagged"] and res["large_touched_set"]


def test_k_cap_formula():
    assert [group_size_cap(n) for n in (10, 33, 200, 1000, 5000)] == [5, 5, 10, 50, 100]
    assert group_size_cap(6) == 4  # N - 2 bounds it


def test_spread_floor_is_one_second():
    times = {f"f{i:02d}": float(T0) for i in range(20)}
    times["f00"] = T0 + 59.0
    res = newest_group(times)
    assert res["spread"] == 1.0 and res["ratio"] == 59.0 and not res["flagged"]  # gap under 60 s
    times["f00"] = T0 + 60.0
    assert newest_group(times)["flagged"]
    bulk = {f"f{i:02d}": float(T0 + i * 10) for i in range(20)}  # bulk from T0 to T0 + 190 s, median T0 + 95
    bulk["new"] = T0 + 190 + 600.0
    res = newest_group(bulk)
    assert (res["k"], res["gap"], res["spread"]) == (1, 600.0, 95.0)  # spread = t(k*+1) - median(bulk)
    assert not res["flagged"]  # ratio 6.3 < 10


def test_result_echoes_its_parameters():
    res = newest_group(dict.fromkeys(TOY, float(T0)))
    assert res["params"] == {"min_files": 10, "k_min": 5, "k_fraction": 0.05, "k_max": 100, "min_gap_s": 60.0,
                             "min_ratio": 10.0, "spread_floor_s": 1.0}


def test_index_time_rounded_by_the_layer_writer_is_no_rewrite():
    from overlap.audit.git.binary import IndexEntry

    e = IndexEntry("a.py", 0, 0o100644, "0" * 40, 10, T0, 670_000_000, T0, 0)
    assert e.stat_matches(10, T0) and e.stat_matches(10, T0 + 1)  # truncated (Docker), rounded (Go's tar)
    assert not e.stat_matches(10, T0 + 2) and not e.stat_matches(10, T0 - 1) and not e.stat_matches(11, T0)
    early = IndexEntry("a.py", 0, 0o100644, "0" * 40, 10, T0, 330_000_000, T0, 0)
    assert early.stat_matches(10, T0) and not early.stat_matches(10, T0 + 1)  # rounds down: no second later


def test_t2_reads_a_rounded_mtime_as_unchanged_and_a_later_one_as_rewritten(tmp_path):
    """A layer with whole-second times holds a file indexed at T0.7 as T0+1 (umoci, Go's archive/tar); that is
    the checkout as indexed, while a file rewritten a second later still is a rewrite."""
    import os
    import shutil

    from audit_helpers import git

    from overlap.audit import audit

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "main", ".", cwd=repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "README.md").write_text("calc\n")
    t = (T0 * 10**9) + 700_000_000
    for name in ("calc.py", "README.md"):
        os.utime(repo / name, ns=(t, t))
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)

    def t2() -> list:
        report = audit(str(repo), network="none")
        return [f for tg in report.targets for f in tg.findings if f.check == "T2"]

    os.utime(repo / "calc.py", (T0 + 1, T0 + 1))
    assert t2() == []
    os.utime(repo / "calc.py", (T0 + 2, T0 + 2))
    assert [f.key for f in t2()] == ["T2:stat-dirty"]
