"""The `overlap` command line: a thin typer layer over the library (`overlap.api` and the layers below).

One module per command (`compare.py`, `filter.py`, …), the options they share (`options.py`), what several
commands share (`shared.py`) and the app with its error handling (`app.py`). Each command is a plain function
with typer `Annotated` parameters, registered here, in the order `overlap --help` lists them, wrapped in
`handles_errors` (an OverlapError or OSError becomes one stderr line and exit 2).

Imports stay cheap: the library under a command loads inside its body, so `overlap --help` is fast.
"""

from __future__ import annotations

from ..allocator import keep_freed_memory
from . import atlas, audit, card, compare, datasets, demo, filter, ids, matrix, ngram, report
from .app import app, handles_errors
from .options import OverlapCommand

COMMANDS = (("compare", compare.compare), ("datasets", datasets.datasets), ("ids", ids.ids), ("demo", demo.demo),
            ("ngram", ngram.ngram), ("matrix", matrix.matrix), ("filter", filter.filter_cmd), ("card", card.card),
            ("atlas", atlas.atlas), ("report", report.report), ("audit", audit.audit))

for _name, _command in COMMANDS:
    app.command(_name, cls=OverlapCommand)(handles_errors(_command))


def main() -> None:
    """Console-script entry point."""
    keep_freed_memory()  # first: Arrow reads its allocator setting when it loads
    app()


__all__ = ["COMMANDS", "app", "handles_errors", "main"]
