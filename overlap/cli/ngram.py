"""`overlap ngram`: the text check alone, on any two datasets or local files.

The library under the command (pandas, pyarrow, the scan) is imported inside the function bodies: that keeps
`overlap --help` fast (tests/test_cli.py guards it), it dodges no cycle."""

from __future__ import annotations

import glob
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..jsonout import dumps_json
from ..progress import RowsBar, set_quiet, status
from ..sources.registry.registry import is_registered
from ..words import count, plural, verb
from .options import (
    DataOption,
    Engine,
    EngineOption,
    Format,
    FormatOption,
    NgramOption,
    RayAddressOption,
    RegistryOption,
    TextOption,
    WorkersOption,
    missing_option,
    out_option,
    ray_address_for,
)
from .shared import check_out, print_records, report_problems


def _frame(spec: str, field: str, id_column: str | None, data, stream: bool = False):
    """Items of a registered dataset, or rows of a local file that no adapter recognises."""
    import pandas as pd  # imported here, with the library below: keeps `overlap --help` fast

    from ..sources.formats.whole_file import read_records
    from ..sources.load import load_dataset
    from ..text.attach import text_field, texts_of

    path = Path(spec)
    if path.is_file() and id_column is not None:
        rows = read_records(path, [id_column, field], required=[id_column, field])
        if not rows:
            raise InputError(f"{path}: the file has no rows")
        frame = pd.DataFrame(rows, columns=list(dict.fromkeys([id_column, field])))
        # each id as its cell reads (`id_text`: 12345678901234567 keeps its digits, 2.0 is 2, NaN is no id),
        # not as pandas typed the column (a float column of every number); the id column may be the text too
        frame.insert(0, "item_id", pd.array([_row_id(path, number, row.get(id_column), id_column)
                                             for number, row in enumerate(rows, 1)], dtype="string"))
        if id_column != field:
            frame = frame.drop(columns=[id_column])
        missing = int(frame["item_id"].isna().sum())
        if missing == len(frame):
            raise InputError(f"{path}: no row has an id in column '{id_column}'")
        if missing:  # a flag must name its row: rows without an id are left out, and said so
            frame = frame[frame["item_id"].notna()].reset_index(drop=True)
            typer.echo(f"{path.name}: {plural(missing, 'row')} without an id in column '{id_column}' left out",
                       err=True)
        return path.stem, frame, field, []
    if not path.exists() and not is_registered(spec):
        raise InputError(f"{spec}: not a registered dataset or an existing file")
    dataset = load_dataset(spec, data)
    column = text_field(dataset, field)
    return dataset.name, texts_of(dataset, column, stream=stream), column, dataset.problems


def _row_id(path: Path, number: int, value, id_column: str) -> str | None:
    """The id of row `number` (`id_text`), or one line naming the file, row and column of a cell that is no id."""
    from ..ids.values import id_text

    try:
        return id_text(value)
    except InputError as exc:
        raise InputError(f"{path}: row {number}: column '{id_column}' {exc}") from None


def _train_files(spec: str, id_column: str | None):
    """The train side as streamed files (a file, folder, glob, Hub id or URI) when --id-column is given or
    the spec is a glob or URI; None for the dataset route (a registered name, or a file or folder that an
    adapter recognises). A single JSON file keeps the row reader: its cells that are not text (numbers,
    lists) are counted and skipped, where the streamed JSON reader would write them as text."""
    from ..text.ngram.engines import train_files  # imported here: keeps `overlap --help` fast

    if is_registered(spec):
        return None
    if id_column is None and "://" not in spec and not glob.has_magic(spec):
        return None
    if Path(spec).is_file() and Path(spec).suffix.lower() in (".json", ".jsonl"):
        return None
    return train_files(spec, id_column=id_column or "item_id")


def _files_name(spec: str) -> str:
    """How a streamed train side is named in the output: the file's stem, the folder's name, else as given."""
    import glob

    if "://" in spec or glob.has_magic(spec):
        return spec
    return Path(spec.rstrip("/")).stem or spec


def ngram(
    train: Annotated[str, typer.Argument(help="Training set: a registered name, Hub id, local file, folder of "
                                              "shards, glob or object-store URI (s3://...; with --id-column or a "
                                              "column named item_id), read batch by batch.")],
    bench: Annotated[str, typer.Argument(help="Benchmark: a registered name, Hub id, or local file.")],
    field: TextOption = None,
    data: DataOption = None,
    registry: RegistryOption = None,
    n: NgramOption = None,
    threshold: Annotated[int, typer.Option("--boilerplate-threshold", min=2,
                                           help="An n-gram in at least this many bench items is boilerplate: "
                                                "the words it covers never flag.")] = 5,
    background: Annotated[Path | None, typer.Option("--background", help="A text file (one document per line) "
                                                    "whose n-grams are boilerplate too.")] = None,
    id_column: Annotated[str | None, typer.Option("--id-column", help="Id column of files that are not registered "
                                                  "datasets (the train side is then streamed: a file, folder, glob, "
                                                  "Hub id or URI).")] = None,
    engine: EngineOption = Engine.local,
    ray_address: RayAddressOption = None,
    workers: WorkersOption = None,
    out: Annotated[Path | None, out_option("Write flags.csv, boilerplate.csv and summary.json here.")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """The n-gram decontamination check alone: which train items share a word n-gram with which bench item
    (attributed to the bench item and the span), with shared templates masked, and the bench items too
    short to ever be flagged.

    Example: overlap ngram swe-rebench-v2 swe-bench-multilingual --text problem_statement:problem_statement
    """
    from ..outputs.report.result_folders import (  # imported here: keeps `overlap --help` fast
        ngram_summary,
        write_ngram_report,
    )
    from ..sources.formats.whole_file import read_text_file
    from ..sources.load import parse_data_options
    from ..text.api import text_check
    from ..text.ngram.engines import known_rows

    if not field:
        raise missing_option("--text")
    if len(field) > 1:
        raise InputError(f"--text given {len(field)} times: ngram compares one TRAIN_FIELD:BENCH_FIELD pair")
    field = field[0]
    if fmt == Format.json:
        set_quiet()
    if out is not None:
        check_out(out, "ngram", train, bench, *([background] if background else []), data=data)
    train_field, sep, bench_field = field.partition(":")
    if not sep or not train_field or not bench_field:
        raise InputError(f"--text {field!r}: expected TRAIN_FIELD:BENCH_FIELD")
    overrides = parse_data_options(data)
    ray_address = ray_address_for(engine, ray_address)
    with status(f"loading {train} and {bench}"):
        files = _train_files(train, id_column)
        if files is not None:
            train_name, train_items, t_col, train_problems = _files_name(train), files, train_field, []
        else:
            train_name, train_items, t_col, train_problems = _frame(train, train_field, id_column, overrides,
                                                                    stream=True)
        bench_name, bench_items, b_col, bench_problems = _frame(bench, bench_field, id_column, overrides)
    texts = None
    if background is not None:
        texts = read_text_file(background, "background corpus").splitlines()
    with RowsBar(f"n-gram scan of {train_name}.{t_col}", total=known_rows(train_items)) as bar:
        result = text_check(train_items, bench_items, t_col, b_col, ns=tuple(n or (13, 8)),
                            boilerplate_threshold=threshold, background=texts, progress=bar.update,
                            workers=workers, engine=engine.value, ray_address=ray_address)
    if not result.train_counts.get("items"):  # as an empty file read whole is: no flag is no evidence of no overlap
        raise InputError(f"{train}: no rows to check (the training side is empty); give files that hold rows")
    summary = ngram_summary(train_name, bench_name, result)
    if out is not None:
        write_ngram_report(summary, result, out)
    report_problems([(train_name, train_problems), (bench_name, bench_problems)],
                    str(out / "summary.json") if out is not None else None)
    _unchecked(summary, train_name, bench_name)
    if fmt == Format.json:
        sys.stdout.write(dumps_json(summary))
        return
    if fmt != Format.table:
        print_records(_ngram_rows(summary), fmt, title="n-gram flags")
        return
    typer.echo(f"{train_name}.{t_col} vs {bench_name}.{b_col}")
    for size, block in sorted(summary["flags"].items(), key=lambda kv: -int(kv[0])):
        short = summary["bench"]["short"].get(size, 0)
        typer.echo(f"  {size}-gram: {plural(block['train_items_flagged'], 'train item')} flagged by "
                   f"{plural(block['bench_items_hit'], 'bench item')}; {count(block['boilerplate']['train_items'])} "
                   f"hit only boilerplate; {plural(short, 'bench item')} shorter than {plural(int(size), 'word')} "
                   "can never be flagged")
    if out is not None:
        typer.echo(f"written to {out}", err=True)


def _unchecked(summary: dict, train_name: str, bench_name: str) -> None:
    """What the scan could not read, on stderr: a count of flags says nothing of the text it never saw (cells
    that are no text, texts cut at the field cap)."""
    for name, side in ((train_name, summary.get("train") or {}), (bench_name, summary.get("bench") or {})):
        no_id = int(side.get("no_id") or 0)
        if no_id:  # a flag names its row by its id: these rows could not be flagged whatever their text
            typer.echo(f"{name}: {plural(no_id, 'row')} without an id {verb(no_id, 'was', 'were')} not checked (a "
                       "flag names its row by its id); give every row an id", err=True)
        skipped = int(side.get("non_text_cells") or 0)
        if skipped:
            typer.echo(f"{name}: {plural(skipped, 'cell')} of the text column held no text (numbers, lists, "
                       f"booleans) and {verb(skipped, 'was', 'were')} not checked", err=True)
        cut = side.get("truncated") or {}
        if int(cut.get("fields") or 0):
            fields = int(cut["fields"])
            typer.echo(f"{name}: {plural(fields, 'text')} longer than {int(cut['cap_bytes']) >> 20} MiB "
                       f"{verb(fields, 'was', 'were')} checked only up to that length", err=True)


def _ngram_rows(summary: dict) -> list[dict]:
    """One row per n-gram size (largest first), as the table prints it."""
    rows = []
    for size, block in sorted(summary["flags"].items(), key=lambda kv: -int(kv[0])):
        rows.append({"n": int(size), "train_items_flagged": block["train_items_flagged"],
                     "bench_items_hit": block["bench_items_hit"],
                     "boilerplate_only_train_items": block["boilerplate"]["train_items"],
                     "bench_items_too_short": summary["bench"]["short"].get(size, 0)})
    return rows
