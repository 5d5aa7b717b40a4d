"""The text check as one call: n-gram flags, boilerplate, pair runs, identifiers, short items.

``text_check(train, bench, train_field, bench_field, ...)`` is what ``overlap compare --text
TRAIN_FIELD:BENCH_FIELD`` and ``overlap ngram`` run. The train side may be a pandas DataFrame, an Arrow
table or any iterable of Arrow record batches (streamed: memory follows the batch, not the dataset).
Both sides need an ``item_id`` column and their text column.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .identifiers import Targets, extract_targets, identifier_evidence
from .ngrams import (
    CHUNK_BYTES,
    CHUNK_ROWS,
    DEFAULT_BOILERPLATE_THRESHOLD,
    DEFAULT_NS,
    BenchIndex,
    available_workers,
    build_index,
    scan,
)
from .tokenize import TOKENIZERS, to_string_array

__all__ = ["TextResult", "text_check", "DEFAULT_NS", "DEFAULT_BOILERPLATE_THRESHOLD"]

FLAG_COLUMNS = {
    "train_id": "string", "n": "int64", "bench_id": "string", "shared": "int64",
    "train_start": "int64", "train_end": "int64", "bench_start": "int64", "bench_end": "int64",
    "words": "string",
}
RUN_COLUMNS = {
    "train_id": "string", "bench_id": "string", "longest_run": "Int64", "train_pos": "Int64",
    "bench_pos": "Int64", "words": "string",
}
BOILERPLATE_COLUMNS = {"train_id": "string", "n": "int64", "hits": "int64", "train_start": "int64",
                       "train_end": "int64"}


def _frame(data: dict[str, Any], schema: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(data.get(c, []), dtype=t) for c, t in schema.items()})


@dataclass
class TextResult:
    """The text evidence for one (train field, bench field) pair of a compare."""

    train_field: str
    bench_field: str
    ns: tuple[int, ...]
    boilerplate_threshold: int | None
    tokenizer: str
    flags: pd.DataFrame  # per flagged (train item, n, bench item): counts and first shared span
    runs: pd.DataFrame  # per given pair: longest shared run
    boilerplate: pd.DataFrame  # per (train item, n) that matched boilerplate: hits and span
    identifiers: pd.DataFrame | None  # per given pair: targets of the train item named in bench text
    train_counts: dict
    bench_counts: dict
    pair_ids: set[tuple[str, str]] = field(default_factory=set)
    pair_train_seen: set[str] = field(default_factory=set)
    pairs_missing: dict = field(default_factory=dict)
    mask_spans: bool = True

    # ------------------------------------------------------------------ views
    def flagged(self, n: int) -> set[str]:
        """Train ids flagged at n."""
        return set(self.flags.loc[self.flags["n"] == n, "train_id"])

    def reasons(self) -> pd.DataFrame:
        """(train_id, reason) for the filtered split: ``ngram:13`` etc. (one row per id and n)."""
        out = self.flags[["train_id", "n"]].drop_duplicates()
        return pd.DataFrame({"train_id": out["train_id"].to_numpy(),
                             "reason": ("ngram:" + out["n"].astype(str)).to_numpy()})

    def summary(self) -> dict:
        """A JSON-ready dict for summary.json (keys sorted by the writer; n as strings)."""
        by_n: dict[str, Any] = {}
        pair_by_train: dict[str, set[str]] = {}
        for t, b in self.pair_ids:
            pair_by_train.setdefault(t, set()).add(b)
        matched = self.pair_train_seen
        total = int(self.train_counts.get("items", 0))
        for n in self.ns:
            f = self.flags[self.flags["n"] == n]
            flagged = set(f["train_id"])
            own = {t for t, b in zip(f["train_id"], f["bench_id"], strict=True) if b in pair_by_train.get(t, ())}
            other = {t for t, b in zip(f["train_id"], f["bench_id"], strict=True)
                     if t in matched and b not in pair_by_train.get(t, ())}
            m_flag = flagged & matched
            rest_flag = flagged - matched
            bp = self.boilerplate[self.boilerplate["n"] == n]
            by_n[str(n)] = {
                "train_items_flagged": len(flagged),
                "bench_items_hit": int(f["bench_id"].nunique()),
                "id_matched": {
                    "items": len(matched),
                    "flagged": len(m_flag),
                    "by_counterpart": len(own),
                    "by_other_bench_item": len(other),
                    "by_other_only": len(other - own),
                },
                "rest": {"items": total - len(matched), "flagged": len(rest_flag)},
                "boilerplate": {"train_items": int(bp["train_id"].nunique()), "hits": int(bp["hits"].sum())},
            }
        runs = self.runs["longest_run"].dropna().astype(int)
        run_summary = {
            "pairs": int(len(self.runs)),
            "with_text": int(len(runs)),
            "median": float(np.median(runs)) if len(runs) else None,
            "max": int(runs.max()) if len(runs) else None,
            "at_least_n": {str(n): int((runs >= n).sum()) for n in self.ns},
        }
        ident = None
        if self.identifiers is not None:
            d = self.identifiers
            fn, fl = d["function_named"], d["file_named"]
            ident = {
                "pairs": int(len(d)),
                "with_function_target": int(fn.notna().sum()),
                "function_named": int((fn == True).sum()),  # noqa: E712 - nullable booleans
                "with_file_target": int(fl.notna().sum()),
                "file_named": int((fl == True).sum()),  # noqa: E712
            }
        bench = dict(self.bench_counts)
        bench.pop("short_ids", None)
        spans = bench.pop("boilerplate_spans", [])
        ngrams = bench.pop("boilerplate_ngrams", {})
        return {
            "fields": {"train": self.train_field, "bench": self.bench_field},
            "params": {"ns": list(self.ns), "boilerplate_threshold": self.boilerplate_threshold,
                       "tokenizer": self.tokenizer, "mask_spans": self.mask_spans},
            "train": {**{k: v for k, v in self.train_counts.items() if k != "short"},
                      "short": {str(n): v for n, v in self.train_counts.get("short", {}).items()}},
            "bench": {**{k: v for k, v in bench.items() if k != "short"},
                      "short": {str(n): v for n, v in bench.get("short", {}).items()}},
            "boilerplate": {
                "ngrams": {str(n): v for n, v in ngrams.items()},
                "masked_bench_tokens": bench.get("masked_tokens", 0),
                "bench_items_with_boilerplate": bench.get("items_with_boilerplate", 0),
                "top_spans": spans[:10],
            },
            "flags": by_n,
            "runs": run_summary,
            "identifiers": ident,
            "pairs_missing": self.pairs_missing,
        }


# ---------------------------------------------------------------------------------------------- inputs


def _table_from_frame(df: pd.DataFrame, columns: Sequence[str], what: str) -> pa.Table:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{what}: no column {', '.join(repr(c) for c in missing)} "
                         f"(columns: {', '.join(map(str, df.columns))})")
    arrays = {}
    for c in dict.fromkeys(columns):
        col = df[c]
        try:
            arrays[c] = pa.array(col, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # e.g. str and bytes mixed: keep as bytes
            arrays[c] = pa.array(col.astype(object), type=pa.large_binary(), from_pandas=True)
    return pa.table(arrays)


def _batches(train, columns: Sequence[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
    if isinstance(train, pd.DataFrame):
        yield from _table_from_frame(train, columns, "train").to_batches(max_chunksize=batch_rows)
        return
    if isinstance(train, pa.Table):
        missing = [c for c in columns if c not in train.column_names]
        if missing:
            raise InputError(f"train: no column {', '.join(repr(c) for c in missing)}")
        yield from train.select(list(dict.fromkeys(columns))).to_batches(max_chunksize=batch_rows)
        return
    if isinstance(train, pa.RecordBatch):
        train = [train]
    for batch in train:
        if isinstance(batch, pa.Table):
            yield from _batches(batch, columns, batch_rows)
            continue
        missing = [c for c in columns if c not in batch.schema.names]
        if missing:
            raise InputError(f"train: no column {', '.join(repr(c) for c in missing)}")
        yield batch


def _bench_table(bench, id_col: str, field_: str) -> pa.Table:
    if isinstance(bench, pd.DataFrame):
        return _table_from_frame(bench, [id_col, field_], "bench")
    if isinstance(bench, pa.Table):
        missing = [c for c in (id_col, field_) if c not in bench.column_names]
        if missing:
            raise InputError(f"bench: no column {', '.join(repr(c) for c in missing)}")
        return bench.select(list(dict.fromkeys([id_col, field_])))
    raise InputError("bench must be a pandas DataFrame or an Arrow table")


def _pair_list(pairs) -> list[tuple[str, str]]:
    if pairs is None:
        return []
    if isinstance(pairs, pd.DataFrame):
        for c in ("train_id", "bench_id"):
            if c not in pairs.columns:
                raise InputError(f"pairs: no column '{c}'")
        t = pairs["train_id"].astype("string")
        b = pairs["bench_id"].astype("string")
        keep = t.notna() & b.notna()
        return sorted(set(zip(t[keep].tolist(), b[keep].tolist(), strict=True)))
    return sorted({(str(t), str(b)) for t, b in pairs})


class _Tee:
    """Passes batches through while keeping the identifier targets of the rows in pairs."""

    def __init__(self, batches: Iterable[pa.RecordBatch], id_col: str, field_: str | None, wanted: pa.Array):
        self.batches, self.id_col, self.field, self.wanted = batches, id_col, field_, wanted
        self.values: dict[str, Targets] = {}

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for batch in self.batches:
            if self.field is not None and len(self.wanted):
                ids = batch.column(batch.schema.names.index(self.id_col)).cast(pa.string())
                hit = pc.is_in(ids, value_set=self.wanted)
                if pc.any(hit).as_py():
                    rows = pa.array(np.flatnonzero(hit.to_numpy(zero_copy_only=False)))
                    texts, _ = to_string_array(batch.column(batch.schema.names.index(self.field)).take(rows))
                    for i, t in zip(ids.take(rows).to_pylist(), texts.to_pylist(), strict=True):
                        if i not in self.values:  # keep the targets, not the (possibly long) text
                            self.values[i] = extract_targets(t)
            yield batch


# ---------------------------------------------------------------------------------------------- the check


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
    workers: int | None = 2,
    tokenizer: str = "words",
    identifier_field: str | None = None,
    id_col: str = "item_id",
    mask_spans: bool = True,
    batch_rows: int = CHUNK_ROWS,
    chunk_bytes: int = CHUNK_BYTES,
    index: BenchIndex | None = None,
    progress=None,
) -> TextResult:
    """Run the text evidence check.

    train: DataFrame, Arrow table, or iterable of record batches with ``id_col`` and ``train_field``
        (and ``identifier_field`` when given). Streams: only one batch at a time is held.
    bench: DataFrame or Arrow table with ``id_col`` and ``bench_field``.
    ns: word n-gram sizes (default 13 and 8).
    boilerplate_threshold: an n-gram in at least this many bench items is boilerplate (None: off).
    background: optional corpus (texts: list, Series, Arrow array, or iterable) whose n-grams are
        boilerplate wherever they appear in the bench.
    pairs: DataFrame with ``train_id`` and ``bench_id`` (the id-matched pairs): gets the pair view
        (longest shared run), identifier evidence, and splits the flag counts into matched / rest.
    identifier_field: train column holding the crash spec / report / patch whose function and file
        names are looked for in the bench text (default: the train text field itself).
    workers: processes for the scan (1 = in process; None = as many as cores, at most 2).
    """
    if boilerplate_threshold is not None and boilerplate_threshold < 2:
        raise InputError("boilerplate threshold must be at least 2 bench items (or None to turn it off)")
    if isinstance(tokenizer, str) and tokenizer not in TOKENIZERS:
        raise InputError(f"unknown tokenizer '{tokenizer}' (choose {', '.join(TOKENIZERS)})")
    workers = available_workers(workers)
    ns = tuple(sorted({int(n) for n in ns}, reverse=True))
    if not ns or min(ns) < 1:
        raise InputError("n-gram sizes must be positive integers")
    btable = _bench_table(bench, id_col, bench_field)
    bench_ids = btable.column(id_col).cast(pa.string()).to_pylist()
    bench_text_col = btable.column(bench_field)
    if index is None:
        index = build_index(bench_text_col, bench_ids, ns=ns, boilerplate_threshold=boilerplate_threshold,
                            background=background, tokenizer=tokenizer, mask_spans=mask_spans)
    elif index.item_ids != [str(b) for b in bench_ids]:
        raise InputError("the prebuilt index was built from other bench items")
    ns, boilerplate_threshold, mask_spans = index.ns, index.threshold, index.mask_spans
    bench_pos: dict[str, list[int]] = {}
    for i, b in enumerate(bench_ids):
        bench_pos.setdefault(b, []).append(i)

    pair_list = _pair_list(pairs)
    by_train: dict[str, list[int]] = {}
    missing_bench = set()
    for t, b in pair_list:
        lst = by_train.setdefault(t, [])
        if b in bench_pos:
            lst.extend(bench_pos[b])
        else:
            missing_bench.add(b)
    ident_field = identifier_field or train_field
    columns = [id_col, train_field] + ([ident_field] if pair_list and ident_field != train_field else [])
    wanted = pa.array(sorted(by_train), pa.string())
    tee = _Tee(_batches(train, columns, batch_rows), id_col,
               ident_field if pair_list else None, wanted)
    try:
        res = scan(index, tee, id_col=id_col, text_col=train_field, pairs=by_train, workers=workers,
                   chunk_bytes=chunk_bytes, chunk_rows=batch_rows, progress=progress)
    except KeyError as exc:
        raise InputError(f"train: no column {exc}") from None

    # flags
    f = res.flags
    item = f["item"].astype(np.int64)
    words = index.words_many(index.offsets[item] + f["bench_start"], index.offsets[item] + f["bench_end"])
    flags = _frame({
        "train_id": f["train_id"], "n": f["n"], "bench_id": [bench_ids[i] for i in item],
        "shared": f["shared"], "train_start": f["train_start"], "train_end": f["train_end"],
        "bench_start": f["bench_start"], "bench_end": f["bench_end"], "words": words,
    }, FLAG_COLUMNS)
    order_n = {n: k for k, n in enumerate(ns)}
    flags["_row"] = f["train_row"]
    flags["_n"] = flags["n"].map(order_n)
    flags["_b"] = item
    flags = flags.sort_values(["_row", "_n", "_b"], kind="stable").drop(columns=["_row", "_n", "_b"])
    flags = flags.reset_index(drop=True)

    bp = res.boilerplate
    boiler = _frame({k: bp[k] for k in ("train_id", "n", "hits", "train_start", "train_end")},
                    BOILERPLATE_COLUMNS)
    boiler["_row"] = bp["train_row"]
    boiler["_n"] = boiler["n"].map(order_n)
    boiler = boiler.sort_values(["_row", "_n"], kind="stable").drop(columns=["_row", "_n"]).reset_index(drop=True)

    # pair runs, one row per given pair (NA where a side has no text or is missing)
    run_rows: dict[str, list] = {c: [] for c in RUN_COLUMNS}
    seen = res.pair_seen
    for t, b in pair_list:
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
        start = int(index.offsets[i])
        run_rows["words"].append(index.words(start + bpos, start + bpos + length) if length else "")
    runs = _frame(run_rows, RUN_COLUMNS)
    # a side without text has no run: null, not 0
    bench_null = np.asarray(bench_text_col.is_null().to_numpy(zero_copy_only=False)) if len(bench_ids) else []
    no_text = [(t in res.null_ids) or all(bench_null[i] for i in bench_pos.get(b, [0])) if b in bench_pos else True
               for t, b in pair_list]
    if any(no_text):
        runs.loc[np.array(no_text), ["longest_run", "train_pos", "bench_pos", "words"]] = None

    identifiers = None
    if pair_list:
        bench_texts = {b: bench_text_col[bench_pos[b][0]].as_py() for b in {b for _, b in pair_list} if b in bench_pos}
        rows = identifier_evidence([(t, b) for t, b in pair_list if t in seen], tee.values, bench_texts)
        identifiers = pd.DataFrame(rows, columns=["train_id", "bench_id", "functions", "files", "named_functions",
                                                  "named_files", "function_named", "file_named", "bench_text"])
        for c in ("train_id", "bench_id", "functions", "files", "named_functions", "named_files"):
            identifiers[c] = identifiers[c].astype("string")
        for c in ("function_named", "file_named", "bench_text"):
            identifiers[c] = identifiers[c].astype("boolean")

    counts = dict(res.counts)
    counts["null"] = counts["null"] - counts["non_utf8"]
    counts["short"] = dict(res.short)
    bench_counts = dict(index.stats)
    return TextResult(
        train_field=train_field, bench_field=bench_field, ns=ns, boilerplate_threshold=boilerplate_threshold,
        tokenizer=index.tokenizer.name, flags=flags, runs=runs, boilerplate=boiler, identifiers=identifiers,
        train_counts=counts, bench_counts=bench_counts, pair_ids=set(pair_list), pair_train_seen=set(seen),
        pairs_missing={"train_ids_not_in_train": len(set(by_train) - set(seen)),
                       "bench_ids_not_in_bench": len(missing_bench)},
        mask_spans=mask_spans,
    )
