"""Same-fix join and crash grading at CyberGym scale: wall time and how many patches were parsed.

Builds a deterministic synthetic workload shaped like SEC-bench (train: 300 items with a patch and a
sanitizer report) against CyberGym (bench: 1,507 tasks with patch.diff / error.txt) over 120 OSS-Fuzz
projects: a tenth of the train items share their fix with one bench task of the same project, the rest
have fixes of their own touching the same files. Prints JSON: candidate pairs, pairs compared, pairs
sharing a fix, parses per side (each patch must be parsed once: O(N), never O(pairs)), and times.

    python benchmarks/evidence_bench.py
    python benchmarks/evidence_bench.py --train 3000 --bench 15000 --projects 400
"""

from __future__ import annotations

import argparse
import json
import random
import time

import pandas as pd

from overlap.evidence.crash import control_rate, grade_crash, parse_crash
from overlap.evidence.fixjoin import join_fixes
from overlap.evidence.patches import PatchBook


def patch(path: str, tag: str, lines: int = 6) -> str:
    body = "".join(f"-    old_{tag}_{i}();\n+    new_{tag}_{i}();\n" for i in range(lines))
    return (f"diff --git a/{path} b/{path}\nindex {tag[:7]}..{tag[-7:]} 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -10,{lines + 2} +10,{lines + 2} @@\n ctx\n{body} ctx\n")


def report(function: str, path: str) -> str:
    return (f"==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020 at pc 0x1 bp 0x2 sp 0x3\n"
            f"    #0 0x1 in {function} /src/p/{path}:10:3\n    #1 0x2 in LLVMFuzzerTestOneInput /src/p/fuzz.c:5:1\n"
            f"SUMMARY: AddressSanitizer: heap-buffer-overflow /src/p/{path}:10:3 in {function}\n")


def workload(n_train: int, n_bench: int, n_projects: int, seed: int):
    rng = random.Random(seed)
    projects = [f"project{i:03d}" for i in range(n_projects)]
    bench = []
    for i in range(n_bench):
        project = projects[i % n_projects]
        path = f"src/file{rng.randrange(4)}.c"
        bench.append((f"arvo:{100000 + i}", project, patch(path, f"{i:08x}{i:08x}"), report(f"fn{i}", path)))
    train = []
    for i in range(n_train):
        if i % 10 == 0:  # a copy of one bench task's fix
            _, project, text, crash = bench[(i * 7) % n_bench]
        else:
            project = projects[rng.randrange(n_projects)]
            path = f"src/file{rng.randrange(4)}.c"
            text, crash = patch(path, f"{i + 10**7:08x}{i:08x}"), report(f"tfn{i}", path)
        train.append((f"{project}.cve-2024-{i:05d}", project, text, crash))
    frame = lambda rows: pd.DataFrame(rows, columns=["item_id", "project", "patch", "crash"])  # noqa: E731
    return frame(train), frame(bench)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=300)
    parser.add_argument("--bench", type=int, default=1507)
    parser.add_argument("--projects", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train, bench = workload(args.train, args.bench, args.projects, args.seed)
    tbook = PatchBook(dict(zip(train["item_id"], train["patch"], strict=True)))
    bbook = PatchBook(dict(zip(bench["item_id"], bench["patch"], strict=True)))
    start = time.perf_counter()
    joined = join_fixes(train[["item_id", "project"]], bench[["item_id", "project"]], train_patches=tbook,
                        bench_patches=bbook)
    join_s = time.perf_counter() - start
    fix = joined.pairs[joined.pairs["shares_fix"].fillna(False).astype(bool)]
    start = time.perf_counter()
    sig_t = {r.item_id: parse_crash(r.crash) for r in train.itertuples()}
    sig_b = {r.item_id: parse_crash(r.crash) for r in bench.itertuples()}
    grades = [grade_crash(sig_t[t], sig_b[b]) for t, b in zip(fix["train_id"], fix["bench_id"], strict=True)]
    project_of = dict(zip(bench["item_id"], bench["project"], strict=True))
    control = control_rate([(project_of[b], sig_t[t], sig_b[b], b)
                            for t, b in zip(fix["train_id"], fix["bench_id"], strict=True)])
    crash_s = time.perf_counter() - start
    print(json.dumps({
        "train_items": args.train, "bench_items": args.bench, "projects": args.projects,
        "same_project_candidates": joined.stats.same_project_pairs, "compared": joined.stats.compared,
        "pairs_sharing_fix": int(len(fix)), "planted_copies": (args.train + 9) // 10,
        "train_parses": tbook.parses, "bench_parses": bbook.parses,
        "fix_join_seconds": round(join_s, 3),
        "crash_parse_and_grade_seconds": round(crash_s, 3),
        "type_and_frame_matched": sum(g.grade == "type_and_frame" for g in grades),
        "control_pairs": control.n_pairs,
    }, indent=2))


if __name__ == "__main__":
    main()
