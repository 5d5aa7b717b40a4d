"""`overlap demo`: the whole pipeline, offline, on the demo data shipped with overlap."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .options import Format, FormatOption, out_option
from .shared import check_out, emit_compare, stdout_console


def demo(
    out: Annotated[Path, out_option("Report folder.")] = Path("reports/demo"),
    fmt: FormatOption = Format.table,
) -> None:
    """Run the whole pipeline offline on the embedded demo data (hand-made MiMo and CyberGym-shaped
    datasets and a small OSS-Fuzz mapping) and explain what normalisation found.

    Example: overlap demo
    """
    from ..api import compare as run_compare  # imported here: keeps `overlap --help` fast
    from ..api.demo import demo_data, explain, portable_locations

    check_out(out, "compare")  # the demo writes a compare report
    result = portable_locations(run_compare("mimo-cyber", ["cybergym"], data=demo_data()))
    summary = emit_compare(result, fmt, out)
    if fmt == Format.table:
        typer.echo(explain(summary, stdout_console().width))
