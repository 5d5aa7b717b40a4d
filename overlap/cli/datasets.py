"""`overlap datasets`: the registered datasets, their pinned revisions and what each gives; `--show NAME`
prints one declaration."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..jsonout import dumps_json
from ..sources.registry.registry import all_specs, get_spec, is_known, parse_selection
from ..sources.spec import DatasetSpec, declaration_text
from .options import Format, FormatOption, RegistryOption
from .shared import print_records


def datasets(
    show: Annotated[str | None, typer.Option("--show", metavar="NAME", help="Print the declaration of one dataset "
                                             "(TOML; a copy is the start of your own).")] = None,
    registry: RegistryOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """List every registered dataset: name, Hub (or GitHub) repo @ pinned revision, files, what it extracts.

    \b
    Examples:
      overlap datasets --format md
      overlap datasets --show cybergym
    """
    if show is not None:
        name = show.strip().split("@")[0].split(":")[0]
        if not is_known(name) and ("/" in name or Path(show).exists()):  # was refused as "not a Hub id"
            raise InputError(f"--show {show}: not a registered dataset, so it has no declaration to print (a file, "
                             "folder or Hub dataset read by its columns has none); `overlap datasets` lists the "
                             "registered ones, and --registry FILE adds yours")
        _show(get_spec(parse_selection(show).name), fmt)  # NAME:SUBSET or NAME@REV shows NAME
        return
    rows = [
        {
            "name": s.name,
            "aliases": ", ".join(s.aliases),
            "role": s.role,
            "repo": (f"{'github:' if s.host == 'github' else ''}{s.hub_repo}@{s.revision or 'latest'}" if s.hub_repo
                     else s.path or ""),
            "files": ", ".join(f"{k}={v}" if k else v for k, v in s.files.items()),
            "subsets": ", ".join(s.subset_names),
            "extracts": s.extracts,
        }
        for s in all_specs()
    ]
    if fmt != Format.table:
        print_records(rows, fmt, title="registered datasets")
        return
    # One block per dataset: pinned revisions are long and must never be wrapped.
    for row, spec in zip(rows, all_specs(), strict=True):
        typer.echo(f"{row['name']}  ({spec.title}{'; aliases: ' + row['aliases'] if row['aliases'] else ''})")
        for label in ("repo", "files", "subsets", "extracts"):
            if row[label]:
                typer.echo(f"  {label + ':':<10}{row[label]}")
        typer.echo("")


def _show(spec: DatasetSpec, fmt: Format) -> None:
    """One declaration: its TOML as written (table, md) or its fields (json, csv)."""
    if fmt == Format.json:
        sys.stdout.write(dumps_json({k: v for k, v in asdict(spec).items() if k != "declaration"}))
    elif fmt == Format.csv:
        print_records([{"field": k, "value": str(v)} for k, v in asdict(spec).items() if k != "declaration"], fmt,
                      title=spec.name)
    else:
        text = declaration_text(spec)
        sys.stdout.write(f"```toml\n{text}```\n" if fmt == Format.md else text)
