"""The column-wise SWE-rebench scan (`overlap.sources.swe_columns`) against the row-by-row one it replaced
(`swe_rebench._scan_rebench_rows`, `add_task` per row): the same items, keys, repeats, problems (counts and
examples) and provenance, on generated SWE-shaped files full of odd values: nulls, blank and padded text,
float and text PR numbers, fullwidth digits, non-ASCII ids, integer and float ids, mixed-case, renamed and
URL repos, malformed and upper-case base commits, repeated ids at the same or another base commit, rows
whose id is made from repo + PR, files without some columns or with other column types."""

from __future__ import annotations

import random

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.errors import InputError
from overlap.sources.files import LocalFolder
from overlap.sources.registry import get_spec
from overlap.sources.swe_rebench import _scan_rebench, _scan_rebench_rows

IDS = ["kbknapp__clap-rs-941", "BurntSushi__ripgrep-1367", "tokio-rs__tokio-2145", " padded__id-7 ", "not-an-id",
       "", "   ", None, "owner__repo-１２", "ｏwner__repo-12", "a___b-3", "a__b-12-34", "x__y-0",
       "x__y-99999999999999999999", "é__repo-1", "owner__re po-5", "o__r-\n5"]
REPOS = ["kbknapp/clap-rs", "BurntSushi/ripgrep", "burntsushi/ripgrep", "Tokio-RS/Tokio", " a/b ", "bad repo",
         "", None, "https://github.com/owner/name.git", "owner/name/", "ｏwner/name", "o/n\u3000", "a/b\x1c"]
BASES = ["abcdef1", "ABCDEF1234", "c9a51565" * 5, " abcdef12 ", "xyz", "", None, "ａbcdef1", "abc", "a" * 65]
PRS = [1, 941, None, 0, -3, 2**62]
FLOAT_PRS = [12.0, 12.5, float("nan"), None, float("inf"), 1e17, 2.0**63, -1.0]
TEXT_PRS = ["12", "12.0", " 7 ", "１２", "abc", "", None, "#12", "1e3", "0012", "99999999999999999999"]


def _column(rng, choices, n, kind):
    return pa.array([rng.choice(choices) for _ in range(n)], kind)


def _files(folder, rng, pr_column):
    files = []
    for index in range(rng.randint(1, 4)):
        n = rng.randint(0, 40)
        ids = [rng.choice(IDS) for _ in range(n)]
        for position in range(n):  # repeats of earlier ids, some at another base
            if position and rng.random() < 0.2:
                ids[position] = ids[rng.randrange(position)]
        columns = {"instance_id": pa.array(ids, pa.string()), "repo": _column(rng, REPOS, n, pa.string()),
                   "base_commit": _column(rng, BASES, n, pa.string())}
        if rng.random() < 0.15:
            columns["instance_id"] = _column(rng, [1, 2, 3, None, 10**15], n, pa.int64())
        elif rng.random() < 0.1:
            columns["instance_id"] = _column(rng, [1.0, 2.5, None, 1e20], n, pa.float64())
        if rng.random() < 0.15:
            del columns["instance_id"]
        if rng.random() < 0.1:
            del columns["base_commit"]
        if rng.random() < 0.1:
            columns["base_commit"] = _column(rng, [7, None], n, pa.int64())
        if rng.random() < 0.1:
            columns["repo"] = pa.array([None] * n, pa.null())
        elif rng.random() < 0.05:
            columns["repo"] = pa.array([rng.choice([{"owner": "a"}, None]) for _ in range(n)])
        if pr_column and rng.random() < 0.85:
            choices, kind = rng.choice([(PRS, pa.int64()), (FLOAT_PRS, pa.float64()), (TEXT_PRS, pa.string()),
                                        ([True, False, None], pa.bool_())])
            columns["pull_number"] = _column(rng, choices, n, kind)
        columns["problem_statement"] = pa.array(["text"] * n)
        relpath = f"data/train-{index:05d}.parquet"
        (folder / "data").mkdir(exist_ok=True)
        pq.write_table(pa.table(columns), folder / relpath, row_group_size=max(1, rng.randint(1, 15)))
        files.append(relpath)
    return files


def _scan(scan, folder, spec, files):
    try:
        dataset = scan(LocalFolder(origin="local-folder", location=str(folder), root=folder), spec, files)
    except InputError as exc:
        return str(exc)
    return dataset


@pytest.mark.parametrize("name", ["swe-rebench-v2", "swe-rebench-v2-prs"])
@pytest.mark.parametrize("seed", range(25))
def test_columnwise_scan_is_the_row_scan(tmp_path, name, seed):
    rng = random.Random(seed * 7 + len(name))
    spec = get_spec(name)
    files = _files(tmp_path, rng, spec.extra.get("pr_column", False))
    rows = _scan(_scan_rebench_rows, tmp_path, spec, files)
    columns = _scan(_scan_rebench, tmp_path, spec, files)
    if isinstance(rows, str):
        assert columns == rows
        return
    pd.testing.assert_frame_equal(columns.items, rows.items)
    pd.testing.assert_frame_equal(columns.keys, rows.keys)
    pd.testing.assert_frame_equal(columns.repeats, rows.repeats)
    assert columns.problems == rows.problems
    assert columns.provenance == rows.provenance


def test_unusable_and_unreadable_files_are_counted_alike(tmp_path):
    spec = get_spec("swe-rebench-v2")
    (tmp_path / "data").mkdir()
    pq.write_table(pa.table({"repo": ["a/b"] * 3}), tmp_path / "data/a.parquet")
    (tmp_path / "data/b.parquet").write_bytes(b"not parquet")
    pq.write_table(pa.table({"instance_id": ["a__b-1"], "repo": ["a/b"], "base_commit": ["abcdef1"]}),
                   tmp_path / "data/c.parquet")
    files = ["data/a.parquet", "data/b.parquet", "data/c.parquet"]
    rows, columns = (_scan(scan, tmp_path, spec, files) for scan in (_scan_rebench_rows, _scan_rebench))
    assert {p.what for p in columns.problems} >= {"unusable_file", "unreadable_file", "missing_column"}
    assert columns.problems == rows.problems and columns.provenance == rows.provenance
    pd.testing.assert_frame_equal(columns.items, rows.items)


def test_the_largest_pr_number_is_read(tmp_path):
    """A PR of 2**63 - 1 beside a row without one (the row scan's float column could not hold it)."""
    (tmp_path / "data").mkdir()
    pq.write_table(pa.table({"instance_id": ["x__y-9223372036854775807", "not-an-id"], "repo": ["x/y", "x/y"],
                             "base_commit": ["abcdef1", "abcdef2"]}), tmp_path / "data/a.parquet")
    dataset = _scan(_scan_rebench, tmp_path, get_spec("swe-rebench-v2"), ["data/a.parquet"])
    assert dataset.items["pr"].tolist() == [2**63 - 1, pd.NA]
