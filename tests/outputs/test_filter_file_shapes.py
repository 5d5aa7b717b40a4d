"""CSV and JSON-lines shapes nobody put in a fixture.

A CSV cell is text as written: `n/a`, `NA`, `null`, `NaN` are ids no scheme takes (as in JSON lines), and
only an empty cell is no id. The reader took pyarrow's null spellings as missing, so two `n/a` rows were both
kept while the split's independent check (which reads text) found the repeat: exit 2 on a valid file.

A file whose lines end in a lone CR (a classic-Mac export) is read as pyarrow reads it: its header was cut at
LF only, so the whole file was one header line and the csv module's refusal an internal error."""

from __future__ import annotations

import csv
import json

import pytest

from overlap.api import filter_train
from overlap.api.demo import DEMO_ROOT
from overlap.errors import InputError
from overlap.sources.rows.generic import scan_keys

DEMO = {name: DEMO_ROOT / name for name in ("cybergym", "arvo")}


@pytest.mark.parametrize("spelling", ["n/a", "NA", "null", "NaN", "#N/A", "nan"])
def test_a_null_spelling_is_text_and_its_repeat_is_dropped(tmp_path, spelling):
    path = tmp_path / "train.csv"
    path.write_text(f"id,n\narvo:10055,0\n{spelling},1\n,2\n{spelling},3\n\"\",4\n,5\n")
    assert scan_keys(str(path), {"id": "id"}).report.unrecognised == 2
    filter_train(path, ["cybergym"], tmp_path / "out", data=DEMO, id_column="id")
    with open(tmp_path / "out" / "removed.csv", newline="") as handle:
        removed = {int(r["row"]): r["reasons"] for r in csv.DictReader(handle)}
    assert removed == {0: "id:ossfuzz", 3: "dup:item_id"}
    kept = (tmp_path / "out" / "data" / "train.csv").read_text().splitlines()
    assert kept == ["id,n", f"{spelling},1", ",2", '"",4', ",5"]
    assert json.loads((tmp_path / "out" / "filter.json").read_text())["verification"]["status"] == "passed"


def test_a_file_with_lone_cr_line_ends_is_compared_and_filtered(tmp_path):
    path = tmp_path / "train.csv"
    path.write_bytes(b'id,x\rarvo:10055,1\r"a\rb",2\rjunk,3\rjunk,4\r')
    assert scan_keys(str(path), {"id": "id"}).report.taken["ossfuzz"].count == 1
    filter_train(path, ["cybergym"], tmp_path / "out", data=DEMO, id_column="id")
    assert (tmp_path / "out" / "data" / "train.csv").read_bytes() == b'id,x\r"a\rb",2\rjunk,3\r'


def test_a_json_line_holding_two_objects_is_named_with_what_to_change(tmp_path):
    """pyarrow reads `{…}{…}` on one line as two rows; the shard copies lines, so the filter said 'run the
    compare again', which fails the same way. Nothing is written either way."""
    path = tmp_path / "train.jsonl"
    path.write_text('{"id": "arvo:10055"}{"id": "arvo:10102"}\n{"id": "x"}\n')
    with pytest.raises(InputError, match="3 rows read from 2 lines; a line holding more than one JSON object"):
        filter_train(path, ["cybergym"], tmp_path / "out", data=DEMO, id_column="id")
    assert not (tmp_path / "out").exists()
