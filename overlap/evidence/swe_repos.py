"""The repo side of the SWE section: what each pull-request key finds (exact, case-folded, after known renames),
the per-repo table with repo presence, and suggested renames.

A pull-request task's repo (`pr_repos`) is its item's `pr_repo`: its repo cell's `owner/name` where the cell is a
GitHub repo in any spelling, else the repo its id names, lowercased and after the known renames. It is never the
project column (the within-project baseline's stratum): two projects of one repo are one repo, and an OSS-Fuzz
or CVE row is no PR task whatever its repo or project cells say.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pandas as pd

from ..ids.github import canonical_repo, normalize_repo, split_key

# the key kinds of a pull-request task
PR_KEY_KINDS = ("repo_pr", "repo_pr_exact", "base_pr", "base")


def share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _items_by(pairs: pd.DataFrame, column: str, mask) -> set[str]:
    return set(pairs.loc[mask, column]) if len(pairs) else set()


def _repo_pr_written(dataset) -> pd.DataFrame:
    """item_id, value and `folded` of every `repo_pr` key: the repo as the item wrote it (its repo cell, or its
    id where the cell gave none) read as a lowercased `owner/name` without the renames (a URL, a `.git` suffix,
    another case of one repo are one repo; an old and a new name are two)."""
    keys = dataset.keys[dataset.keys["kind"] == "repo_pr"]
    # a repo_pr key is `<repo>#<PR>`: the repo is what comes before the last `#` (read once per repo)
    heads = keys["raw"].fillna(keys["value"]).astype(str).str.rsplit("#", n=1).str[0]
    folded = {head: normalize_repo(head) for head in heads.unique()}
    return pd.DataFrame({"item_id": keys["item_id"].astype(str), "value": keys["value"].astype(str),
                         "folded": heads.map(folded).to_numpy()})


def _casefold_pairs(pairs: pd.DataFrame, train, bench) -> pd.Series:
    """Per pair: it shares a `repo_pr` key whose two repos, as written, are one repo up to case and spelling
    (`_repo_pr_written`): the match needs no rename."""
    ends = pairs[["train_id", "bench_id"]].astype(str).reset_index()
    train_keys = _repo_pr_written(train).rename(columns={"item_id": "train_id", "folded": "train_folded"})
    bench_keys = _repo_pr_written(bench).rename(columns={"item_id": "bench_id", "folded": "bench_folded"})
    shared = ends.merge(train_keys, on="train_id").merge(bench_keys, on=["bench_id", "value"])
    same = shared["train_folded"].notna() & (shared["train_folded"] == shared["bench_folded"])
    return pd.Series(pairs.index.isin(set(shared.loc[same, "index"])), index=pairs.index)


def found_by_key(pairs: pd.DataFrame, train, bench) -> dict[str, int]:
    """Bench items found by each PR key: `repo_pr_exact` (repo as written + PR), `repo_pr_casefold` (the same
    repo up to case and spelling: URL, `.git`; every exact match is one), `repo_pr` (canonical repo after the
    known renames), `base_pr`, `base`; `renamed_only` are the `repo_pr` ones no case-folded match found."""
    if pairs.empty:
        return {k: 0 for k in ("repo_pr_exact", "repo_pr_casefold", "repo_pr", "base_pr", "base", "renamed_only")}
    kinds = pairs["kinds"].str.split(";")
    has = {k: kinds.map(lambda ks, k=k: k in ks).astype(bool) for k in PR_KEY_KINDS}
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
    repos = [canonical_repo(cell) if not missing(cell) else None for cell in cells]
    ids = items["item_id"].astype(str)
    return pd.Series([repo or from_keys.get(i) for repo, i in zip(repos, ids, strict=True)], index=ids,
                     dtype="string")


def repo_blocks(train, bench, counted: pd.DataFrame) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per canonical repo of the benchmark's PR tasks: its items, those in a counted pair, the training items in
    the same repo; and the repo presence summary. Repos come from the items' repos (cell or id, after the known
    renames), never from a project column: two projects of one repo are one repo, an OSS-Fuzz project none."""
    if train.totals is not None:  # a streamed side: its items per repo were counted as it was read
        train_repos = Counter(train.totals.pr_repos)
    else:
        train_repos = Counter(pr_repos(train).dropna())
    bench_repo = pr_repos(bench)
    # items per repo counted at once (a group or a look-up per repo or item was slow: thousands of repos)
    in_pair = bench_repo.reindex(pd.unique(counted["bench_id"].astype(str))) if len(counted) else bench_repo[:0]
    overlap_by_repo = in_pair.dropna().value_counts(sort=False)
    sizes = bench_repo.dropna().value_counts(sort=False)
    rows = []
    for repo, size in sorted(sizes.items()):
        found = int(overlap_by_repo.get(repo, 0))
        rows.append({"repo": str(repo), "bench_items": int(size), "overlap": found,
                     "share": share(found, int(size)), "train_items_in_repo": int(train_repos.get(repo, 0))})
    present = [r for r in rows if r["train_items_in_repo"] > 0]
    presence = {
        "bench_repos": len(rows),
        "present_in_train": len(present),
        "share": share(len(present), len(rows)),
        "bench_items_in_present_repos": sum(r["bench_items"] for r in present),
        "bench_items_without_repo": int(bench_repo.isna().sum()),
        "absent_repos": [r["repo"] for r in rows if r["train_items_in_repo"] == 0],
    }
    return rows, presence


def suggested_renames(pairs: pd.DataFrame, train, bench) -> list[dict[str, Any]]:
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
        if missing(t_repo) or missing(b_repo) or t_repo == b_repo:
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
