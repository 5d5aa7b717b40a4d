"""The row transforms declarations name (`extra.transform`), each a few lines: see `transforms`."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..ids.recognise import id_strings
from .spec import DatasetSpec
from .transforms import Transform


def _text_or_none(value) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _blank_to_null(text):
    blank = pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(text)), 0), True)
    return pc.if_else(blank, pa.scalar(None, pa.string()), pc.utf8_trim_whitespace(text))


def _replace(batch, name: str, values):
    names = batch.schema.names
    if name in names:
        return batch.set_column(names.index(name), name, values)
    return batch.append_column(name, values)


# --- Multi-SWE-bench's schema: the repo in two cells, the issue text in a list of issues --------------------


def _issues_text(issues) -> str | None:
    """Every resolved issue's title and body, in order."""
    if not isinstance(issues, list):
        return None
    parts = []
    for issue in issues:
        if isinstance(issue, dict):
            text = "\n".join(t for t in (_text_or_none(issue.get("title")), _text_or_none(issue.get("body"))) if t)
            if text:
                parts.append(text)
    return "\n\n".join(parts) or None


def multi_swe_bench(spec: DatasetSpec) -> Transform:
    """`org` + `repo` → `repo` (`org/repo`), `resolved_issues` → `problem_statement`."""

    def rows(batch):
        table = pa.Table.from_batches([batch])
        org, name = (_blank_to_null(id_strings(table.column(c).combine_chunks())) for c in ("org", "repo"))
        batch = _replace(batch, "repo", pc.binary_join_element_wise(org, name, "/"))
        issues = table.column("resolved_issues").to_pylist()
        return _replace(batch, "problem_statement", pa.array([_issues_text(i) for i in issues], pa.string()))

    return Transform(rows=rows)


TRANSFORMS: dict[str, Callable[[DatasetSpec], Transform]] = {
    "multi-swe-bench": multi_swe_bench,
}


def transform_of(spec: DatasetSpec) -> Transform | None:
    """A fresh Transform for one read of `spec` (None when it names none); an unknown name lists the known."""
    name = spec.extra.get("transform")
    if name is None:
        return None
    if name not in TRANSFORMS:
        raise InputError(f"{spec.origin or spec.name}: extra.transform names {name!r}, which overlap does not know; "
                         f"known: {', '.join(sorted(TRANSFORMS))}")
    return TRANSFORMS[name](spec)
