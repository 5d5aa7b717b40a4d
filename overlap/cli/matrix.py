"""`overlap matrix`: every benchmark against every other.

The library under the command (pandas, pyarrow, huggingface_hub) is imported inside its body: that keeps
`overlap --help` fast (tests/swe/test_matrix.py guards it), it dodges no cycle."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import OverlapError
from .atlas import declared_inputs
from .options import FORMAT_METAVAR, DataOption, Format, RegistryOption, out_option
from .shared import check_out, stdout_console


def matrix(
    benches: Annotated[list[str], typer.Argument(
        help="Two or more benchmarks: names from `overlap datasets` (NAME, NAME@REV, NAME:SUBSET), Hub ids or "
             "local files/folders.")],
    data: DataOption = None,
    registry: RegistryOption = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", metavar=FORMAT_METAVAR,
                                        help="What to print on stdout (csv: one row per benchmark and other "
                                             "benchmark).")] = Format.table,
    out: Annotated[Path | None, out_option("Also write a report folder (summary.json, cells.csv, couples.csv, "
                                           "pairs.csv).")] = None,
) -> None:
    """Compare every benchmark with every other by pull-request / source identity: for each two, the pair
    kinds and the repos both hold; for each benchmark, how many of its items are in each other one (and
    their share) and in at least one / two others. A benchmark is not compared with its own subset.

    Example: overlap matrix multi-swe-bench swe-polybench swe-bench-multilingual swe-bench swe-bench-pro
    """
    try:  # handled here too: the command may run on its own typer app
        from ..api.matrix import matrix as run_matrix  # imported here: keeps `overlap --help` fast
        from ..outputs.report.matrix_folder import render_matrix, write_matrix_report
        from ..sources.load import parse_data_options

        if out is not None:
            from ..sources.registry.registry import parse_selection

            for bench in benches:  # an empty name said as such, not as an --out inside "."
                parse_selection(bench)
            check_out(out, "matrix", *benches, *declared_inputs(benches, data), data=data)
        result = run_matrix(benches, data=parse_data_options(data))
        if out is not None:
            write_matrix_report(result, out)
        text = render_matrix(result, fmt.value)
    except OverlapError as exc:
        typer.echo(f"overlap: error: {exc}", err=True)
        raise typer.Exit(exc.exit_code) from None
    if text is None:
        from ..outputs.report.console import print_matrix  # imported here: keeps `overlap --help` fast

        print_matrix(result, stdout_console())  # the terminal's width; a fixed width when not a terminal
    else:
        sys.stdout.write(text)
    if out is not None:
        typer.echo(f"report written to {out}", err=True)
