"""The Ray engine gives the local engine's answer byte for byte: on a local Ray (num_cpus=2), from parquet
shards and from a DataFrame, and when an actor dies in the middle of the scan (Ray restarts it and runs its
batch again; the batch is merged once). Skips when Ray (the optional extra ``overlap[ray]``) is missing."""

import os
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

from overlap.outputs.report import ngram_summary, write_ngram_report
from overlap.text import text_check
from overlap.text.engine_ray import BatchScanner, scan_ray
from overlap.text.engines import run_scan, train_files
from overlap.text.ngrams import build_index

pytestmark = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install 'overlap[ray]')")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of a few kB, so that the small test input is many blocks spread over both actors."""
    monkeypatch.setattr("overlap.text.engine_ray.MIN_BLOCK_BYTES", 8 << 10)


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
