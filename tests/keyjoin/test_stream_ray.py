"""The streamed join's key scan on Ray Data (a local Ray) gives the local engine's compare, byte for byte:
parquet shards with the id in a nested column, blanks and repeated ids across shards, OSS-Fuzz and PR ids,
against CyberGym and an SWE benchmark."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from stream_check import differences

from overlap.api import compare
from overlap.api.demo import demo_data
from overlap.errors import InputError
from overlap.outputs.report.result_folders import write_compare_report

try:
    import ray
except ImportError:  # pragma: no cover - the ray extra is in the test extras
    ray = None

pytestmark = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install 'overlap[ray]')")
# Ids alone (a repo column would hold the side: its cells are checked over every kept row).
COLUMNS = {"id": "extra_info.instance_id"}


def _shards(folder):
    folder.mkdir()
    ids = ["arvo:10055", None, "oss-fuzz:42487500", "  ", "clap-rs__clap-941", "arvo:10055", "task-1",
           "https://github.com/BurntSushi/ripgrep/pull/1234", "arvo:25402", "clap-rs__clap-941"]
    repos = [None, None, None, None, "clap-rs/clap", None, None, None, None, "kbknapp/clap-rs"]
    for part in range(2):
        rows = slice(part * 5, part * 5 + 5)
        extra = pa.StructArray.from_arrays([pa.array(ids[rows]), pa.array(["x"] * 5)], ["instance_id", "other"])
        pq.write_table(pa.table({"extra_info": extra, "repo": pa.array(repos[rows])}), folder / f"part-{part}.parquet",
                       row_group_size=2)
    swe = folder.parent / "swe.jsonl"
    swe.write_text("".join(json.dumps({"extra_info": {"instance_id": i}, "repo": r}) + "\n" for i, r in (
        ("clap-rs__clap-941", "clap-rs/clap"), ("burntsushi__ripgrep-1234", "BurntSushi/ripgrep"))))
    return folder, swe


def test_the_ray_key_scan_writes_the_local_engines_folder(tmp_path):
    train, swe = _shards(tmp_path / "train")
    options = {"columns": COLUMNS, "data": demo_data(), "pool": None, "evidence": False, "text": None}
    local = compare(str(train), ["cybergym", str(swe)], **options)
    write_compare_report(local, tmp_path / "out" / "streamed", reports=False)
    on_ray = compare(str(train), ["cybergym", str(swe)], engine="ray", workers=1, **options)
    write_compare_report(on_ray, tmp_path / "out" / "held", reports=False)
    assert local.train.totals is not None and on_ray.train.totals is not None
    assert not differences(tmp_path / "out")
    assert local.summary()["train"]["problems"] == on_ray.summary()["train"]["problems"]
    assert local["cybergym"].items_matched > 0 and local[swe.name].items_matched == 2


def test_the_ray_key_scan_reads_parquet_only(tmp_path):
    _, swe = _shards(tmp_path / "train")
    with pytest.raises(InputError, match="the ray engine reads parquet"):
        compare(str(swe), ["cybergym"], columns=COLUMNS, data=demo_data(), pool=None, evidence=False, text=None,
                engine="ray", workers=1)


def test_a_truncated_parquet_shard_is_named_under_ray_as_locally(tmp_path):
    """The shard's footer is read on the driver, so a truncated file is one line naming it (under Ray the
    worker's ArrowInvalid was an internal error naming no file)."""
    folder = tmp_path / "train"
    _shards(folder)
    whole = (folder / "part-1.parquet").read_bytes()
    (folder / "part-1.parquet").write_bytes(whole[:len(whole) // 2])
    for engine in ("local", "ray"):
        with pytest.raises(InputError, match=r"part-1\.parquet"):
            compare(str(folder), ["cybergym"], columns=COLUMNS, data=demo_data(), pool=None, evidence=False,
                    text=[], stream=True, engine=engine, workers=1)


def test_an_engine_with_nothing_to_run_on_is_refused(tmp_path):
    """A compare that reads its training set whole (registered) with the text check off runs nothing on an
    engine: asking for Ray is refused, not ignored."""
    with pytest.raises(InputError, match="engine 'ray': nothing in this compare runs on it"):
        compare("cybergym", ["cybergym"], data=demo_data(), pool=None, evidence=False, text=[], engine="ray")
