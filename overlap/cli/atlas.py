"""`overlap atlas`: every dataset against every benchmark among them, written as a Hub dataset folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .options import DataOption, Engine, EngineOption, RayAddressOption, RegistryOption, WorkersOption, out_option
from .shared import check_out


def atlas(
    names: Annotated[list[str] | None, typer.Argument(
        help="Datasets to map (names from `overlap datasets`); default: every registered training set, "
             "benchmark and reference set, with your --registry declarations.")] = None,
    data: DataOption = None,
    registry: RegistryOption = None,
    out: Annotated[Path, out_option("The atlas folder, laid out as a Hub dataset repo: data/cells.parquet, "
                                    "data/pairs.parquet, README.md, report.html.")] = Path("atlas"),
    pool: Annotated[str, typer.Option("--pool", metavar="NAME|PATH|auto|none",
                                      help="Chance-baseline pool for cells with OSS-Fuzz ids on both sides.")] = "auto",
    cache: Annotated[Path | None, typer.Option("--cache", metavar="DIR", help="Key and cell cache (default: the "
                                               "user cache, OVERLAP_CACHE).")] = None,
    push: Annotated[str | None, typer.Option("--push", metavar="OWNER/NAME",
                                             help="Upload the folder to this Hub dataset repo.")] = None,
    create_pr: Annotated[bool, typer.Option("--create-pr", help="With --push: open a pull request instead of "
                                            "committing to main.")] = False,
    text: Annotated[bool, typer.Option("--text", help="Also run the n-gram text check of `compare --text` in every "
                                       "cell whose two datasets both have a text field (slow: reads the texts).")
                    ] = False,
    engine: EngineOption = Engine.local,
    ray_address: RayAddressOption = None,
    workers: WorkersOption = None,
) -> None:
    """Map where training sets and benchmarks share tasks: one cell per (dataset, benchmark) with the bench
    items matched, their share, the plain-join count, bench items by pair kind and by subset, and the chance
    baseline where a pool fits; with --text, the n-gram text evidence per cell (on --engine local or ray).
    Datasets and cells are cached: a re-run after one pin bump recomputes only that dataset's cells (and says
    which).

    Example: overlap atlas --out atlas (every registered dataset); overlap atlas mimo-cyber cybergym
    -d mimo-cyber=./mimo -d cybergym=./cybergym --pool none --out try/atlas
    """
    from ..api.atlas import atlas as run_atlas  # imported here: keeps `overlap --help` fast
    from ..outputs.ship.atlas_repo import push_atlas, write_atlas
    from ..sources.load import parse_data_options

    check_out(out, "atlas", *(names or []), data=data)
    result = run_atlas(names or None, data=parse_data_options(data), cache=cache, pool=pool, text=text,
                       engine=engine.value, ray_address=ray_address, workers=workers)
    write_atlas(result, out)
    recomputed = len(result.recomputed)
    skipped = sum(1 for cell in result.cells if cell.get("skipped"))  # never joined, so neither of the others
    typer.echo(f"atlas: {len(result.cells)} cells, {recomputed} recomputed, {len(result.cells) - recomputed - skipped} "
               f"from the cache{f', {skipped} skipped (own subset)' if skipped else ''}; written to {out}", err=True)
    for train, bench in result.recomputed:
        typer.echo(f"  recomputed {train} × {bench}", err=True)
    if push:
        typer.echo(f"pushed: {push_atlas(out, push, create_pr=create_pr)}", err=True)
