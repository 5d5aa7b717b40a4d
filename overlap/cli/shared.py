"""What several commands share: the --out check, input-problem lines, the compare output, record printing.

Heavy modules (pandas, pyarrow, huggingface_hub, scipy, datasets) and the library under them are imported
inside the command bodies: that keeps `overlap --help` fast (tests/test_cli.py guards it), it dodges no cycle.
"""

from __future__ import annotations

import csv
import os
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..jsonout import dumps_json
from ..outputs.atomic import check_out_folder, printable
from ..progress import problem_lines, status
from .options import Format

ResultDir = Annotated[Path, typer.Argument(help="A result folder written by `overlap compare --out`.",
                                           exists=True, file_okay=False, dir_okay=True)]


def stdout_console():
    """The terminal's width (or COLUMNS); a fixed width when stdout is not a terminal (see stdout_console)."""
    from ..outputs.report.console import stdout_console  # imported here: rich and the report stack load on use

    return stdout_console()


def check_out(out: Path, command: str, *inputs: str | Path, data: list[str] | None = None) -> None:
    """Refuse, before any work, an `--out` that `command` may not write (see `overlap.outputs.atomic`).
    `inputs` are dataset arguments and paths; those that are local files or folders, and every `--data`
    path, may not lie inside `out`."""
    # a `--data` value with no path is left to parse_data_options, which names it (an empty path is the current
    # folder, which holds the default --out)
    paths = [path for d in data or [] if (path := d.partition("=")[2])]
    named = [str(i) for i in inputs if str(i).strip() and not Path(str(i)).exists()]
    check_out_folder(out, command, inputs=[*map(str, inputs), *paths, *declared_places(named, data)])


def declared_places(names: list[str], data: list[str] | None) -> list[str]:
    """The local places that the dataset names among `names` are read from by their declaration (`path`; a
    glob's folder), unless `--data` gives them: `--out` inside one would be read as the dataset's rows on the
    next run. A name that is not known is left to the run, which says so."""
    if not names:
        return []
    import glob as globbing

    from ..errors import OverlapError
    from ..sources.registry.registry import get_spec, parse_selection  # imported here: reads the declarations

    given = {value.partition("=")[0].lower() for value in data or []}
    places = []
    for name in names:
        try:
            selection = parse_selection(name)
            spec = get_spec(selection.name) if selection.path is None else None
        except OverlapError:
            continue
        if spec is None or not spec.path or spec.name.lower() in given:
            continue
        path = spec.path
        if globbing.has_magic(path) and not Path(path).exists():  # the folder the pattern is matched in
            parts = Path(path).parts
            path = str(Path(*parts[:next(i for i, p in enumerate(parts) if globbing.has_magic(p))]) or ".")
        places.append(path)
    return places


def output_label(text: str) -> str:
    """A dataset argument as a short label for a default output name. A registered name keeps its selection
    (`cybergym:arvo`, `@REV`); anything else (a local file, folder or glob, or a Hub id `owner/name[:config]
    [@rev]` read by its columns) is labelled by what was typed, without asking the registry about it."""
    from ..sources.registry.registry import is_registered, selection_label  # imported here: reads the declarations

    if is_registered(text):
        return selection_label(text)
    path = Path(text)
    if path.exists():
        return path.name.split(".", 1)[0] or path.name  # `train.jsonl.gz` → train
    name, _, revision = text.strip().partition("@")
    label = name.rstrip("/").replace(":", "-")
    return f"{label}@{revision[:12]}" if revision else label


WHOLE_FLOAT_TEXT = re.compile(r"[0-9]+\.0+", re.ASCII)


def report_recognition(datasets) -> None:
    """For each dataset the user brought, one stderr line: how many ids each scheme took, with an example, and
    the values none took (`overlap.ids.recognise`); a built-in dataset's ids are known."""
    for dataset in datasets:
        recognition = getattr(dataset, "recognition", None)
        if recognition is not None and not getattr(dataset, "ids_known", False):
            typer.echo(f"overlap: {printable(dataset.name)}: ids read as {printable(recognition.summary())}", err=True)
            examples = recognition.unrecognised_examples
            if recognition.scheme is None and examples and all(str(v).strip().isdigit() for v in examples):
                # a bare number names no scheme on its own (a row number, an issue of some tracker): say how to
                # read them, since left unread they join nothing and a filter keeps them
                typer.echo(f"overlap: {printable(dataset.name)}: its unrecognised ids are bare numbers; if they are "
                           "OSS-Fuzz issues, pass --id-scheme ossfuzz", err=True)
            if examples and any(WHOLE_FLOAT_TEXT.fullmatch(str(v).strip()) for v in examples):
                # text like 10055.0 is an integer column written out as floats (a spreadsheet, or pandas with a
                # blank cell); read as text it is no id, and a number-typed cell would have been read
                typer.echo(f"overlap: {printable(dataset.name)}: some unrecognised ids are whole numbers written as "
                           "floats (e.g. 10055.0); write the column as integers, or use a format that keeps the "
                           "number type (JSON lines, parquet), where a whole float is its integer", err=True)


def report_problems(datasets, see: str | None) -> None:
    """Input problems (malformed lines, rows without an id, repeated ids, …) summarised on stderr, one line
    per kind; `datasets` are (name, problems) pairs (see `overlap.progress.problem_lines`)."""
    for line in problem_lines(datasets, see):
        typer.echo(f"overlap: {printable(line)}", err=True)


def result_datasets(result) -> list:
    """A compare result's training set and benchmarks."""
    return [result.train, *(b.bench for b in result.benches)]


def result_problems(result) -> list[tuple[str, list]]:
    """(name, problems) of a compare result's training set and benchmarks."""
    return [(result.train.name, result.train.problems), *((b.bench.name, b.bench.problems) for b in result.benches)]



def emit_compare(result, fmt: Format, out: Path | None, quiet: bool = False) -> dict:
    """A compare result: the report folder (when `out`), then the summary on stdout in `fmt` (`quiet`: not,
    the caller prints another format)."""
    from ..outputs.report.console import print_table, render  # imported here: keeps `overlap --help` fast
    from ..outputs.report.result_folders import write_compare_report

    summary = result.summary()
    if out is not None:
        with status(f"writing the report to {out}"):
            write_compare_report(result, out)
    text = "" if quiet else render(summary, fmt.value)
    if text is None:
        print_table(summary, stdout_console())
    else:
        sys.stdout.write(text)
    if out is not None:
        typer.echo(f"report written to {out}", err=True)
    return summary


def print_records(rows: list[dict], fmt: Format, title: str) -> None:
    """Rows on stdout as a JSON list (values keep their JSON types), CSV, a Markdown table or a rich table (in
    the text formats null is an empty cell and a boolean `true` / `false`, as JSON writes them)."""
    if fmt == Format.json:
        sys.stdout.write(dumps_json(rows))
        return
    columns = list(rows[0]) if rows else []
    if fmt == Format.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({c: _cell(row[c]) for c in columns} for row in rows)
        return
    if fmt == Format.md:
        sys.stdout.write("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n")
        for row in rows:
            sys.stdout.write("| " + " | ".join(_cell(row[c]).replace("|", "\\|") for c in columns) + " |\n")
        return
    from rich.table import Table  # imported here: keeps `overlap --help` fast

    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*[_cell(row[c]) for c in columns])
    stdout_console().print(table)


def _cell(value) -> str:
    """A record's value as a text cell: null → empty, booleans as JSON writes them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def print_files(paths: list[Path], fmt: Format, extra: dict) -> None:
    """The files a command wrote: one path a line (table), a JSON object, or csv/md rows."""
    # A path that is not UTF-8 (held as surrogates) would make a UTF-8 stdout raise after the files were
    # written: its bytes are shown with backslash escapes, as input errors name such files.
    shown = [os.fsencode(str(p)).decode("utf-8", "backslashreplace") for p in paths]
    if fmt == Format.table:
        for path in shown:
            typer.echo(path)
    elif fmt == Format.json:
        sys.stdout.write(dumps_json({"files": shown, **extra}))
    else:
        print_records([{"file": p} for p in shown] or [{"file": "", **extra}], fmt, title="written")
