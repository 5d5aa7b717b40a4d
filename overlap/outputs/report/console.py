"""Stdout renderings of a compare summary and of the matrix: rich tables fitted to the terminal, Markdown, JSON,
CSV. The rows come from `table_rows`; this module only lays them out."""

from __future__ import annotations

import csv
import io
import os
import sys
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...jsonout import dumps_json
from .cell_text import title_of
from .table_rows import couple_rows, markdown_table, matrix_rows, summary_rows

# Width of stdout tables when stdout is not a terminal and COLUMNS is not set (a file, a pipe, CI): fixed,
# so that saved output does not depend on the terminal the command happened to run from.
PIPE_WIDTH = 100


def render_markdown(summary: dict[str, Any]) -> str:
    return markdown_table(*summary_rows(summary))


def stdout_console():
    """A rich console on stdout as wide as the terminal (or COLUMNS when set); PIPE_WIDTH when stdout is
    not a terminal, so files and pipes get the same bytes whatever terminal ran the command."""
    explicit = (os.environ.get("COLUMNS") or "").isdigit()
    width = None if explicit or sys.stdout.isatty() else PIPE_WIDTH
    return Console(file=sys.stdout, soft_wrap=False, width=width)


def print_table(summary: dict[str, Any], console) -> None:
    header, rows = summary_rows(summary)
    print_fitted(console, title_of(summary), header, rows,
                 names=header[1:], long_names=("benchmark", "value"), justify="left")


def print_matrix(result, console) -> None:
    """`overlap matrix`'s two tables (see table_rows.matrix_rows / couple_rows), fitted to the console: benchmark
    names become codes with a legend, or the table one row per cell, when the full table is too wide."""
    names = [d.name for d in result.datasets]
    header, rows = matrix_rows(result)
    print_fitted(console, "overlap matrix: bench items found in each other benchmark", header, rows, keys=2,
                 names=names, long_names=("in benchmark", "bench items found"))
    header, rows = couple_rows(result)
    print_fitted(console, "pair kinds per two benchmarks", [identifier_words(h) for h in header], rows, keys=2,
                 names=names, long_names=("pair kind", "pairs"))


def identifier_words(name: str) -> str:
    """`same_pr_other_base` → `same PR other base`: an identifier as words a header can wrap between."""
    return " ".join("PR" if word == "pr" else word for word in name.split("_"))


def print_fitted(console, title: str, header: list[str], rows: list[list[str]], *, keys: int = 1,
                 names: list[str] = (), long_names: tuple[str, str] = ("column", "value"),
                 justify: str = "right") -> None:
    """Print a table no wider than the console without splitting a word (cells wrap at spaces). Tried in
    turn: the table as given; with each long name in `names` (in headers and the first `keys` columns)
    replaced by a short code, explained in a legend under the table; one row per (row, column) cell, with
    the column's header in a `long_names[0]` column beside the `long_names[1]` column of values. Key
    columns are left-aligned, the others `justify`."""
    shown = [i for i, h in enumerate(header) if i < keys or any(row[i] for row in rows)]  # no empty column
    header, rows = [header[i] for i in shown], [[row[i] for i in shown] for row in rows]
    codes = {name: f"[{i}]" for i, name in enumerate(dict.fromkeys(names), start=1) if len(name) > 4}
    coded_header = [codes.get(h, h) for h in header]
    coded_rows = [[codes.get(c, c) if i < keys else c for i, c in enumerate(row)] for row in rows]
    used = [name for name in codes if name in header or any(name in row[:keys] for row in rows)]
    long_rows = [[*row[:keys], header[i], cell] for row in rows for i, cell in enumerate(row)
                 if i >= keys and cell not in ("", "-")]
    candidates = [(header, rows, []), (coded_header, coded_rows, [f"{codes[name]} {name}" for name in used]),
                  ([*header[:keys], *long_names], long_rows, [])]
    for cand_header, cand_rows, legend in candidates:
        widths = column_widths(cand_header, cand_rows, console.width)
        if widths is not None or cand_rows is long_rows:
            console.print(_rich_table(title, cand_header, cand_rows, keys, justify, widths))
            for line in _legend_lines(legend, console.width):
                console.print(line, highlight=False, markup=False)
            return


# Columns of a rich table with the default box and padding take 3 characters each besides their text, plus 1.
def column_widths(header: list[str], rows: list[list[str]], width: int) -> list[int] | None:
    """Text widths for the columns so that the table is at most `width` wide and no word is split (each
    column at least its longest word; the room left goes to the columns that would wrap), or None."""
    columns = list(zip(header, *rows, strict=True))
    least = [max(cell_len(word) for text in column for word in [*str(text).split(), ""]) for column in columns]
    most = [max(cell_len(str(text)) for text in column) for column in columns]
    room = width - (3 * len(columns) + 1)
    if sum(least) > room:
        return None
    widths = list(least)
    while sum(widths) < room and any(w < m for w, m in zip(widths, most, strict=True)):
        wanting = [i for i, (w, m) in enumerate(zip(widths, most, strict=True)) if w < m]
        for i in wanting[: room - sum(widths)]:
            widths[i] += 1
    return widths


def _legend_lines(entries: list[str], width: int) -> list[str]:
    """`[1] name  [2] name`, broken between entries (never inside one) to fit `width`."""
    lines: list[str] = []
    for entry in entries:
        if lines and len(lines[-1]) + 2 + len(entry) <= width:
            lines[-1] += "  " + entry
        else:
            lines.append(entry)
    return lines


def _rich_table(title: str, header: list[str], rows: list[list[str]], keys: int, justify: str,
                widths: list[int] | None):
    table = Table(title=title, title_justify="left")
    for index, name in enumerate(header):
        table.add_column(Text(name), justify="left" if index < keys else justify,
                         style="bold" if index == 0 else None, width=widths[index] if widths else None)
    for row in rows:
        table.add_row(*[Text(cell) for cell in row])
    return table


def render_csv(summary: dict[str, Any]) -> str:
    """The summary table as CSV: the rows the console table and the Markdown show (pairs are in pairs.csv)."""
    header, rows = summary_rows(summary)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def render(summary: dict[str, Any], fmt: str) -> str | None:
    """Text for stdout in `fmt` (json, csv, md), or None for the rich table. Every format says the same
    thing: the summary (the pairs themselves are in the report folder's pairs.csv)."""
    if fmt == "json":
        return dumps_json(summary)
    if fmt == "csv":
        return render_csv(summary)
    if fmt == "md":
        return render_markdown(summary)
    return None
