"""`overlap ids`: how overlap reads task ids — the scheme each value is recognised as (by the same
recognisers that read a dataset's id column), its keys, and for OSS-Fuzz ids the tracker and canonical id."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .app import fail
from .options import DataOption, Format, FormatOption, IdSchemeOption
from .shared import print_records


def ids(
    values: Annotated[list[str], typer.Argument(help="Task ids in any form: arvo:10400, arvo_42470443, "
                                                     "oss-fuzz:42537168, php.ossfuzz-42491394, jq.cve-2023-50246, "
                                                     "django__django-11099, https://github.com/o/r/pull/12.")],
    data: DataOption = None,
    id_scheme: IdSchemeOption = "ossfuzz",
    fmt: FormatOption = Format.table,
) -> None:
    """Show how overlap reads ids: the scheme each is recognised as (OSS-Fuzz, CVE, GHSA, GitHub PR, fix
    commit) and its canonical key; for OSS-Fuzz ids the tracker (old/new) and canonical id (with the ARVO
    mapping).

    Example: overlap ids arvo:10288 oss-fuzz:40643631 --data arvo=./oss_fuzz_mappings.csv
    A value no specific form takes is read by `--id-scheme` (default ossfuzz: a bare `10288` or `task-10288`
    is OSS-Fuzz issue 10288, as `--id-scheme ossfuzz` reads a dataset's id column).
    """
    import pyarrow as pa  # imported here: keeps `overlap --help` fast

    from ..ids.ossfuzz import scheme
    from ..ids.recognise import recognise
    from ..sources.load import load_identity, parse_data_options

    found = recognise(pa.array(values, pa.string()), scheme=id_scheme)
    keys: dict[int, list[tuple[str, str]]] = {}
    for row, kind, value in zip(*(found.keys.column(c).to_pylist() for c in ("row", "kind", "value")), strict=True):
        keys.setdefault(row, []).append((kind, value))
    mapping = None
    rows: list[dict[str, Any]] = []
    for position, value in enumerate(values):
        recogniser = found.recogniser[position].as_py()
        own = dict(keys.get(position, []))
        row: dict[str, Any] = {"id": value, "scheme": recogniser or "unrecognised", "number": None,
                               "tracker": None, "canonical": None, "in_mapping": None}
        if "ossfuzz" in own:
            if mapping is None:
                mapping, _ = load_identity("arvo", parse_data_options(data))
            number = int(own["ossfuzz"])
            row |= {"number": number, "tracker": scheme(number), "canonical": str(mapping.canonical(number)),
                    "in_mapping": mapping.is_known(number)}
        else:  # the key that names the task: a CVE, a canonical repo#PR, a fix commit
            row["canonical"] = own.get("cve") or own.get("repo_pr") or own.get("fix_commit")
        rows.append(row)
    print_records(rows, fmt, title="ids")
    unread = [r["id"] for r in rows if r["scheme"] == "unrecognised"]
    if unread:
        shown = [value if value.strip() and value.isprintable() else repr(value) for value in unread]  # '' and '  '
        raise fail("some ids are of no scheme overlap recognises: " + ", ".join(shown))
