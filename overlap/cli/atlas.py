"""`overlap atlas`: every dataset against every benchmark among them, written as a Hub dataset folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .options import (
    DataOption,
    Engine,
    EngineOption,
    RayAddressOption,
    RegistryOption,
    WorkersOption,
    out_option,
    ray_address_for,
)
from .shared import check_out, declared_places, report_recognition


def declared_inputs(names: list[str] | None, data: list[str] | None, pool: str = "none") -> list[str]:
    """The local places the atlas reads that no argument names: every atlas dataset's declared `path` when no
    name is given (a named one's is `check_out`'s) and a `--pool` path. `--out` may not lie inside them: its
    files would be read as the dataset's rows on the next run."""
    from ..api.atlas import ATLAS_ROLES
    from ..sources.registry.registry import all_specs

    places = [] if names else declared_places([s.name for s in all_specs() if s.role in ATLAS_ROLES], data)
    if pool.strip() and pool not in ("auto", "none") and Path(pool).exists():
        places.append(pool)
    return places


def _check_cache(cache: str | None, out: Path, inputs: list[str]) -> None:
    """A cache folder (`--cache`, or the default one: OVERLAP_CACHE or the user cache) that is a file, inside
    `--out` or inside an input folder, or an `--out` inside one of the folders the cache writes its entries
    to, is refused before any work: `--out` is replaced whole when the atlas is written, so the cache would be
    lost (or, on a first run, `--out` would hold files no atlas wrote and be refused after the whole run); in a
    dataset's folder its files would be read as the dataset's rows."""
    from ..api.atlas_cache import ENTRY_FOLDERS, cache_folder
    from ..errors import InputError

    place = cache_folder(cache)
    name = f"--cache {cache}" if cache is not None else \
        f"the atlas cache {place} (OVERLAP_CACHE, or the user cache; give another with --cache)"
    if place.exists() and not place.is_dir():
        raise InputError(f"{name}: is a file, not a folder; choose another --cache folder")
    resolved, folder = place.resolve(), Path(out).resolve()
    if resolved == folder or folder in resolved.parents:
        raise InputError(f"{name}: is inside --out {out}, which is replaced whole when the atlas is "
                         "written; keep the cache somewhere else")
    for entries in (resolved / part for part in ENTRY_FOLDERS):
        if folder == entries or entries in folder.parents:
            raise InputError(f"--out {out}: is inside {entries}, where {name} writes its entries; write the "
                             "atlas somewhere else")
    for item in inputs:
        item_place = Path(item)
        if item_place.is_dir() and (resolved == item_place.resolve() or item_place.resolve() in resolved.parents):
            raise InputError(f"{name}: is inside the input folder {item}, whose files are read as the "
                             "dataset's rows; keep the cache somewhere else")


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
    # text, not a Path: an empty value would be the current folder, and is refused as empty instead
    cache: Annotated[str | None, typer.Option("--cache", metavar="DIR", help="Key and cell cache (default: the "
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
    baseline where a pool fits; with --text, the n-gram text evidence per cell. --engine ray runs the text scan
    and the key scans of training sets read by their columns (parquet) on Ray.
    Datasets and cells are cached: a re-run after one pin bump recomputes only that dataset's cells (and says
    which).

    Example: overlap atlas --out atlas (every registered dataset); overlap atlas mimo-cyber cybergym
    -d mimo-cyber=./mimo -d cybergym=./cybergym --pool none --out try/atlas
    """
    from ..api.atlas import atlas as run_atlas  # imported here: keeps `overlap --help` fast
    from ..api.atlas import atlas_names
    from ..outputs.ship.atlas_repo import check_push_target, push_atlas, write_atlas
    from ..sources.load import check_pool, parse_data_options

    if create_pr and push is None:  # else the switch would be dropped silently
        raise typer.BadParameter("--create-pr needs --push OWNER/NAME", param_hint="--create-pr")
    check_pool(pool)
    atlas_names(names)  # a name that is empty or a path is said as such, not as an --out inside "." or the path
    inputs = [*(names or []), *declared_inputs(names, data, pool), *declared_places(names or [], data)]
    check_out(out, "atlas", *inputs, data=data)
    _check_cache(cache, out, [*inputs, *(path for d in data or [] if (path := d.partition("=")[2]))])
    # a push that cannot succeed (an id the Hub refuses, no token, no write access) is refused before any work
    api = check_push_target(push) if push is not None else None
    result = run_atlas(names or None, data=parse_data_options(data), cache=cache, pool=pool, text=text,
                       engine=engine.value, ray_address=ray_address_for(engine, ray_address), workers=workers)
    write_atlas(result, out)
    report_recognition(entry.dataset for entry in result.entries)  # the sets read in this run, by their columns
    recomputed = len(result.recomputed)
    skipped = sum(1 for cell in result.cells if cell.get("skipped"))  # never joined, so neither of the others
    typer.echo(f"atlas: {len(result.cells)} cells, {recomputed} recomputed, {len(result.cells) - recomputed - skipped} "
               f"from the cache{f', {skipped} skipped (own subset)' if skipped else ''}; written to {out}", err=True)
    for train, bench in result.recomputed:
        typer.echo(f"  recomputed {train} × {bench}", err=True)
    if push is not None:
        typer.echo(f"pushed: {push_atlas(out, push, create_pr=create_pr, api=api)}", err=True)
