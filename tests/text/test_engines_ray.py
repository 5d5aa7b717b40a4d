"""The Ray engine gives the local engine's answer byte for byte: on a local Ray (num_cpus=2), from parquet
shards and from a DataFrame, and when an actor dies in the middle of the scan (Ray restarts it and runs its
batch again; the batch is merged once); through `compare(..., text=..., engine="ray")` and `overlap filter
--drop ngram:13 --engine ray` too. Skips when Ray (the optional extra ``overlap[ray]``) is missing."""

import json
import os
import shutil
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

try:
    import ray
except ImportError:  # the optional extra
    ray = None

from test_engines import workload  # tests/text is on the path (no __init__.py)
from typer.testing import CliRunner

from overlap.api import compare
from overlap.api.demo import DEMO_ROOT, demo_data
from overlap.cli import app
from overlap.outputs.report.result_folders import ngram_summary, write_ngram_report
from overlap.text import text_check
from overlap.text.ngram import build_index
from overlap.text.ngram.engine_ray import BatchScanner, scan_ray
from overlap.text.ngram.engines import run_scan, train_files

pytestmark = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install 'overlap[ray]')")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of a few kB, so that the small test input is many blocks spread over both actors."""
    monkeypatch.setattr("overlap.text.ngram.engine_ray.MIN_BLOCK_BYTES", 8 << 10)


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    bench, train, pairs = workload(600, seed=4)
    folder = tmp_path_factory.mktemp("shards")
    table = pa.Table.from_pandas(train.rename(columns={"item_id": "uid"}), preserve_index=False)  # read as item_id
    for i, start in enumerate(range(0, len(train), 150)):
        pq.write_table(table.slice(start, 150), folder / f"part-{i}.parquet", row_group_size=50)
    return train_files(folder, id_column="uid"), bench, train, pairs


def written(result, out):
    write_ngram_report(ngram_summary("train", "bench", result), result, out)
    return {name: (out / name).read_bytes() for name in ("flags.csv", "boilerplate.csv", "summary.json")}


def test_ray_gives_the_local_flags_byte_for_byte(local_ray, shards, tmp_path):
    folder, bench, train, pairs = shards
    local = text_check(folder, bench, "text", "text", pairs=pairs, workers=1, batch_rows=64)
    on_ray = text_check(folder, bench, "text", "text", pairs=pairs, workers=2, batch_rows=64, engine="ray")
    assert len(local.flags) > 50
    assert written(on_ray, tmp_path / "ray") == written(local, tmp_path / "local")
    assert on_ray.summary() == local.summary()
    pd.testing.assert_frame_equal(on_ray.runs, local.runs)
    pd.testing.assert_frame_equal(on_ray.identifiers, local.identifiers)
    # a DataFrame goes through the object store batch by batch: the same answer
    from_frame = text_check(train, bench, "text", "text", pairs=pairs, workers=2, batch_rows=64, engine="ray")
    assert written(from_frame, tmp_path / "frame") == written(local, tmp_path / "local2")


class DiesOnce(BatchScanner):
    """Kills its worker process on its first batch, once per marker file (Ray restarts the actor)."""

    marker = ""

    def __call__(self, table):
        if not os.path.exists(self.marker):
            with open(self.marker, "w") as fh:
                fh.write(str(os.getpid()))
            os._exit(1)
        return super().__call__(table)


def test_a_killed_actor_changes_nothing(local_ray, shards, tmp_path):
    folder, bench, _, pairs = shards
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the actor class lives in this test
    index = build_index(pa.array(bench["text"]), bench["item_id"].tolist())
    by_train = {t: [int(b[1:])] for t, b in zip(pairs["train_id"], pairs["bench_id"], strict=True)}
    kw = dict(id_col="item_id", text_col="text", ident_col=None, pairs=by_train, chunk_bytes=4 << 20,
              chunk_rows=64)
    local, _ = run_scan(index, folder, engine="local", workers=1, **kw)
    DiesOnce.marker = str(tmp_path / "died")
    on_ray, _ = scan_ray(index, folder, None, ["item_id", "text"], workers=2, scanner=DiesOnce, **kw)
    assert os.path.exists(DiesOnce.marker)  # an actor did die
    for k in local.flags:
        assert np.array_equal(local.flags[k], on_ray.flags[k]), k
    assert on_ray.counts == local.counts  # nothing counted twice
    assert on_ray.counts["items"] == 600
    assert on_ray.short == local.short and on_ray.runs == local.runs


@pytest.fixture(scope="module")
def copied_demo(tmp_path_factory):
    """The demo data with one train item that is not id-matched given a bench item's description: the text
    check flags it (the demo's own texts share no 13-gram)."""
    root = tmp_path_factory.mktemp("demo") / "demo"
    shutil.copytree(DEMO_ROOT, root)
    description = json.loads((root / "cybergym" / "tasks.json").read_text())[0]["vulnerability_description"]
    path = root / "mimo-cyber" / "cyber.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[-1]["prompt"] = [{"role": "user", "content": f"Reproduce this: {description}"}]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return {name: root / name for name in ("mimo-cyber", "cybergym", "arvo", "arvo-meta")}


def text_flags(result):
    return ([b.sections["text"] for b in result.benches], [b.pairs for b in result.benches],
            result.train.items[["item_id", "ngram_13", "ngram_8"]])


@pytest.mark.parametrize("data", ["demo", "copied"])
def test_compare_on_ray_gives_the_local_text_flags(local_ray, copied_demo, data):
    data = demo_data() if data == "demo" else copied_demo
    kw = dict(data=data, text=["prompt:description"], pool=None, evidence=False)
    local_sections, local_pairs, local_items = text_flags(compare("mimo-cyber", ["cybergym"], **kw))
    ray_sections, ray_pairs, ray_items = text_flags(compare("mimo-cyber", ["cybergym"], engine="ray", workers=2,
                                                            **kw))
    assert ray_sections == local_sections and local_sections[0]["status"] == "ran"
    for on_ray, local in zip(ray_pairs, local_pairs, strict=True):
        pd.testing.assert_frame_equal(on_ray, local)
    pd.testing.assert_frame_equal(ray_items, local_items)
    if data is copied_demo:
        assert local_sections[0]["flags"]["13"]["train_items_flagged"] == 1


def test_filter_cli_on_ray_writes_the_local_split(local_ray, copied_demo, tmp_path):
    data = [arg for name, path in copied_demo.items() for arg in ("--data", f"{name}={path}")]
    written = {}
    for engine in ("local", "ray"):
        out = tmp_path / engine
        result = CliRunner().invoke(app, ["filter", "mimo-cyber", "cybergym", *data, "--out", str(out),
                                          "--drop", "ngram:13", "--engine", engine], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        assert "removed: 1  kept: 10" in result.stdout
        written[engine] = {p.relative_to(out): p.read_bytes() for p in sorted((out / "data").rglob("*"))
                           if p.is_file()}
        written[engine]["removed.csv"] = (out / "removed.csv").read_bytes()
    assert len(written["local"]) > 1 and written["ray"] == written["local"]
