"""The atlas caches a Hub dataset by its revision only when that revision names one content: a full commit
sha. A branch (`main`) moves and a short sha is a prefix, so a declaration or `NAME@REV` pinned by either is
read again on every run, never served from an older run's cache."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from overlap.api.atlas import atlas
from overlap.api.atlas_cache import fingerprint
from overlap.sources.registry import registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sources"))
from fake_hub import make_hub_cache  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
FIRST, SECOND = "1" * 40, "2" * 40


def _rows(ids: list[str]) -> bytes:
    return "".join(json.dumps({"id": i}) + "\n" for i in ids).encode()


@pytest.fixture
def hub(tmp_path, monkeypatch) -> Path:
    cache = Path(os.environ["HF_HUB_CACHE"])
    make_hub_cache(cache, "me/bench", {"b.jsonl": _rows(["arvo:10055", "arvo:20000"])}, FIRST)
    (tmp_path / "t.jsonl").write_bytes(_rows(["arvo:10055", "arvo:20000"]))
    (tmp_path / "reg.toml").write_text(
        '[[dataset]]\nname = "sweep-train"\nrole = "training"\npath = "t.jsonl"\ncolumns = {id = "id"}\n\n'
        '[[dataset]]\nname = "sweep-bench"\nrole = "benchmark"\nrepo = "me/bench"\nrevision = "main"\n'
        'columns = {id = "id"}\n', encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    return cache


def _cell(result) -> tuple:
    (cell,) = result.cells
    return cell["bench_items"], cell["bench_items_matched"], cell["bench_revision"]


def test_a_branch_that_moved_is_read_again(hub, tmp_path):
    data = {"arvo": DEMO / "arvo"}
    first = atlas(["sweep-train", "sweep-bench"], data=data, cache=tmp_path / "cache", pool="none")
    assert _cell(first) == (2, 2, FIRST)
    make_hub_cache(hub, "me/bench", {"b.jsonl": _rows(["arvo:10055", "arvo:20001", "arvo:20002"])}, SECOND)
    again = atlas(["sweep-train", "sweep-bench"], data=data, cache=tmp_path / "cache", pool="none")
    assert _cell(again) == (3, 1, SECOND)
    assert again.recomputed == [("sweep-train", "sweep-bench")]


@pytest.mark.parametrize("revision", ["main", "v1.0", "1111111", "1" * 39, "1" * 41])
def test_only_a_full_sha_is_a_pin(hub, revision):
    assert fingerprint(f"sweep-bench@{revision}", {}) is None
    assert fingerprint("sweep-bench", {}) is None  # declared `revision = "main"`
    assert fingerprint(f"sweep-bench@{FIRST}", {}) is not None


def test_a_bump_in_a_shared_declaration_file_recomputes_that_dataset_only(tmp_path, monkeypatch):
    """Several `[[dataset]]` tables in one file: a changed table is one dataset's change, not the file's."""
    for name, ids in (("one", ["arvo:10055"]), ("two", ["arvo:20000"]), ("bench", ["arvo:10055", "arvo:20000"])):
        (tmp_path / f"{name}.jsonl").write_bytes(_rows(ids))
    tables = {name: f'[[dataset]]\nname = "sweep-{name}"\nrole = "{role}"\npath = "{name}.jsonl"\n'
                    'columns = {id = "id"}\n'
              for name, role in (("one", "training"), ("two", "training"), ("bench", "benchmark"))}
    names = ["sweep-one", "sweep-two", "sweep-bench"]
    data, cache = {"arvo": DEMO / "arvo"}, tmp_path / "cache"
    saved = dict(registry._REGISTRY), dict(registry._ALIASES)

    def run(text: str):
        registry._REGISTRY.clear(), registry._REGISTRY.update(saved[0])
        registry._ALIASES.clear(), registry._ALIASES.update(saved[1])
        (tmp_path / "reg.toml").write_text(text, encoding="utf-8")
        registry.add_declarations([tmp_path / "reg.toml"])
        return atlas(names, data=data, cache=cache, pool="none")

    assert len(run("\n".join(tables.values())).recomputed) == 2
    bumped = tables["two"].replace('role = "training"', 'role = "training"\ntitle = "the second, renamed"')
    again = run("\n".join([tables["one"], bumped, tables["bench"]]))
    assert again.recomputed == [("sweep-two", "sweep-bench")]


def test_a_declaration_holding_a_toml_date_is_fingerprinted(tmp_path):
    (tmp_path / "t.jsonl").write_bytes(_rows(["arvo:10055"]))
    (tmp_path / "reg.toml").write_text('name = "sweep-dated"\nrole = "training"\npath = "t.jsonl"\n'
                                       'columns = {id = "id"}\nextra = {when = 1979-05-27}\n', encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    assert fingerprint("sweep-dated", {}) is not None
