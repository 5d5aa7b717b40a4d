"""Same-fix join: pure functions of Items tables.

`join_fixes(train, bench)` finds (train, bench) items that share a fix, with or without a shared id.
Candidates are items of the *same project* only, and within a project only items whose patches touch
at least one common file (a per-project path index), so the work grows with the candidates, never
with train x bench. Each item's patch is parsed once (`PatchBook`).

`relate_pairs(pairs, ...)` adds the fix relation to already-matched pairs (one parse per item).

The related-bugs helpers live in `related.py` and are re-exported here.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from ..errors import InputError
from .patches import DEFAULT_MAX_CHARS, FIX_RELATIONS, PatchBook, PatchSource, relate_patches
from .related import (
    COMMIT_KEY_LEN,
    RELATED_COLUMNS,
    RELATED_PAIR_COLUMNS,
    BugRecord,
    bug_record,
    commit_key,
    empty_table,
    project_key,
    related_groups,
    related_pairs,
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
        return FixJoin(empty_table(FIX_PAIR_COLUMNS), stats)
    out = pd.DataFrame(rows).astype(FIX_PAIR_COLUMNS)
    return FixJoin(
        out.sort_values(["project", "train_id", "bench_id"], kind="stable").reset_index(drop=True), stats
    )


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
    tbook = (
        train_patches
        if isinstance(train_patches, PatchBook)
        else PatchBook(train_patches, max_chars=max_chars)
    )
    bbook = (
        bench_patches
        if isinstance(bench_patches, PatchBook)
        else PatchBook(bench_patches, max_chars=max_chars)
    )
    rels = [
        relate_patches(tbook.get(str(t)), bbook.get(str(b)), use_lines=use_lines, sides=("train", "bench"))
        for t, b in zip(pairs["train_id"], pairs["bench_id"], strict=True)
    ]
    out = pairs.copy()
    out["fix_relation"] = pd.Series([r.relation for r in rels], index=out.index, dtype="string")
    out["fix_method"] = pd.Series([r.method for r in rels], index=out.index, dtype="string")
    out["fix_reason"] = pd.Series([r.reason for r in rels], index=out.index, dtype="string")
    return out


__all__ = [
    "COMMIT_KEY_LEN", "DEFAULT_KEEP", "FIX_PAIR_COLUMNS", "RELATED_COLUMNS", "RELATED_PAIR_COLUMNS",
    "BugRecord", "FixJoin", "FixJoinStats", "bug_record", "commit_key", "join_fixes", "project_key",
    "related_groups", "related_pairs", "relate_pairs",
]  # fmt: skip
