"""``TextResult``: the text evidence of one (train field, bench field) pair, its tables and summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

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


def typed_frame(data: dict[str, Any], schema: dict[str, str]) -> pd.DataFrame:
    """A DataFrame with exactly the columns and dtypes of ``schema`` (missing columns empty)."""
    return pd.DataFrame({c: pd.Series(data.get(c, []), dtype=t) for c, t in schema.items()})


@dataclass
class TextResult:
    """The text evidence for one (train field, bench field) pair of a compare."""

    train_field: str
    bench_field: str
    ns: tuple[int, ...]
    boilerplate_threshold: int | None
    tokenizer: str
    flags: pd.DataFrame  # per flagged (train item, n, bench item): counts and longest shared run
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
            "flags": self._flag_summary(),
            "runs": self._run_summary(),
            "identifiers": self._identifier_summary(),
            "pairs_missing": self.pairs_missing,
        }

    def _flag_summary(self) -> dict[str, Any]:
        """Per n: flagged train items, split into id-matched (by their own counterpart or another bench
        item) and the rest, and the boilerplate hits."""
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
        return by_n

    def _run_summary(self) -> dict[str, Any]:
        runs = self.runs["longest_run"].dropna().astype(int)
        return {
            "pairs": int(len(self.runs)),
            "with_text": int(len(runs)),
            "median": float(np.median(runs)) if len(runs) else None,
            "max": int(runs.max()) if len(runs) else None,
            "at_least_n": {str(n): int((runs >= n).sum()) for n in self.ns},
        }

    def _identifier_summary(self) -> dict[str, int] | None:
        if self.identifiers is None:
            return None
        d = self.identifiers
        fn, fl = d["function_named"], d["file_named"]
        return {
            "pairs": int(len(d)),
            "with_function_target": int(fn.notna().sum()),
            "function_named": int((fn == True).sum()),  # noqa: E712 - nullable booleans
            "with_file_target": int(fl.notna().sum()),
            "file_named": int((fl == True).sum()),  # noqa: E712
        }
