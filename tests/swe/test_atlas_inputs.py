"""`overlap atlas` on inputs laid out in less usual ways: a declaration read through a relative `--registry`
path, a dataset folder of links (a Hub snapshot is one), dataset names holding `__`, a benchmark's subset
beside the whole set; and the report of a compare re-rendered from its folder.

A re-run after the rows changed recomputes the cells (never serves the old ones), a cached cell gives the
same bytes as a joined one, and every cell has a page and a name of its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from overlap.api.atlas import atlas
from overlap.api.compare import compare
from overlap.cli import app
from overlap.errors import InputError
from overlap.outputs.ship.atlas_repo import cell_page, write_atlas
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
BENCH_IDS = ["arvo:10055", "cve-2021-1234", "foo/bar#12", "oss-fuzz:42471002"]


def _jsonl(path: Path, ids: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")


def _declaration(name: str, role: str, path: str) -> str:
    return f'name = "{name}"\nrole = "{role}"\npath = "{path}"\n[columns]\nid = "id"\n'


def _cell(result, train: str, bench: str) -> dict:
    return next(c for c in result.cells if (c["train"], c["bench"]) == (train, bench))


@pytest.fixture
def sets(tmp_path, monkeypatch) -> Path:
    """A training set and a benchmark, each declared alone in a TOML file of a subfolder of the current
    folder, and registered by that relative path (as `--registry decl/bench.toml` does)."""
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "decl" / "train" / "t.jsonl", ["arvo:10055", "CVE-2021-1234", "https://github.com/foo/bar/pull/12"])
    _jsonl(tmp_path / "decl" / "bench" / "b.jsonl", BENCH_IDS)
    (tmp_path / "decl" / "train.toml").write_text(_declaration("in-train", "training", "train"), encoding="utf-8")
    (tmp_path / "decl" / "bench.toml").write_text(_declaration("in-bench", "benchmark", "bench"), encoding="utf-8")
    registry.add_declarations(["decl/train.toml", "decl/bench.toml"])
    return tmp_path


def test_changed_rows_of_a_declared_path_are_joined_again(sets):
    data = {"arvo": DEMO / "arvo"}
    first = atlas(["in-train", "in-bench"], data=data, cache=sets / "cache", pool="none")
    assert _cell(first, "in-train", "in-bench")["bench_items"] == 4
    _jsonl(sets / "decl" / "bench" / "b.jsonl", BENCH_IDS[:2])
    again = atlas(["in-train", "in-bench"], data=data, cache=sets / "cache", pool="none")
    assert again.recomputed == [("in-train", "in-bench")]
    assert _cell(again, "in-train", "in-bench")["bench_items"] == 2
    assert _cell(again, "in-train", "in-bench")["bench_items_matched"] == \
        compare("in-train", "in-bench", data=data, pool=None, evidence=False, text=[])[0].items_matched


def test_a_folder_of_links_is_fingerprinted_by_what_they_point_to(sets):
    store, linked = sets / "store" / "b.jsonl", sets / "linked"
    _jsonl(store, BENCH_IDS)
    linked.mkdir()
    (linked / "b.jsonl").symlink_to(store)
    data = {"arvo": DEMO / "arvo", "in-bench": linked}
    assert _cell(atlas(["in-train", "in-bench"], data=data, cache=sets / "cache", pool="none"),
                 "in-train", "in-bench")["bench_items"] == 4
    _jsonl(store, BENCH_IDS[:1])
    again = atlas(["in-train", "in-bench"], data=data, cache=sets / "cache", pool="none")
    assert again.recomputed and _cell(again, "in-train", "in-bench")["bench_items"] == 1


def test_a_cached_cell_writes_the_bytes_a_joined_one_does(tmp_path):
    data = {name: DEMO / name for name in ("mimo-cyber", "cybergym", "arvo")}
    for out in ("joined", "cached"):
        result = atlas(["mimo-cyber", "cybergym"], data=data, cache=tmp_path / "cache", pool="none")
        assert bool(result.recomputed) == (out == "joined")
        write_atlas(result, tmp_path / out)
    for page in (tmp_path / "joined").rglob("*.html"):
        assert page.read_bytes() == (tmp_path / "cached" / page.relative_to(tmp_path / "joined")).read_bytes(), page


def test_names_holding_the_separator_get_pages_of_their_own(tmp_path):
    for name in ("a", "b"):
        _jsonl(tmp_path / name / "rows.jsonl", BENCH_IDS[: 1 + (name == "b")])
    declarations = [("x", "training", "a"), ("x__y", "training", "a"), ("y__z", "benchmark", "b"),
                    ("z", "benchmark", "a")]
    (tmp_path / "reg.toml").write_text("\n".join(
        "[[dataset]]\n" + _declaration(n, r, str(tmp_path / p)).replace("[columns]", "[dataset.columns]")
        for n, r, p in declarations), encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    assert cell_page("x", "y__z") != cell_page("x__y", "z")
    assert cell_page("mimo-cyber", "cybergym") == "cells/mimo-cyber__cybergym.html"  # the documented name
    result = atlas([n for n, _, _ in declarations], data={"arvo": DEMO / "arvo"}, cache=tmp_path / "cache",
                   pool="none")
    write_atlas(result, tmp_path / "out")
    joined = [c for c in result.cells if not c.get("skipped")]
    assert len(list((tmp_path / "out" / "cells").iterdir())) == len(joined)
    for cell in joined:
        page = (tmp_path / "out" / cell_page(cell["train"], cell["bench"])).read_text(encoding="utf-8")
        assert f"<h1>{cell['train']} × {cell['bench']}</h1>" in page


def test_a_subset_is_named_as_one(tmp_path):
    data = {name: DEMO / name for name in ("mimo-cyber", "cybergym", "arvo")}
    result = atlas(["mimo-cyber", "cybergym:arvo", "cybergym"], data=data, cache=tmp_path / "cache", pool="none")
    cells = {(c["train"], c["bench"]): c for c in result.cells}
    assert len(cells) == len(result.cells)  # no two cells under one name
    assert cells[("mimo-cyber", "cybergym:arvo")]["bench_items"] == \
        compare("mimo-cyber", "cybergym:arvo", data=data, pool=None, evidence=False, text=[])[0].bench.item_count
    assert cells[("cybergym:arvo", "cybergym")]["skipped"] == "own subset"
    with pytest.raises(InputError, match="named twice"):
        atlas(["mimo-cyber", "cybergym", "cybergym@main"], data=data, cache=tmp_path / "cache", pool="none")


def test_report_re_renders_what_compare_wrote(tmp_path):
    data = [f"--data={name}={DEMO / name}" for name in ("mimo-cyber", "cybergym", "arvo", "arvo-meta")]
    runner = CliRunner()
    done = runner.invoke(app, ["compare", "mimo-cyber", "cybergym", *data, "--out", str(tmp_path / "written")])
    assert done.exit_code == 0, done.output
    shutil.copytree(tmp_path / "written", tmp_path / "again")
    done = runner.invoke(app, ["report", str(tmp_path / "again")])
    assert done.exit_code == 0, done.output
    for name in ("report.md", "report.html"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "written" / name).read_bytes(), name


def test_a_data_option_without_a_path_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default --out is inside the current folder, which an empty path names
    done = CliRunner().invoke(app, ["atlas", "mimo-cyber", "cybergym", "-d", "cybergym"])
    assert done.exit_code == 2 and "expected NAME=PATH" in done.output, done.output
