"""Same-fix join and related-bug groups: pure functions of tables.

`join_fixes(train, bench)` finds (train, bench) items that share a fix, with or without a shared id.
Candidates are items of the *same project* only, and within a project only items whose patches touch
at least one common file (a per-project path index), so the work grows with the candidates, never
with train × bench. Each item's patch is parsed once (`PatchBook`).

`relate_pairs(pairs, ...)` adds the fix relation to already-matched pairs (one parse per item).

`related_groups(records)` groups bug records (ARVO-Meta) that share a fix commit, or an identical
ClusterFuzz crash state (project, crash type, `Crash State:` lines), and says how many records carry
each signature: 2 = pair-specific, >= 3 = weak. Related bugs are reported, not counted as overlap.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from ..errors import InputError
from .crash import canonical_crash_type, parse_clusterfuzz
from .patches import (
    DEFAULT_MAX_CHARS,
    FIX_RELATIONS,
    PatchBook,
    PatchSource,
    relate_patches,
)

#: Relations join_fixes returns by default: the fix relations plus `partly_identical` (reported with
#: shares_fix=False: some files of the fix agree, which is not the same fix).
DEFAULT_KEEP = (*FIX_RELATIONS, "partly_identical")
FIX_PAIR_COLUMNS = {
    "train_id": "string",
    "bench_id": "string",
    "project": "string",
    "relation": "string",
    "method": "string",
    "reason": "string",
    "shared_files": "int64",
    "shares_fix": "boolean",
}
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


def _empty(columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in columns.items()})


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def project_key(value: object) -> str | None:
    """Projects are compared trimmed and lowercased; null/blank is no project."""
    if _missing(value):
        return None
    key = str(value).strip().lower()
    return key or None


def _as_book(source, items: pd.DataFrame, column: str, max_chars: int) -> PatchBook:
    if isinstance(source, PatchBook):
        return source
    if source is not None:
        return PatchBook(source, max_chars=max_chars)
    return PatchBook.from_items(items, column, max_chars=max_chars)


def _check_items(items: pd.DataFrame, side: str) -> None:
    missing = [c for c in ("item_id", "project") if c not in items.columns]
    if missing:
        raise InputError(f"{side}: fix join needs column(s) {', '.join(missing)}")


# =============================================================================================== join
@dataclass
class FixJoinStats:
    """What join_fixes did. same_project_pairs is the candidate space (sum over shared projects of
    n_train * n_bench); compared is how many of those were related (they share a file path);
    fix_pairs / partial_pairs count compared pairs whatever `keep` returned; *_parses is the book's
    parse count at the end (a book shared with other work counts that work too); *_status counts
    ParsedPatch.status over the items read."""

    projects: int = 0
    same_project_pairs: int = 0
    compared: int = 0
    fix_pairs: int = 0
    partial_pairs: int = 0
    train_parses: int = 0
    bench_parses: int = 0
    train_status: dict[str, int] = field(default_factory=dict)
    bench_status: dict[str, int] = field(default_factory=dict)
    no_project: int = 0  # items (both sides) without a project: never candidates


@dataclass
class FixJoin:
    """Result of join_fixes: `pairs` (FIX_PAIR_COLUMNS, sorted by project, train_id, bench_id; `project`
    is the lowercased project key) and `stats`."""

    pairs: pd.DataFrame
    stats: FixJoinStats


def join_fixes(
    train: pd.DataFrame,
    bench: pd.DataFrame,
    *,
    train_patches: PatchBook | PatchSource | None = None,
    bench_patches: PatchBook | PatchSource | None = None,
    patch_column: str = "patch",
    keep: Iterable[str] = DEFAULT_KEEP,
    use_lines: bool = True,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> FixJoin:
    """Pairs of same-project items whose patches share a fix.

    `train` / `bench`: tables with `item_id` and `project`. Patches come from `train_patches` /
    `bench_patches` (a PatchBook, a mapping item_id -> text, or a callable for lazy fetching) or
    else from the table's `patch_column` (text or ParsedPatch). Only items of projects present on
    both sides are read, each at most once.

    Returns every related pair whose relation is in `keep` (default: identical, contains, contained,
    partly_identical) with `shares_fix` = relation in FIX_RELATIONS; `contains` means the train patch
    strictly includes the bench patch.
    """
    _check_items(train, "train")
    _check_items(bench, "bench")
    keep = set(keep)
    tbook = _as_book(train_patches, train, patch_column, max_chars)
    bbook = _as_book(bench_patches, bench, patch_column, max_chars)
    stats = FixJoinStats()

    def by_project(items: pd.DataFrame) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = defaultdict(list)
        for item_id, project in zip(items["item_id"].astype(str), items["project"], strict=True):
            key = project_key(project)
            if key is None:
                stats.no_project += 1
            else:
                groups[key].append(item_id)
        return groups

    tgroups, bgroups = by_project(train), by_project(bench)
    shared = sorted(set(tgroups) & set(bgroups))
    stats.projects = len(shared)
    rows: list[dict] = []
    tstatus: Counter = Counter()
    bstatus: Counter = Counter()
    for project in shared:
        tids, bids = sorted(set(tgroups[project])), sorted(set(bgroups[project]))
        stats.same_project_pairs += len(tids) * len(bids)
        by_path: dict[str, list[str]] = defaultdict(list)
        for bid in bids:
            parsed = bbook.get(bid)
            bstatus[parsed.status] += 1
            for path in parsed.paths:
                by_path[path].append(bid)
        for tid in tids:
            tp = tbook.get(tid)
            tstatus[tp.status] += 1
            candidates = sorted({bid for path in tp.paths for bid in by_path.get(path, ())})
            for bid in candidates:
                rel = relate_patches(tp, bbook.get(bid), use_lines=use_lines, sides=("train", "bench"))
                stats.compared += 1
                stats.fix_pairs += rel.shares_fix
                stats.partial_pairs += rel.relation == "partly_identical"
                if rel.relation not in keep:
                    continue
                rows.append(
                    {
                        "train_id": tid,
                        "bench_id": bid,
                        "project": project,
                        "relation": rel.relation,
                        "method": rel.method,
                        "reason": rel.reason,
                        "shared_files": rel.shared_files,
                        "shares_fix": rel.shares_fix,
                    }
                )
    stats.train_parses, stats.bench_parses = tbook.parses, bbook.parses
    stats.train_status, stats.bench_status = dict(sorted(tstatus.items())), dict(sorted(bstatus.items()))
    if not rows:
        return FixJoin(_empty(FIX_PAIR_COLUMNS), stats)
    out = pd.DataFrame(rows).astype(FIX_PAIR_COLUMNS)
    return FixJoin(out.sort_values(["project", "train_id", "bench_id"], kind="stable").reset_index(drop=True), stats)


def relate_pairs(
    pairs: pd.DataFrame,
    *,
    train_patches: PatchBook | PatchSource,
    bench_patches: PatchBook | PatchSource,
    use_lines: bool = True,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> pd.DataFrame:
    """A copy of `pairs` (with `train_id`, `bench_id`) plus `fix_relation`, `fix_method`, `fix_reason`.

    Each item's patch is parsed at most once however many pairs it is in. A side whose patch is
    missing gives `not_comparable` with reason code `missing` (the caller may show it as not_run).
    """
    missing = [c for c in ("train_id", "bench_id") if c not in pairs.columns]
    if missing:
        raise InputError(f"pairs: lacks column(s) {', '.join(missing)}")
    tbook = train_patches if isinstance(train_patches, PatchBook) else PatchBook(train_patches, max_chars=max_chars)
    bbook = bench_patches if isinstance(bench_patches, PatchBook) else PatchBook(bench_patches, max_chars=max_chars)
    rels = [
        relate_patches(tbook.get(str(t)), bbook.get(str(b)), use_lines=use_lines, sides=("train", "bench"))
        for t, b in zip(pairs["train_id"], pairs["bench_id"], strict=True)
    ]
    out = pairs.copy()
    out["fix_relation"] = pd.Series([r.relation for r in rels], index=out.index, dtype="string")
    out["fix_method"] = pd.Series([r.method for r in rels], index=out.index, dtype="string")
    out["fix_reason"] = pd.Series([r.reason for r in rels], index=out.index, dtype="string")
    return out


# ===================================================================================== related bugs
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
    if _missing(value):
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
    item_id = next((row.get(f) for f in fields if not _missing(row.get(f))), None)
    if item_id is None:
        raise InputError(f"related bugs: a record has no {' or '.join(fields)}")
    fixes = row.get("fix_commits", row.get("fix_commit"))
    if isinstance(fixes, str) or _missing(fixes):
        fixes = [fixes]
    commits = tuple(dict.fromkeys(k for k in (commit_key(c) for c in fixes or ()) if k))

    text = row.get("crash_report")
    report = row.get("report")
    if _missing(text) and isinstance(report, Mapping):
        comments = report.get("comments") or []
        if comments and isinstance(comments[0], Mapping):
            text = comments[0].get("content")
    crash_type = state = None
    if not _missing(text) and str(text).strip():
        sig = parse_clusterfuzz(text)
        if sig.usable:
            crash_type, state = sig.crash_type, sig.state
    if crash_type is None:
        crash_type = canonical_crash_type(row.get("crash_type") if not _missing(row.get("crash_type")) else None)
    if not state:
        raw_state = row.get("crash_state")
        if _missing(raw_state):
            raw_state = ()
        elif isinstance(raw_state, str):
            raw_state = raw_state.split("\n")
        state = tuple(s.strip() for s in raw_state if isinstance(s, str) and s.strip())
    project = row.get("project")
    return BugRecord(
        item_id=str(item_id),
        project=None if _missing(project) else str(project),
        fix_commits=commits,
        crash_type=crash_type,
        crash_state=tuple(state or ()),
    )


def related_groups(
    records: Iterable[BugRecord | Mapping] | pd.DataFrame, *, id_field: str | None = None, min_records: int = 2
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
        return _empty(RELATED_COLUMNS)
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
        return _empty(RELATED_PAIR_COLUMNS)
    out = pd.DataFrame(rows).astype(RELATED_PAIR_COLUMNS)
    return out.sort_values(["item_id", "related_id", "kind", "signature"], kind="stable").reset_index(drop=True)
