"""An id column of lists, structs or bytes is refused with its file, column and type named, streamed
or held, rather than read as a side where no row has an id."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from overlap.errors import InputError
from overlap.sources.rows.generic import read_generic, scan_keys


@pytest.mark.parametrize("values, shown", [
    ([["arvo:1"], ["arvo:2"]], "list<"),
    ([{"a": "arvo:1"}, {"a": "arvo:2"}], "struct<"),
    ([b"arvo:1", b"arvo:2"], "binary"),
])
def test_a_column_that_holds_no_ids_is_named_with_its_type(tmp_path, values, shown):
    path = tmp_path / "train.parquet"
    pq.write_table(pa.table({"id": pa.array(values)}), path)
    for read in (read_generic, scan_keys):
        with pytest.raises(InputError) as raised:
            read(str(path), {"id": "id"})
        assert f"train.parquet: column 'id' holds {shown}" in str(raised.value)


def test_a_json_column_of_ids_with_a_few_lists_is_refused_at_the_first(tmp_path):
    """Read as its JSON text, a list would be an id whenever it holds one (a CVE anywhere in it matches), and a
    batch of lists alone is no id column: the same cell is refused wherever it stands."""
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"id": f"arvo:{i}" if i % 10 else [f"arvo:{i}"]}) + "\n" for i in range(30)))
    with pytest.raises(InputError, match="train.jsonl: line 1: column 'id' holds a list here, not an id"):
        scan_keys(str(path), {"id": "id"})


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_an_id_column_named_twice_is_refused_not_picked(tmp_path, fmt):
    """Two columns of the asked name (a CSV header `id,id`, a parquet schema with the field twice): which one is
    meant cannot be told, so neither is read; a repeated column nobody asked for is no problem."""
    path = tmp_path / f"train.{fmt}"
    if fmt == "csv":
        path.write_text("id,id,x,x\narvo:1,arvo:2,1,2\n")
    else:
        pq.write_table(pa.Table.from_arrays([pa.array(["arvo:1"]), pa.array(["arvo:2"]), pa.array([1]),
                                             pa.array([2])], names=["id", "id", "x", "x"]), path)
    with pytest.raises(InputError, match=f"train.{fmt}: column 'id' appears 2 times"):
        scan_keys(str(path), {"id": "id"})
    with pytest.raises(InputError, match=f"train.{fmt}: column 'id' appears 2 times"):
        scan_keys(str(path), {"id": "id.sub"})
    renamed = path.read_text().replace("id,id", "id,other") if fmt == "csv" else None
    if renamed:
        path.write_text(renamed)
        assert scan_keys(str(path), {"id": "id"}).report.taken["ossfuzz"].count == 1


def test_a_json_cell_reads_the_same_whatever_its_batch_holds(tmp_path):
    """JSON lines: a fraction or a boolean among text ids reads as text (`10055.25`, `true`), and so it does
    in a batch of numbers or booleans alone: the same cell never changes with its neighbours (the filter
    re-reads its removed rows apart from the others)."""
    mixed, alone = tmp_path / "mixed.jsonl", tmp_path / "alone.jsonl"
    mixed.write_text("".join(json.dumps({"id": v}) + "\n" for v in ["arvo:1", True, 10055.25, 10055.0, 7]))
    scan = scan_keys(str(mixed), {"id": "id"})
    assert scan.items.column("item_id").to_pylist() == ["arvo:1", "true", "10055.25", "10055", "7"]
    for values, expected in (([True, False], ["true", "false"]), ([10055.25, 3.0], ["10055.25", "3"]),
                             ([10055.0, 3], ["10055", "3"])):
        alone.write_text("".join(json.dumps({"id": v}) + "\n" for v in values))
        assert scan_keys(str(alone), {"id": "id"}).items.column("item_id").to_pylist() == expected


def test_a_json_nan_id_is_no_id_as_a_null_is_in_parquet(tmp_path):
    """pandas writes a missing cell to JSON as `NaN`: it is a row without an id, as the same row's null is in
    parquet, not an id `nan` that no scheme takes."""
    ids = ["arvo:10055", None, "owner__repo-1", None]
    (tmp_path / "train.jsonl").write_text("".join(
        json.dumps({"id": value if value is not None else float("nan"), "extra": {"id": value}}) + "\n"
        for value in ids))
    pq.write_table(pa.table({"id": pa.array(ids, pa.string())}), tmp_path / "train.parquet")
    counts = []
    for name, column in (("train.jsonl", "id"), ("train.jsonl", "extra.id"), ("train.parquet", "id")):
        report = scan_keys(str(tmp_path / name), {"id": column}).report
        counts.append((report.missing, report.unrecognised, {k: c.count for k, c in report.taken.items()}))
    assert counts[0] == counts[1] == counts[2] == (2, 0, {"ossfuzz": 1, "github_pr": 1})


def test_a_number_column_counts_its_rows_without_an_id_as_its_items_do(tmp_path):
    """A parquet float column: NaN (pandas' missing cell), a fraction and inf are no id, in the recognition
    report as in the items and problems (they were listed as unrecognised ids there, missing here); a whole
    float is the integer it is read as, in the report's examples too."""
    pq.write_table(pa.table({"id": [10340.0, float("nan"), 12007.5, None, float("inf"), 5.0]}),
                   tmp_path / "train.parquet")
    dataset = read_generic(str(tmp_path / "train.parquet"), {"id": "id"})
    report = dataset.recognition
    problems = {p.what: p.count for p in dataset.problems}
    assert (report.missing, report.unrecognised, report.unrecognised_examples) == (4, 2, ["10340", "5"])
    assert problems == {"missing_id": 4, "unrecognised_id": 2}
    assert sorted(dataset.items["item_id"]) == ["10340", "5"]
