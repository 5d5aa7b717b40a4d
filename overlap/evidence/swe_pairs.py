"""Pair kinds of every pair, and the SWE sections of a compare: what each pull-request key finds, the
overlap by pair kind, shares, subsets, per-repo breakdown, suggested renames and repo presence (the repo
parts in `overlap.evidence.swe_repos`).

A pair (train item, bench item) from the key join gets one **pair kind**, decided by that pair's matched key
kinds alone (a dataset may hold OSS-Fuzz bugs, CVEs and pull requests side by side; nothing is decided per
dataset). The first row that applies wins:

| kind | what matched | counted in the overlap |
|---|---|---|
| `same_ossfuzz` | OSS-Fuzz issue (canonical id) | yes |
| `same_cve` | CVE id | yes |
| `same_fix_commit` | fix commit | yes |
| `same_fix` | no id: the same-fix join found the same fix (added by the evidence stage) | yes |
| `same_pr_same_base` | base commit + PR (`base_pr`), or repo + PR with one base a short form of the other | yes |
| `same_pr_other_base` | canonical repo + PR, both base commits known and different | yes (fix relation reported) |
| `same_pr_base_unknown` | canonical repo + PR, a side has no base commit | yes |
| `same_base_identical_fix_no_pr` | base commit, a side has no PR number (SWE-bench Pro), identical fix | yes |
| `same_base_no_pr_other_fix` | base commit, a side has no PR number, fix not identical / not comparable | no |
| `same_base_other_pr` | base commit only: both sides have PR numbers and they differ | no |

A pair whose kinds none of these rows name (a key kind added later) counts: every key kind but `base` and the
PR refinements names one task.

`classify_pairs` adds `pair_kind`, `counted`, `fix_relation` and `fix_reason` to a pair table (other stages,
e.g. text, add their own columns to the same table); `swe_sections(result)` is the JSON-ready summary.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from ..model import COUNTED_PAIR_KINDS as COUNTED_KINDS
from ..model import REPORTED_PAIR_KINDS as REPORTED_KINDS
from ..model import SWE_COUNTED_PAIR_KINDS, SWE_PAIR_KINDS
from ..sources.registry.swe import ensure_columns
from .patches import PatchBook, relate_patches
from .swe_repos import PR_KEY_KINDS as SWE_KINDS
from .swe_repos import found_by_key, repo_blocks, share, suggested_renames

# Key kind → pair kind of the identities that name one bug; checked before the PR kinds.
ID_KINDS = {"ossfuzz": "same_ossfuzz", "cve": "same_cve", "fix_commit": "same_fix_commit", "fix": "same_fix"}
# Kinds whose fix relation is worked out (the others are decided by the keys alone).
FIX_KINDS = ("same_pr_other_base", "same_pr_base_unknown", "same_base_no_pr")


def has_pr_keys(dataset) -> bool:
    """True when some item of the dataset has a pull-request or base-commit key (an SWE section is worth
    showing); it decides nothing about how pairs count."""
    return dataset.has_kind(*SWE_KINDS)


# --- pair kinds ---------------------------------------------------------------------------------------


def _fields(dataset) -> pd.DataFrame:
    columns = [c for c in ("item_id", "repo", "project", "pr", "base_commit") if c in dataset.items.columns]
    frame = dataset.items[columns].set_index("item_id")
    for column in ("repo", "project", "pr", "base_commit"):
        if column not in frame.columns:
            frame[column] = pd.NA
    return frame


def _base_kinds(pairs: pd.DataFrame, tf: pd.DataFrame, bf: pd.DataFrame) -> list[str | None]:
    """Pair kinds from the matched key kinds and the two items' PR / base fields (vectorised)."""
    import numpy as np

    if pairs.empty:
        return []
    kinds = pairs["kinds"].astype(str).str.split(";")
    wanted = (*ID_KINDS, "base_pr", "repo_pr", "base")
    has = {k: kinds.map(lambda ks, k=k: k in ks).to_numpy(dtype=bool) for k in wanted}
    train_base, bench_base = pairs["train_id"].map(tf["base_commit"]), pairs["bench_id"].map(bf["base_commit"])
    base_unknown = (train_base.isna() | bench_base.isna()).to_numpy(dtype=bool)
    # a base written short (`e9afd48`) is the same commit as the full sha it begins: the same base, not another
    abbreviated = np.array([not unknown and a != b and (a.startswith(b) or b.startswith(a))
                            for a, b, unknown in zip(train_base.astype(str), bench_base.astype(str), base_unknown,
                                                     strict=True)], dtype=bool)
    pr_unknown = (pairs["train_id"].map(tf["pr"]).isna() | pairs["bench_id"].map(bf["pr"]).isna()).to_numpy(dtype=bool)
    conditions = [
        *(has[k] for k in ID_KINDS),
        has["base_pr"] | (has["repo_pr"] & abbreviated),
        has["repo_pr"] & base_unknown,
        has["repo_pr"],
        has["base"] & pr_unknown,
        has["base"],
    ]
    choices = [*ID_KINDS.values(), "same_pr_same_base", "same_pr_base_unknown", "same_pr_other_base",
               "same_base_no_pr", "same_base_other_pr"]
    picked = np.select(conditions, choices, default="")
    return [k or None for k in picked.tolist()]


def _patch_book(dataset, item_ids: set[str]):
    """Parsed patches of `item_ids` (fetched first for sets that load patches lazily)."""

    if item_ids:
        ensure_columns(dataset, item_ids, ("patch",))
    return PatchBook.from_items(dataset.items[dataset.items["item_id"].isin(item_ids)])


def classify_pairs(pairs: pd.DataFrame, train, bench, *, fix: bool = True) -> pd.DataFrame:
    """The pair table with `pair_kind`, `counted`, `fix_relation`, `fix_reason` added (see the module doc).

    Every pair is classified by its own kinds (see the module doc); a pair of a kind no row names counts. The
    fix relation
    (`overlap.evidence.patches.relate_patches`) is worked out for same-PR-other-base, same-PR-unknown-base
    and same-base-no-PR pairs; with `fix=False` it stays null and
    same-base-no-PR pairs are `same_base_no_pr_other_fix` with reason `not_run`.
    Idempotent: a table that already has `pair_kind` is returned unchanged.
    """
    if "pair_kind" in pairs.columns:
        return pairs
    out = pairs.copy().reset_index(drop=True)
    kinds = _base_kinds(out, _fields(train), _fields(bench))
    relation: list[str | None] = [None] * len(out)
    reason: list[str | None] = [None] * len(out)
    todo = [i for i, k in enumerate(kinds) if k in FIX_KINDS]
    if fix and todo:
        train_ids, bench_ids = out["train_id"].tolist(), out["bench_id"].tolist()  # not `.iat` per pair: slow
        train_book = _patch_book(train, {train_ids[i] for i in todo})
        bench_book = _patch_book(bench, {bench_ids[i] for i in todo})
        for i in todo:
            rel = relate_patches(train_book.get(train_ids[i]), bench_book.get(bench_ids[i]), sides=("train", "bench"))
            relation[i], reason[i] = rel.relation, rel.reason
    for i in todo:
        if kinds[i] == "same_base_no_pr":
            kinds[i] = "same_base_identical_fix_no_pr" if relation[i] == "identical" else "same_base_no_pr_other_fix"
            if relation[i] is None:
                reason[i] = "not_run: fix relation not worked out"
    out["pair_kind"] = pd.array(kinds, dtype="string")
    out["counted"] = pd.array([k is None or k in COUNTED_KINDS for k in kinds], dtype="boolean")
    out["fix_relation"] = pd.array(relation, dtype="string")
    out["fix_reason"] = pd.array(reason, dtype="string")
    return out


def classify_result(result):
    """Classify the pairs of every benchmark of a CompareResult, in place (once); returns the result."""
    for comp in result.benches:
        comp.pairs = classify_pairs(comp.pairs, result.train, comp.bench)
    return result


# --- sections -----------------------------------------------------------------------------------------


def _pair_kind_block(pairs: pd.DataFrame) -> dict[str, dict[str, Any]]:
    block = {}
    for kind in SWE_PAIR_KINDS:
        sel = pairs[pairs["pair_kind"] == kind] if len(pairs) else pairs
        block[kind] = {"pairs": int(len(sel)), "bench_items": int(sel["bench_id"].nunique()),
                       "train_items": int(sel["train_id"].nunique()), "counted": kind in COUNTED_KINDS}
    return block


def _fix_block(pairs: pd.DataFrame) -> dict[str, dict[str, int]]:
    block: dict[str, dict[str, int]] = {}
    if pairs.empty:
        return block
    rel = pairs[pairs["fix_relation"].notna()]
    for kind, group in rel.groupby("pair_kind", sort=True):
        block[str(kind)] = {str(k): int(v) for k, v in sorted(Counter(group["fix_relation"]).items())}
    not_run = pairs[pairs["fix_reason"].fillna("").str.startswith("not_run")]
    if len(not_run):
        block["not_run"] = {"pairs": int(len(not_run))}
    return block


def _subset_block(bench, overlap_ids: set[str]) -> dict[str, dict[str, Any]]:
    items = bench.items
    block: dict[str, dict[str, Any]] = {}
    for column in sorted(c for c in items.columns if c.startswith("in_")):
        members = items.loc[items[column].fillna(False).astype(bool), "item_id"]
        found = int(members.isin(overlap_ids).sum())
        block[column] = {"bench_items": int(len(members)), "overlap": found, "share": share(found, len(members)),
                         "known": bool(items[column].notna().any())}
    if "subset" in items.columns:
        for subset, group in items.groupby("subset", sort=True):
            found = int(group["item_id"].isin(overlap_ids).sum())
            block[f"subset:{subset}"] = {"bench_items": int(len(group)), "overlap": found,
                                         "share": share(found, len(group)), "known": True}
    return block


def _same_pr_groups(dataset) -> dict[str, int]:
    """The same PR (canonical repo + PR) listed more than once inside one dataset (e.g. at two bases)."""
    if dataset.totals is not None:
        return dict(dataset.totals.same_pr)
    keys = dataset.keys[dataset.keys["kind"] == "repo_pr"]
    counts = keys.groupby("value")["item_id"].nunique()
    dup = counts[counts > 1]
    return {"groups": int(len(dup)), "items": int(dup.sum())}


def _swe_only(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pull-request pairs of a classified pair table (the others are another scheme's matches)."""
    return pairs[pairs["pair_kind"].isin(SWE_PAIR_KINDS).fillna(False).astype(bool)] if len(pairs) else pairs


def bench_section(train, bench, pairs: pd.DataFrame) -> dict[str, Any]:
    """The SWE section of one benchmark against the training set (pairs already classified): its
    pull-request pairs only; OSS-Fuzz, CVE and fix-commit matches are counted in the benchmark's own block."""
    pairs = _swe_only(pairs)
    counted = pairs[pairs["counted"].fillna(False).astype(bool)] if len(pairs) else pairs
    overlap_ids = set(counted["bench_id"])
    n = len(bench.items)
    by_kind = {k: int(counted.loc[counted["pair_kind"] == k, "bench_id"].nunique()) if len(counted) else 0
               for k in SWE_COUNTED_PAIR_KINDS}
    found = found_by_key(pairs, train, bench)
    renamed_only = found.pop("renamed_only")
    by_repo, presence = repo_blocks(train, bench, counted)
    renames = suggested_renames(pairs, train, bench)
    renamed = {r["bench_repo"] for r in renames}
    presence["absent_but_suggested_rename"] = sorted(set(presence["absent_repos"]) & renamed)
    return {
        "bench": bench.name,
        "bench_items": n,
        "bench_items_with_pr": int(bench.items["pr"].notna().sum()) if "pr" in bench.items.columns else 0,
        "bench_items_with_base_commit": int(bench.items["base_commit"].notna().sum())
        if "base_commit" in bench.items.columns else 0,
        "found_by_key": found,
        "found_by_key_share": {k: share(v, n) for k, v in found.items()},
        "found_only_by_known_renames": renamed_only,
        "overlap": {
            "bench_items": len(overlap_ids),
            "share": share(len(overlap_ids), n),
            "train_items": int(counted["train_id"].nunique()) if len(counted) else 0,
            "pairs": int(len(counted)),
            "bench_items_by_kind": by_kind,
            "definition": "bench items in a counted pair: same PR at the same base (base_pr), same PR at "
            "another or unknown base (canonical repo + PR), or same base with identical fix where a side "
            "has no PR number",
        },
        "pair_kinds": _pair_kind_block(pairs),
        "fix_relations": _fix_block(pairs),
        "subsets": _subset_block(bench, overlap_ids),
        "by_repo": by_repo,
        "repo_presence": presence,
        "suggested_renames": renames,
        "bench_same_pr_listed_twice": _same_pr_groups(bench),
    }


def swe_sections(result) -> dict[str, Any]:
    """The SWE sections of a CompareResult (JSON-ready, deterministic): per benchmark, bench items found by
    each key, the overlap and its share, pair kinds, fix relations, subset counts, per-repo breakdown,
    repo presence and suggested renames; plus the train items in any counted pair.

    Classifies the result's pairs in place first (see `classify_result`). Empty when no side has a
    pull-request or base-commit key.
    """
    classify_result(result)
    if not has_pr_keys(result.train) and not any(has_pr_keys(c.bench) for c in result.benches):
        return {}
    benches = []
    train_ids: set[str] = set()
    train_ids_any: set[str] = set()
    for comp in result.benches:
        pairs = _swe_only(comp.pairs)
        benches.append(bench_section(result.train, comp.bench, pairs))
        if len(pairs):
            train_ids |= set(pairs.loc[pairs["counted"].fillna(False).astype(bool), "train_id"])
            train_ids_any |= set(pairs.loc[pairs["pair_kind"].notna(), "train_id"])
    return {
        "train": result.train.name,
        "train_items": result.train.item_count,
        "train_same_pr_listed_twice": _same_pr_groups(result.train),
        "train_items_in_any_pair": len(train_ids),
        "train_items_in_any_pair_incl_reported": len(train_ids_any),
        "pair_kinds": {"counted": list(SWE_COUNTED_PAIR_KINDS), "reported_not_counted": list(REPORTED_KINDS)},
        "benches": benches,
    }
