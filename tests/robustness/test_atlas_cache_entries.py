"""Atlas cache entries that are not what the atlas wrote: an entry replaced by a FIFO (it blocked the atlas for
good: an entry that is not a regular file is a miss, never opened), and an entry edited into a well-formed
wrong value (a cell's count changed, a keys table of other ids: it was served). Each is a miss, the cells are
those of a fresh run in an empty cache, and the entry is written anew."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.api.atlas import atlas
from overlap.sources.registry import registry

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
NAMES = ["hostile-cache-train", "hostile-cache-bench"]


@pytest.fixture
def declared(tmp_path):
    for name, ids in (("t", ["arvo:10055", "CVE-2021-1234", "CVE-2021-9"]), ("b", ["arvo:10055", "CVE-2021-9"])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")
    (tmp_path / "reg.toml").write_text(
        f'[[dataset]]\nname = "{NAMES[0]}"\nrole = "training"\npath = "t.jsonl"\ncolumns = {{id = "id"}}\n\n'
        f'[[dataset]]\nname = "{NAMES[1]}"\nrole = "benchmark"\npath = "b.jsonl"\ncolumns = {{id = "id"}}\n',
        encoding="utf-8")
    registry.add_declarations([tmp_path / "reg.toml"])
    return {"arvo": DEMO / "arvo"}


def _atlas_within(data, cache, seconds=60):
    """The atlas, run in a thread: one blocked on a FIFO fails the test instead of hanging it."""
    box = {}

    def run():
        try:
            box["result"] = atlas(NAMES, data=data, cache=cache, pool="none")
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the atlas blocked on a cache entry"
    if "error" in box:
        raise box["error"]
    return box["result"]


def _entries(cache: Path) -> dict[str, Path]:
    key_folder = next((cache / "keys").iterdir())
    return {"cell": next((cache / "cells").iterdir()), "keys-meta": key_folder / "meta.json",
            "keys-items": key_folder / "items.parquet", "keys-keys": key_folder / "keys.parquet"}


@pytest.mark.parametrize("entry", ["cell", "keys-meta", "keys-items", "keys-keys"])
def test_an_entry_replaced_by_a_fifo_is_a_miss_and_written_anew(declared, tmp_path, entry):
    fresh = _atlas_within(declared, tmp_path / "fresh")
    cache = tmp_path / "cache"
    _atlas_within(declared, cache)
    target = _entries(cache)[entry]
    target.unlink()
    os.mkfifo(target)
    again = _atlas_within(declared, cache)
    assert again.cells == fresh.cells
    assert target.is_file()  # the miss was written anew
    assert _atlas_within(declared, cache).recomputed == []  # and is served from now on


def _edit_cell(path: Path) -> None:
    record = json.loads(path.read_text())
    cell = record.get("entry", record)
    row = cell["row"]
    number = next(k for k, v in sorted(row.items()) if isinstance(v, int) and not isinstance(v, bool) and v > 0)
    row[number] += 1  # well-formed: the right keys and types, one count wrong
    path.write_text(json.dumps(record, sort_keys=True))


def _unchecked_cell(path: Path) -> None:
    """The entry as it was written before entries carried a checksum: the value alone."""
    record = json.loads(path.read_text())
    path.write_text(json.dumps(record.get("entry", record), sort_keys=True))


def _other_keys(path: Path) -> None:
    table = pq.read_table(path)
    values = [v.replace("9", "8") if isinstance(v, str) else v for v in table.column("value").to_pylist()]
    pq.write_table(table.set_column(table.schema.get_field_index("value"), "value",
                                    pa.array(values, table.schema.field("value").type)), path)


@pytest.mark.parametrize("edit", ["cell-count", "cell-without-checksum", "keys-of-other-values"])
def test_an_entry_edited_into_a_well_formed_wrong_value_is_a_miss(declared, tmp_path, edit):
    fresh = _atlas_within(declared, tmp_path / "fresh")
    cache = tmp_path / "cache"
    _atlas_within(declared, cache)
    entries = _entries(cache)
    if edit == "keys-of-other-values":
        _other_keys(entries["keys-keys"])
        for cell in (cache / "cells").iterdir():  # the cells are joined again from the keys
            cell.unlink()
    else:
        (_edit_cell if edit == "cell-count" else _unchecked_cell)(entries["cell"])
    before = entries["cell"].read_bytes() if edit != "keys-of-other-values" else None
    again = _atlas_within(declared, cache)
    assert again.cells == fresh.cells
    assert again.recomputed == fresh.recomputed  # every cell joined again, none served as edited
    if before is not None:
        assert entries["cell"].read_bytes() != before  # written anew
    assert _atlas_within(declared, cache).recomputed == []
