"""An in-memory training side streamed by the key join in the memory its parquet shards take: the same rows as
parquet shards (`stream_join_bench`'s seeded synthetic side: ids in `extra_info.instance_id`, 2% OSS-Fuzz ids,
1% repeats, 0.5% missing) compared with its small benchmark, each run in a fresh process, printing JSON: rows,
bench items matched, wall and CPU seconds, rows/s per core, the RSS after imports and the peak RSS (VmHWM).

Runs, on the same shards (no network: the IterableDatasets read the local files):
- `parquet`: `overlap.compare(<the shard folder>, ...)`: the file path, streamed;
- `iterable-parquet`: an `IterableDataset` of the shards (`datasets.load_dataset("parquet", data_files=...,
  streaming=True)`), given to `overlap.compare` as it is;
- `iterable-generator`: `datasets.IterableDataset.from_generator` over the shards' rows (Python dicts, with
  features): the slowest way a stream can arrive.

Every run imports `datasets` before it is measured, so the RSS compared is the scan's, not the library's.
The claim checked: each in-memory stream's peak RSS is within the parquet run's bound (its peak + 25%), and
its counts are the parquet run's.

    python benchmarks/inmemory_bench.py                       # 2M rows
    python benchmarks/inmemory_bench.py --rows 10000000       # 10M rows in 10 shards
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stream_join_bench import build

CHILD = r"""
import json, os, resource, sys, time
from overlap.allocator import keep_freed_memory
keep_freed_memory()  # as the `overlap` command does, first
import datasets, pandas, pyarrow.parquet  # noqa: F401  (import cost is not part of the run)
datasets.disable_progress_bars()
mode, train, bench, arvo = sys.argv[1:5]

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return round(int(line.split()[1]) / 1024, 1)

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

import overlap.api  # noqa: F401
from overlap.api import compare
files = sorted(str(p) for p in __import__("pathlib").Path(train).glob("*.parquet"))
if mode == "parquet":
    side = train
elif mode == "iterable-parquet":
    side = datasets.load_dataset("parquet", data_files={"train": files}, split="train", streaming=True)
else:
    import pyarrow.parquet as pq
    features = datasets.Features({"extra_info": {"instance_id": datasets.Value("string"),
                                                 "split_id": datasets.Value("int64")}})

    def rows(files):
        for path in files:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=65536):
                yield from batch.to_pylist()

    side = datasets.IterableDataset.from_generator(rows, gen_kwargs={"files": files}, features=features)
after_imports = status("VmRSS:")
wall, start = time.perf_counter(), cpu()
result = compare(side, [bench], columns={"id": "extra_info.instance_id"}, data={"arvo": arvo}, pool=None,
                 evidence=False, text=[])
block = result.summary()
seconds, cpu_seconds = time.perf_counter() - wall, cpu() - start
rows = sum(f["rows"] for f in block["train"]["provenance"]["files"])
print(json.dumps({"mode": mode, "rows": rows, "items": block["train"]["items"],
                  "bench_items_matched": block["benches"][0]["bench_items_matched"],
                  "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2),
                  "rows_per_s_per_core": round(rows / cpu_seconds), "rss_after_imports_mb": after_imports,
                  "peak_rss_mb": status("VmHWM:")}))
"""


def run(mode: str, train: Path, bench: Path) -> dict:
    arvo = Path(__file__).resolve().parents[1] / "data" / "demo" / "arvo"
    env = {**os.environ, "OVERLAP_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(train), str(bench), str(arvo)], capture_output=True,
                          text=True, check=False, env=env)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--folder", default=os.path.join(tempfile.gettempdir(), "overlap-stream-bench"))
    parser.add_argument("--modes", default="parquet,iterable-parquet,iterable-generator")
    args = parser.parse_args()
    started = time.perf_counter()
    train, bench = build(Path(args.folder), args.rows)
    print(json.dumps({"rows": args.rows, "written_in_s": round(time.perf_counter() - started, 1),
                      "parquet_mb": round(sum(p.stat().st_size for p in train.glob("*.parquet")) / 2**20, 1)}))
    results = {}
    for mode in args.modes.split(","):
        results[mode] = run(mode, train, bench)
        print(json.dumps(results[mode]), flush=True)
    if "parquet" in results:
        bound = results["parquet"]["peak_rss_mb"] * 1.25
        counts = {k: results["parquet"][k] for k in ("rows", "items", "bench_items_matched")}
        print(json.dumps({mode: {"same_counts": {k: r[k] for k in counts} == counts,
                                 "peak_within_parquet_bound": r["peak_rss_mb"] <= bound}
                          for mode, r in results.items() if mode != "parquet"}))


if __name__ == "__main__":
    main()
