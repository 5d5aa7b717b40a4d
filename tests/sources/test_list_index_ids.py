"""An id named by a list index (`ids.0`, as the column errors suggest) reads a list too short or null as no
id, in parquet as in JSON lines (it refused the whole parquet file as 'cannot read ... is it complete?'), and
the filter's independent check derives keys from the same cell (it derived none and passed any split)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.api import filter_train
from overlap.api.demo import DEMO_ROOT
from overlap.errors import InputError
from overlap.ids.ossfuzz import parse_mapping
from overlap.outputs.ship.verify.keys import KeyColumns, row_keys
from overlap.sources.rows.generic import scan_keys

DEMO = {name: DEMO_ROOT / name for name in ("cybergym", "arvo")}
MAPPING = parse_mapping((DEMO_ROOT / "arvo" / "arvo" / "oss_fuzz_mappings.csv").read_bytes(), "demo").old_to_new
LISTS = [["arvo:10055", "x"], [], None, ["oss-fuzz:42471120"], ["CVE-2021-44228", "arvo:12007"]]


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_short_or_null_list_is_no_id(tmp_path, fmt):
    path = tmp_path / f"train.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.table({"ids": LISTS}), path)
    else:
        path.write_text("".join(json.dumps({"ids": v}) + "\n" for v in LISTS))
    first = scan_keys(str(path), {"id": "ids.0"}).report
    assert first.taken["ossfuzz"].count == 2 and first.taken["cve"].count == 1
    second = scan_keys(str(path), {"id": "ids.1"}).report
    assert second.taken["ossfuzz"].count == 1 and second.unrecognised == 1


@pytest.mark.parametrize("column", ["ids.99999999999999999999", "ids.²"])
def test_an_index_no_list_holds_is_no_column(tmp_path, column):
    path = tmp_path / "train.parquet"
    pq.write_table(pa.table({"ids": LISTS}), path)
    with pytest.raises(InputError, match="no column"):
        scan_keys(str(path), {"id": column})


def test_the_split_check_reads_a_list_index():
    assert row_keys({"ids": ["arvo:10055"]}, KeyColumns(id="ids.0"), MAPPING) == {("ossfuzz", "42471001")}
    assert row_keys({"ids": []}, KeyColumns(id="ids.0"), MAPPING) == set()
    assert row_keys({"ids": None}, KeyColumns(id="ids.0"), MAPPING) == set()


def test_filter_by_a_list_index_removes_the_bench_rows_and_checks_them(tmp_path):
    path = tmp_path / "train.parquet"
    pq.write_table(pa.table({"ids": LISTS, "n": list(range(len(LISTS)))}), path)
    filter_train(path, ["cybergym"], tmp_path / "out", data=DEMO, id_column="ids.0")
    kept = pq.read_table(tmp_path / "out" / "data" / "train.parquet").column("n").to_pylist()
    assert kept == [1, 2, 4]  # arvo:10055 and oss-fuzz:42471120 are CyberGym tasks; the CVE is not
    verification = json.loads((tmp_path / "out" / "filter.json").read_text())["verification"]
    assert verification["status"] == "passed" and verification["keys_derived"] == 1  # the kept row's CVE
