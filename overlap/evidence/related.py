"""Related bugs: records (ARVO-Meta) that share a fix commit or an identical ClusterFuzz crash state.

Reported beside the overlap, never counted as overlap. Each signature says how many records carry it:
2 = pair-specific, 3 or more = weak (a shared vendored fix, a generic crash state).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from ..crashes.crash_types import canonical_crash_type
from ..crashes.inputs import is_missing
from ..crashes.specs import parse_clusterfuzz
from ..errors import InputError

RELATED_COLUMNS = {
    "kind": "string",  # fix_commit | crash_state
    "signature": "string",
    "projects": "string",  # ';'-joined
    "item_ids": "string",  # ';'-joined, sorted
    "n_records": "int64",
    "strength": "string",  # pair (2 records) | weak (>= 3)
}


RELATED_PAIR_COLUMNS = {
    "item_id": "string",
    "related_id": "string",
    "kind": "string",
    "signature": "string",
    "n_records": "int64",
    "strength": "string",
}


def empty_table(columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in columns.items()})


def project_key(value: object) -> str | None:
    """Projects are compared trimmed and lowercased; null/blank is no project."""
    if is_missing(value):
        return None
    key = str(value).strip().lower()
    return key or None


@dataclass(frozen=True)
class BugRecord:
    """One bug for the related-bugs grouping. crash_type is canonical; crash_state the raw lines."""

    item_id: str
    project: str | None = None
    fix_commits: tuple[str, ...] = ()
    crash_type: str | None = None
    crash_state: tuple[str, ...] = ()


_HEX_FULL_RE = re.compile(r"[0-9a-f]{7,64}")


_COMMIT_URL_RE = re.compile(r"/(?:commit|commits|rev|changeset)/([0-9a-f]{7,64})\b")


#: Fix commits are grouped on this many leading hex digits (a full and an abbreviated hash agree).
COMMIT_KEY_LEN = 12


def commit_key(value: object) -> str | None:
    """A fix commit as a grouping key: lowercase hex (from a bare hash or a commit URL), first
    COMMIT_KEY_LEN digits; None when no hash of at least 7 hex digits is found."""
    if is_missing(value):
        return None
    text = str(value).strip().lower()
    if _HEX_FULL_RE.fullmatch(text):
        return text[:COMMIT_KEY_LEN]
    m = _COMMIT_URL_RE.search(text)
    return m.group(1)[:COMMIT_KEY_LEN] if m else None


def bug_record(row: Mapping, *, id_field: str | None = None) -> BugRecord:
    """A BugRecord from an ARVO-Meta JSON object (`localId`, `project`, `fix_commit` str or list,
    `report.comments[0].content` with `Crash Type:` / `Crash State:`, `crash_type`) or a flat mapping
    such as a row of the arvo-meta pool table (`project`, `fix_commit`/`fix_commits` str or list,
    `crash_report` text and/or `crash_type`, `crash_state` as list or newline-joined text).

    The id is `row[id_field]` when given, else `item_id`, else `localId`."""
    fields = (id_field,) if id_field else ("item_id", "localId")
    item_id = next((row.get(f) for f in fields if not is_missing(row.get(f))), None)
    if item_id is None:
        raise InputError(f"related bugs: a record has no {' or '.join(fields)}")
    fixes = row.get("fix_commits", row.get("fix_commit"))
    if isinstance(fixes, str) or is_missing(fixes):
        fixes = [fixes]
    commits = tuple(dict.fromkeys(k for k in (commit_key(c) for c in fixes or ()) if k))

    text = row.get("crash_report")
    report = row.get("report")
    if is_missing(text) and isinstance(report, Mapping):
        comments = report.get("comments") or []
        if comments and isinstance(comments[0], Mapping):
            text = comments[0].get("content")
    crash_type = state = None
    if not is_missing(text) and str(text).strip():
        sig = parse_clusterfuzz(text)
        if sig.usable:
            crash_type, state = sig.crash_type, sig.state
    if crash_type is None:
        crash_type = canonical_crash_type(
            row.get("crash_type") if not is_missing(row.get("crash_type")) else None
        )
    if not state:
        raw_state = row.get("crash_state")
        if is_missing(raw_state):
            raw_state = ()
        elif isinstance(raw_state, str):
            raw_state = raw_state.split("\n")
        state = tuple(s.strip() for s in raw_state if isinstance(s, str) and s.strip())
    project = row.get("project")
    return BugRecord(
        item_id=str(item_id),
        project=None if is_missing(project) else str(project),
        fix_commits=commits,
        crash_type=crash_type,
        crash_state=tuple(state or ()),
    )


def related_groups(
    records: Iterable[BugRecord | Mapping] | pd.DataFrame,
    *,
    id_field: str | None = None,
    min_records: int = 2,
) -> pd.DataFrame:
    """Groups of records sharing a fix commit or an identical crash state, with at least `min_records`.

    `records`: BugRecords, ARVO-Meta JSON objects, or mappings / a DataFrame such as the arvo-meta pool
    table (then pass `id_field="canonical_id"` or `"raw_id"`); see bug_record.

    Signatures: `fix_commit` = the commit key; `crash_state` = `project | type | state1 / state2 / ...`
    (project lowercased, type canonical; records without a state or type carry none). `strength` is
    `pair` when exactly 2 records carry the signature and `weak` when 3 or more do.
    """
    groups: dict[tuple[str, str], dict[str, str | None]] = defaultdict(dict)
    if isinstance(records, pd.DataFrame):
        records = records.to_dict("records")
    for rec in records:
        r = rec if isinstance(rec, BugRecord) else bug_record(rec, id_field=id_field)
        for commit in r.fix_commits:
            groups[("fix_commit", commit)][r.item_id] = r.project
        pkey = project_key(r.project)
        if pkey and r.crash_type and r.crash_state:
            sig = f"{pkey} | {r.crash_type} | {' / '.join(r.crash_state)}"
            groups[("crash_state", sig)][r.item_id] = r.project
    rows = []
    for (kind, sig), members in sorted(groups.items()):
        n = len(members)
        if n < min_records:
            continue
        projects = sorted({p for p in members.values() if p})
        rows.append(
            {
                "kind": kind,
                "signature": sig,
                "projects": ";".join(projects),
                "item_ids": ";".join(sorted(members)),
                "n_records": n,
                "strength": "pair" if n == 2 else ("weak" if n >= 3 else "single"),
            }
        )
    if not rows:
        return empty_table(RELATED_COLUMNS)
    return pd.DataFrame(rows).astype(RELATED_COLUMNS)


def related_pairs(groups: pd.DataFrame, focus_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """Expand related_groups into (item_id, related_id) rows; with `focus_ids`, only rows whose
    `item_id` is one of them (e.g. the bench items). One row per (item, related item, signature)."""
    focus = None if focus_ids is None else {str(i) for i in focus_ids}
    rows = []
    for g in groups.itertuples(index=False):
        members = str(g.item_ids).split(";")
        for a in members:
            if focus is not None and a not in focus:
                continue
            for b in members:
                if b != a:
                    rows.append(
                        {
                            "item_id": a,
                            "related_id": b,
                            "kind": g.kind,
                            "signature": g.signature,
                            "n_records": int(g.n_records),
                            "strength": g.strength,
                        }
                    )
    if not rows:
        return empty_table(RELATED_PAIR_COLUMNS)
    out = pd.DataFrame(rows).astype(RELATED_PAIR_COLUMNS)
    return out.sort_values(["item_id", "related_id", "kind", "signature"], kind="stable").reset_index(
        drop=True
    )
