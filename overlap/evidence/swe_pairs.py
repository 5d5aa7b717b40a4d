"""Pair kinds of every pair, and the SWE sections of a compare: what each pull-request key finds, the
overlap by pair kind, shares, subsets, per-repo breakdown, suggested renames and repo presence.

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

from collections import Counter, defaultdict
from typing import Any

import pandas as pd

from ..model import COUNTED_PAIR_KINDS as COUNTED_KINDS
from ..model import REPORTED_PAIR_KINDS as REPORTED_KINDS
from ..model import SWE_COUNTED_PAIR_KINDS, SWE_PAIR_KINDS
from ..ids.github import canonical_repo, normalize_repo, split_key
from ..sources.swe import ensure_columns
from .patches import PatchBook, relate_patches

SWE_KINDS = ("repo_pr", "repo_pr_exact", "base_pr", "base")
# Key kind → pair kind of the identities that name one bug; checked before the PR kinds.
ID_KINDS = {"ossfuzz": "same_ossfuzz", "cve": "same_cve", "fix_commit": "same_fix_commit", "fix": "same_fix"}
# Kinds whose fix relation is worked out (the others are decided by the keys alone).
FIX_KINDS = ("same_pr_other_base", "same_pr_base_unknown", "same_base_no_pr")


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


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


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


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


def _items_by(pairs: pd.DataFrame, column: str, mask) -> set[str]:
    return set(pairs.loc[mask, column]) if len(pairs) else set()


def _repo_pr_written(dataset) -> pd.DataFrame:
    """item_id, value and `folded` of every `repo_pr` key: the repo as the item wrote it (its repo cell, or its
    id where the cell gave none) read as a lowercased `owner/name` without the renames (a URL, a `.git` suffix,
    another case of one repo are one repo; an old and a new name are two)."""
    keys = dataset.keys[dataset.keys["kind"] == "repo_pr"]
    raws = keys["raw"].fillna(keys["value"]).astype(str)
    folded = {raw: normalize_repo(split_key(raw)[0]) for raw in set(raws)}
    return pd.DataFrame({"item_id": keys["item_id"].astype(str), "value": keys["value"].astype(str),
                         "folded": raws.map(folded).to_numpy()})


def _casefold_pairs(pairs: pd.DataFrame, train, bench) -> pd.Series:
    """Per pair: it shares a `repo_pr` key whose two repos, as written, are one repo up to case and spelling
    (`_repo_pr_written`): the match needs no rename."""
    ends = pairs[["train_id", "bench_id"]].astype(str).reset_index()
    train_keys = _repo_pr_written(train).rename(columns={"item_id": "train_id", "folded": "train_folded"})
    bench_keys = _repo_pr_written(bench).rename(columns={"item_id": "bench_id", "folded": "bench_folded"})
    shared = ends.merge(train_keys, on="train_id").merge(bench_keys, on=["bench_id", "value"])
    same = shared["train_folded"].notna() & (shared["train_folded"] == shared["bench_folded"])
    return pd.Series(pairs.index.isin(set(shared.loc[same, "index"])), index=pairs.index)


def _found_by_key(pairs: pd.DataFrame, train, bench) -> dict[str, int]:
    """Bench items found by each PR key: `repo_pr_exact` (repo as written + PR), `repo_pr_casefold` (the same
    repo up to case and spelling: URL, `.git`; every exact match is one), `repo_pr` (canonical repo after the
    known renames), `base_pr`, `base`; `renamed_only` are the `repo_pr` ones no case-folded match found."""
    if pairs.empty:
        return {k: 0 for k in ("repo_pr_exact", "repo_pr_casefold", "repo_pr", "base_pr", "base", "renamed_only")}
    kinds = pairs["kinds"].str.split(";")
    has = {k: kinds.map(lambda ks, k=k: k in ks).astype(bool) for k in SWE_KINDS}
    casefold = has["repo_pr_exact"] | (has["repo_pr"] & _casefold_pairs(pairs, train, bench))
    found_by_repo = _items_by(pairs, "bench_id", has["repo_pr"])
    found_casefold = _items_by(pairs, "bench_id", casefold)
    return {
        "repo_pr_exact": len(_items_by(pairs, "bench_id", has["repo_pr_exact"])),
        "repo_pr_casefold": len(found_casefold),
        "repo_pr": len(found_by_repo),
        "base_pr": len(_items_by(pairs, "bench_id", has["base_pr"])),
        "base": len(_items_by(pairs, "bench_id", has["base"])),
        "renamed_only": len(found_by_repo - found_casefold),
    }


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
        block[column] = {"bench_items": int(len(members)), "overlap": found, "share": _share(found, len(members)),
                         "known": bool(items[column].notna().any())}
    if "subset" in items.columns:
        for subset, group in items.groupby("subset", sort=True):
            found = int(group["item_id"].isin(overlap_ids).sum())
            block[f"subset:{subset}"] = {"bench_items": int(len(group)), "overlap": found,
                                         "share": _share(found, len(group)), "known": True}
    return block


def pr_repos(dataset) -> pd.Series:
    """The canonical repo of each held item that is a pull-request task (indexed by item id; null: none): the
    items' `pr_repo`, never their project. Items built without that column (by hand) take their repo cell's
    canonical repo where it is a GitHub owner/name, else their `repo_pr` key's."""
    items = dataset.items
    if "pr_repo" in items.columns:
        return pd.Series(items["pr_repo"].to_numpy(), index=items["item_id"].astype(str), dtype="string")
    keys = dataset.keys[dataset.keys["kind"] == "repo_pr"]
    from_keys = dict(zip(keys["item_id"].astype(str), (split_key(v)[0] for v in keys["value"]), strict=True))
    cells = items["repo"] if "repo" in items.columns else pd.Series(pd.NA, index=items.index)
    repos = [canonical_repo(cell) if not _missing(cell) else None for cell in cells]
    ids = items["item_id"].astype(str)
    return pd.Series([repo or from_keys.get(i) for repo, i in zip(repos, ids, strict=True)], index=ids,
                     dtype="string")


def _repo_blocks(train, bench, counted: pd.DataFrame) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per canonical repo of the benchmark's PR tasks: its items, those in a counted pair, the training items in
    the same repo; and the repo presence summary. Repos come from the items' repos (cell or id, after the known
    renames), never from a project column: two projects of one repo are one repo, an OSS-Fuzz project none."""
    if train.totals is not None:  # a streamed side: its items per repo were counted as it was read
        train_repos = Counter(train.totals.pr_repos)
    else:
        train_repos = Counter(pr_repos(train).dropna())
    bench_repo = pr_repos(bench)
    overlap_by_repo: dict[str, set[str]] = defaultdict(set)
    for b_id in set(counted["bench_id"]):
        repo = bench_repo.get(str(b_id))
        if not _missing(repo):
            overlap_by_repo[str(repo)].add(b_id)
    rows = []
    # items per repo counted at once (a group per repo was a pandas group each: thousands of repos)
    sizes = bench_repo.dropna().value_counts(sort=False)
    for repo, size in sorted(sizes.items()):
        found = len(overlap_by_repo.get(str(repo), ()))
        rows.append({"repo": str(repo), "bench_items": int(size), "overlap": found,
                     "share": _share(found, int(size)), "train_items_in_repo": int(train_repos.get(repo, 0))})
    present = [r for r in rows if r["train_items_in_repo"] > 0]
    presence = {
        "bench_repos": len(rows),
        "present_in_train": len(present),
        "share": _share(len(present), len(rows)),
        "bench_items_in_present_repos": sum(r["bench_items"] for r in present),
        "bench_items_without_repo": int(bench_repo.isna().sum()),
        "absent_repos": [r["repo"] for r in rows if r["train_items_in_repo"] == 0],
    }
    return rows, presence


def _suggested_renames(pairs: pd.DataFrame, train, bench) -> list[dict[str, Any]]:
    """base_pr matches whose canonical repos (`pr_repos`, never the project column) differ: the same PR at the
    same commit under two names."""
    if pairs.empty:
        return []
    sel = pairs[pairs["kinds"].str.split(";").map(lambda ks: "base_pr" in ks).astype(bool)]
    t_repos, b_repos = pr_repos(train), pr_repos(bench)
    t_written, b_written = _as_written(train), _as_written(bench)
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for t_id, b_id in zip(sel["train_id"].astype(str), sel["bench_id"].astype(str), strict=True):
        t_repo, b_repo = t_repos.get(t_id), b_repos.get(b_id)
        if _missing(t_repo) or _missing(b_repo) or t_repo == b_repo:
            continue
        groups[(str(t_repo), str(b_repo))].append((t_id, b_id))
    out = []
    for (t_repo, b_repo), members in sorted(groups.items()):
        out.append({"train_repo": t_repo, "bench_repo": b_repo, "pairs": len(members),
                    "train_repo_as_written": sorted({t_written.get(t, t_repo) for t, _ in members}),
                    "bench_repo_as_written": sorted({b_written.get(b, b_repo) for _, b in members}),
                    "example": {"train_id": members[0][0], "bench_id": members[0][1]}})
    return out


def _as_written(dataset) -> dict[str, str]:
    """item id → its repo as written: as its `repo_pr` key wrote it (its repo cell, or its id where the cell is
    blank or no GitHub repo), else its repo cell."""
    out = {}
    if "repo" in dataset.items.columns:
        cells = dataset.items[dataset.items["repo"].notna()]
        out = dict(zip(cells["item_id"].astype(str), cells["repo"].astype(str), strict=True))
    keys = dataset.keys[dataset.keys["kind"] == "repo_pr"]
    out |= {str(i): split_key(str(raw))[0] for i, raw in zip(keys["item_id"], keys["raw"].fillna(keys["value"]),
                                                            strict=True)}
    return out


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
    found = _found_by_key(pairs, train, bench)
    renamed_only = found.pop("renamed_only")
    by_repo, presence = _repo_blocks(train, bench, counted)
    renames = _suggested_renames(pairs, train, bench)
    renamed = {r["bench_repo"] for r in renames}
    presence["absent_but_suggested_rename"] = sorted(set(presence["absent_repos"]) & renamed)
    return {
        "bench": bench.name,
        "bench_items": n,
        "bench_items_with_pr": int(bench.items["pr"].notna().sum()) if "pr" in bench.items.columns else 0,
        "bench_items_with_base_commit": int(bench.items["base_commit"].notna().sum())
        if "base_commit" in bench.items.columns else 0,
        "found_by_key": found,
        "found_by_key_share": {k: _share(v, n) for k, v in found.items()},
        "found_only_by_known_renames": renamed_only,
        "overlap": {
            "bench_items": len(overlap_ids),
            "share": _share(len(overlap_ids), n),
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
