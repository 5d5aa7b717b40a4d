"""Atlas outputs for dataset names at the limits of what a declaration allows: the longest name is cut on the
heatmap's axes (at full length its margin left no room and every other label was clipped, with a warning on
stderr), and every cell page is linked from report.html."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

from overlap.api.atlas import atlas
from overlap.outputs.ship.atlas_repo import write_atlas
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


def test_long_and_odd_names_draw_quietly_and_every_page_is_linked(tmp_path):
    names = ["t" * 100, "me/odd.name_x", "a__b", "sweep-bench"]
    tables = []
    for i, name in enumerate(names):
        (tmp_path / f"{i}.jsonl").write_text(json.dumps({"id": "arvo:10055"}) + "\n", encoding="utf-8")
        role = "benchmark" if i >= 2 else "training"
        tables.append(f'[[dataset]]\nname = "{name}"\nrole = "{role}"\npath = "{i}.jsonl"\ncolumns = {{id = "id"}}\n')
    (tmp_path / "reg.toml").write_text("\n".join(tables), encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    result = atlas(names, data={"arvo": DEMO / "arvo"}, cache=tmp_path / "cache", pool="none")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would be printed on the user's stderr
        write_atlas(result, tmp_path / "atlas")
    svg = (tmp_path / "atlas" / "heatmap.svg").read_text(encoding="utf-8")
    assert "t" * 100 not in svg and "t" * 39 + "…" in svg and "me/odd.name_x" in svg
    html = (tmp_path / "atlas" / "report.html").read_text(encoding="utf-8")
    assert "t" * 100 in html  # the table names it in full
    linked = {h for h in re.findall(r'href="(cells/[^"]+)"', html)}
    pages = {p.relative_to(tmp_path / "atlas").as_posix() for p in (tmp_path / "atlas" / "cells").glob("*.html")}
    assert linked == pages and len(pages) == sum(1 for c in result.cells if not c.get("skipped")) == 6


def test_report_and_card_name_an_atlas_folder_as_one(tmp_path):
    from typer.testing import CliRunner

    from overlap.cli import app

    data = [a for n in ("mimo-cyber", "cybergym", "arvo") for a in ("-d", f"{n}={DEMO / n}")]
    done = CliRunner().invoke(app, ["atlas", "mimo-cyber", "cybergym", *data, "--pool", "none",
                                    "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "atlas")])
    assert done.exit_code == 0, done.output
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    for command in ("report", "card"):
        done = CliRunner().invoke(app, [command, str(tmp_path / "atlas")])
        assert done.exit_code == 2 and "an atlas folder" in done.output, done.output
        assert len(done.output.strip().splitlines()) == 1
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before


def test_the_atlas_folder_names_no_local_path(tmp_path):
    """The folder is made to be pushed: provenance names files by name (a declared absolute glob's files too),
    the mapping and the pool without the folders they were read from."""
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / "t.jsonl").write_text(json.dumps({"id": "arvo:10055"}) + "\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps({"id": "arvo:10055"}) + "\n", encoding="utf-8")
    (tmp_path / "reg.toml").write_text(
        f'[[dataset]]\nname = "sweep-t"\nrole = "training"\npath = "{(tmp_path / "rows").as_posix()}/*.jsonl"\n'
        'columns = {id = "id"}\n\n'
        '[[dataset]]\nname = "sweep-b"\nrole = "benchmark"\npath = "b.jsonl"\ncolumns = {id = "id"}\n',
        encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    result = atlas(["sweep-t", "sweep-b"], data={"arvo": DEMO / "arvo"}, cache=tmp_path / "cache",
                   pool=str(DEMO / "arvo-meta"))
    assert result.cells[0]["baseline_status"] == "ran"
    write_atlas(result, tmp_path / "atlas")
    for path in (tmp_path / "atlas").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for local in (str(tmp_path), str(DEMO)):
                assert local.encode() not in data, (path.name, local)
    assert "t.jsonl" in (tmp_path / "atlas" / "README.md").read_text(encoding="utf-8")
