"""The scan beside its floor, in one process: per-core rates, the share of the floor, and a stage table.

One process holds the bench index, the C floor (:mod:`ngram_floor`) and the train text read from the
shards. It then repeats, ``reps`` times, in turn: the floor over the texts in memory; the scan's own code
stage by stage over the same texts, cut into the tasks the scan makes (tokenise, hash, prefilter, look
up, flag bookkeeping, pair view); the whole check flags only (``text_check`` on the shards, reading
included, 1 worker); the whole check with the pair view of the planted pairs. Every figure is CPU time
of this process (all threads: the per-core clock), and the best of the repeats is kept: on a machine
shared with other jobs, the best run is the one least slowed by them, for the floor and the scan alike.
The floor's flags are checked against the scan's: same (row, n, bench item, shared n-grams).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# the compiled path (overlap/text/ngram/jit.py) fuses what the numpy path does in whole-array passes:
# tokenise + word values in one pass over the bytes; rolling hash + prefilter + table probe in one pass
# over the words; then the few candidates are verified word by word, and the pair view's runs measured
# on the word values (compiled too)
STAGES = ("tokenise", "hash + prefilter + probe", "verify", "flags", "pair view")
NUMPY_STAGES = ("tokenise", "hash", "prefilter", "look up", "flags", "pair view")


def _cpu() -> float:
    return time.process_time()


def _task_texts(texts: list, pairs_by_row: dict[int, list[int]]) -> list[tuple]:
    """(text chunk, its pairs: row in chunk -> bench items) cut as the scan cuts a batch into tasks."""
    from overlap.text.ngram.stream import CHUNK_BYTES, CHUNK_ROWS, LONG_ROW_BYTES, _tasks_for_batch

    out, base = [], 0
    for arr in texts:
        for _kind, s, e in _tasks_for_batch(arr, CHUNK_BYTES, CHUNK_ROWS, LONG_ROW_BYTES):
            pairs = {r - base - s: pairs_by_row[r] for r in range(base + s, base + e) if r in pairs_by_row}
            out.append((arr.slice(s, e - s), pairs))
        base += len(arr)
    return out


def stage_pass(index, tasks: list[tuple]) -> tuple[dict[str, float], int]:
    """One pass of the scan's code over the tasks, CPU seconds per stage; returns (seconds, flags)."""
    from overlap.text.ngram import jit
    from overlap.text.ngram.chunk import ChunkTokens, _exact_runs, pair_view
    from overlap.text.ngram.match import WindowMatches, finish_matches

    if jit.kernels() is None:
        return numpy_stage_pass(index, tasks)
    cpu = dict.fromkeys(STAGES, 0.0)
    flags = 0
    for texts, pairs in tasks:
        t0 = _cpu()
        tokens = ChunkTokens(index, *jit.split_values(index, texts))
        offsets = tokens.spans.row_tokens
        t1 = _cpu()
        hits = jit.window_hits(index, tokens.values, offsets)
        t2 = _cpu()
        acc = WindowMatches()
        jit.record_hits(index, tokens, offsets, acc, hits)
        t3 = _cpu()
        out = finish_matches(index, acc)
        if "row" in out:
            _exact_runs(index, tokens, offsets, out)
        t4 = _cpu()
        if pairs:
            pair_view(index, tokens, pairs)
        t5 = _cpu()
        for k, a, b in zip(STAGES, (t0, t1, t2, t3, t4), (t1, t2, t3, t4, t5), strict=True):
            cpu[k] += b - a
        flags += len(out.get("row", ()))
        del tokens, hits, acc  # as the scan does: the next chunk reuses their memory
    return cpu, flags


def numpy_stage_pass(index, tasks: list[tuple]) -> tuple[dict[str, float], int]:
    """``stage_pass`` on the numpy path (numba missing, or OVERLAP_NGRAM_JIT=0)."""
    from overlap.text.ngram.chunk import ChunkTokens, _exact_runs, pair_view
    from overlap.text.ngram.match import WindowMatches, finish_matches, look_up_windows, prefix_hashes, window_hashes
    from overlap.text.tokenize import split_tokens

    cpu = dict.fromkeys(NUMPY_STAGES, 0.0)
    nmin = min(index.ns)
    flags = 0
    for texts, pairs in tasks:
        t0 = _cpu()
        spans = split_tokens(texts, index.tokenizer)
        t1 = _cpu()
        tokens = ChunkTokens(index, spans)
        prefix = prefix_hashes(tokens, index.r64)
        hmin = window_hashes(prefix, nmin)
        t2 = _cpu()
        first = index.passes_prefilter(hmin)
        t3 = _cpu()
        acc = WindowMatches()
        look_up_windows(index, tokens, spans.row_tokens, acc, prefix, hmin, first)
        t4 = _cpu()
        out = finish_matches(index, acc)
        if "row" in out:
            _exact_runs(index, tokens, spans.row_tokens, out)
        t5 = _cpu()
        if pairs:
            pair_view(index, tokens, pairs)
        t6 = _cpu()
        for k, a, b in zip(NUMPY_STAGES, (t0, t1, t2, t3, t4, t5), (t1, t2, t3, t4, t5, t6), strict=True):
            cpu[k] += b - a
        flags += len(out.get("row", ()))
    return cpu, flags


def side_by_side(folder: Path, truth_path: Path, reps: int, run_scan, shard_batches, bench: dict) -> dict:
    """The floor, the stages and the whole check, ``reps`` times in turn; best CPU time of each."""
    import pyarrow.compute as pc
    from ngram_floor import build_floor

    from overlap.text.ngram import build_index, jit

    jit_s = jit.load_seconds()  # first use in this process: loads numba and the kernels (or compiles them)
    index = build_index(bench["text"], bench["ids"])
    _ = index.prefilter
    floor = build_floor(index)
    texts = [b.column(1) for b in shard_batches(folder)]
    nbytes = sum(int(pc.sum(pc.binary_length(t)).as_py() or 0) for t in texts)
    truth = dict(np.load(truth_path))
    pairs_by_row: dict[int, list[int]] = {}
    for k in ("copy", "short", "tmpl"):
        for r, b in zip(truth[f"{k}_train"].tolist(), truth[f"{k}_bench"].tolist(), strict=True):
            pairs_by_row.setdefault(r, []).append(b)
    tasks = _task_texts(texts, pairs_by_row)
    stages = STAGES if jit.kernels() is not None else NUMPY_STAGES
    best = {"floor": np.inf, "floor_read": np.inf, "whole": np.inf, "paired": np.inf, **dict.fromkeys(stages, np.inf)}
    whole = paired = None
    floor_flags = None
    for _ in range(reps):
        t = _cpu()
        got, base = [], 0
        for arr in texts:
            got.append(floor.scan(arr, base))
            base += len(arr)
        best["floor"] = min(best["floor"], _cpu() - t)
        floor_flags = np.concatenate(got)
        t = _cpu()
        base = 0
        for b in shard_batches(folder):  # the floor fed by the same parquet read as the whole check
            floor.scan(b.column(1), base)
            base += b.num_rows
        best["floor_read"] = min(best["floor_read"], _cpu() - t)
        cpu, _ = stage_pass(index, tasks)
        for k in stages:
            best[k] = min(best[k], cpu[k])
        r = run_scan(folder, truth_path, 1, True, with_pairs=False, index=index, keep_flags=True)
        if whole is None or r["scan_cpu_s"] < whole["scan_cpu_s"]:
            whole = r
        r = run_scan(folder, truth_path, 1, True, with_pairs=True, index=index)
        if paired is None or r["scan_cpu_s"] < paired["scan_cpu_s"]:
            paired = r
    scan_flags = whole.pop("flag_rows")
    same = sorted(map(tuple, floor_flags.tolist())) == sorted(map(tuple, scan_flags))
    return {"bytes": nbytes, "best_cpu_s": best, "whole": whole, "paired": paired, "reps": reps, "stages": stages,
            "jit": jit.kernels() is not None, "jit_first_use_s": jit_s,
            "floor_flags": int(len(floor_flags)), "scan_flags": int(len(scan_flags)), "same_flags": same}


def print_table(res: dict, label: str = "") -> bool:
    """The side-by-side table; returns whether the floor and the scan gave the same flags."""
    mb = res["bytes"] / 1e6
    best = res["best_cpu_s"]
    floor = mb / best["floor"]
    print(f"\nThe scan beside its floor{label}: {mb:.0f} MB of train text, one process, best of {res['reps']} "
          f"(CPU time: MB/s per core)")
    print(f"  floor (C: tokenise, hash, L2 prefilter, exact table, flags), text in memory: {floor:.0f} MB/s; "
          f"fed by the same parquet read: {mb / best['floor_read']:.0f} MB/s")
    print(f"  same flags as the scan (row, n, bench item, shared n-grams): {res['same_flags']} "
          f"({res['floor_flags']} floor, {res['scan_flags']} scan)")
    stages = res["stages"]
    kernel = sum(best[k] for k in stages if k != "pair view")
    total = kernel + best["pair view"]
    print(f"  {'stage':<26} {'CPU s':>7} {'MB/s/core':>10} {'share of time':>14}   "
          f"({'compiled path' if res['jit'] else 'numpy path: numba not used'})")
    for k in stages:
        print(f"  {k:<26} {best[k]:7.2f} {mb / max(best[k], 1e-9):10.0f} {best[k] / total:14.0%}")
    print(f"  {'flags total':<26} {kernel:7.2f} {mb / kernel:10.0f}   = {mb / kernel / floor:.0%} of the floor "
          f"(same input: text in memory)")
    for name, r in (("whole check, flags only", res["whole"]), ("whole check with the pair view", res["paired"])):
        per_core = r["mb"] / r["scan_cpu_s"]
        print(f"  {name} (parquet read included): {per_core:.0f} MB/s per core = {per_core / floor:.0%} of the "
              f"floor; recall / precision n=13 {r['recall_13']:.4f} / {r['precision_13']:.4f}, "
              f"n=8 {r['recall_8']:.4f} / {r['precision_8']:.4f}", flush=True)
    if res["jit"]:
        cold = res.get("jit_cold_s")
        print(f"  JIT, apart from the figures above (once per process, and per worker): first use "
              f"{res['jit_first_use_s']:.2f} s (importing numba, loading the cached kernels)"
              + (f"; compiling with an empty cache: {cold:.1f} s" if cold is not None else ""), flush=True)
    return bool(res["same_flags"])


def jit_cold_seconds() -> float:
    """Wall seconds of the kernels' first use in a fresh process with an empty numba cache (a compile)."""
    code = "from overlap.text.ngram import jit; jit.kernels(); print(jit.load_seconds())"
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        proc = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env,
                              cwd=str(Path(__file__).resolve().parents[1]))
    return float(proc.stdout.strip().splitlines()[-1])


def stage_table(size: int, path: Path, truth: Path, reps: int, child) -> dict:
    """The side-by-side run in a fresh process (``child("side", ...)``), its table printed, and whether the
    scan stayed exact (recall and precision 1) and gave the floor's flags."""
    res = child("side", path, truth, reps)
    res["jit_cold_s"] = jit_cold_seconds() if res["jit"] else None  # (a compile, apart)
    same = print_table(res, f" ({size:,} train items)")
    ok = all(res[r][k] == 1.0 for r in ("whole", "paired")
             for k in ("recall_13", "precision_13", "recall_8", "precision_8"))
    if not ok:
        print("  RECALL / PRECISION BELOW 1.0", flush=True)
    if not same:
        print("  THE FLOOR AND THE SCAN GAVE DIFFERENT FLAGS", flush=True)
    return {"size": size, **res, "exact": ok}
