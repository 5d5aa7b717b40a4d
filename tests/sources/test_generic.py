"""Generic reading: any file or Hub dataset by named columns gives the keys (and so the compare pairs) the
registered adapter gives on the same rows."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from fake_hub import FakeHubFileSystem, make_hub_cache, make_repo
from swe.swe_fixtures import write_all

from overlap.api import compare
from overlap.api.demo import demo_data
from overlap.errors import InputError
from overlap.sources.load import load_dataset
from overlap.sources.rows.columns import GenericColumns
from overlap.sources.rows.generic import read_generic

SHA = "89abcdef0123456789abcdef0123456789abcdef"


def _keys(dataset):
    return sorted(map(tuple, dataset.keys[["item_id", "kind", "value", "raw"]].astype(str).values.tolist()))


def _pairs(result):
    out = []
    for comp in result.benches:
        frame = comp.pairs[["train_id", "bench_id", "kinds", "match_type"]].astype(str)
        out.append(sorted(map(tuple, frame.values.tolist())))
    return out


@pytest.fixture(scope="module")
def demo():
    return demo_data()


@pytest.fixture
def mimo_jsonl(tmp_path, demo):
    rows = pq.read_table(demo["mimo-cyber"] / "cyber.parquet").to_pylist()
    path = tmp_path / "my.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_same_keys_as_the_registered_adapters(tmp_path, demo, mimo_jsonl):
    mimo = read_generic(mimo_jsonl, id_column="extra_info.instance_id")
    assert _keys(mimo) == _keys(load_dataset("mimo-cyber", demo))
    assert mimo.name == "my.jsonl" and mimo.provenance.origin == "local-file"
    assert mimo.recognition.summary().startswith("ossfuzz ")
    assert not [p for p in mimo.problems if p.what == "id_recognition"]  # reported, not a problem
    tasks = json.loads((demo["cybergym"] / "tasks.json").read_text())
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    gym = read_generic(tmp_path / "tasks.json", id_column="task_id", project_column="project_name")
    registered = load_dataset("cybergym", demo)
    assert _keys(gym) == _keys(registered)
    projects = registered.items.set_index("item_id")["project"].to_dict()
    assert gym.items.set_index("item_id")["project"].to_dict() == projects


def test_compare_a_jsonl_training_set_gives_the_registered_pairs(demo, mimo_jsonl):
    options = {"data": demo, "permutations": 200, "seed": 1, "text": []}
    registered = compare("mimo-cyber", ["cybergym"], **options)
    generic = compare(str(mimo_jsonl), ["cybergym"], id_column="extra_info.instance_id", **options)
    assert _pairs(generic) == _pairs(registered) and _pairs(generic)[0]
    assert generic.train.name == "my.jsonl"


def test_compare_a_hub_dataset_from_the_hub_cache(tmp_path, monkeypatch, demo):
    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    make_hub_cache(cache, "me/my-rl-mix", {"cyber.parquet": demo["mimo-cyber"] / "cyber.parquet"}, SHA,
                   refs=("main", "v1"))
    options = {"data": demo, "permutations": 200, "seed": 1, "text": []}
    generic = compare("me/my-rl-mix@v1", ["cybergym"], id_column="extra_info.instance_id", **options)
    registered = compare("mimo-cyber", ["cybergym"], **options)
    assert _pairs(generic) == _pairs(registered)
    prov = generic.train.provenance
    assert (generic.train.name, prov.origin, prov.revision) == ("me/my-rl-mix", "hub-cache", SHA)


def test_hub_dataset_through_a_fake_filesystem(tmp_path, demo):
    make_repo(tmp_path / "hub", "me/my-rl-mix", {"data/train-00000-of-00001.parquet":
                                                 demo["mimo-cyber"] / "cyber.parquet"}, sha=SHA)
    fs = FakeHubFileSystem(tmp_path / "hub", {("me/my-rl-mix", "main"): SHA})
    dataset = read_generic("me/my-rl-mix", id_column="extra_info.instance_id", split="train", filesystem=fs)
    assert _keys(dataset) == _keys(load_dataset("mimo-cyber", demo))
    assert dataset.provenance.revision == SHA and dataset.provenance.files[0].rows == len(dataset.items)


def test_swe_rows_give_the_registered_keys_and_pairs(tmp_path):
    data = write_all(tmp_path / "swe")
    train_file = data["swe-rebench-v2"] / "data" / "train-00000-of-00001.parquet"
    columns = {"repo": "repo", "base": "base_commit", "text": "problem_statement", "patch": "patch"}
    generic = read_generic(train_file, id_column="instance_id", **{f"{k}_column": v for k, v in columns.items()})
    registered = load_dataset("swe-rebench-v2", data)
    assert _keys(generic) == _keys(registered)
    same = ["item_id", "project", "repo", "pr", "base_commit"]
    assert generic.items[same].astype(str).values.tolist() == registered.items[same].astype(str).values.tolist()
    options = {"data": data, "pool": None, "text": [], "evidence": False}
    pairs = _pairs(compare(str(train_file), ["swe-bench"], id_column="instance_id", columns=columns, **options))
    assert pairs == _pairs(compare("swe-rebench-v2", ["swe-bench"], **options)) and pairs[0]


def test_unrecognised_missing_and_repeated_ids_are_counted(tmp_path):
    path = tmp_path / "mix.jsonl"
    rows = [{"id": "arvo:1"}, {"id": "hello"}, {"id": None}, {"id": "arvo:1"}, {"id": "CVE-2023-50246"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dataset = read_generic(path, id_column="id")
    problems = {p.what: p for p in dataset.problems}
    assert problems["unrecognised_id"].count == 1 and problems["unrecognised_id"].example == "hello"
    assert problems["missing_id"].count == 1 and problems["duplicate_id"].count == 1
    assert dataset.repeats["file_row"].tolist() == [3]
    assert sorted(dataset.items["item_id"]) == ["CVE-2023-50246", "arvo:1", "hello"]
    assert dataset.recognition.to_dict()["recognised"]["cve"]["count"] == 1
    with pytest.raises(InputError, match="name the id column"):
        GenericColumns.of({})
    with pytest.raises(InputError, match=r"mix.jsonl: no column 'task_id'"):
        read_generic(path, id_column="task_id")


@pytest.mark.parametrize("batch_rows", [1, 2, 3, 65536])
def test_problem_counts_do_not_depend_on_where_batches_split(tmp_path, batch_rows):
    """A JSON-lines batch whose rows all lack the PR or base cell reads those columns as nulls only: the cells
    are still empty ones (counted), whatever rows the batch holds. A row whose id is of another scheme (an
    OSS-Fuzz id, a CVE in a mix of PR tasks) owes no PR or base cell: its empty ones are not counted."""
    rows = [{"task": "owner__repo-1", "pr": 1, "base": "a" * 40}, {"task": "arvo:10055", "pr": None, "base": None},
            {"task": "CVE-2024-1234", "pr": None, "base": None}, {"task": "x__y-2", "pr": "2", "base": "b" * 40},
            {"task": "hello", "pr": None, "base": None}, {"task": "x__y-3", "pr": None, "base": None}]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dataset = read_generic(path, {"id": "task", "pr": "pr", "base": "base"}, batch_rows=batch_rows)
    problems = {p.what: p.count for p in dataset.problems}
    # by hand: rows 5 and 6 (no scheme's id, a PR id) have a PR column but no PR in it, and no base commit
    assert problems.get("missing_pr") == 2 and problems.get("missing_base_commit") == 2, problems
    for row in rows:
        row["repo"] = "owner/repo" if row["task"] in ("owner__repo-1", "x__y-2") else None
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dataset = read_generic(path, {"id": "task", "repo": "repo", "pr": "pr"}, batch_rows=batch_rows)
    assert {p.what: p.count for p in dataset.problems}.get("missing_repo") == 2  # rows 5 and 6 again


def test_item_ids_blank_where_trimming_leaves_nothing_over_every_code_point():
    """An id is blank (no item id) exactly when trimming its whitespace leaves nothing: every code point alone,
    twice, and beside a letter."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from overlap.sources.rows.batch_keys import item_ids_of

    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    values = pa.array(points + [p * 2 for p in points] + ["a" + p for p in points[:4096]] + ["", None])
    expected = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(values), ""), True).to_pylist()
    got = pc.is_null(item_ids_of(values)).to_pylist()
    assert got == expected
    assert sum(expected) > 20  # the Unicode spaces are among them
