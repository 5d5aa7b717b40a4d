"""Key scan of a SWE-rebench-V2-PRs-shaped parquet set: peak memory and wall time.

Builds a synthetic copy of the PRs set's shape in a temp folder (default: 126,300 rows, about 2.1 GB on
disk, several files with row groups of 1,000 rows; long incompressible `problem_statement` and `patch`
columns; a few repeated instance ids), then runs in a fresh child process:

1. the key scan, `load_dataset("swe-rebench-v2-prs", {...: folder})` (key columns only, by row group);
2. `fetch_columns` of text + patch for 1,000 random items (what a compare does for matched rows).

and prints JSON with the child's peak RSS (VmHWM) and wall times. The temp folder is deleted afterwards
(unless --keep). Target: key-scan peak RSS under 1 GB.

    python benchmarks/swe_scan_bench.py              # full size (needs ~2.3 GB free in the temp dir)
    python benchmarks/swe_scan_bench.py --rows 5000  # a quick smoke run
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, os, random, sys, time

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return None

folder, sample = sys.argv[1], int(sys.argv[2])
import pandas, pyarrow.parquet  # noqa: F401  (import cost is not part of the scan)
from overlap.sources.load import load_dataset
from overlap.sources.registry.swe import fetch_columns
before = rss("VmRSS")
t0 = time.perf_counter()
dataset = load_dataset("swe-rebench-v2-prs", {"swe-rebench-v2-prs": __import__("pathlib").Path(folder)})
scan_s = time.perf_counter() - t0
scan_peak = rss("VmHWM")
ids = dataset.items["item_id"].tolist()
random.Random(7).shuffle(ids)
t1 = time.perf_counter()
frame = fetch_columns(dataset, ids[:sample])
fetch_s = time.perf_counter() - t1
print(json.dumps({
    "rss_after_imports_mb": round(before / 2**20, 1),
    "scan_seconds": round(scan_s, 2),
    "scan_peak_rss_mb": round(scan_peak / 2**20, 1),
    "items": len(dataset.items),
    "keys": len(dataset.keys),
    "problems": {p.what: p.count for p in dataset.problems},
    "fetch_items": len(frame),
    "fetch_text_chars": int(frame["text_problem_statement"].str.len().sum() + frame["patch"].str.len().sum()),
    "fetch_seconds": round(fetch_s, 2),
    "peak_rss_after_fetch_mb": round(rss("VmHWM") / 2**20, 1),
}))
"""


def _strings(rng, lengths, alphabet):
    """A pyarrow string array of random text with the given lengths, built without Python strings."""
    import numpy as np
    import pyarrow as pa

    total = int(lengths.sum())
    data = alphabet[rng.integers(0, len(alphabet), size=total, dtype=np.uint8)]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(data))


def build(folder: Path, rows: int, files: int, row_group: int, text_chars: int, patch_chars: int) -> dict:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(20260101)
    letters = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n+-_=();{}[]<>.,:/"
    alphabet = np.frombuffer(letters, dtype=np.uint8)
    repos = [f"owner{i % 997}/Repo-{i}" for i in range(3000)]
    schema = pa.schema([("instance_id", pa.string()), ("repo", pa.string()), ("pull_number", pa.int64()),
                        ("base_commit", pa.string()), ("problem_statement", pa.string()), ("patch", pa.string()),
                        ("created_at", pa.string())])
    per_file = -(-rows // files)
    written = 0
    previous_ids: list[str] = []
    for index in range(files):
        path = folder / "data" / f"train-{index:05d}-of-{files:05d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(path, schema, compression="snappy") as writer:
            left = min(per_file, rows - written)
            while left > 0:
                n = min(row_group, left)
                repo_idx = rng.integers(0, len(repos), size=n)
                prs = rng.integers(1, 60000, size=n)
                repo = [repos[i] for i in repo_idx]
                ids = [f"{r.replace('/', '__').lower()}-{p}" for r, p in zip(repo, prs, strict=True)]
                if previous_ids:  # ~0.3% repeated instance ids, as in the real set
                    for j in rng.integers(0, n, size=max(1, n // 300)):
                        ids[j] = previous_ids[int(rng.integers(0, len(previous_ids)))]
                previous_ids = ids[:50]
                bases = [rng.bytes(20).hex() for _ in range(n)]
                text_len = rng.integers(text_chars // 2, text_chars * 3 // 2, size=n)
                patch_len = rng.integers(patch_chars // 2, patch_chars * 3 // 2, size=n)
                batch = pa.record_batch([
                    pa.array(ids), pa.array(repo), pa.array(prs.astype("int64")), pa.array(bases),
                    _strings(rng, text_len, alphabet), _strings(rng, patch_len, alphabet),
                    pa.array(["2025-01-01T00:00:00Z"] * n),
                ], schema=schema)
                writer.write_batch(batch, row_group_size=row_group)
                left -= n
                written += n
    size = sum(p.stat().st_size for p in folder.rglob("*.parquet"))
    return {"rows": written, "files": files, "row_group_rows": row_group, "bytes_on_disk": size,
            "gb_on_disk": round(size / 1e9, 3)}


def shape_arguments(parser: argparse.ArgumentParser, files: int, text_chars: int, patch_chars: int) -> None:
    """The options of a synthetic PRs-shaped set (shared by the benchmarks that build one)."""
    parser.add_argument("--rows", type=int, default=126_300)
    parser.add_argument("--files", type=int, default=files)
    parser.add_argument("--row-group", type=int, default=1000)
    parser.add_argument("--text-chars", type=int, default=text_chars, help="mean problem_statement length")
    parser.add_argument("--patch-chars", type=int, default=patch_chars, help="mean patch length")
    parser.add_argument("--tmp", default=None, help="parent folder of the temp folder [default: system temp]")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic folder")


@contextlib.contextmanager
def scratch_folder(prefix: str, need_bytes: float, parent: str | None, keep: bool):
    """A temp folder for a synthetic set, refused up front when the disk cannot hold it; removed after
    (unless `keep`)."""
    free = shutil.disk_usage(parent or tempfile.gettempdir()).free
    if free < need_bytes:
        sys.exit(f"not enough free disk: need about {need_bytes / 1e9:.1f} GB, have {free / 1e9:.1f} GB")
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield folder
    finally:
        if keep:
            print(f"kept {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shape_arguments(parser, files=12, text_chars=4500, patch_chars=12500)
    parser.add_argument("--fetch", type=int, default=1000, help="items whose text + patch are fetched after")
    args = parser.parse_args()

    need = args.rows * (args.text_chars + args.patch_chars) * 1.1
    with scratch_folder("swe-scan-bench-", need, args.tmp, args.keep) as folder:
        t0 = time.perf_counter()
        built = build(folder, args.rows, args.files, args.row_group, args.text_chars, args.patch_chars)
        built["build_seconds"] = round(time.perf_counter() - t0, 1)
        print(f"built {built}", file=sys.stderr)
        env = dict(os.environ, HF_HUB_OFFLINE="1")
        child = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(args.fetch)], env=env,
                               capture_output=True, text=True, check=False)
        if child.returncode != 0:
            sys.exit(f"scan failed:\n{child.stderr}")
        measured = json.loads(child.stdout.strip().splitlines()[-1])
        result = {"dataset": built, "scan": measured, "target_peak_rss_mb": 1024,
                  "under_target": measured["scan_peak_rss_mb"] < 1024}
        print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
