"""The report folder of a compare: pairs.csv, duplicates.csv, summary.json, train_clean_ids.txt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from .atomic import atomic_folder


def dumps_json(data: Any) -> str:
    """Deterministic JSON: sorted keys, fixed indentation, trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def to_csv_text(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def write_compare_report(result, out: Path, reports: bool = True) -> Path:
    """Write the report folder for a `CompareResult` atomically; returns the folder.

    Besides the tables it holds what `overlap report DIR` needs to re-render (pair_items.parquet), the
    per-benchmark clean/contaminated id lists and, with `reports`, report.md and report.html."""
    from .markdown import write_report_extras

    summary = result.summary()
    bench_dups = [b.duplicates for b in result.benches]
    dups = pd.concat([result.train_duplicates, *bench_dups], ignore_index=True)
    with atomic_folder(out) as tmp:
        (tmp / "summary.json").write_text(dumps_json(summary), encoding="utf-8")
        (tmp / "pairs.csv").write_text(to_csv_text(result.pairs), encoding="utf-8")
        related = result.related
        if len(related):
            (tmp / "related.csv").write_text(to_csv_text(related), encoding="utf-8")
        (tmp / "duplicates.csv").write_text(to_csv_text(dups), encoding="utf-8")
        clean = result.train_clean_ids()
        (tmp / "train_clean_ids.txt").write_text("".join(f"{i}\n" for i in clean), encoding="utf-8")
        write_report_extras(result, tmp, reports=reports)
    return Path(out)
