"""The atlas at scale: N synthetic datasets of R rows each (a mix of OSS-Fuzz ids, CVEs and PR URLs in one
column, drawn from one shared pool so cells overlap), a tenth of them declared benchmarks, mapped by
`overlap atlas`; prints where the time goes (key scans, joins, writing) and the re-run after one dataset
changed (only its cells recomputed), and the peak RSS. Every training set here is read by its id column alone,
so the atlas streams each once against the benchmarks (`overlap.api.atlas_stream`); benchmarks are read whole.

    python benchmarks/atlas_bench.py                       # 20 datasets x 100k rows
    python benchmarks/atlas_bench.py --datasets 100        # the full 100 x 100k
    python benchmarks/atlas_bench.py --held                # every training set read whole (atlas(stream=False))
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
    parser.add_argument("--held", action="store_true", help="read every training set whole, as before streaming")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OVERLAP_OFFLINE", "1")
    from overlap.sources.registry.registry import add_declarations

    with tempfile.TemporaryDirectory(prefix="atlas-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        registry = write_datasets(root, args.datasets, args.rows, args.seed)
        names = [s.name for s in add_declarations([registry])]
        print(f"{args.datasets} datasets ({sum(1 for n in names if int(n[3:]) % 10 == 0)} benchmarks), "
              f"{args.rows:,} rows per training set; written in {time.perf_counter() - start:.1f} s")
        demo_arvo = Path(__file__).resolve().parents[1] / "data" / "demo" / "arvo"  # the old→new id mapping

        def change() -> None:
            changed = root / "set001.parquet"
            table = pq.read_table(changed)
            pq.write_table(table.slice(0, table.num_rows - 1), changed)

        measure(names, {"arvo": demo_arvo}, root, change, "one training set changed", stream=not args.held)


def measure(names: list[str], data: dict, root: Path, change, changed: str, stream: bool = True) -> None:
    """Run the atlas of `names` (cache and folder under `root`), print where the time went; then `change()`
    the data, run it again and print what was recomputed."""
    from overlap.api import atlas as atlas_module
    from overlap.api import atlas_stream
    from overlap.outputs.ship.atlas_repo import write_atlas

    timings = _time_stages(atlas_module, atlas_stream)
    start = time.perf_counter()
    result = atlas_module.atlas(names, data=data, cache=root / "cache", pool="none", stream=stream)
    total = time.perf_counter() - start
    mapped_peak = _peak_mb()
    t = time.perf_counter()
    write_atlas(result, root / "out")
    written = time.perf_counter() - t
    print(f"first run: {len(result.cells)} cells ({result.pairs_table().num_rows:,} pairs) in {total:.1f} s; "
          f"{_stages(timings, result, total)}; peak RSS {mapped_peak:,.0f} MB; writing the folder {written:.1f} s "
          f"(peak RSS then {_peak_mb():,.0f} MB)")
    change()
    for stage in timings.values():
        stage.update(seconds=0.0, calls=0)
    start = time.perf_counter()
    again = atlas_module.atlas(names, data=data, cache=root / "cache", pool="none", stream=stream)
    total = time.perf_counter() - start
    print(f"after {changed}: {len(again.recomputed)} of {len(again.cells)} cells recomputed in {total:.1f} s; "
          f"{_stages(timings, again, total)}")
    print(f"peak RSS {_peak_mb():,.0f} MB")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(owner, name: str, timing: dict) -> None:
    """Replace `owner.name` by the same function that adds its wall time and calls to `timing`."""
    wrapped = getattr(owner, name)

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return wrapped(*args, **kwargs)
        finally:
            timing["seconds"] += time.perf_counter() - t
            timing["calls"] += 1

    setattr(owner, name, timed)


def _time_stages(atlas_module, atlas_stream) -> dict[str, dict]:
    """The atlas's stages, timed where the code runs them: datasets read whole (the benchmarks' key scans,
    or their key cache; every dataset with --held), training sets streamed against the benchmarks, and the
    cells' joins."""
    timings = {stage: {"seconds": 0.0, "calls": 0} for stage in ("read", "stream", "join")}
    _timed(atlas_module, "_read", timings["read"])
    _timed(atlas_stream.StreamedSide, "scan", timings["stream"])
    _timed(atlas_module, "_cell", timings["join"])
    return timings


def _stages(timings: dict[str, dict], result, total: float) -> str:
    read, stream, join = timings["read"], timings["stream"], timings["join"]
    streamed_rows = sum(f.rows or 0 for e in result.entries if e.dataset.totals is not None and not e.cached
                        for f in e.dataset.provenance.files)
    return (f"read whole {read['seconds']:.1f} s ({read['calls']} datasets), training sets streamed "
            f"{stream['seconds']:.1f} s ({stream['calls']} scans, {streamed_rows / max(stream['seconds'], 1e-9):,.0f} "
            f"rows/s), joins {join['seconds']:.1f} s ({join['calls']} cells, "
            f"{join['seconds'] / max(join['calls'], 1) * 1000:.0f} ms each), other "
            f"{total - read['seconds'] - stream['seconds'] - join['seconds']:.1f} s")

if __name__ == "__main__":
    main()
