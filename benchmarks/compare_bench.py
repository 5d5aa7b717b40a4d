"""End-to-end `overlap compare` at the real cyber datasets' scale, offline: wall time per stage.

Writes deterministic synthetic datasets in the real layouts to a temp folder — a MiMo-shaped training set
(1,000 rows, old and new OSS-Fuzz ids), CyberGym-shaped tasks.json (1,507 tasks with per-task error.txt
and patch.diff), SEC-bench-shaped jsonl (100 oss + 200 cve), an ARVO mapping (71,768 pairs) and an
ARVO-Meta-shaped pool (4,993 bugs) — then times `compare` (ids, baselines with 100k permutations,
evidence, text) and the report writing, and prints JSON.

    python benchmarks/compare_bench.py
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

PROJECTS = [f"proj{i:03d}" for i in range(275)]


def make(root: Path, seed: int) -> dict[str, Path]:
    rng = random.Random(seed)
    old_ids = rng.sample(range(1000, 71768 * 9), 71768)
    mapping = {old: 42_000_000 + i for i, old in enumerate(sorted(old_ids))}
    arvo = root / "arvo" / "arvo" / "oss_fuzz_mappings.csv"
    arvo.parent.mkdir(parents=True)
    arvo.write_text("".join(f"{o},{n}\n" for o, n in mapping.items()))
    pool = rng.sample(sorted(mapping), 4993)
    project = {old: PROJECTS[rng.randrange(len(PROJECTS))] for old in pool}
    meta = root / "arvo-meta" / "archive_data" / "meta"
    meta.mkdir(parents=True)
    for old in pool:
        content = (f"Crash Type: Heap-buffer-overflow READ 1\nCrash State:\n  fn_{old}\n  caller_{old % 7}\n  \n")
        (meta / f"{old}.json").write_text(json.dumps({
            "localId": old, "project": project[old], "fuzzer": "libfuzzer", "sanitizer": "asan",
            "crash_type": "Heap-buffer-overflow READ 1",
            "fix_commit": hashlib.sha1(str(old).encode()).hexdigest(),
            "report": {"comments": [{"content": content}]}}))
    bench_ids = rng.sample(pool, 1368)
    tasks, cg = [], root / "cybergym"
    for old in bench_ids:
        tasks.append({"task_id": f"arvo:{old}", "project_name": project[old],
                      "vulnerability_description": f"A heap overflow in {project[old]} when fn_{old} parses input.",
                      "task_difficulty": {}})
        folder = cg / "data" / "arvo" / str(old)
        folder.mkdir(parents=True)
        (folder / "error.txt").write_text(
            f"==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1 at pc 0x2 bp 0x3 sp 0x4\n"
            f"    #0 0x1 in fn_{old} /src/p/src/f{old % 5}.c:10:3\n"
            f"SUMMARY: AddressSanitizer: heap-buffer-overflow /src/p/src/f{old % 5}.c:10:3 in fn_{old}\n")
        path = f"src/f{old % 5}.c"
        (folder / "patch.diff").write_text(
            f"diff --git a/{path} b/{path}\nindex {old:07x}..{old + 1:07x} 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -1,3 +1,3 @@\n ctx\n-bad_{old}();\n+good_{old}();\n ctx\n")
    for i in range(139):
        tasks.append({"task_id": f"oss-fuzz:{380_000_000 + i}", "project_name": PROJECTS[i % 275],
                      "vulnerability_description": "Fix bounds check.", "task_difficulty": {}})
    (cg / "tasks.json").write_text(json.dumps(tasks))
    train_ids = rng.sample(pool, 710) + [rng.choice(sorted(mapping)) for _ in range(290)]
    rows = []
    for i, old in enumerate(train_ids):
        number = mapping[old] if i % 2 else old  # half the ids in each scheme
        rows.append({"prompt": [{"role": "user", "content": f"AddressSanitizer: heap-buffer-overflow in function "
                                                            f"`fn_{old}` in file `src/f{old % 5}.c`"}],
                     "extra_info": {"instance_id": f"arvo_{number}", "instance_json": "{}"}})
    mimo = root / "mimo"
    mimo.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), mimo / "cyber.parquet")
    return {"mimo-cyber": mimo, "cybergym": cg, "arvo": root / "arvo", "arvo-meta": root / "arvo-meta"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from overlap.api import compare
    from overlap.outputs.report.result_folders import write_compare_report

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        data = make(Path(tmp), args.seed)
        made = time.perf_counter() - start
        start = time.perf_counter()
        result = compare("mimo-cyber", ["cybergym"], data=data, seed=args.seed)
        compared = time.perf_counter() - start
        start = time.perf_counter()
        write_compare_report(result, Path(tmp) / "report")
        written = time.perf_counter() - start
        bench = result.summary()["benches"][0]
        json.dump({
            "train_items": len(result.train.items),
            "bench_items": bench["bench_items"], "pairs": bench["pairs"],
            "bench_items_matched": bench["bench_items_matched"],
            "plain_join_bench_items": bench["plain_join"]["bench_items_matched"],
            "baseline_p_within_project": bench["baselines"]["stratified"]["p_upper"],
            "crash_pairs_graded": bench["evidence"]["crash"]["pairs"],
            "seconds": {"make_data": round(made, 2), "compare": round(compared, 2), "write_report": round(written, 2)},
        }, sys.stdout, indent=2)
        print()


if __name__ == "__main__":
    main()
