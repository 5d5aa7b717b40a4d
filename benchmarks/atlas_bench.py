"""The atlas at scale: N synthetic datasets of R rows each (a mix of OSS-Fuzz ids, CVEs and PR ids with base
commits, drawn from one shared pool so cells overlap), a tenth of them declared benchmarks, mapped by
`overlap atlas`; prints where the time goes (key scans, joins, writing) and the re-run after one dataset
changed (only its cells recomputed).

    python benchmarks/atlas_bench.py                       # 20 datasets x 100k rows
    python benchmarks/atlas_bench.py --datasets 100        # the full 100 x 100k
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def _ids(rng: random.Random, rows: int, pool: int) -> list[str]:
    out = []
    for _ in range(rows):
        n = rng.randrange(pool)
        kind = n % 3
        if kind == 0:
            out.append(f"arvo:{100000 + n}")
        elif kind == 1:
            out.append(f"CVE-2020-{10000 + n}")
        else:
            out.append(f"https://github.com/org{n % 997}/repo{n % 31}/pull/{n}")
    return out


def write_datasets(root: Path, count: int, rows: int, seed: int) -> Path:
    rng = random.Random(seed)
    declarations = []
    for i in range(count):
        role = "benchmark" if i % 10 == 0 else "training"
        size = rows // 20 if role == "benchmark" else rows  # benchmarks are small, training sets large
        path = root / f"set{i:03d}.parquet"
        pq.write_table(pa.table({"task": _ids(rng, size, rows * 4)}), path)
        declarations.append(f'[[dataset]]\nname = "set{i:03d}"\ntitle = "synthetic {role} set {i}"\n'
                            f'role = "{role}"\npath = "{path}"\n[dataset.columns]\nid = "task"\n')
    registry = root / "atlas-bench.toml"
    registry.write_text("\n".join(declarations), encoding="utf-8")
    return registry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=20)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OVERLAP_OFFLINE", "1")
    from overlap.api import atlas as atlas_module
    from overlap.outputs.ship.atlas_repo import write_atlas
    from overlap.sources.registry import add_declarations

    with tempfile.TemporaryDirectory(prefix="atlas-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        registry = write_datasets(root, args.datasets, args.rows, args.seed)
        names = [s.name for s in add_declarations([registry])]
        print(f"{args.datasets} datasets ({sum(1 for n in names if int(n[3:]) % 10 == 0)} benchmarks), "
              f"{args.rows:,} rows per training set; written in {time.perf_counter() - start:.1f} s")
        timings: dict[str, float] = {"read": 0.0, "join": 0.0}
        read, cell = atlas_module._read, atlas_module._cell

        def timed_read(*a, **k):
            t = time.perf_counter()
            try:
                return read(*a, **k)
            finally:
                timings["read"] += time.perf_counter() - t

        def timed_cell(*a, **k):
            t = time.perf_counter()
            try:
                return cell(*a, **k)
            finally:
                timings["join"] += time.perf_counter() - t

        atlas_module._read, atlas_module._cell = timed_read, timed_cell
        cache = root / "cache"
        start = time.perf_counter()
        demo_arvo = Path(__file__).resolve().parents[1] / "data" / "demo" / "arvo"  # the old→new id mapping
        result = atlas_module.atlas(names, data={"arvo": demo_arvo}, cache=cache, pool="none")
        total = time.perf_counter() - start
        t = time.perf_counter()
        write_atlas(result, root / "out")
        written = time.perf_counter() - t
        rows = sum(len(e.dataset.items) for e in result.entries)
        print(f"first run: {len(result.cells)} cells in {total:.1f} s: key scans {timings['read']:.1f} s "
              f"({rows / max(timings['read'], 1e-9):,.0f} rows/s), joins {timings['join']:.1f} s "
              f"({timings['join'] / max(len(result.recomputed), 1) * 1000:.0f} ms per cell), other "
              f"{total - timings['read'] - timings['join']:.1f} s; writing the folder {written:.1f} s")
        changed = root / "set001.parquet"
        table = pq.read_table(changed)
        pq.write_table(table.slice(0, table.num_rows - 1), changed)
        timings.update(read=0.0, join=0.0)
        start = time.perf_counter()
        again = atlas_module.atlas(names, data={"arvo": demo_arvo}, cache=cache, pool="none")
        print(f"after one dataset changed: {len(again.recomputed)} of {len(again.cells)} cells recomputed in "
              f"{time.perf_counter() - start:.1f} s (key scans {timings['read']:.1f} s, joins {timings['join']:.1f} s)")
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
