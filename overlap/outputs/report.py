"""The report folder of a compare (pairs.csv, related.csv, duplicates.csv, summary.json, train_clean_ids.txt,
the per-benchmark id lists, report.md/html) and of `overlap ngram` (summary.json, flags.csv, boilerplate.csv).

CSV files always have the same columns in the same order, whatever stage ran: `PAIRS_CSV_COLUMNS` for
pairs.csv and related.csv (a stage that did not run leaves its columns empty; a column no stage declared
goes after them, sorted), `DUPLICATES_CSV_COLUMNS` for duplicates.csv.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..jsonout import dumps_json, versioned  # noqa: F401 - dumps_json is imported from here by the writers
from ..model import PAIR_COLUMNS
from .atomic import atomic_folder

# Evidence columns the stages add to pairs, in the order pairs.csv shows them (SWE pair kinds, fix and
# crash evidence, text runs and names).
EVIDENCE_COLUMNS = ("pair_kind", "counted", "fix_relation", "fix_method", "fix_reason", "crash_grade",
                    "crash_reason", "longest_run", "names_function", "names_file")
PAIRS_CSV_COLUMNS = (*PAIR_COLUMNS, *EVIDENCE_COLUMNS)
DUPLICATES_CSV_COLUMNS = ("dataset", "kind", "value", "items", "item_ids", "raw_values", "identical_text")


def to_csv_text(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def with_columns(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """`frame` with exactly `columns` first, in order (missing ones empty), then any others sorted."""
    out = frame.copy()
    for column in columns:
        if column not in out.columns:
            out[column] = pd.Series([pd.NA] * len(out), index=out.index, dtype="object")
    return out[[*columns, *sorted(c for c in out.columns if c not in columns)]]


def write_compare_report(result, out: Path, reports: bool = True) -> Path:
    """Write the report folder for a `CompareResult` atomically; returns the folder.

    Besides the tables it holds what `overlap report DIR` needs to re-render (pair_items.parquet), the
    per-benchmark clean/contaminated id lists and, with `reports`, report.md and report.html."""
    from .markdown import fetch_paired_columns, write_report_extras

    fetch_paired_columns(result)  # lazy texts and patches of the paired items, before anything is written
    summary = result.summary()
    bench_dups = [b.duplicates for b in result.benches]
    dups = pd.concat([result.train_duplicates, *bench_dups], ignore_index=True)
    with atomic_folder(out, command="compare") as tmp:
        (tmp / "summary.json").write_text(dumps_json(summary), encoding="utf-8")
        (tmp / "pairs.csv").write_text(to_csv_text(with_columns(result.pairs, PAIRS_CSV_COLUMNS)), encoding="utf-8")
        if len(result.related):  # pairs reported beside the overlap, not counted in it
            (tmp / "related.csv").write_text(to_csv_text(with_columns(result.related, PAIRS_CSV_COLUMNS)),
                                             encoding="utf-8")
        (tmp / "duplicates.csv").write_text(to_csv_text(with_columns(dups, DUPLICATES_CSV_COLUMNS)),
                                            encoding="utf-8")
        clean = result.train_clean_ids()
        (tmp / "train_clean_ids.txt").write_text("".join(f"{i}\n" for i in clean), encoding="utf-8")
        write_report_extras(result, tmp, reports=reports)
    return Path(out)


def ngram_summary(train_name: str, bench_name: str, result) -> dict[str, Any]:
    """summary.json of `overlap ngram`: the text check's summary, the two dataset names under `names`."""
    return versioned("ngram", result.summary() | {"names": {"train": str(train_name), "bench": str(bench_name)}})


def write_ngram_report(summary: dict[str, Any], result, out: Path) -> Path:
    """summary.json, flags.csv and boilerplate.csv of `overlap ngram --out`, written atomically."""
    with atomic_folder(out, command="ngram") as tmp:
        (tmp / "summary.json").write_text(dumps_json(summary), encoding="utf-8")
        (tmp / "flags.csv").write_text(to_csv_text(result.flags), encoding="utf-8")
        (tmp / "boilerplate.csv").write_text(to_csv_text(result.boilerplate), encoding="utf-8")
    return Path(out)
