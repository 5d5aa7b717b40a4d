"""The streamed key join at scale: a synthetic parquet training side with its ids in a nested column
(`extra_info.instance_id`), seeded and written shard by shard (never held in memory), against a small
benchmark; each run in a fresh process, printing JSON: rows, wall seconds, CPU seconds, rows/s per core (rows
over CPU time) and peak RSS (VmHWM).

Runs, on the same files:
- `floor`: the simplest fast implementation (pyarrow reads the id column, `is_in` against the benchmark's ids):
  what the streamed join is measured against;
- `stream`: `overlap.api.compare` (ids only: no pool, evidence or text), the training side streamed;
- `held`: the same compare holding every training row as a Dataset (the path before the streamed join), only
  up to `--held-max` rows (it grows with the side: ~1 GB at 2M rows).

Targets: stream ≥ 1M rows/s per core, and peak RSS under 2 GB at 100M rows.

`--copies K` writes each id on K rows scattered over the whole side (a seeded permutation of the rows), as an
RL set that samples every task K times and shuffles: the shape where most rows repeat an earlier id.

    python benchmarks/stream_join_bench.py                    # 2M rows (written once into the temp dir)
    python benchmarks/stream_join_bench.py --rows 100000000   # 100M rows in 100 shards (~2 GB of parquet)
    python benchmarks/stream_join_bench.py --rows 10000000 --copies 16 --modes floor,stream
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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SHARD_ROWS = 1_000_000
PERMUTE = 1_000_003  # a prime: row -> row * PERMUTE % rows is a permutation of the rows it does not divide
BENCH_PRS, BENCH_ARVO, BENCH_ABSENT = 1000, 500, 500

CHILD = r"""
import json, os, resource, sys, time
from overlap.allocator import keep_freed_memory
keep_freed_memory()  # as the `overlap` command does, first (the floor runs with it too)
import pandas, pyarrow.parquet  # noqa: F401  (import cost is not part of the run)
mode, train, bench, arvo = sys.argv[1:5]

def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

import overlap.api  # noqa: F401
wall, start = time.perf_counter(), cpu()
if mode == "floor":
    import pyarrow as pa, pyarrow.compute as pc, pyarrow.dataset as pds, pyarrow.parquet as pq
    wanted = pq.read_table(bench, columns=["extra_info"]).column("extra_info").combine_chunks().field("instance_id")
    rows = hits = 0
    for batch in pds.dataset(train).to_batches(columns={"id": pc.field(("extra_info", "instance_id"))},
                                               batch_size=65536):
        rows += batch.num_rows
        hits += pc.sum(pc.is_in(batch.column(0), value_set=wanted)).as_py() or 0
    out = {"rows": rows, "matched_rows": hits}
else:
    from overlap.api import compare
    result = compare(train, [bench], columns={"id": "extra_info.instance_id"}, data={"arvo": arvo}, pool=None,
                     evidence=False, text=[], stream=mode == "stream")
    block = result.summary()
    out = {"rows": sum(f["rows"] for f in block["train"]["provenance"]["files"]), "items": block["train"]["items"],
           "bench_items_matched": block["benches"][0]["bench_items_matched"],
           "problems": {p["what"]: p["count"] for p in block["train"]["problems"]}}
seconds, cpu_seconds = time.perf_counter() - wall, cpu() - start
out.update({"mode": mode, "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2),
            "rows_per_s_per_core": round(out["rows"] / cpu_seconds), "peak_rss_mb": peak_mb()})
print(json.dumps(out))
"""


def _ids(start: int, stop: int, rows: int = 0, copies: int = 1) -> pa.Array:
    """Ids of rows start..stop: PR ids (`ownerK__repoJ-N`, unique), 2% OSS-Fuzz ids (`arvo:N`), 1% repeats of
    an id 50 rows earlier, 0.5% missing; with `copies` > 1 (of `rows`), each id on `copies` scattered rows."""
    i = np.arange(start, stop, dtype=np.int64)
    if copies > 1:
        source = i * PERMUTE % rows // copies
    else:
        source = np.where(i % 100 == 99, i - 50, i)  # a repeat: the id of an earlier row
    text = lambda values: pa.array(values).cast(pa.string())  # noqa: E731
    # about 3,000 repos (97 owners x 31 names), as a real corpus has thousands, not one per row
    pr = pc.binary_join_element_wise("owner", text(source % 97), "__repo", text(source % 31), "-", text(source), "")
    arvo = pc.binary_join_element_wise("arvo:", text(10_000 + source % 5_000_000), "")
    ids = pc.if_else(pa.array(source % 50 == 7), arvo, pr)
    return pc.if_else(pa.array(i % 200 == 13), pa.scalar(None, pa.string()), ids)


def _table(ids: pa.Array) -> pa.Table:
    extra = pa.StructArray.from_arrays([ids, pa.array(np.arange(len(ids)) % 7)], ["instance_id", "split_id"])
    return pa.table({"extra_info": extra})


def build(folder: Path, rows: int, copies: int = 1) -> tuple[Path, Path]:
    """The training shards and the benchmark (written once per size; a finished marker says they are whole)."""
    if copies > 1 and np.gcd(rows, PERMUTE) != 1:
        raise SystemExit(f"--rows {rows}: a multiple of {PERMUTE}; pick another size")
    tag = f"{rows}" if copies == 1 else f"{rows}x{copies}"
    train = folder / f"train-{tag}"
    bench = folder / f"bench-{tag}.parquet"
    if (train / "_done").exists() and bench.exists():
        return train, bench
    train.mkdir(parents=True, exist_ok=True)
    for shard, start in enumerate(range(0, rows, SHARD_ROWS)):
        stop = min(rows, start + SHARD_ROWS)
        pq.write_table(_table(_ids(start, stop, rows, copies)), train / f"part-{shard:05d}.parquet",
                       row_group_size=256_000)
    rng = np.random.default_rng(0)
    present = rng.choice(rows, BENCH_PRS, replace=False)
    ids = []
    for row in sorted(present.tolist()):
        ids += [v for v in _ids(row, row + 1, rows, copies).to_pylist() if v]
    ids += [f"arvo:{10_000 + n}" for n in rng.choice(min(rows // 50, 5_000_000), BENCH_ARVO, replace=False) * 50 + 7]
    ids += [f"absent__repo-{n}" for n in range(BENCH_ABSENT)]
    pq.write_table(_table(pa.array(list(dict.fromkeys(ids)), pa.string())), bench)
    (train / "_done").write_text("")
    return train, bench


def run(mode: str, train: Path, bench: Path) -> dict:
    arvo = Path(__file__).resolve().parents[1] / "data" / "demo" / "arvo"
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(train), str(bench), str(arvo)], capture_output=True,
                          text=True, check=False, env={**os.environ, "OVERLAP_OFFLINE": "1"})
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--held-max", type=int, default=2_000_000, help="largest size the held path runs at")
    parser.add_argument("--folder", default=os.path.join(tempfile.gettempdir(), "overlap-stream-bench"))
    parser.add_argument("--modes", default="floor,stream,held")
    parser.add_argument("--copies", type=int, default=1, help="rows each id is on, scattered (default: 1%% repeats)")
    args = parser.parse_args()
    started = time.perf_counter()
    train, bench = build(Path(args.folder), args.rows, args.copies)
    print(json.dumps({"rows": args.rows, "written_in_s": round(time.perf_counter() - started, 1),
                      "parquet_mb": round(sum(p.stat().st_size for p in train.glob("*.parquet")) / 2**20, 1)}))
    results = {}
    for mode in args.modes.split(","):
        if mode == "held" and args.rows > args.held_max:
            continue
        results[mode] = run(mode, train, bench)
        print(json.dumps(results[mode]), flush=True)
    if "stream" in results:
        stream = results["stream"]
        print(json.dumps({"target_rows_per_s_per_core": stream["rows_per_s_per_core"] >= 1_000_000,
                          "target_peak_rss_under_2gb": stream["peak_rss_mb"] < 2048,
                          "stream_over_floor_cpu": round(stream["cpu_seconds"] / results["floor"]["cpu_seconds"], 2)
                          if "floor" in results else None}))


if __name__ == "__main__":
    main()
