"""Vectorised key scan (`overlap.sources.rows.generic.read_generic`): rows/s, seconds and peak RSS.

Builds, seeded, in a scratch folder outside the repo (deleted afterwards unless --keep):

1. a 250k-row SWE parquet (instance_id, repo, base_commit, short problem_statement and patch);
2. a SWE-rebench-V2-PRs-shaped parquet set of about 2.7 GB (`--size-gb`), written shard by shard, row group
   by row group (never held in RAM), most of its bytes in long text columns the key scan skips;

then runs each key scan in a fresh child process and prints JSON: rows, seconds, rows/s and peak RSS
(resource.getrusage) of `scan_keys` (ids recognised, repo / PR / base-commit keys, item columns, as Arrow
tables), then the seconds of `read_generic` (the same scan plus the validated pandas Dataset), then those of the
registered adapter on the same files (`swe-rebench-v2`, `swe-rebench-v2-prs`: their column-wise key scan and
Dataset, files always hashed; its peak RSS is the process's so far), and whether the targets are met (250k
rows < 1 s; 2.7 GB < 30 s with peak RSS < 1 GB).

    python benchmarks/keyscan_bench.py                  # full size (needs ~3 GB free in the temp dir)
    python benchmarks/keyscan_bench.py --size-gb 0.2    # a quick run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from swe_scan_bench import build, scratch_folder  # noqa: E402  (the PRs-shaped generator, shared)

CHILD = r"""
import json, resource, sys, time
import pandas, pyarrow.parquet  # noqa: F401  (import cost is not part of the scan)
from overlap.sources.rows.generic import read_generic, scan_keys
path, pr, hash_files, adapter = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1", sys.argv[4]
options = {"id_column": "instance_id", "repo_column": "repo", "base_column": "base_commit"}
if pr:
    options["pr_column"] = "pull_number"
import overlap.sources.formats.batches as batches
if not hash_files:
    original = batches.open_batches
    batches.open_batches = lambda *a, **k: original(*a, **{**k, "hash_files": False})
    import overlap.sources.rows.generic as generic
    generic.open_batches = batches.open_batches
peak = lambda: round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
t0 = time.perf_counter()
scan = scan_keys(path, **options)  # the key scan: Arrow items + keys
seconds = time.perf_counter() - t0
rows = scan.items.num_rows
out = {"rows": rows, "keys": scan.keys.num_rows, "seconds": round(seconds, 3), "rows_per_s": round(rows / seconds),
       "peak_rss_mb": peak(), "recognised": scan.report.to_dict()["recognised"].get("github_pr", {}).get("count")}
del scan
t1 = time.perf_counter()
dataset = read_generic(path, **options)  # the same scan + the Dataset (pandas Items/Keys, validated)
out["dataset_seconds"] = round(time.perf_counter() - t1, 3)
out["dataset_items"] = len(dataset.items)
out["dataset_peak_rss_mb"] = peak()
del dataset
from pathlib import Path
from overlap.sources.load import load_dataset
t2 = time.perf_counter()
registered = load_dataset(adapter, {adapter: Path(path)})  # the registered adapter's key scan (files hashed)
out["registered"] = {"adapter": adapter, "seconds": round(time.perf_counter() - t2, 3),
                     "items": len(registered.items), "keys": len(registered.keys), "peak_rss_mb": peak()}
print(json.dumps(out))
"""


def run_child(path: Path, pr: bool, hash_files: bool, adapter: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    child = subprocess.run([sys.executable, "-c", CHILD, str(path), "1" if pr else "0", "1" if hash_files else "0",
                            adapter],
                           env=env, capture_output=True, text=True, check=False)
    if child.returncode != 0:
        sys.exit(f"scan failed:\n{child.stderr}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def build_swe(path: Path, rows: int) -> None:
    """A SWE-rebench-V2-shaped parquet (no PR column: the PR is in the id), written in row groups."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(20260102)
    repos = [f"Owner{i % 1499}/repo-{i}" for i in range(6000)]
    schema = pa.schema([("instance_id", pa.string()), ("repo", pa.string()), ("base_commit", pa.string()),
                        ("problem_statement", pa.string()), ("patch", pa.string()), ("language", pa.string())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, 50_000):
            n = min(50_000, rows - start)
            repo = [repos[i] for i in rng.integers(0, len(repos), size=n)]
            prs = rng.integers(1, 90_000, size=n)
            ids = [f"{r.replace('/', '__').lower()}-{p}" for r, p in zip(repo, prs, strict=True)]
            bases = [rng.bytes(20).hex() for _ in range(n)]
            writer.write_batch(pa.record_batch([pa.array(ids), pa.array(repo), pa.array(bases),
                                                pa.array(["Issue text"] * n), pa.array(["diff --git"] * n),
                                                pa.array(["rust"] * n)], schema=schema), row_group_size=10_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swe-rows", type=int, default=250_000)
    parser.add_argument("--size-gb", type=float, default=2.7, help="size of the PRs-shaped set on disk")
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--row-group", type=int, default=1000)
    parser.add_argument("--no-hash", action="store_true", help="leave out the sha256 of each file (provenance)")
    parser.add_argument("--tmp", default=None, help="parent of the scratch folder [default: system temp]")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    text_chars, patch_chars = 5000, 16000  # ~21 kB of text per row, like the real set (2.7 GB / 126k rows)
    prs_rows = max(1000, int(args.size_gb * 1e9 / (text_chars + patch_chars + 150)))
    need = args.size_gb * 1.1e9 + 50e6
    with scratch_folder("keyscan-bench-", need, args.tmp, args.keep) as folder:
        swe = folder / "swe.parquet"
        t0 = time.perf_counter()
        build_swe(swe, args.swe_rows)
        prs = folder / "prs"
        built = build(prs, prs_rows, args.files, args.row_group, text_chars, patch_chars)
        print(f"built in {time.perf_counter() - t0:.0f} s: swe {swe.stat().st_size / 1e6:.0f} MB, prs {built}",
              file=sys.stderr)
        results = {"swe_250k": run_child(swe, pr=False, hash_files=not args.no_hash, adapter="swe-rebench-v2"),
                   "prs": run_child(prs, pr=True, hash_files=not args.no_hash, adapter="swe-rebench-v2-prs")}
        results["prs"]["gb_on_disk"] = built["gb_on_disk"]
        results["targets"] = {
            "swe_under_1s": results["swe_250k"]["seconds"] < 1,
            "prs_under_30s": results["prs"]["seconds"] < 30,
            "prs_peak_rss_under_1gb": results["prs"]["peak_rss_mb"] < 1024,
        }
        print(json.dumps(results, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
