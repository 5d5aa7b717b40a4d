"""Cells whose reading once depended on the rows around them: a JSON column is typed batch by batch, so a
streamed side (read in small batches) and a held one (one large batch) saw the same cell as a float, a
boolean, a list or an object in one and as text in the other. Each case is run both ways, the streamed side
a row per batch, and every output file must be the same."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stream_check import both_ways, differences  # noqa: E402

import overlap.keyjoin.scan as scan  # noqa: E402
from overlap.api import compare  # noqa: E402
from overlap.errors import InputError  # noqa: E402
from overlap.sources.formats.json_rows import _loose_array  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
DATA = {"cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"}
SHA = "b" * 40
BENCH = [{"id": "owner__repo-12", "repo": "owner/repo", "pr": 12, "base": SHA},
         {"id": "owner__repo-13", "repo": "owner/repo", "pr": 13, "base": SHA},
         {"id": "arvo:10055", "repo": None, "pr": None, "base": None}]


@pytest.fixture
def row_batches(monkeypatch):
    """The streamed side read a row per batch, its spill on disk past two rows; the held side in one batch."""
    monkeypatch.setattr(scan, "BATCH_ROWS", 1)
    monkeypatch.setattr(scan, "SPILL_ROWS", 2)
    monkeypatch.setattr("overlap.keyjoin.first_rows.COMPACT_FROM", 1)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _same_both_ways(tmp_path: Path, rows: list[dict], columns: dict):
    train = _jsonl(tmp_path / "train.jsonl", rows)
    bench = _jsonl(tmp_path / "bench.jsonl", BENCH)
    streamed, held = both_ways(str(train), [str(bench)], tmp_path / "out", columns=columns, data=DATA, pool=None,
                               evidence=False, text=None)
    found = differences(tmp_path / "out")
    assert not found, "\n".join(found)
    assert streamed.train.problems == held.train.problems
    return streamed, held


def test_a_float_past_2_53_reads_as_its_text_alone_or_beside_text(tmp_path, row_batches):
    """`1e30` alone in its batch was a float (no id: a missing row), beside text the id `1e+30`."""
    streamed, _ = _same_both_ways(tmp_path, [{"id": 1e30}, {"id": "x"}, {"id": "arvo:10055"}], {"id": "id"})
    assert streamed.summary()["train"]["items"] == 3
    assert streamed.train_clean_ids() == ["1e+30", "x"]


def test_a_boolean_beside_floats_is_no_number(tmp_path, row_batches):
    """pyarrow reads `true` beside `12.0` as 1.0: the PR cell `true` was PR 1 in a held side, and an id `true`
    beside `10055.0` the id "1"."""
    rows = [{"id": "owner__repo-12", "pr": 12.0}, {"id": "owner__repo-13", "pr": True}]
    streamed, held = _same_both_ways(tmp_path, rows, {"id": "id", "pr": "pr"})
    assert {p.what: p.example for p in held.train.problems}["non_numeric_pr"] == "owner__repo-13: 'true'"
    assert _loose_array([10055.0, True]).to_pylist() == ["10055", "true"]


@pytest.mark.parametrize("cell", [{"n": 12}, [12], []])
@pytest.mark.parametrize("role", ["pr", "repo", "base"])
def test_a_list_or_object_cell_beside_the_id_is_read_alike_in_any_batch(tmp_path, row_batches, role, cell):
    """A list or object PR, repo or base cell alone in its batch was a list or struct column (a missing cell),
    beside text its JSON text (a malformed one): now its JSON text either way."""
    rows = [{"id": "owner__repo-12", "repo": "owner/repo", "pr": 12, "base": SHA},
            {"id": "owner__repo-13", "repo": "owner/repo", "pr": "13", "base": SHA}]
    rows[0][role] = cell
    streamed, _ = _same_both_ways(tmp_path, rows, {"id": "id", "repo": "repo", "pr": "pr", "base": "base"})
    found = {p.what for p in streamed.train.problems}
    if role == "repo":  # a repo cell that is there: not missing (the id names the repo, so none is malformed)
        assert "missing_repo" not in found
    else:
        assert {"pr": "non_numeric_pr", "base": "malformed_base_commit"}[role] in found


def test_a_number_cell_is_shown_as_the_text_it_reads_as(tmp_path, row_batches):
    """The PR cell -1 was shown as `-1` alone in its batch and `'-1'` beside text."""
    rows = [{"id": "owner__repo-12", "pr": "12"}, {"id": "owner__repo-13", "pr": -1}]
    streamed, _ = _same_both_ways(tmp_path, rows, {"id": "id", "pr": "pr"})
    assert {p.what: p.example for p in streamed.train.problems}["non_numeric_pr"] == "owner__repo-13: '-1'"


@pytest.mark.parametrize(("ids", "scheme", "example"), [
    (["10055", "arvo:10055"], "ossfuzz", "10055"),  # the forced form took the first row, the specific the second
    (["é CVE-2021-3156", "CVE-2021-3156"], None, "é CVE-2021-3156"),  # a non-ASCII value is parsed last
])
def test_a_schemes_example_is_its_first_row_however_the_rows_are_batched(tmp_path, row_batches, ids, scheme,
                                                                         example):
    columns = {"id": "id", **({"scheme": scheme} if scheme else {})}
    streamed, _ = _same_both_ways(tmp_path, [{"id": i} for i in ids], columns)
    recognised = streamed.summary()["train"]["id_recognition"]["recognised"]
    assert [v["example"] for v in recognised.values()] == [example]


def test_a_side_without_ids_is_refused_in_the_same_words(tmp_path, row_batches):
    train = _jsonl(tmp_path / "train.jsonl", [{"id": None}, {"id": " "}])
    bench = _jsonl(tmp_path / "bench.jsonl", BENCH)
    said = []
    for stream in (True, False):
        with pytest.raises(InputError) as caught:
            compare(str(train), [str(bench)], columns={"id": "id"}, data=DATA, pool=None, stream=stream)
        said.append(str(caught.value))
    assert said[0] == said[1]
    assert "(missing_id: train.jsonl row 0); check the files" in said[0]


def test_a_pr_past_2_53_keeps_its_digits_in_the_streamed_items(tmp_path, row_batches):
    """The matched items' PR went through float64 (a column with nulls) and lost its last digits."""
    big = 2**60 + 1
    rows = [{"id": f"owner__repo-{big}"}, {"id": "arvo:10055"}]
    bench = _jsonl(tmp_path / "bench.jsonl", rows)
    train = _jsonl(tmp_path / "train.jsonl", rows)
    prs = [compare(str(train), [str(bench)], columns={"id": "id"}, data=DATA, pool=None, evidence=False, text=None,
                   stream=stream).train.items.set_index("item_id")["pr"].to_dict() for stream in (True, False)]
    assert prs[0] == prs[1]
    assert prs[0][f"owner__repo-{big}"] == big


def test_json_cells_read_alike_alone_and_beside_text():
    for cell, text in ((1e30, "1e+30"), (float("inf"), "inf"), (2**60, str(2**60)), (True, "true")):
        beside = _loose_array([cell, "x"])
        assert beside.to_pylist()[0] == text
        alone = _loose_array([cell, 5.0])
        assert pa.types.is_string(alone.type) and alone.to_pylist() == [text, "5"]


# --- generated JSON mixes: any cell type in any column, a row per batch against one batch --------------------

ID_CELLS = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**63 - 1), st.sampled_from([10055, 12, 0]),
                     st.floats(allow_nan=False), st.sampled_from([1e30, 12.0, 12.5, -1.0, 2.0**53, 2.0**53 + 2]),
                     st.sampled_from(["arvo:10055", "owner__repo-12", "Owner/Repo#13", "x", "X", " ", "", "é",
                                      " arvo:10055", "12", "10055", "CVE-2021-3156", "cve-2021-3156 ü"]))
OTHER_CELLS = st.one_of(ID_CELLS, st.sampled_from([[12], {"n": 12}, [], {}, "owner/repo", SHA, SHA.upper()]))


def oracle_id(cell) -> str | None:
    """The item id of a JSON id cell, by the documented reading: text as written (blank: none), an integer's
    digits, a whole float up to 2**53 its integer, `true`/`false`, any other number as Python writes it."""
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, float) and cell.is_integer() and abs(cell) <= 2**53:
        return str(int(cell))
    return cell if isinstance(cell, str) else repr(cell)


@settings(max_examples=30, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.fixed_dictionaries({"id": ID_CELLS, "pr": OTHER_CELLS, "repo": OTHER_CELLS,
                                       "base": OTHER_CELLS}), min_size=1, max_size=12),
       st.sampled_from([("repo", "pr", "base"), ("pr",), ()]))
def test_generated_json_cells_stream_as_they_are_held(tmp_path_factory, row_batches, rows, roles):
    ids = [oracle_id(r["id"]) for r in rows]
    if all(i is None for i in ids):
        return
    folder = tmp_path_factory.mktemp("cells")
    streamed, _ = _same_both_ways(folder, rows, {"id": "id", **{r: r for r in roles}})
    summary = streamed.summary()["train"]
    problems = {p["what"]: p["count"] for p in summary["problems"]}
    if not ("repo" in roles and "pr" in roles):  # (with both, a row without an id is named by its repo and PR)
        assert summary["items"] == len({i for i in ids if i is not None})
        assert problems.get("missing_id", 0) == ids.count(None)


def test_a_blank_project_cell_beside_a_good_repo_is_no_malformed_repo(tmp_path, row_batches):
    """With a project column, a row's repo check reads its repo cell (and id), not its project cell: a good
    repo beside a blank project was reported as `repo is not a GitHub owner/name`. A bad repo cell still is."""
    rows = [{"id": "owner__repo-12", "repo": "owner/repo", "pr": 12, "project": None},
            {"id": "owner__repo-13", "repo": "owner/repo", "pr": 13, "project": "lib"},
            {"id": "x-14", "repo": "not a repo", "pr": 14, "project": "lib"}]
    streamed, held = _same_both_ways(tmp_path, rows, {"id": "id", "repo": "repo", "pr": "pr", "project": "project"})
    for result in (streamed, held):
        found = {p.what: (p.count, p.example) for p in result.train.problems}
        assert found.get("malformed_repo") == (1, "x-14: 'not a repo'")
