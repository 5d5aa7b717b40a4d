"""`overlap ids`: how overlap reads task ids (OSS-Fuzz number and scheme, canonical id, CVE)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..ids.cve import find_cve
from ..ids.ossfuzz import scheme, trailing_int
from .app import fail
from .options import DataOption, Format, FormatOption
from .shared import print_records


def ids(
    values: Annotated[list[str], typer.Argument(help="Task ids in any form: arvo:10400, arvo_42470443, "
                                                     "oss-fuzz:42537168, php.ossfuzz-42491394, jq.cve-2023-50246.")],
    data: DataOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Show how overlap reads ids: the OSS-Fuzz number, its scheme and canonical id (with the ARVO
    mapping), or the canonical CVE.

    Example: overlap ids arvo:10288 oss-fuzz:40643631 --data arvo=./oss_fuzz_mappings.csv
    """
    from ..sources.load import load_identity, parse_data_options  # imported here: keeps `overlap --help` fast

    mapping = None
    rows = []
    for value in values:
        cve = find_cve(value)
        number = None if cve else trailing_int(value)
        # JSON keeps each value's type: the number an integer, in_mapping a boolean, null where a field does not
        # apply; canonical stays text, as the id values of every other output are
        row = {"id": value, "kind": "cve" if cve else ("ossfuzz" if number is not None else "malformed"),
               "number": number, "scheme": None, "canonical": cve, "in_mapping": None}
        if number is not None:
            if mapping is None:
                mapping, _ = load_identity("arvo", parse_data_options(data))
            row["scheme"] = scheme(number)
            row["canonical"] = str(mapping.canonical(number))
            row["in_mapping"] = bool(mapping.is_known(number))
        rows.append(row)
    print_records(rows, fmt, title="ids")
    if any(r["kind"] == "malformed" for r in rows):
        raise fail("some ids have no OSS-Fuzz number or CVE: " + ", ".join(r["id"] for r in rows
                                                                          if r["kind"] == "malformed"))
