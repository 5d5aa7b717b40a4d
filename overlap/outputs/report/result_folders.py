"""The entry point of the report: the result folder of a compare (pairs.csv, related.csv,
duplicates.csv, summary.json, train_clean_ids.txt, the per-benchmark id lists, pair_items.parquet,
report.md/html), report.md/html re-rendered from a saved folder, and the folder of `overlap ngram`
(summary.json, flags.csv, boilerplate.csv).

It composes the leaf writers, which import nothing of each other: `tables` (CSV with fixed columns, id
lists), `jsonout` (JSON), `markdown` (report.md) and `html` (report.html), over the shared view of a result
(`result_view`) and its sections (`assemble`). The matrix folder is `matrix_folder.py`, the filtered split
`ship/splits.py`, the card section `ship/cards.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...ids.compiled import string_buffers
from ...jsonout import dumps_json, versioned
from ..atomic import atomic_folder, write_text_atomic
from ..published import safe_name
from ..tables import (
    DUPLICATES_CSV_COLUMNS,
    LINE_BREAK_PATTERN,
    PAIRS_CSV_COLUMNS,
    bench_lists,
    id_line,
    to_csv_text,
    with_columns,
)
from .html import render_html
from .markdown import render_markdown
from .result_view import PAIR_ITEMS_FILE, fetch_paired_columns, view_of
from .sections import ResultView

__all__ = ["DUPLICATES_CSV_COLUMNS", "PAIRS_CSV_COLUMNS", "dumps_json", "ngram_summary", "write_compare_report",
           "write_ngram_report", "write_report_extras", "write_reports"]


def write_compare_report(result, out: Path, reports: bool = True) -> Path:
    """Write the report folder for a `CompareResult` atomically; returns the folder.

    Besides the tables it holds what `overlap report DIR` needs to re-render (pair_items.parquet), the
    per-benchmark clean/contaminated id lists and, with `reports`, report.md and report.html."""
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
        write_lines(tmp / "train_clean_ids.txt", result.train_clean_id_batches())
        write_report_extras(result, tmp, reports=reports)
    return Path(out)


def write_lines(path: Path, batches) -> None:
    """Each string of `batches` (string arrays) as one line, a batch at a time: the clean ids of a side of
    100M rows are written in the memory of one batch, never gathered into one list or text."""
    with open(path, "wb") as sink:
        for batch in batches:
            if len(batch):
                batch = batch.cast(pa.string())
                broken = pc.fill_null(pc.match_substring_regex(batch, LINE_BREAK_PATTERN), False)
                if pc.any(broken).as_py():  # the rare id holding a line break: as a JSON string (`id_line`)
                    batch = pa.array([id_line(v)[:-1] if v is not None else None for v in batch.to_pylist()],
                                     pa.string())
                lines = pc.binary_join_element_wise(batch, "", "\n")
                offsets, data, _ = string_buffers(lines)
                sink.write(memoryview(data)[offsets[0]:offsets[-1]])


def write_report_extras(result, folder: Path, reports: bool = True) -> None:
    """Write into a result folder being written (`write_compare_report` calls this inside its atomic
    folder): pair_items.parquet (texts for the examples, so `overlap report DIR` can re-render), the
    `<bench>_clean_ids.txt` / `<bench>_contaminated_ids.txt` lists and, with `reports`, report.md and
    report.html."""
    folder = Path(folder)
    view = view_of(result)
    # Through a handle: Arrow cannot open a path that is not UTF-8 (an --out folder named in latin-1).
    with open(folder / PAIR_ITEMS_FILE, "wb") as sink:
        view.items.to_parquet(sink, index=False, compression="zstd")
    for name, text in bench_lists(result).items():
        (folder / safe_name(name)).write_text(text, encoding="utf-8")  # a bench name never leaves the folder
    if reports:
        (folder / "report.md").write_text(render_markdown(view), encoding="utf-8")
        (folder / "report.html").write_text(render_html(view), encoding="utf-8")


def write_reports(view: ResultView, folder: Path) -> list[Path]:
    """Write report.md and report.html into `folder` (each atomically); returns their paths."""
    folder = Path(folder)
    md, html = folder / "report.md", folder / "report.html"
    write_text_atomic(md, render_markdown(view))
    write_text_atomic(html, render_html(view))
    return [md, html]


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
