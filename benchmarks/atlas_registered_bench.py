"""The atlas of the registered datasets at their real sizes: each registered set's test fixture (a folder laid
out like its Hub repository, in its real schema) grown to the set's row count by copies whose ids, PR numbers
and commits are made new per copy, so the sets overlap as their fixtures do and every copy is its own task;
then `overlap atlas` on all of them (`-d NAME=FOLDER`), a re-run after one set changed, and where the time
goes. The real files are not here (no network); the shapes are theirs.

    python benchmarks/atlas_registered_bench.py             # real sizes
    python benchmarks/atlas_registered_bench.py --scale 0.1 # a tenth of them
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "swe"), str(ROOT / "tests" / "sources"), str(ROOT / "benchmarks")]

# Row counts as the dataset cards give them (rounded where a card rounds); a set missing here keeps its
# fixture's size. Per set, every file of its fixture is grown by the same factor.
REAL_ROWS = {
    "swe-bench": 2_294 + 225, "swe-bench-verified": 500, "swe-bench-lite": 300 + 23,
    "swe-bench-multilingual": 300, "swe-bench-multimodal": 510 + 102, "swe-bench-pro": 731,
    "swe-polybench": 2_110, "swe-polybench-verified": 382, "multi-swe-bench": 1_632,
    "swe-gym": 2_438, "swe-gym-raw": 66_894, "swe-smith": 50_137, "r2e-gym-subset": 4_578,
    "multi-swe-rl": 4_723, "swe-rebench-v1": 21_336, "swe-rebench-v2": 32_000, "swe-bench-live": 1_565,
}
NUMBER_FIELDS = ("pull_number", "number", "pr")  # a task's PR number: a new one per copy
ID_FIELDS = ("instance_id",)  # a task's id: its last digit run made new per copy
SHA = re.compile(r"^[0-9a-f]{40}$")
LAST_DIGITS = re.compile(r"(\d+)(?!.*\d)")


def _copy(row: dict, k: int) -> dict:
    """Copy k of a row (k = 0: the row): PR numbers + k million, the last digit run of the id likewise, and
    every full commit sha hashed with k, so a copy shares no key with its row and the sets' overlap is
    their fixtures' overlap, k times."""
    if k == 0:
        return row
    out = dict(row)
    for name, value in row.items():
        if isinstance(value, str) and SHA.match(value):
            out[name] = hashlib.sha1(f"{value}:{k}".encode()).hexdigest()
        elif name in NUMBER_FIELDS and isinstance(value, int) and not isinstance(value, bool):
            out[name] = value + k * 1_000_000
        elif name in NUMBER_FIELDS and isinstance(value, str) and value.isdigit():
            out[name] = str(int(value) + k * 1_000_000)
        elif name in ID_FIELDS and isinstance(value, str):
            out[name] = LAST_DIGITS.sub(lambda m: str(int(m.group(1)) + k * 1_000_000), value, count=1)
    return out


def _grow_file(path: Path, factor: int) -> int:
    """Rewrite one data file (parquet, JSON lines or CSV) with `factor` copies of each row; its rows after."""
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        rows = table.to_pylist()
        grown = [_copy(r, k) for k in range(factor) for r in rows]
        pq.write_table(pa.Table.from_pylist(grown, schema=table.schema), path)
        return len(grown)
    if path.suffix == ".jsonl":
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        grown = []
        for k in range(factor):
            for line in lines:
                try:
                    grown.append(json.dumps(_copy(json.loads(line), k)))
                except ValueError:
                    grown.append(line)  # a fixture's deliberately broken line stays as it is
        path.write_text("\n".join(grown) + "\n", encoding="utf-8")
        return len(grown)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames or [], list(reader)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(_copy(r, k) for k in range(factor) for r in rows)
    return len(rows) * factor


def _rows(path: Path) -> int:
    if path.suffix == ".parquet":
        return pq.read_metadata(path).num_rows
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            return sum(1 for _ in csv.DictReader(handle))
    return sum(1 for line in path.open(encoding="utf-8") if line.strip())


def _grow(name: str, folder: Path, scale: float) -> int:
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".parquet", ".jsonl", ".csv"))
    fixture_rows = sum(_rows(p) for p in files)
    target = REAL_ROWS.get(name)
    factor = max(1, math.ceil(target * scale / max(fixture_rows, 1))) if target else 1
    return sum(_grow_file(p, factor) for p in files)


def write_sets(root: Path, scale: float) -> dict[str, Path]:
    from coverage_fixtures import write_coverage
    from pr_set_fixtures import write_pr_sets
    from swe_fixtures import write_all

    data: dict[str, Path] = {}
    for writer, folder in ((write_all, "swe"), (write_coverage, "coverage"), (write_pr_sets, "pr-sets")):
        data |= writer(root / folder)  # a set two writers lay out: the later one's (the same schema)
    rows = {name: _grow(name, folder, scale) for name, folder in sorted(data.items())}
    print("rows per set:", json.dumps(rows))
    demo = ROOT / "data" / "demo"
    return data | {"cybergym": demo / "cybergym", "arvo": demo / "arvo"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the real row counts")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OVERLAP_OFFLINE", "1")
    from atlas_bench import measure

    with tempfile.TemporaryDirectory(prefix="atlas-registered-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        data = write_sets(root / "data", args.scale)
        names = sorted(n for n in data if n != "arvo")
        print(f"{len(names)} registered sets written in {time.perf_counter() - start:.1f} s")

        def change() -> None:  # a pin bump of one training set
            changed = next((data["swe-gym"] / "data").glob("*.parquet"))
            table = pq.read_table(changed)
            pq.write_table(table.slice(0, table.num_rows - 1), changed)

        measure(names, data, root, change, "swe-gym changed")


if __name__ == "__main__":
    main()
