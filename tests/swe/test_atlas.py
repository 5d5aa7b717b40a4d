# ruff: noqa: F811  (pytest fixtures imported from swe_fixtures are test arguments of the same name)
"""`overlap atlas`: its cells are the cells compare and matrix give for the same pairs; the folder loads with
the real `datasets` client; a re-run recomputes only the cells of the dataset whose data changed; the same
inputs give byte-identical tables; the push goes through huggingface_hub's upload_folder (a fake Hub)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from swe_fixtures import offline_hub, swe_data  # noqa: F401
from typer.testing import CliRunner

from overlap.api.atlas import atlas
from overlap.api.compare import compare
from overlap.api.matrix import matrix
from overlap.cli import app
from overlap.outputs.ship import atlas_repo as atlas_outputs
from overlap.outputs.ship.atlas_repo import write_atlas

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
SWE = ["swe-rebench-v2", "swe-polybench", "swe-bench", "swe-bench-verified", "swe-bench-pro"]


@pytest.fixture
def data(swe_data, tmp_path):
    """The SWE fixtures and the demo cyber sets, copied so a test may change one."""
    out = {}
    for name, path in {**{k: swe_data[k] for k in SWE}, "mimo-cyber": DEMO / "mimo-cyber",
                       "cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"}.items():
        out[name] = tmp_path / "data" / name
        shutil.copytree(path, out[name])
    return out


def _cells(result) -> dict[tuple[str, str], dict]:
    return {(c["train"], c["bench"]): c for c in result.cells}


def test_cells_equal_compare_and_matrix(data, tmp_path):
    result = atlas([*SWE, "mimo-cyber", "cybergym"], data=data, cache=tmp_path / "cache", pool="none")
    cells = _cells(result)
    assert ("swe-bench", "swe-bench-verified") not in cells or cells[("swe-bench", "swe-bench-verified")]["skipped"]
    checked = 0
    for (train, bench), cell in cells.items():
        if cell.get("skipped"):
            continue
        comp = compare(train, bench, data=data, pool=None, evidence=False, text=[])[0]
        plain = int(comp.plain_pairs["bench_id"].nunique()) if len(comp.plain_pairs) else 0
        assert (cell["bench_items_matched"], cell["plain_matched"], cell["pairs"], cell["related_pairs"]) == (
            comp.items_matched, plain, len(comp.pairs), len(comp.related)), (train, bench)
        checked += 1
    assert checked >= 10 and cells[("mimo-cyber", "cybergym")]["bench_items_matched"] == 7
    assert cells[("swe-rebench-v2", "swe-polybench")]["bench_items_matched"] > 0
    benches = [n for n in SWE if n != "swe-rebench-v2"] + ["cybergym"]
    grid = matrix(benches, data=data).cells.set_index(["bench", "other"])
    for (train, bench), cell in cells.items():
        if train in benches and not cell.get("skipped"):
            assert grid.loc[(bench, train), "bench_items_found"] == cell["bench_items_matched"], (train, bench)


def test_folder_loads_with_datasets_and_is_deterministic(data, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    names = ["mimo-cyber", "cybergym", "swe-rebench-v2", "swe-polybench"]
    first = write_atlas(atlas(names, data=data, cache=tmp_path / "c1", pool="none"), tmp_path / "a1")
    write_atlas(atlas(names, data=data, cache=tmp_path / "c2", pool="none"), tmp_path / "a2")
    for name in ("data/cells.parquet", "data/pairs.parquet", "README.md", "heatmap.svg", "report.html"):
        assert name in first
        assert (tmp_path / "a1" / name).read_bytes() == (tmp_path / "a2" / name).read_bytes(), name
    import datasets

    cells = datasets.load_dataset(str(tmp_path / "a1"), "cells", split="train")
    table = pq.read_table(tmp_path / "a1" / "data" / "cells.parquet")
    assert cells.num_rows == table.num_rows == 3 * 2  # four datasets × two benchmarks, none against itself
    for column in ("train", "train_revision", "bench", "bench_revision", "bench_items", "bench_items_matched",
                   "share", "plain_matched"):
        assert column in cells.column_names
    pairs = datasets.load_dataset(str(tmp_path / "a1"), "pairs", split="train")
    assert pairs.num_rows == pq.read_table(tmp_path / "a1" / "data" / "pairs.parquet").num_rows > 0


def test_an_atlas_without_a_pair_declares_only_the_configs_datasets_loads(data, tmp_path, monkeypatch):
    """No pair: data/pairs.parquet is there with no rows, but no `pairs` config (`datasets` refuses a parquet
    file of no rows), and the `cells` config loads."""
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    written = write_atlas(atlas(["swe-polybench", "cybergym"], data=data, cache=tmp_path / "c", pool="none"),
                          tmp_path / "a")
    assert "data/pairs.parquet" in written and pq.read_table(tmp_path / "a" / "data" / "pairs.parquet").num_rows == 0
    card = (tmp_path / "a" / "README.md").read_text()
    assert "config_name: cells" in card and "config_name: pairs" not in card
    import datasets

    assert datasets.load_dataset(str(tmp_path / "a"), "cells", split="train").num_rows == 2


def test_a_changed_dataset_recomputes_only_its_cells(data, tmp_path):
    names = ["mimo-cyber", "cybergym", "swe-rebench-v2", "swe-polybench"]
    first = atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    assert len(first.recomputed) == len(first.cells) == 6
    again = atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    assert again.recomputed == [] and again.cells == first.cells
    rows = pq.read_table(data["swe-rebench-v2"] / "data" / "train-00000-of-00001.parquet")
    pq.write_table(rows.slice(0, rows.num_rows - 1), data["swe-rebench-v2"] / "data" / "train-00000-of-00001.parquet")
    bumped = atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    assert sorted(bumped.recomputed) == [("swe-rebench-v2", "cybergym"), ("swe-rebench-v2", "swe-polybench")]


class FakeHub:
    def __init__(self):
        self.token, self.uploads = "hf_fake", []

    def whoami(self):
        return {"auth": {"accessToken": {"role": "write"}}}

    def repo_info(self, repo_id, repo_type):
        return {"id": repo_id}

    def upload_folder(self, **kwargs):
        self.uploads.append(kwargs | {"files": sorted(p.relative_to(kwargs["folder_path"]).as_posix()
                                                      for p in Path(kwargs["folder_path"]).rglob("*") if p.is_file())})
        return type("Info", (), {"pr_url": "https://hub.invalid/pr/1" if kwargs["create_pr"] else None,
                                 "commit_url": "https://hub.invalid/commit/1"})()


def test_cli_writes_and_pushes_the_atlas(data, tmp_path, monkeypatch):
    hub = FakeHub()
    monkeypatch.setattr(atlas_outputs, "_hub_api", lambda token: hub)
    args = ["atlas", "mimo-cyber", "cybergym", *[a for n in ("mimo-cyber", "cybergym", "arvo")
                                                for a in ("-d", f"{n}={data[n]}")],
            "--pool", "none", "--out", str(tmp_path / "atlas"), "--push", "me/atlas", "--create-pr"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "1 cells, 1 recomputed" in done.output and "hub.invalid/pr/1" in done.output
    (upload,) = hub.uploads
    assert upload["repo_id"] == "me/atlas" and upload["repo_type"] == "dataset" and upload["create_pr"]
    assert "data/cells.parquet" in upload["files"] and "README.md" in upload["files"]


def test_an_atlas_without_a_benchmark_is_one_clear_error(data, tmp_path):
    done = CliRunner().invoke(app, ["atlas", "mimo-cyber", "swe-rebench-v2", "-d", f"mimo-cyber={data['mimo-cyber']}",
                                    "-d", f"swe-rebench-v2={data['swe-rebench-v2']}", "--out", str(tmp_path / "a")])
    assert done.exit_code == 2 and "declared a benchmark" in done.output
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("names", [["cybergym"], ["cybergym", "cybergym"], ["cybergym", "cybergym:arvo"]])
def test_one_benchmark_alone_is_one_clear_error_not_an_empty_atlas(data, tmp_path, names):
    args = ["atlas", *names, "-d", f"cybergym={data['cybergym']}", "--out", str(tmp_path / "a")]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2 and "cybergym alone makes no cell" in done.output, done.output
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("damage", ["pairs of another shape", "pairs of another cell", "a row key lost", "a list",
                                    "a wrong type", "null pairs"])
def test_a_cell_cache_entry_of_another_shape_is_joined_again(data, tmp_path, damage):
    """A cached cell that parses but is not what the cache wrote (edited, damaged, another cell's file) is
    joined again: the atlas equals a fresh one, never garbage pairs or an internal error. Each damaged entry
    carries the checksum of what it now holds, so the cell's own checks are what refuse it."""
    import hashlib
    import json

    names = ["mimo-cyber", "cybergym", "swe-rebench-v2", "swe-polybench"]
    fresh = atlas(names, data=data, cache=tmp_path / "fresh", pool="none")
    atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    files = sorted((tmp_path / "cache").rglob("cells/*.json"))
    cells = [json.loads(f.read_text())["entry"] for f in files]
    for number, (path, cell) in enumerate(zip(files, cells, strict=True)):
        if damage == "pairs of another shape":
            cell["pairs"] = [{"x": 1}] * max(len(cell["pairs"]), 1)
        elif damage == "pairs of another cell":  # every file holds its neighbour's cell
            cell = cells[(number + 1) % len(cells)]
        elif damage == "a row key lost":
            cell["row"].pop("bench_items")
        elif damage == "a list":
            cell = []
        elif damage == "a wrong type":
            cell["row"]["bench_items"] = "many"
        else:
            cell["pairs"] = None
        checksum = hashlib.sha256(json.dumps(cell, sort_keys=True).encode()).hexdigest()
        path.write_text(json.dumps({"checksum": checksum, "entry": cell}))
    again = atlas(names, data=data, cache=tmp_path / "cache", pool="none")
    assert again.cells == fresh.cells
    assert again.pairs_table().equals(fresh.pairs_table())
    assert len(again.recomputed) == len(fresh.cells)


def test_a_cache_that_cannot_be_written_is_named_as_the_cache(data, tmp_path):
    """A --cache that is a file (or read-only, or full) is one line about the cache, not about --out."""
    from overlap.errors import InputError

    cache = tmp_path / "cache"
    cache.write_text("a file, not a folder")
    with pytest.raises(InputError) as raised:
        atlas(["mimo-cyber", "cybergym"], data=data, cache=cache, pool="none")
    assert str(raised.value).startswith(str(cache)) and "--cache" in str(raised.value)
    assert "--out" not in str(raised.value)
