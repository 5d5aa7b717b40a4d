"""`overlap filter` of a SWE-rebench-V2-PRs-shaped parquet set: peak memory, wall time and rows/s.

Builds a synthetic copy of the PRs set's shape in a temp folder (default: 126,300 rows in 40 shards,
about 2.7 GB on disk, row groups of 1,000 rows, long incompressible text and patch columns, a few repeated
instance ids; the generator of `swe_scan_bench.py`) and a Multi-SWE-bench-shaped benchmark of 2,000 PRs of
which `--matched` are PRs of the training set (at the same base commit), then runs
`overlap filter swe-rebench-v2-prs multi-swe-bench --drop id --drop dup` in a child process and prints JSON
with the child's peak RSS, wall time, rows/s, and the filter's own verification line. It also checks the
promise from outside: the output has the same number of shards as the input, no kept row carries a
matched PR, and kept + removed = rows.

    python benchmarks/filter_bench.py                 # full size (needs ~6 GB free in the temp dir)
    python benchmarks/filter_bench.py --rows 5000     # a quick smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from swe_scan_bench import build, scratch_folder, shape_arguments  # noqa: E402  (the same synthetic PRs-shaped set as the key-scan benchmark)


def write_bench(train: Path, folder: Path, matched: int, total: int) -> set[tuple[str, int]]:
    """A Multi-SWE-bench-shaped folder (`<language>/*.jsonl`): `matched` PRs taken from the training set at
    their base commit, the rest made up. Returns the (canonical repo, PR) pairs it shares with `train`."""
    import numpy as np
    import pyarrow.dataset as ds

    keys = ds.dataset(train / "data", format="parquet").to_table(columns=["repo", "pull_number", "base_commit"])
    rng = np.random.default_rng(7)
    chosen = rng.choice(keys.num_rows, size=min(matched, keys.num_rows), replace=False)
    rows, shared = [], set()
    for index in sorted(int(i) for i in chosen):
        repo, number, base = (keys.column(c)[index].as_py() for c in ("repo", "pull_number", "base_commit"))
        org, name = repo.split("/")
        rows.append({"org": org, "repo": name, "number": number, "base": {"sha": base}})
        shared.add((repo.lower(), int(number)))
    for extra in range(total - len(rows)):
        rows.append({"org": "bench-only", "repo": f"project{extra % 50}", "number": 100_000 + extra,
                     "base": {"sha": f"{extra:040x}"}})
    for row in rows:
        row["instance_id"] = f"{row['org']}__{row['repo']}-{row['number']}"
        row["resolved_issues"] = [{"title": "bug", "body": "it breaks"}]
        row["fix_patch"] = ""
    target = folder / "go" / "bench.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return shared


def check_output(out: Path, shared: set[tuple[str, int]], rows: int, shards_in: int) -> dict:
    import pyarrow.dataset as ds

    shards = sorted((out / "data").rglob("*.parquet"))
    kept = ds.dataset(shards, format="parquet").to_table(columns=["repo", "pull_number"])
    leaked = sum(1 for repo, pr in zip(kept.column("repo").to_pylist(), kept.column("pull_number").to_pylist(),
                                       strict=True) if (repo.lower(), int(pr)) in shared)
    removed = sum(1 for _ in open(out / "removed.csv", encoding="utf-8")) - 1
    return {"shards_in": shards_in, "shards_out": len(shards), "kept_rows": kept.num_rows, "removed_rows": removed,
            "kept_plus_removed_is_rows": kept.num_rows + removed == rows, "kept_rows_with_a_matched_pr": leaked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shape_arguments(parser, files=40, text_chars=5600, patch_chars=15800)
    parser.add_argument("--matched", type=int, default=250, help="benchmark PRs taken from the training set")
    args = parser.parse_args()

    need = args.rows * (args.text_chars + args.patch_chars) * 2.2  # the input and the filtered copy
    with scratch_folder("filter-bench-", need, args.tmp, args.keep) as folder:
        t0 = time.perf_counter()
        built = build(folder / "train", args.rows, args.files, args.row_group, args.text_chars, args.patch_chars)
        shared = write_bench(folder / "train", folder / "bench", args.matched, 2000)
        built["build_seconds"] = round(time.perf_counter() - t0, 1)
        print(f"built {built}", file=sys.stderr)
        out = folder / "out"
        command = [sys.executable, "-m", "overlap.cli", "filter", "swe-rebench-v2-prs", "multi-swe-bench",
                   "--data", f"swe-rebench-v2-prs={folder / 'train'}", "--data", f"multi-swe-bench={folder / 'bench'}",
                   "--drop", "id", "--drop", "dup", "--out", str(out)]
        env = dict(os.environ, HF_HUB_OFFLINE="1")
        t1 = time.perf_counter()
        child = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t1
        if child.returncode != 0:
            sys.exit(f"filter failed ({child.returncode}):\n{child.stderr}")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
        verified = next((line for line in child.stdout.splitlines() if line.startswith("verified:")), None)
        result = {
            "dataset": built,
            "filter": {"seconds": round(seconds, 1), "rows_per_second": round(built["rows"] / seconds),
                       "mb_per_second": round(built["bytes_on_disk"] / 1e6 / seconds, 1),
                       "peak_rss_mb": round(peak / 2**20, 1), "verified_line": verified},
            "promise": check_output(out, shared, built["rows"], args.files),
            "target_peak_rss_mb": 1024,
            "under_target": peak < 2**30,
        }
        print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
