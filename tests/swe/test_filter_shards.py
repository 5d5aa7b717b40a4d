"""`overlap filter` on a training set of several parquet shards: one output shard per input shard, the same
row groups, column types that drift between shards unified (or refused with one line naming shard and
column), and the filter's own check."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from swe_fixtures import offline_hub, prs_folder, swe_data, write_parquet  # noqa: F401

from overlap.api import filter_train
from overlap.errors import InputError


def _data(prs_folder, swe_data):  # noqa: F811
    return {"swe-rebench-v2-prs": prs_folder, "multi-swe-bench": swe_data["multi-swe-bench"]}


def test_shards_stay_shards_and_drifting_types_are_unified(prs_folder, swe_data, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    _, decision, report = filter_train("swe-rebench-v2-prs", ["multi-swe-bench"], out, data=_data(prs_folder, swe_data))
    inputs = sorted(p.relative_to(prs_folder).as_posix() for p in prs_folder.rglob("*.parquet"))
    assert sorted(p.relative_to(out / "data").as_posix() for p in (out / "data").rglob("*.parquet")) == inputs
    info = json.loads((out / "filter.json").read_text())
    assert info["columns_unified_to_text"] == ["pull_number"]  # int64 in one shard, text in another
    assert info["verification"]["status"] == "passed" and report.verification["rows_matching"] == 0
    first = pq.ParquetFile(out / "data" / "data" / "train-00000-of-00003.parquet")
    assert first.schema_arrow.field("pull_number").type == pa.string()
    removed = {(r["file"], r["row"]) for r in decision.removed.to_dict(orient="records")}
    for path in inputs:  # every kept row is the input row at its position, with the unified type
        source = pq.read_table(prs_folder / path)
        kept = [i for i in range(source.num_rows) if (path, i) not in removed]
        written = pq.read_table(out / "data" / path)
        assert written.num_rows == len(kept)
        for name in written.column_names:
            want = source.column(name).take(pa.array(kept, pa.int64())) if name in source.column_names else None
            if want is not None:
                assert written.column(name).to_pylist() == want.cast(written.schema.field(name).type).to_pylist()


def test_a_drift_that_cannot_be_unified_is_refused_naming_shard_and_column(prs_folder, swe_data, tmp_path):  # noqa: F811
    folder = tmp_path / "prs"
    shutil.copytree(prs_folder, folder)
    rows = [{"instance_id": "a__b-1", "repo": {"owner": "a"}, "pull_number": 1, "base_commit": "f" * 40}]
    write_parquet(folder / "data" / "train-00003-of-00003.parquet", rows)
    with pytest.raises(InputError, match=r"train-00003-of-00003.parquet: column 'repo' is struct.* in "):
        filter_train("swe-rebench-v2-prs", ["multi-swe-bench"], tmp_path / "out",
                     data=_data(folder, swe_data))
    assert not (tmp_path / "out").exists()
