"""Key joins between train and bench: normalised (canonical values) vs plain (raw values), and
within-dataset duplicates.

A join is an equality merge on (kind, value); adding an identity scheme adds a key kind and a
normaliser, never a change here.
"""

from __future__ import annotations

import pandas as pd

from .model import Dataset, empty_pairs, make_pairs

# Keys that name one task: two items sharing one are the same task (listed twice inside a dataset, or
# the plain join's match when the raw values agree). A shared base commit alone (`base`) is not: many PRs
# start from one commit; `repo_pr_exact` and `base_pr` only refine `repo_pr`. A fix commit names the bug it
# fixed.
TASK_KINDS = ("ossfuzz", "cve", "fix_commit", "repo_pr")


def _matches(train_keys: pd.DataFrame, bench_keys: pd.DataFrame, on: str) -> pd.DataFrame:
    """One row per matching (train key, bench key)."""
    left = train_keys.rename(columns={"item_id": "train_id", "raw": "train_raw", "value": "train_value"})
    right = bench_keys.rename(columns={"item_id": "bench_id", "raw": "bench_raw", "value": "bench_value"})
    left_on = ["kind", "train_raw" if on == "raw" else "train_value"]
    right_on = ["kind", "bench_raw" if on == "raw" else "bench_value"]
    return left.merge(right, left_on=left_on, right_on=right_on, how="inner")


def join(train: Dataset, bench: Dataset, on: str = "value") -> pd.DataFrame:
    """Pairs of (train item, bench item) sharing a key. `on="value"` is the normalised join over every
    key kind, `on="raw"` the plain join: the task keys (TASK_KINDS) as written, as a naive script would join
    (a PR is its repo cell as written with its number, so `BurntSushi/ripgrep` and `burntsushi/ripgrep` do not
    meet here even when the two instance ids are equal).

    `match_type` is `exact` when, for some matched key (a base commit included), the raw values agree, else
    `translated` (only the canonical values agree, e.g. an old OSS-Fuzz id on one side, its new id on the other).
    """
    train_keys, bench_keys = train.keys, bench.keys
    if on == "raw":
        train_keys = train_keys[train_keys["kind"].isin(TASK_KINDS)]
        bench_keys = bench_keys[bench_keys["kind"].isin(TASK_KINDS)]
    matches = _matches(train_keys, bench_keys, on)
    if matches.empty:
        return empty_pairs()
    grouped = _by_pair(matches)
    grouped["match_type"] = grouped["exact"].map({True: "exact", False: "translated"})
    grouped["bench"] = bench.name
    pairs = grouped[["bench", "train_id", "bench_id", "kinds", "match_type", "train_raw", "bench_raw"]]
    return make_pairs(_in_row_order(pairs, train, bench))


def _by_pair(matches: pd.DataFrame) -> pd.DataFrame:
    """One row per (train_id, bench_id), in their order: the matched key kinds and raw values (each distinct,
    sorted, joined by ';') and whether the raw values of some matched key agree (`exact`). In plain Python over
    the columns: a pandas aggregation per group costs ~25 µs a group and column, most of a cell of the atlas."""
    groups: dict[tuple[str, str], tuple[set, set, set, list[bool]]] = {}
    columns = (matches[c].tolist() for c in ("train_id", "bench_id", "kind", "train_raw", "bench_raw"))
    for train_id, bench_id, kind, train_raw, bench_raw in zip(*columns, strict=True):
        group = groups.get((train_id, bench_id))
        if group is None:
            group = groups[(train_id, bench_id)] = (set(), set(), set(), [False])
        group[0].add(kind)
        group[1].add(train_raw)
        group[2].add(bench_raw)
        if (train_raw == bench_raw) is True:  # a missing raw value agrees with none
            group[3][0] = True
    pairs = sorted(groups)
    return pd.DataFrame({
        "train_id": [t for t, _ in pairs], "bench_id": [b for _, b in pairs],
        "kinds": [";".join(sorted(groups[p][0])) for p in pairs], "exact": [groups[p][3][0] for p in pairs],
        "train_raw": [";".join(sorted(groups[p][1])) for p in pairs],
        "bench_raw": [";".join(sorted(groups[p][2])) for p in pairs],
    })


def _in_row_order(pairs: pd.DataFrame, train: Dataset, bench: Dataset) -> pd.DataFrame:
    """Stable output order: by bench row, then train row (deterministic, and reads like the sources)."""
    train_row = train.items.set_index("item_id")["row"]
    bench_row = bench.items.set_index("item_id")["row"]
    order = pd.DataFrame({"b": pairs["bench_id"].map(bench_row), "t": pairs["train_id"].map(train_row)})
    return pairs.loc[order.sort_values(["b", "t"], kind="stable").index].reset_index(drop=True)


def shared_keys(train: Dataset, bench: Dataset, on: str = "value") -> pd.DataFrame:
    """Distinct (kind, value) present on both sides."""
    left = train.keys[["kind", on]].drop_duplicates()
    right = bench.keys[["kind", on]].drop_duplicates()
    return left.merge(right, on=["kind", on]).sort_values(["kind", on]).reset_index(drop=True)




def duplicates(dataset: Dataset) -> pd.DataFrame:
    """Groups of items of one dataset that share a canonical key (the same bug listed twice).

    `identical_text` says whether every named text of the group is the same (a copy) or not (the same
    bug described twice, e.g. once under its old and once under its new OSS-Fuzz id).
    """
    keys = dataset.keys[dataset.keys["kind"].isin(TASK_KINDS)]
    counts = keys.groupby(["kind", "value"])["item_id"].transform("nunique")
    dup = keys[counts > 1]
    columns = ["dataset", "kind", "value", "items", "item_ids", "raw_values", "identical_text"]
    if dup.empty:
        return pd.DataFrame({c: pd.Series([], dtype="object") for c in columns})
    texts = dataset.items.set_index("item_id")[dataset.text_columns] if dataset.text_columns else None
    row_of = dataset.items.set_index("item_id")["row"]
    records = []
    for (kind, value), group in dup.groupby(["kind", "value"], sort=True):
        ids = sorted(set(group["item_id"]), key=lambda i: row_of[i])
        identical = bool(texts is not None and len(texts.loc[ids].drop_duplicates()) == 1)
        records.append(
            {
                "dataset": dataset.name,
                "kind": kind,
                "value": value,
                "items": len(ids),
                "item_ids": ";".join(ids),
                "raw_values": ";".join(sorted(set(group["raw"]))),
                "identical_text": identical,
            }
        )
    return pd.DataFrame.from_records(records, columns=columns)
