"""Any values in a user's id column, in any of the formats users bring: reading them by columns either says
what is wrong in one InputError, or accounts for every row (items + repeats + rows without an id = rows read;
every value recognised, unrecognised or missing), and an id is only ever read as a key its scalar parser
would give. Hypothesis generates the cells nobody put in a fixture."""

from __future__ import annotations

import csv
import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap.errors import InputError
from overlap.ids.cve import find_cve
from overlap.sources.rows.generic import read_generic

ID_LIKE = st.sampled_from(["arvo:10055", "arvo_42470443", "oss-fuzz:42471002", "php.ossfuzz-42491394",
                           "jq.cve-2023-50246", "CVE-2021-44228", "astropy__astropy-12907", "owner/repo#12",
                           "https://github.com/o/r/pull/7", "arvo:１２３", "arvo:1e5", "arvo:-3", "arvo:0x10",
                           "arvo:99999999999999999999", "", " ", "\u200b", "arvo:10055\x00"])
CELL = st.one_of(ID_LIKE, st.text(max_size=30), st.integers(-2**70, 2**70), st.booleans(), st.none(),
                 st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
STRINGY = st.one_of(ID_LIKE, st.text(max_size=30), st.none())


def _json_cell(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no NaN/Infinity: a user's exporter writes them as text
    return value


def check_accounting(path, rows: int) -> None:
    try:
        dataset = read_generic(path, id_column="id")
    except InputError as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip()
        return
    report = dataset.recognition
    assert report.values == rows, (report.to_dict(), rows)
    missing = sum(p.count for p in dataset.problems if p.what == "missing_id")
    assert len(dataset.items) + len(dataset.repeats) + missing == rows
    for value, kind in dataset.keys[["value", "kind"]].itertuples(index=False):
        if kind == "ossfuzz":
            assert str(value).isascii() and str(value).isdigit() and len(str(value)) <= 12
        if kind == "cve":
            assert find_cve(str(value)) == value


settings_ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings_
@given(st.lists(CELL, min_size=1, max_size=25))
def test_any_json_cells(tmp_path_factory, cells):
    path = tmp_path_factory.mktemp("jsonl") / "rows.jsonl"
    path.write_text("".join(json.dumps({"id": _json_cell(c), "n": i}) + "\n" for i, c in enumerate(cells)))
    check_accounting(path, len(cells))


@settings_
@given(st.lists(STRINGY, min_size=1, max_size=25))
def test_any_parquet_and_csv_strings(tmp_path_factory, cells):
    folder = tmp_path_factory.mktemp("files")
    pq.write_table(pa.table({"id": pa.array(cells, pa.string())}), folder / "rows.parquet")
    check_accounting(folder / "rows.parquet", len(cells))
    with open(folder / "rows.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id"])
        for cell in cells:
            writer.writerow(["" if cell is None else cell.replace("\x00", "")])
    check_accounting(folder / "rows.csv", len(cells))
