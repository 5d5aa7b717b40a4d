"""Peak memory of the streamed key join per shape of training ids: `overlap compare DIR cybergym --id-column
meta.id --out OUT` (the demo CyberGym and ARVO mapping, offline) on seeded parquet shards whose ids sit in a
nested column, one shape at a time. Each shape's shards are written on the fly (1M rows a shard, never held),
the command runs in a fresh process, and its peak RSS (the child's maxrss, `os.wait4`), wall and CPU seconds
are printed as one JSON line; the shards and the report are deleted before the next shape.

The shapes are those of the generated mixes the tests draw, each at the size asked:

- `one_scheme`: every id `arvo:<n>`, all distinct (one OSS-Fuzz key per row);
- `two_schemes`: half `arvo:<n>`, half `CVE-<year>-<n>` in one column;
- `half_arvo_one_repo`: half `arvo_<n>`, half `owner__repo-<n>` (one repo, all distinct numbers);
- `many_repos`: `owner<k>__repo<k>-<n>` over one repo per 100 rows;
- `one_repo`: `owner__repo-<n>`, one repo, all distinct numbers;
- `repeats_x16`: half `arvo:<n>`, half PR ids over ~3,000 repos, each id on 16 scattered rows;
- `unrecognised_90`: 90 % ids no scheme takes (`task-<n>`), 10 % PR ids;
- `unique_prs`: 100 % distinct PR ids over ~3,000 repos.

Bound (docs/scaling.md): the benchmarks and a batch, i.e. under 1 GB at 10M rows and 2 GB at 100M on each.

    python benchmarks/stream_join_shapes_bench.py                     # 200k rows, every shape
    python benchmarks/stream_join_shapes_bench.py --rows 10000000
    python benchmarks/stream_join_shapes_bench.py --rows 100000000 --shapes one_scheme,repeats_x16
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
SHARD_ROWS = 1_000_000
PERMUTE = 1_000_003  # a prime: row -> row * PERMUTE % rows permutes the rows of a size it does not divide
BOUND_MB = {10_000_000: 1024, 100_000_000: 2048}


def _text(values: np.ndarray) -> pa.Array:
    return pa.array(values).cast(pa.string())


def _join(*parts) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _prs(n: np.ndarray) -> pa.Array:
    """PR ids over ~3,000 repos (97 owners x 31 names)."""
    return _join("owner", _text(n % 97), "__repo", _text(n % 31), "-", _text(n))


def _half(n: np.ndarray, first: pa.Array, second: pa.Array) -> pa.Array:
    return pc.if_else(pa.array(n % 2 == 0), first, second)


def _mixed(source: np.ndarray) -> pa.Array:
    """Half `arvo:<n>`, half PR ids, by the source id's number."""
    return _half(source, _join("arvo:", _text(source + 1)), _prs(source + 1))


SHAPES: dict[str, Callable[[np.ndarray, int], pa.Array]] = {
    "one_scheme": lambda n, rows: _join("arvo:", _text(n + 1)),
    "two_schemes": lambda n, rows: _half(n, _join("arvo:", _text(n + 1)),
                                         _join("CVE-", _text(2000 + n % 25), "-", _text(10_000 + n))),
    "half_arvo_one_repo": lambda n, rows: _half(n, _join("arvo_", _text(n + 1)), _join("owner__repo-", _text(n + 1))),
    "many_repos": lambda n, rows: _join("owner", _text(n // 100), "__repo", _text(n // 100), "-", _text(n + 1)),
    "one_repo": lambda n, rows: _join("owner__repo-", _text(n + 1)),
    # each id on 16 rows scattered over the side (as an RL set that samples each task 16 times, shuffled)
    "repeats_x16": lambda n, rows: _mixed(n * PERMUTE % rows // 16),
    "unrecognised_90": lambda n, rows: pc.if_else(pa.array(n % 10 != 0), _join("task-", _text(n)), _prs(n + 1)),
    "unique_prs": lambda n, rows: _prs(n + 1),
}


def write(shape: str, folder: Path, rows: int) -> float:
    """The shape's shards (ids under `meta.id`, a second field beside them); MB of parquet."""
    folder.mkdir(parents=True)
    for shard, start in enumerate(range(0, rows, SHARD_ROWS)):
        n = np.arange(start, min(rows, start + SHARD_ROWS), dtype=np.int64)
        meta = pa.StructArray.from_arrays([SHAPES[shape](n, rows), pa.array(n % 7)], ["id", "split"])
        pq.write_table(pa.table({"meta": meta}), folder / f"part-{shard:05d}.parquet", row_group_size=256_000)
    return sum(p.stat().st_size for p in folder.glob("*.parquet")) / 2**20


def run(train: Path, out: Path) -> dict:
    """`overlap compare` in a fresh process: its peak RSS, wall and CPU seconds, and what it counted."""
    demo = ROOT / "data" / "demo"
    command = [sys.executable, "-m", "overlap", "compare", str(train), "cybergym", "--id-column", "meta.id",
               "-d", f"cybergym={demo / 'cybergym'}", "-d", f"arvo={demo / 'arvo'}", "--out", str(out),
               "--format", "json"]
    env = {**os.environ, "OVERLAP_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    with open(out.parent / "stdout.json", "wb") as stdout, open(out.parent / "stderr.txt", "wb") as stderr:
        child = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if child.returncode not in (0, 1):
        raise SystemExit((out.parent / "stderr.txt").read_text()[-3000:])
    summary = json.loads((out / "summary.json").read_text())
    train_block = summary["train"]
    return {"peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "seconds": round(seconds, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1), "items": train_block["items"],
            "keys_by_kind": train_block["keys_by_kind"],
            "problems": {p["what"]: p["count"] for p in train_block["problems"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated, of: " + ", ".join(SHAPES))
    parser.add_argument("--folder", default=tempfile.gettempdir(), help="where the shards are written (deleted "
                        "after each shape; 100M rows take ~1 GB)")
    args = parser.parse_args()
    shapes = args.shapes.split(",")
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        raise SystemExit(f"--shapes: no shape {', '.join(unknown)}; choose from {', '.join(SHAPES)}")
    if "repeats_x16" in shapes and np.gcd(args.rows, PERMUTE) != 1:
        raise SystemExit(f"--rows {args.rows}: a multiple of {PERMUTE}; pick another size")
    bound = BOUND_MB.get(args.rows)
    for shape in shapes:
        work = Path(tempfile.mkdtemp(prefix=f"overlap-shape-{shape}-", dir=args.folder))
        try:
            started = time.perf_counter()
            parquet_mb = write(shape, work / "train", args.rows)
            written = time.perf_counter() - started
            line = {"shape": shape, "rows": args.rows, "parquet_mb": round(parquet_mb, 1),
                    "written_in_s": round(written, 1), **run(work / "train", work / "report")}
            if bound is not None:
                line["under_bound"] = line["peak_rss_mb"] < bound
            print(json.dumps(line), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
