"""The benchmark-key lookup behind the datatrove step (`overlap.api.bench_keys`, used by
`overlap.integrations.datatrove.OverlapFilter`): the keys of the demo CyberGym built once, then N generated ids
(OSS-Fuzz old and new, CVEs, SWE instance ids, ids no scheme reads) matched in batches; prints the build time
and ids per second per batch size.

    python benchmarks/bench_keys_bench.py                   # 200k ids, batches of 1,000 and 10,000
    python benchmarks/bench_keys_bench.py --ids 1000000
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from overlap.api.bench_keys import bench_keys

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


def generated_ids(n: int, seed: int = 0) -> list[str]:
    draw = random.Random(seed)
    forms = (lambda: f"arvo:{draw.randint(1, 60000)}", lambda: f"oss-fuzz:{draw.randint(42400000, 42500000)}",
             lambda: f"django__django-{draw.randint(1, 20000)}", lambda: f"CVE-2023-{draw.randint(1, 99999):05d}",
             lambda: f"task-{draw.randint(1, 10**6)}")
    return [draw.choice(forms)() for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, default=200_000)
    parser.add_argument("--batch", type=int, action="append")
    args = parser.parse_args()
    start = time.perf_counter()
    keys = bench_keys(["cybergym"], data={"cybergym": DEMO / "cybergym", "arvo": DEMO / "arvo"})
    print(f"keys built in {time.perf_counter() - start:.3f} s")
    ids = generated_ids(args.ids)
    for batch in args.batch or [1_000, 10_000]:
        start = time.perf_counter()
        matched = 0
        for first in range(0, len(ids), batch):
            matched += sum(1 for found in keys.match(ids[first:first + batch]) if found)
        seconds = time.perf_counter() - start
        print(f"batches of {batch:,}: {len(ids):,} ids in {seconds:.2f} s, {len(ids) / seconds:,.0f} ids/s, "
              f"{matched} matched")


if __name__ == "__main__":
    main()
