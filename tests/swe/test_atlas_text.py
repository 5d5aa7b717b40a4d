# ruff: noqa: F811  (pytest fixtures imported from swe_fixtures are test arguments of the same name)
"""`overlap atlas --text`: each cell's text columns are what `compare --text` gives for the same pair (the
default fields, the counted id pairs), whether the keys were read this run or came from the cache; a side
without a text field says so; the text result is in the cell cache key only when asked; the same inputs
give byte-identical parquet; the Ray engine gives the same cells."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from swe_fixtures import offline_hub, swe_data  # noqa: F401
from typer.testing import CliRunner

from overlap.api.atlas import atlas
from overlap.api.atlas_text import TEXT_COLUMNS
from overlap.api.compare import compare
from overlap.cli import app
from overlap.errors import InputError
from overlap.outputs.ship.atlas_repo import write_atlas
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
NAMES = ["mimo-cyber", "cybergym", "swe-rebench-v2", "swe-polybench"]
# An issue text both sides hold (long enough for a 13-gram): an id-matched pair shares it, and so does a train
# item in no pair with the bench.
SHARED = "Calling fit twice on a model compiled with a custom loss raises a shape mismatch in the second epoch"
NO_TEXT = 'name = "no-text-bench"\nrole = "benchmark"\npath = "rows.jsonl"\n\n[columns]\nid = "task"\n'


@pytest.fixture
def data(swe_data, tmp_path):
    out = {}
    for name, path in {"swe-rebench-v2": swe_data["swe-rebench-v2"], "swe-polybench": swe_data["swe-polybench"],
                       "mimo-cyber": DEMO / "mimo-cyber", "cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"}.items():
        out[name] = tmp_path / "data" / name
        shutil.copytree(path, out[name])
    _share_texts(out)
    return out


def _share_texts(data) -> None:
    """Give the keras task the same issue text on both sides, and a rebench task in no pair too."""
    rebench = data["swe-rebench-v2"] / "data" / "train-00000-of-00001.parquet"
    table = pq.read_table(rebench)
    ids = table.column("instance_id")
    shared = pc.is_in(ids, value_set=pa.array(["keras-team__keras-19284", "mui__material-ui-32000"]))
    texts = pc.if_else(shared, SHARED, table.column("problem_statement"))
    pq.write_table(table.set_column(table.schema.get_field_index("problem_statement"), "problem_statement", texts),
                   rebench)
    poly = data["swe-polybench"] / "test.csv"
    rows = pd.read_csv(poly, dtype=str, keep_default_na=False)
    rows.loc[rows["instance_id"] == "keras-team__keras-19284", "problem_statement"] = SHARED
    rows.to_csv(poly, index=False)


@pytest.fixture
def no_text_bench(tmp_path):
    """A benchmark declared with no text column (removed from the process-wide registry after the test)."""
    registry._load_builtin()
    saved = dict(registry._REGISTRY), dict(registry._ALIASES)
    (tmp_path / "rows.jsonl").write_text('{"task": "arvo:1"}\n{"task": "arvo:2"}\n')
    (tmp_path / "no-text.toml").write_text(NO_TEXT)
    registry.add_declarations([tmp_path / "no-text.toml"])
    yield "no-text-bench"
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved[0])
    registry._ALIASES.clear()
    registry._ALIASES.update(saved[1])


def _cells(result) -> dict[tuple[str, str], dict]:
    return {(c["train"], c["bench"]): c for c in result.cells}


def _compare_text(train: str, bench: str, data) -> dict:
    """compare's text section for the pair, as the JSON the atlas writes."""
    section = compare(train, bench, data=data, pool=None, evidence=False)[0].sections["text"]
    return json.loads(json.dumps(section, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


def _check_against_compare(cells, data) -> int:
    checked = 0
    for (train, bench), cell in cells.items():
        if cell.get("skipped"):
            assert cell.get("text_ran") is None
            continue
        assert cell["text_ran"] is True, (train, bench, cell.get("text_reason"))
        summary = json.loads(cell["text_summary"])
        assert summary == _compare_text(train, bench, data), (train, bench)
        top = summary["flags"]["13"]
        assert (cell["text_flagged_train_items"], cell["text_flagged_bench_items"], cell["text_flagged_rest"]) == (
            top["train_items_flagged"], top["bench_items_hit"], top["rest"]["flagged"])
        assert cell["text_fields"] == f"{summary['fields']['train']}:{summary['fields']['bench']}"
        checked += 1
    return checked


def test_text_cells_equal_compare_text_read_fresh_or_from_the_key_cache(data, tmp_path):
    fresh = _cells(atlas(NAMES, data=data, cache=tmp_path / "fresh", pool="none", text=True))
    assert _check_against_compare(fresh, data) == 6
    shared = fresh[("swe-rebench-v2", "swe-polybench")]
    assert (shared["text_flagged_train_items"], shared["text_flagged_bench_items"], shared["text_flagged_rest"]) == (
        2, 1, 1)  # the keras pair and the rebench task in no pair, both on the keras bench item
    atlas(NAMES, data=data, cache=tmp_path / "keys", pool="none")  # the keys cached without their texts
    again = atlas(NAMES, data=data, cache=tmp_path / "keys", pool="none", text=True)
    assert all(e.cached for e in again.entries) and len(again.recomputed) == 6
    assert _cells(again) == fresh


def test_text_is_in_the_cell_cache_key_only_when_asked(data, tmp_path):
    cache = tmp_path / "cache"
    plain = atlas(NAMES, data=data, cache=cache, pool="none")
    assert all(c.get(column) is None for c in plain.cells for column in TEXT_COLUMNS)
    with_text = atlas(NAMES, data=data, cache=cache, pool="none", text=True)
    assert len(with_text.recomputed) == 6 and with_text.parameters["text"] == {"ns": [13, 8],
                                                                               "boilerplate_threshold": 5}
    assert atlas(NAMES, data=data, cache=cache, pool="none", text=True).recomputed == []
    again = atlas(NAMES, data=data, cache=cache, pool="none")
    assert again.recomputed == [] and again.cells == plain.cells and "text" not in again.parameters
    for id_column in ("bench_items_matched", "plain_matched", "pairs", "related_pairs"):  # text adds, never changes
        assert [c.get(id_column) for c in with_text.cells] == [c.get(id_column) for c in plain.cells]


def test_a_side_without_a_text_field_says_so(data, tmp_path, no_text_bench):
    cells = _cells(atlas(["mimo-cyber", no_text_bench], data=data, cache=tmp_path / "c", pool="none", text=True))
    cell = cells[("mimo-cyber", no_text_bench)]
    assert cell["text_ran"] is False and cell["text_reason"] == f"{no_text_bench} has no text field"
    assert cell["text_summary"] is None and cell["bench_items"] == 2


def test_text_cells_are_byte_identical_on_a_rerun(data, tmp_path):
    first = atlas(NAMES, data=data, cache=tmp_path / "c1", pool="none", text=True)
    write_atlas(first, tmp_path / "a1")
    write_atlas(atlas(NAMES, data=data, cache=tmp_path / "c2", pool="none", text=True), tmp_path / "a2")
    write_atlas(atlas(NAMES, data=data, cache=tmp_path / "c1", pool="none", text=True), tmp_path / "a3")  # cached
    cells = (tmp_path / "a1" / "data" / "cells.parquet").read_bytes()
    assert cells == (tmp_path / "a2" / "data" / "cells.parquet").read_bytes()
    assert cells == (tmp_path / "a3" / "data" / "cells.parquet").read_bytes()
    table = pq.read_table(tmp_path / "a1" / "data" / "cells.parquet")
    assert all(column in table.column_names for column in TEXT_COLUMNS)


def test_cli_text_and_a_bad_engine(data, tmp_path):
    args = ["atlas", "mimo-cyber", "cybergym", *[a for n in ("mimo-cyber", "cybergym", "arvo")
                                                for a in ("-d", f"{n}={data[n]}")],
            "--pool", "none", "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "atlas"), "--text"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    (row,) = pq.read_table(tmp_path / "atlas" / "data" / "cells.parquet").to_pylist()
    assert row["text_ran"] is True and row["text_fields"] == "text_prompt:text_description"
    with pytest.raises(InputError, match="engine"):
        atlas(["mimo-cyber", "cybergym"], data=data, cache=tmp_path / "c", pool="none", text=True, engine="spark")


def test_the_ray_engine_gives_the_same_cells(data, tmp_path, monkeypatch):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'overlap[ray]')")
    monkeypatch.setattr("overlap.text.ngram.engine_ray.MIN_BLOCK_BYTES", 8 << 10)  # blocks over both actors
    local = atlas(NAMES, data=data, cache=tmp_path / "local", pool="none", text=True)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = atlas(NAMES, data=data, cache=tmp_path / "ray", pool="none", text=True, engine="ray", workers=2)
    finally:
        ray.shutdown()
    assert on_ray.cells == local.cells
