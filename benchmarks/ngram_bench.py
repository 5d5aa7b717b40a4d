"""Benchmark of the text check: speed, memory and correctness on a synthetic workload.

Workload (deterministic, seeded):

* a Zipfian vocabulary of 50,000 words (s = 1), written as issue text is (``--text issue``, the default:
  contractions, quotes, backticks, identifiers, links, punctuation, non-ASCII letters and symbols; see
  :mod:`ngram_text`) or as plain prose with light surface noise (``--text plain``: capitals, commas, full
  stops), each word one token that the tokenizer must see through;
* 2,000 bench items of ~150 words; 10 % of them open with one shared 18-word issue-template sentence;
* N train items of ~200 words (N = 20k, 100k, 300k). 1 % hold a copied 20-40-word span of a bench item
  (must flag at n = 13, attributed to that item), 1 % a copied 10-word span (must not flag at n = 13;
  must flag at n = 8), 1 % the template sentence alone (must never flag).

The train set is written as 8 parquet shards first (not timed; seeded, so a folder given with ``--data``
is generated once and reused), then scanned in a fresh process: the check is given the folder and reads
it batch by batch itself (as ``overlap ngram ./shards/`` does), so the peak RSS printed is the scan's own.
The id-matched pairs given to the check are the planted (train, bench) pairs, for the run accuracy.

Printed per size: MB/s and items/s of the whole check (index build excluded and shown apart; process
pool start-up included), when the first chunk came back and the MB/s from then on (the steady rate,
which is what grows linearly with train size), peak RSS of the main process and of the largest worker
(and main + workers as an upper bound of the total), recall and precision at n = 13 and n = 8,
the share of flags whose train span is within 2 words of the plant, and the longest-run accuracy
(share of planted pairs within +-2 words). A last line repeats the smallest size without span
masking, to show what dropping boilerplate n-grams alone would let through.

A second table puts the scan beside its **floor** (:mod:`ngram_floor`: the same work in plain C, with a
prefilter that fits in L2 and an exact table only for what passes it, compiled here with ``cc -O3
-march=native``), in one process (:mod:`ngram_stages`), on the largest size: the floor's MB/s per core,
the scan's stage by stage (tokenise, hash + prefilter + look up, verify, flags, pair view), the whole
single-worker check flags only and with the pair view (parquet read included), each as a share of the floor, recall and
precision, and whether the floor and the scan flagged the same (row, n, bench item, shared n-grams).
Per-core numbers are CPU time, best of ``--reps`` repeats taken in turn, so another job on the machine
slows them less than wall time and slows the floor and the scan alike.

    python benchmarks/ngram_bench.py                    # 20k, 100k, 300k, then the stage table
    python benchmarks/ngram_bench.py --sizes 20000 --workers 1
    python benchmarks/ngram_bench.py --sizes 300000 --stages-only --data /tmp/ngram-bench
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's overlap, not an installed one

from ngram_text import TEXTS, form_cdf, surfaces, with_tails  # noqa: E402

SEED = 5
TEXT = os.environ.get("NGRAM_BENCH_TEXT", "issue")  # how words are written (ngram_text); set by --text
VOCAB = 50_000
BENCH_ITEMS = 2_000
TEMPLATE_WORDS = 18
ROWS_PER_BATCH = 4_096
SHARDS = 8


# ------------------------------------------------------------------------------------------ the workload


def vocabulary() -> tuple[pa.Array, np.ndarray]:
    """(surface strings: every form of every word (``ngram_text``), Zipf cumulative probabilities)."""
    rng = np.random.default_rng(SEED)
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = np.array([12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4, 2.2, 2.0, 2.0,
                        1.9, 1.5, 1.0, 0.8, 0.2, 0.2, 0.1, 0.1])
    weights /= weights.sum()
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < VOCAB:
        rank = len(words) + 1
        length = 1 + int(np.log2(rank + 1)) // 2 + int(rng.integers(0, 4))
        w = "".join(rng.choice(list(letters), size=length, p=weights))
        if w not in seen:
            seen.add(w)
            words.append(w)
    surface = surfaces(words, TEXT)
    p = 1.0 / np.arange(1, VOCAB + 1)
    return pa.array(surface, pa.string()), np.cumsum(p / p.sum())


def sample_tokens(rng: np.random.Generator, cdf: np.ndarray, size: int) -> np.ndarray:
    """Surface token ids: Zipf word id + form * VOCAB."""
    word = np.minimum(np.searchsorted(cdf, rng.random(size)), VOCAB - 1)
    variant = np.minimum(np.searchsorted(form_cdf(TEXT), rng.random(size)), len(form_cdf(TEXT)) - 1)
    return (word + variant * VOCAB).astype(np.int64)


def join_rows(surface: pa.Array, tokens: np.ndarray, lengths: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    lists = pa.ListArray.from_arrays(pa.array(offsets), surface.take(pa.array(tokens)))
    return pc.binary_join(lists, " ")


def make_bench(surface: pa.Array, cdf: np.ndarray) -> dict:
    rng = np.random.default_rng(SEED + 1)
    template = sample_tokens(rng, cdf, TEMPLATE_WORDS) % VOCAB  # plain words, always written the same
    template[0] += 3 * VOCAB  # capitalised first word
    lengths = rng.integers(130, 171, BENCH_ITEMS)
    has_template = np.zeros(BENCH_ITEMS, bool)
    has_template[rng.choice(BENCH_ITEMS, BENCH_ITEMS // 10, replace=False)] = True
    items = []
    body_start = np.zeros(BENCH_ITEMS, np.int64)
    for i in range(BENCH_ITEMS):
        body = sample_tokens(rng, cdf, int(lengths[i]))
        if has_template[i]:
            body = np.concatenate([template, body])
            body_start[i] = TEMPLATE_WORDS
        items.append(body)
    lens = np.array([len(x) for x in items])
    tokens = np.concatenate(items)
    return {"tokens": tokens, "lengths": lens, "offsets": np.concatenate([[0], np.cumsum(lens)]),
            "body_start": body_start, "template": template, "has_template": has_template,
            "text": with_tails(join_rows(surface, tokens, lens), surface, np.random.default_rng(SEED + 3), TEXT),
            "ids": [f"bench-{i:04d}" for i in range(BENCH_ITEMS)]}


def write_train(folder: Path, size: int, surface: pa.Array, cdf: np.ndarray, bench: dict) -> dict:
    """Write the train set batch by batch into SHARDS parquet files; return the plants (the truth)."""
    rng = np.random.default_rng(SEED + 2)
    kinds = np.zeros(size, np.int8)  # 0 plain, 1 copy 20-40, 2 copy 10, 3 template
    planted = rng.choice(size, 3 * (size // 100), replace=False)
    k = size // 100
    kinds[planted[:k]], kinds[planted[k : 2 * k]], kinds[planted[2 * k :]] = 1, 2, 3
    truth = {"copy_train": [], "copy_bench": [], "copy_len": [], "copy_pos": [],
             "short_train": [], "short_bench": [], "short_pos": [],
             "tmpl_train": [], "tmpl_bench": [], "tmpl_pos": []}
    template_items = np.flatnonzero(bench["has_template"])
    schema = pa.schema([("item_id", pa.string()), ("text", pa.string())])
    folder.mkdir(parents=True, exist_ok=True)
    n_batches = max(1, -(-size // ROWS_PER_BATCH))
    writers = [pq.ParquetWriter(str(folder / f"part-{k:05d}.parquet"), schema) for k in range(SHARDS)]
    try:
        for start in range(0, size, ROWS_PER_BATCH):
                stop = min(size, start + ROWS_PER_BATCH)
                lengths = rng.integers(170, 231, stop - start)
                offsets = np.concatenate([[0], np.cumsum(lengths)])
                tokens = sample_tokens(rng, cdf, int(offsets[-1]))
                for r in range(start, stop):
                    kind = kinds[r]
                    if kind == 0:
                        continue
                    base, length = int(offsets[r - start]), int(lengths[r - start])
                    if kind in (1, 2):
                        b = int(rng.integers(0, BENCH_ITEMS))
                        span = int(rng.integers(20, 41)) if kind == 1 else 10
                        lo = int(bench["body_start"][b])
                        s = int(rng.integers(lo, bench["lengths"][b] - span + 1))
                        words = bench["tokens"][bench["offsets"][b] + s : bench["offsets"][b] + s + span]
                        key = "copy" if kind == 1 else "short"
                        if kind == 1:
                            truth["copy_len"].append(span)
                    else:
                        b = int(template_items[rng.integers(0, len(template_items))])
                        words = bench["template"]
                        key = "tmpl"
                    pos = int(rng.integers(0, length - len(words) + 1))
                    tokens[base + pos : base + pos + len(words)] = words
                    truth[f"{key}_train"].append(r)
                    truth[f"{key}_bench"].append(b)
                    truth[f"{key}_pos"].append(pos)
                ids = pa.array([f"train-{i:07d}" for i in range(start, stop)], pa.string())
                shard = (start // ROWS_PER_BATCH) * SHARDS // n_batches
                tails = np.random.default_rng((SEED + 4, start))
                texts = with_tails(join_rows(surface, tokens, lengths), surface, tails, TEXT)
                writers[shard].write_batch(pa.record_batch([ids, texts], schema=schema))
    finally:
        for w in writers:
            w.close()
    return {k: np.array(v, np.int64) for k, v in truth.items()}


# ------------------------------------------------------------------------------------------ the scan


def rss_mb() -> tuple[float, float]:
    return tuple(resource.getrusage(who).ru_maxrss / 1024 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def cpu_s() -> float:
    """CPU seconds of this process and its finished children (all threads): the per-core clock."""
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                           resource.RUSAGE_CHILDREN)))


def shard_batches(folder: Path, columns=("item_id", "text")):
    """The train shards, batch by batch, read as the check reads a folder of files (``overlap.sources``)."""
    from overlap.sources.formats.batches import open_batches

    yield from open_batches(str(folder), list(columns), batch_rows=ROWS_PER_BATCH, hash_files=False)


def run_scan(path: Path, truth_path: Path, workers: int, mask_spans: bool, with_pairs: bool = True,
             index=None, keep_flags: bool = False) -> dict:
    """The whole check on the shards; ``with_pairs``: give it the planted pairs (the pair view: longest
    runs and identifiers of 9,000 id-matched pairs at 300k), else flags alone. ``index``: a prebuilt
    bench index; ``keep_flags``: also return the flags as (train row, n, bench item, shared)."""
    import pandas as pd

    from overlap.text.api import text_check
    from overlap.text.ngram import build_index

    surface, cdf = vocabulary()
    bench = make_bench(surface, cdf)
    truth = dict(np.load(truth_path))
    tid = lambda r: f"train-{int(r):07d}"  # noqa: E731
    bid = lambda b: bench["ids"][int(b)]  # noqa: E731
    pairs = pd.DataFrame({
        "train_id": [tid(r) for k in ("copy", "short", "tmpl") for r in truth[f"{k}_train"]],
        "bench_id": [bid(b) for k in ("copy", "short", "tmpl") for b in truth[f"{k}_bench"]],
    })
    bench_df = pd.DataFrame({"item_id": bench["ids"], "text": bench["text"].to_pylist()})
    rss_before = rss_mb()[0]
    t0 = time.perf_counter()
    if index is None:
        index = build_index(pa.array(bench_df["text"]), bench["ids"], mask_spans=mask_spans)
    t_index = time.perf_counter() - t0

    marks: list[tuple[float, int]] = []
    from overlap.text.ngram.engines import as_train, choose_workers, input_bytes

    chosen = workers or choose_workers(None, input_bytes(as_train(str(path))))[0]  # (as the scan will choose)
    c1 = cpu_s()
    t1 = time.perf_counter()

    def progress(rows: int, nbytes: int) -> None:
        marks.append((time.perf_counter() - t1, nbytes))

    res = text_check(str(path), bench_df, "text", "text", pairs=pairs if with_pairs else None,
                     workers=workers, index=index,
                     mask_spans=mask_spans, progress=progress)
    t_scan = time.perf_counter() - t1
    cpu_scan = cpu_s() - c1
    # steady state: the bytes after the first finished chunk over the time after it (no pool start-up)
    steady_mb = sum(b for _, b in marks[1:]) / 1e6
    steady_s = marks[-1][0] - marks[0][0] if len(marks) > 1 else float("nan")
    own, kids = rss_mb()

    out: dict = {"items": res.train_counts["items"], "mb": res.train_counts["bytes"] / 1e6,
                 "tokens": res.train_counts["tokens"], "workers": chosen,
                 "index_s": t_index, "scan_s": t_scan, "scan_cpu_s": cpu_scan,
                 "rss_main_mb": own, "rss_worker_mb": kids, "rss_before_scan_mb": rss_before,
                 "first_result_s": marks[0][0] if marks else None, "steady_mb_s": steady_mb / steady_s}
    if keep_flags:
        f = res.flags
        item = {b: i for i, b in enumerate(bench["ids"])}
        out["flag_rows"] = list(zip([int(t.split("-")[1]) for t in f["train_id"]], f["n"].tolist(),
                                    [item[b] for b in f["bench_id"]], f["shared"].tolist(), strict=True))
    copies = {tid(r): bid(b) for r, b in zip(truth["copy_train"], truth["copy_bench"], strict=True)}
    shorts = {tid(r): bid(b) for r, b in zip(truth["short_train"], truth["short_bench"], strict=True)}
    for n, positives in ((13, copies), (8, {**copies, **shorts})):
        f = res.flags[res.flags["n"] == n]
        flagged = set(f["train_id"])
        hit = {t for t, b in zip(f["train_id"], f["bench_id"], strict=True) if positives.get(t) == b}
        out[f"recall_{n}"] = len(hit) / max(1, len(positives))
        out[f"precision_{n}"] = len(flagged & set(positives)) / max(1, len(flagged))
        out[f"flagged_{n}"] = len(flagged)
        out[f"false_flags_{n}"] = len(flagged - set(positives))
    # the flag's train span vs the plant (n = 13)
    f13 = res.flags[res.flags["n"] == 13].set_index("train_id")
    span_err = []
    for r, pos, length in zip(truth["copy_train"], truth["copy_pos"], truth["copy_len"], strict=True):
        if tid(r) in f13.index:
            row = f13.loc[[tid(r)]].iloc[0]
            span_err.append(max(abs(int(row["train_start"]) - int(pos)),
                                abs(int(row["train_end"]) - int(pos + length))))
    out["span_within_2"] = float(np.mean(np.array(span_err) <= 2)) if span_err else 0.0
    if not with_pairs:
        return out
    # longest runs vs the plant
    runs = res.runs.set_index(["train_id", "bench_id"])
    errs = []
    for key, lens in (("copy", truth["copy_len"]), ("short", np.full(len(truth["short_train"]), 10)),
                      ("tmpl", np.full(len(truth["tmpl_train"]), TEMPLATE_WORDS))):
        for r, b, length in zip(truth[f"{key}_train"], truth[f"{key}_bench"], lens, strict=True):
            got = runs.loc[(tid(r), bid(b)), "longest_run"]
            errs.append(abs(int(got) - int(length)) if not pd.isna(got) else 10**6)
    errs = np.array(errs)
    out["runs_within_2"] = float(np.mean(errs <= 2))
    out["runs_max_error"] = int(errs.max()) if len(errs) else 0
    out["boilerplate_train_items_13"] = int(res.boilerplate.loc[res.boilerplate["n"] == 13, "train_id"].nunique())
    out["template_items"] = int(len(truth["tmpl_train"]))
    return out


# ------------------------------------------------------------------------------------------ driver


def child(argv: list[str]) -> None:
    mode, path, truth_path = argv[0], Path(argv[1]), Path(argv[2])
    if mode == "gen":
        size = int(argv[3])
        surface, cdf = vocabulary()
        bench = make_bench(surface, cdf)
        truth = write_train(path, size, surface, cdf, bench)
        np.savez(truth_path, **truth)
        print(json.dumps({"bytes": sum(f.stat().st_size for f in path.glob("*.parquet"))}))
    elif mode == "side":
        from ngram_stages import side_by_side

        surface, cdf = vocabulary()
        print(json.dumps(side_by_side(path, truth_path, int(argv[3]), run_scan, shard_batches,
                                      make_bench(surface, cdf))))
    else:
        workers, mask = int(argv[3]) or None, argv[4] == "1"  # 0: the engine's choice
        with_pairs = len(argv) < 6 or argv[5] == "1"
        print(json.dumps(run_scan(path, truth_path, workers, mask, with_pairs)))


def _child(*args) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], check=True, capture_output=True,
                          text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def workload(data: Path, size: int) -> tuple[Path, Path]:
    """The train shards and truth of one size, generated once (seeded) and reused."""
    folder, truth = data / f"train-{TEXT}-{size}", data / f"truth-{TEXT}-{size}.npz"
    if not (truth.exists() and len(list(folder.glob("*.parquet"))) == SHARDS):
        t = time.perf_counter()
        _child("gen", folder, truth, size)
        print(f"# generated {size:,} train items in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return folder, truth


def run_sizes(args, data: Path) -> list[dict]:
    """The table per size: speed, memory, recall / precision, span and run accuracy."""
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    runs = [(s, True) for s in sizes]
    if not args.no_ablation:
        runs.append((sizes[0], False))
    for size, mask in runs:
        path, truth = workload(data, size)
        r = _child("scan", path, truth, args.workers, "1" if mask else "0")
        r["size"], r["mask_spans"] = size, mask
        results.append(r)
        label = f"{size:>7,}" + ("" if mask else " (no span masking)")
        print(
            f"{label}: {r['mb']:.0f} MB in {r['scan_s']:.2f} s = {r['mb'] / r['scan_s']:.1f} MB/s, "
            f"{r['items'] / r['scan_s']:,.0f} items/s (index {r['index_s']:.2f} s; first chunk done at "
            f"{r['first_result_s']:.2f} s, then {r['steady_mb_s']:.0f} MB/s) | "
            f"peak RSS main {r['rss_main_mb']:.0f} MB, largest worker {r['rss_worker_mb']:.0f} MB, "
            f"main + {r['workers']} workers <= {r['rss_main_mb'] + r['workers'] * r['rss_worker_mb']:.0f} MB | "
            f"n=13 recall {r['recall_13']:.4f} precision {r['precision_13']:.4f} "
            f"(false flags {r['false_flags_13']}) | n=8 recall {r['recall_8']:.4f} "
            f"precision {r['precision_8']:.4f} | flag span within 2: {r['span_within_2']:.4f} | "
            f"runs within 2: {r['runs_within_2']:.4f} (max error {r['runs_max_error']})",
            flush=True,
        )
    return results


def run_stage_table(args, data: Path) -> dict:
    """The scan beside its floor, in one process, with the stage table, on the largest size."""
    from ngram_stages import stage_table

    size = max(int(s) for s in args.sizes.split(","))
    return stage_table(size, *workload(data, size), args.reps, _child)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20000,100000,300000")
    parser.add_argument("--workers", type=int, default=0,
                        help="worker processes; 0 (default): the engine's choice, as the command makes it")
    parser.add_argument("--text", choices=TEXTS, default="issue",
                        help="how the words are written: issue text (default) or plain prose (ngram_text)")
    parser.add_argument("--no-ablation", action="store_true", help="skip the run without span masking")
    parser.add_argument("--no-stages", action="store_true", help="skip the stage table")
    parser.add_argument("--stages-only", action="store_true", help="only the stage table (largest size)")
    parser.add_argument("--reps", type=int, default=3, help="repeats of the side-by-side run (best is kept)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--data", help="folder for the generated train shards, kept and reused (default: a temp "
                                       "folder, removed at the end)")
    parser.add_argument("--tmp", help="parent folder of the temp folder")
    parser.add_argument("--engine", choices=("local", "ray"), default="local",
                        help="ray: only the Ray table (1 and 2 actors against the local engine; ngram_ray_bench.py)")
    args = parser.parse_args()
    global TEXT
    TEXT = os.environ["NGRAM_BENCH_TEXT"] = args.text  # the child processes read it from the environment
    if args.engine == "ray":
        from ngram_ray_bench import main_from

        return main_from(args)
    out: dict = {}
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        data = Path(args.data) if args.data else Path(tmp)
        data.mkdir(parents=True, exist_ok=True)
        if not args.stages_only:
            out["sizes"] = run_sizes(args, data)
        if not args.no_stages or args.stages_only:
            out["stage_table"] = run_stage_table(args, data)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    else:
        os.environ.setdefault("PYTHONHASHSEED", "0")
        main()
