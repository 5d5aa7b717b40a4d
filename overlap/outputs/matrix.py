"""The matrix as text for stdout (json, csv, markdown) and as a result folder."""

from __future__ import annotations

from pathlib import Path

from ..jsonout import dumps_json
from ..model import COUNTED_PAIR_KINDS, PAIR_KINDS
from ..results import MatrixResult
from .atomic import atomic_folder
from .report import to_csv_text


def matrix_rows(result: MatrixResult) -> tuple[list[str], list[list[str]]]:
    """The main table: one row per benchmark, one column per other benchmark (`found/items (share)`),
    then items in at least one / two other benchmarks."""
    names = [d.name for d in result.datasets]
    header = ["bench", "items", *names, ">=1 other", ">=2 others"]
    cells = {(c["bench"], c["other"]): c for c in result.cells.to_dict(orient="records")}
    rows = []
    for bench in result.bench_rows():
        row = [bench["bench"], str(bench["items"])]
        for other in names:
            cell = cells.get((bench["bench"], other))
            if cell is None:
                row.append("-")
            elif cell["skipped"]:
                row.append("subset")
            else:
                row.append(f"{cell['bench_items_found']} ({cell['share']:.1%})")
        row.append(f"{bench['in_ge1_other']} ({bench['share_ge1_other']:.1%})")
        row.append(f"{bench['in_ge2_other']} ({bench['share_ge2_other']:.1%})")
        rows.append(row)
    return header, rows


def couple_rows(result: MatrixResult) -> tuple[list[str], list[list[str]]]:
    header = ["a", "b", *PAIR_KINDS, "shared repos", "note"]
    rows = []
    for couple in result.couples.to_dict(orient="records"):
        rows.append([couple["a"], couple["b"], *[str(couple[f"pairs_{k}"]) for k in PAIR_KINDS],
                     str(couple["shared_repos"]), couple["skipped"] and "skipped: own subset"])
    return header, rows


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def render_matrix(result: MatrixResult, fmt: str) -> str | None:
    """Text for stdout in `fmt` (json, csv, md), or None for the rich table."""
    if fmt == "json":
        return dumps_json(result.summary())
    if fmt == "csv":
        return to_csv_text(result.cells)
    if fmt == "md":
        note = ("Cells: bench items (row) in a counted pair with the column's benchmark, and their share. "
                "Counted kinds: " + ", ".join(COUNTED_PAIR_KINDS) + ".\n\n")
        return _markdown(*matrix_rows(result)) + "\n" + note + _markdown(*couple_rows(result))
    return None


def write_matrix_report(result: MatrixResult, out: Path) -> Path:
    """summary.json, cells.csv, couples.csv and pairs.csv in `out`, written atomically."""
    with atomic_folder(out, command="matrix") as tmp:
        (tmp / "summary.json").write_text(dumps_json(result.summary()), encoding="utf-8")
        (tmp / "cells.csv").write_text(to_csv_text(result.cells), encoding="utf-8")
        (tmp / "couples.csv").write_text(to_csv_text(result.couples), encoding="utf-8")
        (tmp / "pairs.csv").write_text(to_csv_text(result.pairs), encoding="utf-8")
    return Path(out)
