"""The pool table: the upstream population two datasets were drawn from, one row per bug.

Chance baselines (`overlap.stats`) need it with each bug's OSS-Fuzz project. The table (`Pool.table`,
pandas) has the columns:

| column | meaning |
|---|---|
| `canonical_id` | canonical OSS-Fuzz id (new tracker id when the ARVO mapping knows the old one) |
| `raw_id` | the id as the source gives it (ARVO-Meta: the old Monorail id) |
| `old_id` | the old Monorail id, null for bugs that only have a new id |
| `project` | OSS-Fuzz project (null → the `unknown` stratum of the baselines) |
| `fuzzer`, `sanitizer`, `crash_type`, `severity`, `repo_addr` | as in the ARVO-Meta file |
| `fix_commit` | list of fix commit ids (ARVO-Meta gives a string or a list) |
| `crash_state` | the ClusterFuzz `Crash State:` frames of the first report comment, joined by newlines |

A user-given pool file (`read_pool_file`: CSV, JSON lines, JSON array or parquet) has columns `id` (any
OSS-Fuzz id form: `arvo:1065`, `42470443`, …; `localId` is accepted too) and `project` (empty cells
allowed); the other columns above are read when present.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import InputError
from ...ids.ossfuzz import OLD_ID_LIMIT, OssFuzzMapping, trailing_int
from ...ids.values import id_text
from ...model import Problem, Provenance
from ..formats.whole_file import read_records
from ..places.files import FileSource, SingleFile

POOL_COLUMNS = {
    "canonical_id": "Int64",
    "raw_id": "Int64",
    "old_id": "Int64",
    "project": "string",
    "fuzzer": "string",
    "sanitizer": "string",
    "crash_type": "string",
    "severity": "string",
    "fix_commit": "object",
    "crash_state": "string",
    "repo_addr": "string",
}
TEXT_FIELDS = ("project", "fuzzer", "sanitizer", "crash_type", "severity", "repo_addr")


@dataclass
class Pool:
    """A pool table with where it came from and what was skipped while reading it."""

    name: str
    table: pd.DataFrame
    provenance: Provenance
    problems: list[Problem] = field(default_factory=list)
    mapped: bool = False  # canonical ids derived with an old→new mapping
    tree_sha1: str | None = None  # git tree id of the meta folder as read (None for a pool file)
    pinned_tree: str | None = None

    def __len__(self) -> int:
        return len(self.table)

    def canonicalize(self, mapping: OssFuzzMapping | None) -> Pool:
        """The pool with canonical ids from `mapping` (old → new); repeated canonical ids keep their first
        row and are counted as a `duplicate_id` problem. Without a mapping canonical = raw id."""
        table = self.table.copy()
        raw = table["raw_id"]
        if mapping is not None:
            table["canonical_id"] = raw.map(lambda v: mapping.canonical(int(v)) if pd.notna(v) else pd.NA)
            table["old_id"] = raw.map(lambda v: _old_id(int(v), mapping) if pd.notna(v) else pd.NA)
        else:
            table["canonical_id"] = raw
            table["old_id"] = raw.where(raw < OLD_ID_LIMIT)
        table = _typed(table)
        problems = [p for p in self.problems if p.what != "duplicate_id"]
        dup = table["canonical_id"].duplicated()
        if dup.any():
            problems.append(Problem("duplicate_id", int(dup.sum()), str(table.loc[dup, "raw_id"].iloc[0]),
                                    "the same bug listed twice (e.g. under its old and its new id); first row kept"))
            table = table[~dup].reset_index(drop=True)
        return replace(self, table=table, problems=problems, mapped=mapping is not None)

    @property
    def matches_pinned_tree(self) -> bool | None:
        if self.tree_sha1 is None or self.pinned_tree is None:
            return None
        return self.tree_sha1 == self.pinned_tree

    def summary(self) -> dict[str, Any]:
        """JSON-ready description for reports."""
        projects = self.table["project"]
        return {
            "name": self.name,
            "items": int(len(self.table)),
            "projects": int(projects.dropna().nunique()),
            "items_without_project": int(projects.isna().sum()),
            "canonical_ids_mapped": self.mapped,
            "tree_sha1": self.tree_sha1,
            "matches_pinned_tree": self.matches_pinned_tree,
            "problems": [p.__dict__ for p in self.problems],
            "provenance": self.provenance.to_dict(),
        }


def _old_id(raw: int, mapping: OssFuzzMapping) -> int | None:
    return raw if raw < OLD_ID_LIMIT else mapping.new_to_old.get(raw)


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    out = table.reindex(columns=list(POOL_COLUMNS))
    for column, dtype in POOL_COLUMNS.items():
        if dtype == "object":
            out[column] = out[column].map(lambda v: v if isinstance(v, list) else [])
        else:
            out[column] = out[column].astype(dtype)
    return out


# --- cells of a pool row ---------------------------------------------------------------------------


def cell_text(value: Any) -> str | None:
    """A text cell stripped, or None when it is missing, blank or not a scalar."""
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


def cell_id(value: Any, where: str) -> tuple[str | None, int | None]:
    """(id text, OSS-Fuzz issue number) of an id cell: (None, None) when the cell is empty, (text, None)
    when the text is not an OSS-Fuzz id. A number that is not a whole number (`10055.5`) is not rounded:
    it is an InputError naming `where` (file and row)."""
    try:
        text = id_text(value)
    except InputError as exc:
        raise InputError(f"{where}: id {exc}") from None
    return text, (trailing_int(text) if text is not None else None)


def fix_commits(value: Any) -> list[str]:
    """`fix_commit` as a list: a string, a list of strings, a `;`/`,`/space-separated string or a JSON
    list in a string (pool files); empty → []."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    if hasattr(value, "tolist"):
        return fix_commits(value.tolist())
    text = str(value).strip()
    if text.startswith("["):
        try:
            return fix_commits(json.loads(text))
        except (ValueError, RecursionError):  # RecursionError: hostile nesting `[[[…`
            pass
    return [part for part in re.split(r"[;,\s]+", text) if part]


# --- building a pool ------------------------------------------------------------------------------


def problems_of(found: dict[str, list[tuple[str, str]]]) -> list[Problem]:
    """One Problem per kind of skip, with its count and first example (`found`: kind → (where, why))."""
    return [Problem(what, len(items), items[0][0], items[0][1]) for what, items in sorted(found.items())]


def build_pool(name: str, rows: list[dict[str, Any]], found: dict[str, list[tuple[str, str]]],
               source: FileSource, adapter: str, *, location: str | None = None, **fields: Any) -> Pool:
    """A pool from parsed rows (canonical id = raw id), with the provenance of `source` as recorded so far
    and the skipped rows as problems; `fields` go to `Pool` (the tree ids)."""
    provenance = Provenance(name=name, origin=source.origin, repo_id=source.repo_id, revision=source.revision,
                            files=list(source.records), location=location or source.location, adapter=adapter)
    return Pool(name, _typed(pd.DataFrame(rows)), provenance, problems_of(found), **fields).canonicalize(None)


POOL_FILE_COLUMNS = ["id", "localId", *TEXT_FIELDS, "fix_commit", "crash_state"]


def read_pool_file(path: Path, name: str, source: FileSource | None = None) -> Pool:
    """A user-given pool file: columns `id` (or `localId`) and `project`; others as in the pool table."""
    path = Path(path)
    records = read_records(path, POOL_FILE_COLUMNS)
    columns = {c for r in records for c in r}
    id_column = "id" if "id" in columns else "localId" if "localId" in columns else None
    if id_column is None or "project" not in columns:
        missing = "'id'" if id_column is None else "'project'"
        raise InputError(f"{path}: a pool file needs columns 'id' and 'project' (empty projects allowed); "
                         f"{missing} is missing")
    rows, problems = [], {}
    for index, record in enumerate(records):
        text, number = cell_id(record.get(id_column), f"{path}: row {index + 1} ({id_column})")
        if text is None:
            problems.setdefault("missing_id", []).append((f"row {index + 1}", "rows without an id are skipped"))
            continue
        if number is None:
            problems.setdefault("malformed_id", []).append((text, "not an OSS-Fuzz id (ASCII digits at the end, "
                                                                  "no sign, fraction or exponent); skipped"))
            continue
        row = {c: cell_text(record.get(c)) for c in TEXT_FIELDS}
        row |= {"raw_id": number, "fix_commit": fix_commits(record.get("fix_commit")),
                "crash_state": cell_text(record.get("crash_state"))}
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: no pool rows with an OSS-Fuzz id")
    source = source or SingleFile(origin="local-file", location=str(path), path=path)
    source.record(path.name, path, len(records))
    return build_pool(name, rows, problems, source, "pool-file", location=source.location or str(path))
