"""The matrix as text for stdout (json, csv, markdown) and as a result folder. Its two tables' rows are
`table_rows.matrix_rows` / `couple_rows` (the console draws the same rows)."""

from __future__ import annotations

from pathlib import Path

from ...jsonout import dumps_json
from ...model import COUNTED_PAIR_KINDS
from ...results import MatrixResult
from ..atomic import atomic_folder
from ..tables import to_csv_text
from .table_rows import couple_rows, markdown_table, matrix_rows

__all__ = ["couple_rows", "matrix_rows", "render_matrix", "write_matrix_report"]


def render_matrix(result: MatrixResult, fmt: str) -> str | None:
    """Text for stdout in `fmt` (json, csv, md), or None for the rich table."""
    if fmt == "json":
        return dumps_json(result.summary())
    if fmt == "csv":
        return to_csv_text(result.cells)
    if fmt == "md":
        note = ("Cells: bench items (row) in a counted pair with the column's benchmark, and their share. "
                "Counted kinds: " + ", ".join(COUNTED_PAIR_KINDS) + ".\n\n")
        return markdown_table(*matrix_rows(result)) + "\n" + note + markdown_table(*couple_rows(result))
    return None


def write_matrix_report(result: MatrixResult, out: Path) -> Path:
    """summary.json, cells.csv, couples.csv and pairs.csv in `out`, written atomically."""
    with atomic_folder(out, command="matrix") as tmp:
        (tmp / "summary.json").write_text(dumps_json(result.summary()), encoding="utf-8")
        (tmp / "cells.csv").write_text(to_csv_text(result.cells), encoding="utf-8")
        (tmp / "couples.csv").write_text(to_csv_text(result.couples), encoding="utf-8")
        (tmp / "pairs.csv").write_text(to_csv_text(result.pairs), encoding="utf-8")
    return Path(out)
