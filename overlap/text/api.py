"""The text check as one call: n-gram flags, boilerplate, pair runs, identifiers, short items.

``text_check(train, bench, train_field, bench_field, ...)`` is what ``overlap compare --text
TRAIN_FIELD:BENCH_FIELD`` and ``overlap ngram`` run. The train side may be a pandas DataFrame, an Arrow
table or any iterable of Arrow record batches (streamed: memory follows the batch, not the dataset).
Both sides need an ``item_id`` column and their text column.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import InputError
from . import MAX_NGRAM
from .cell_checks import CellCounts, text_cells
from .identifiers import Targets, identifier_evidence
from .ngram import (
    CHUNK_BYTES,
    CHUNK_ROWS,
    DEFAULT_BOILERPLATE_THRESHOLD,
    DEFAULT_NS,
    BenchIndex,
    ScanResult,
    build_index,
)
from .ngram.engines import check_engine, run_scan
from .text_inputs import bench_table, in_memory_bench, in_memory_train, pair_list
from .text_result import BOILERPLATE_COLUMNS, FLAG_COLUMNS, RUN_COLUMNS, TextResult, typed_frame
from .tokenize import TOKENIZERS

__all__ = ["TextResult", "text_check", "DEFAULT_NS", "DEFAULT_BOILERPLATE_THRESHOLD", "MAX_NGRAM"]


def ngram_sizes(ns: Any) -> tuple[int, ...]:
    """`ns` (one size or a list of them) as positive whole sizes, in the order given. A text, a boolean or a
    fraction is refused rather than converted: `int` over the text "13" would scan 1- and 3-grams."""
    if isinstance(ns, numbers.Integral) and not isinstance(ns, bool):
        ns = (ns,)
    if isinstance(ns, (str, bytes)) or not isinstance(ns, (Sequence, set, frozenset, np.ndarray)):
        raise InputError(f"n-gram sizes: expected a whole number or a list of them (e.g. (13, 8)), got {ns!r}")
    if len(ns) == 0 or any(isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= MAX_NGRAM
                           for n in ns):
        raise InputError(f"n-gram sizes must be whole numbers from 1 to {MAX_NGRAM}, got {ns!r}")
    return tuple(int(n) for n in ns)


def text_check(
    train,
    bench,
    train_field: str,
    bench_field: str,
    *,
    ns: Sequence[int] = DEFAULT_NS,
    boilerplate_threshold: int | None = DEFAULT_BOILERPLATE_THRESHOLD,
    background=None,
    pairs=None,
    workers: int | None = None,
    tokenizer: str = "words",
    identifier_field: str | None = None,
    id_col: str = "item_id",
    mask_spans: bool = True,
    batch_rows: int = CHUNK_ROWS,
    chunk_bytes: int = CHUNK_BYTES,
    index: BenchIndex | None = None,
    progress=None,
    engine: str = "local",
    ray_address: str | None = None,
) -> TextResult:
    """Run the text evidence check.

    train: DataFrame, Arrow table, iterable of record batches, an in-memory dataset (``datasets`` Dataset,
        single-split DatasetDict or IterableDataset, polars frame, RecordBatchReader, pyarrow dataset), or files
        (a path, folder or glob, or ``engines.TrainFiles``) with ``id_col`` and ``train_field`` (and
        ``identifier_field`` when given). Streams: only a few batches at a time are held (files are read with
        projection).
    bench: DataFrame, Arrow table or an in-memory dataset as above, with ``id_col`` and ``bench_field``.
    ns: word n-gram sizes (default 13 and 8).
    boilerplate_threshold: an n-gram in at least this many bench items is boilerplate (None: off).
    background: optional corpus (texts: list, Series, Arrow array, or iterable) whose n-grams are
        boilerplate wherever they appear in the bench.
    pairs: DataFrame with ``train_id`` and ``bench_id`` (the id-matched pairs): gets the pair view
        (longest shared run), identifier evidence, and splits the flag counts into matched / rest.
    identifier_field: train column holding the crash spec / report / patch whose function and file
        names are looked for in the bench text (default: the train text field itself).
    workers: processes (local engine) or actors (ray) for the scan; 1 = in process; None = chosen from the
        input size (one process below the size where a pool pays off; see ``engines.choose_workers``).
    engine: "local" (this machine) or "ray" (a Ray Dataset and an actor pool; ``pip install 'overlap[ray]'``).
    ray_address: the Ray cluster to attach to (default ``RAY_ADDRESS``, else a local Ray is started).
    """
    if boilerplate_threshold is not None and (isinstance(boilerplate_threshold, bool) or not isinstance(
            boilerplate_threshold, numbers.Integral) or boilerplate_threshold < 2):
        raise InputError("boilerplate threshold must be at least 2 bench items (or None to turn it off), got "
                         f"{boilerplate_threshold!r}")
    if isinstance(tokenizer, str) and tokenizer not in TOKENIZERS:
        raise InputError(f"unknown tokenizer '{tokenizer}' (choose {', '.join(TOKENIZERS)})")
    check_engine(engine)
    ns = tuple(sorted(set(ngram_sizes(ns)), reverse=True))
    train = in_memory_train(train, [id_col, train_field, identifier_field or train_field], batch_rows)
    bench = in_memory_bench(bench, [id_col, bench_field])
    train_cells, bench_cells = CellCounts(train_field), CellCounts(bench_field)
    btable = bench_table(bench, id_col, bench_field, {bench_field: bench_cells})
    bench_ids = btable.column(id_col).cast(pa.string()).to_pylist()
    bench_text_col = text_cells(btable.column(bench_field), bench_ids, bench_cells)
    del btable  # a field over the cap is only held truncated from here on
    index_built = index is None
    if index is None:
        index = build_index(bench_text_col, bench_ids, ns=ns, boilerplate_threshold=boilerplate_threshold,
                            background=background, tokenizer=tokenizer, mask_spans=mask_spans)
    elif index.item_ids != [str(b) for b in bench_ids]:
        raise InputError("the prebuilt index was built from other bench items")
    bench_pos: dict[str, list[int]] = {}
    for i, b in enumerate(bench_ids):
        bench_pos.setdefault(b, []).append(i)

    given = pair_list(pairs)
    by_train: dict[str, list[int]] = {}  # train id -> indexes of its paired bench items
    missing_bench = set()
    for t, b in given:
        lst = by_train.setdefault(t, [])
        if b in bench_pos:
            lst.extend(bench_pos[b])
        else:
            missing_bench.add(b)
    ident_field = identifier_field or train_field
    res, targets = run_scan(index, train, engine=engine, id_col=id_col, text_col=train_field,
                            ident_col=ident_field if given else None, pairs=by_train, workers=workers,
                            chunk_bytes=chunk_bytes, chunk_rows=batch_rows, progress=progress, cells=train_cells,
                            ray_address=ray_address)

    bench_null = np.asarray(bench_text_col.is_null().to_numpy(zero_copy_only=False)) if len(bench_ids) else []
    counts = dict(res.counts)
    counts["null"] = counts["null"] - counts["non_utf8"] - train_cells.non_text
    counts["short"] = dict(res.short)
    counts.update(train_cells.summary())
    bench_counts = dict(index.stats)
    if index_built:
        bench_counts["null"] = bench_counts["null"] - bench_cells.non_text
        bench_counts.update(bench_cells.summary())
    return TextResult(
        train_field=train_field, bench_field=bench_field, ns=index.ns, boilerplate_threshold=index.threshold,
        tokenizer=index.tokenizer.name, flags=_flag_frame(res, index, bench_ids),
        runs=_run_frame(given, res, index, bench_pos, bench_null), boilerplate=_boilerplate_frame(res, index.ns),
        identifiers=_identifier_frame(given, res.pair_seen, targets, bench_text_col, bench_pos) if given else None,
        train_counts=counts, bench_counts=bench_counts, pair_ids=set(given), pair_train_seen=set(res.pair_seen),
        pairs_missing={"train_ids_not_in_train": len(set(by_train) - set(res.pair_seen)),
                       "bench_ids_not_in_bench": len(missing_bench)},
        mask_spans=index.mask_spans,
    )


def _flag_frame(res: ScanResult, index: BenchIndex, bench_ids: list[str]) -> pd.DataFrame:
    """One row per flag, with the bench words of its longest shared run, in train order, then n as given."""
    f = res.flags
    item = f["item"].astype(np.int64)
    words = index.words_many(index.offsets[item] + f["bench_start"], index.offsets[item] + f["bench_end"])
    flags = typed_frame({
        "train_id": f["train_id"], "n": f["n"], "bench_id": [bench_ids[i] for i in item],
        "shared": f["shared"], "train_start": f["train_start"], "train_end": f["train_end"],
        "bench_start": f["bench_start"], "bench_end": f["bench_end"], "words": words,
    }, FLAG_COLUMNS)
    flags["_row"] = f["train_row"]
    flags["_n"] = flags["n"].map({n: k for k, n in enumerate(index.ns)})
    flags["_b"] = item
    flags = flags.sort_values(["_row", "_n", "_b"], kind="stable").drop(columns=["_row", "_n", "_b"])
    return flags.reset_index(drop=True)


def _boilerplate_frame(res: ScanResult, ns: tuple[int, ...]) -> pd.DataFrame:
    """One row per (train item, n) that matched boilerplate, in train order."""
    bp = res.boilerplate
    boiler = typed_frame({k: bp[k] for k in ("train_id", "n", "hits", "train_start", "train_end")},
                         BOILERPLATE_COLUMNS)
    boiler["_row"] = bp["train_row"]
    boiler["_n"] = boiler["n"].map({n: k for k, n in enumerate(ns)})
    return boiler.sort_values(["_row", "_n"], kind="stable").drop(columns=["_row", "_n"]).reset_index(drop=True)


def _run_frame(given: list[tuple[str, str]], res: ScanResult, index: BenchIndex, bench_pos: dict[str, list[int]],
               bench_null) -> pd.DataFrame:
    """One row per given pair: its longest shared run (NA where a side has no text or is missing)."""
    run_rows: dict[str, list] = {c: [] for c in RUN_COLUMNS}
    seen = res.pair_seen
    for t, b in given:
        best = None
        if t in seen:
            for i in bench_pos.get(b, []):
                v = res.runs.get((t, i))
                if v is not None and (best is None or v[0] > best[1][0]):
                    best = (i, v)
        run_rows["train_id"].append(t)
        run_rows["bench_id"].append(b)
        if best is None:
            for c in ("longest_run", "train_pos", "bench_pos", "words"):
                run_rows[c].append(None)
            continue
        i, (length, tp, bpos) = best
        run_rows["longest_run"].append(length)
        run_rows["train_pos"].append(tp if length else None)
        run_rows["bench_pos"].append(bpos if length else None)
        run_rows["words"].append((int(index.offsets[i]) + bpos, length))
    # the words of every run in one vectorised take (one call per pair costs more than the runs themselves)
    spans = [(k, w) for k, w in enumerate(run_rows["words"]) if w is not None and w[1]]
    texts = index.words_many([s for _, (s, _) in spans], [s + n for _, (s, n) in spans]) if spans else []
    run_rows["words"] = [None if w is None else "" for w in run_rows["words"]]
    for (k, _), t in zip(spans, texts, strict=True):
        run_rows["words"][k] = t
    runs = typed_frame(run_rows, RUN_COLUMNS)
    # a side without text has no run: null, not 0
    no_text = [(t in res.null_ids) or all(bench_null[i] for i in bench_pos.get(b, [0])) if b in bench_pos else True
               for t, b in given]
    if any(no_text):
        runs.loc[np.array(no_text), ["longest_run", "train_pos", "bench_pos", "words"]] = None
    return runs


def _identifier_frame(given: list[tuple[str, str]], seen: set[str], targets: dict[str, Targets],
                      bench_text_col, bench_pos: dict[str, list[int]]) -> pd.DataFrame:
    """One row per given pair the train stream held: which targets of the train item the bench text names."""
    bench_texts = {b: bench_text_col[bench_pos[b][0]].as_py() for b in {b for _, b in given} if b in bench_pos}
    rows = identifier_evidence([(t, b) for t, b in given if t in seen], targets, bench_texts)
    identifiers = pd.DataFrame(rows, columns=["train_id", "bench_id", "functions", "files", "named_functions",
                                              "named_files", "function_named", "file_named", "bench_text"])
    for c in ("train_id", "bench_id", "functions", "files", "named_functions", "named_files"):
        identifiers[c] = identifiers[c].astype("string")
    for c in ("function_named", "file_named", "bench_text"):
        identifiers[c] = identifiers[c].astype("boolean")
    return identifiers
