"""`overlap.integrations.datatrove.OverlapFilter` in a real datatrove `LocalPipelineExecutor` run over a small
JSON-lines folder, against the same rows through `overlap filter --drop id`: the same documents dropped, with
the same benchmark items and key kinds (read from the filter's removed.csv with the csv module)."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from datatrove.executor import LocalPipelineExecutor  # in the test extra: a missing install fails, never skips
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from typer.testing import CliRunner

from overlap.cli import app
from overlap.integrations.datatrove import OverlapFilter

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
DATA = {"cybergym": str(DEMO / "cybergym"), "arvo": str(DEMO / "arvo")}

# Two files of training rows: OSS-Fuzz ids old and new (42471002 is arvo:10102's new id in the demo mapping),
# a CVE, SWE instance ids (one in another case), ids no scheme reads, a row without an id.
TRAIN = {
    "part-0.jsonl": [("arvo:10055", "a"), ("oss-fuzz:42471002", "b"), ("arvo:99999", "c"), ("CVE-2023-50246", "d"),
                     ("task-7", "e")],
    "part-1.jsonl": [("django__django-11099", "f"), ("Django__Django-11099x", "g"), ("astropy__astropy-12907", "h"),
                     ("sympy__sympy-20590", "i"), ("arvo_10190", "j")],
}
SWE_BENCH = ["django__django-11099", "astropy__astropy-12907", "CVE-2023-50246"]


@pytest.fixture()
def folders(tmp_path):
    train = tmp_path / "train"
    train.mkdir()
    for name, rows in TRAIN.items():
        (train / name).write_text("".join(json.dumps({"id": i, "text": t, "extra": {"task": i}}) + "\n"
                                          for i, t in rows))
    bench = tmp_path / "swe-bench.jsonl"
    bench.write_text("".join(json.dumps({"id": i}) + "\n" for i in SWE_BENCH))
    return train, bench


def _read_jsonl_folder(folder: Path) -> list[dict]:
    rows = []
    for path in sorted(folder.rglob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def _filter_cli(train: Path, bench: Path, out: Path) -> dict[str, tuple[set[str], set[str]]]:
    """`overlap filter` on the same rows: removed item id → (bench items, key kinds), from removed.csv."""
    res = CliRunner().invoke(app, ["filter", str(train), "cybergym", str(bench), "--id-column", "id", "--drop", "id",
                                   "-d", f"cybergym={DATA['cybergym']}", "-d", f"arvo={DATA['arvo']}",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    removed = {}
    with (out / "removed.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            kinds = {r.removeprefix("id:") for r in row["reasons"].split(";")}
            removed[row["item_id"]] = (set(row["bench_ids"].split(";")), kinds)
    return removed


@pytest.mark.parametrize("id_key", [None, "extra.task"])
def test_pipeline_drops_what_filter_removes(folders, tmp_path, id_key):
    train, bench = folders
    expected = _filter_cli(train, bench, tmp_path / "filtered")
    assert len(expected) >= 5  # OSS-Fuzz (old and new id), CVE, SWE ids: the run exercises each kind

    kept, dropped = tmp_path / f"kept-{id_key}", tmp_path / f"dropped-{id_key}"
    step = OverlapFilter(["cybergym", str(bench)], data=DATA, bench_columns={"id": "id"}, id_key=id_key,
                         exclusion_writer=JsonlWriter(str(dropped)), batch_size=3)
    reader = JsonlReader(str(train), id_key="id") if id_key is None else JsonlReader(str(train))
    executor = LocalPipelineExecutor(pipeline=[reader, step, JsonlWriter(str(kept))], tasks=2,
                                     logging_dir=str(tmp_path / f"logs-{id_key}"))
    executor.run()

    kept_rows, dropped_rows = _read_jsonl_folder(kept), _read_jsonl_folder(dropped)
    ids = [i for rows in TRAIN.values() for i, _ in rows]

    def id_of(row):
        return row["id"] if id_key is None else row["metadata"]["extra"]["task"]

    assert sorted(map(id_of, kept_rows + dropped_rows)) == sorted(ids)  # every row once
    assert {id_of(r) for r in dropped_rows} == set(expected)
    for row in dropped_rows:
        meta = row["metadata"]
        bench_ids, kinds = expected[id_of(row)]
        assert set(meta["overlap_bench_ids"]) == bench_ids
        assert set(meta["overlap_kinds"]) == kinds
        assert meta["filter_reason"] == f"overlap:{meta['overlap_benches'][0]}"
        assert set(meta["overlap_benches"]) == {n for n in ("cybergym", bench.name) for b in bench_ids
                                                if b.startswith(n + ":")}

    # datatrove's stats count the drops per benchmark reason
    stats = json.loads((tmp_path / f"logs-{id_key}" / "stats.json").read_text())
    step_stats = next(s for s in stats if "overlap" in s["name"])["stats"]
    assert step_stats["dropped"] == len(expected)


def test_keys_are_built_once_per_task(folders, tmp_path, monkeypatch):
    """Many batches, one build of the benchmark keys."""
    from overlap.integrations import datatrove as block

    train, bench = folders
    calls = []
    real = block.bench_keys
    monkeypatch.setattr(block, "bench_keys", lambda *a, **k: calls.append(1) or real(*a, **k))
    step = OverlapFilter(["cybergym"], data=DATA, batch_size=1)
    executor = LocalPipelineExecutor(pipeline=[JsonlReader(str(train), id_key="id"), step], tasks=1,
                                     logging_dir=str(tmp_path / "logs"))
    executor.run()
    assert calls == [1]


def test_a_bad_benchmark_is_the_library_error_naming_it():
    from overlap.errors import OverlapError

    step = OverlapFilter(["no-such-benchmark-name"])
    with pytest.raises(OverlapError, match="no-such-benchmark-name"):
        _ = step.keys
