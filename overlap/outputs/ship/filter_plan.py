"""Which rows of a training set to drop for a compare, and why: the filter's decision, made before any data
is read again (writing is `split_files`, checking is `splits.write_split`).

Reasons (every dropped row carries at least one, `;`-joined in `removed.csv`):

- `id:<kind>`  the train item shares a canonical key of that kind with a bench item (`id:ossfuzz`, ...);
- `fix`        a pair's kinds include `fix`, or its `fix_relation` column says the fixes are the same
               (identical / contains / contained);
- `dup:<kind>` an extra copy of one bug inside the training set (items sharing a canonical key). One copy
               of each group is kept: the first copy in source order that no other active reason drops.
               When every copy is dropped for other reasons, none is kept and every copy after the first
               also carries `dup:<kind>`. A row repeating an earlier row's id is `dup:item_id`;
- `ngram:<n>`, `spec:harness` (only when asked for) train items flagged by a column of that name with
               `:` written `_` (`ngram_13`, `spec_harness`) in the pairs or the train items, or passed in
               `flagged={reason: ids}`. Asking for one that nothing provides is an InputError.

Decisions are made per item and applied to every row of that item: its first row and every row that
repeats its id (`Dataset.repeats`), each located by file and position in that file. Rows of the source that
made no item (no id, a malformed line, outside a selected subset) are kept and counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...errors import InputError
from ...model import KEY_KINDS
from ...text import MAX_NGRAM

DEFAULT_REASONS = ("id", "fix", "dup")
FIX_RELATIONS = ("identical", "contains", "contained")
_REASON_RE = re.compile(r"^(id|fix|dup|id:[a-z0-9_]+|ngram:[0-9]{1,2}|spec:[a-z0-9_]+)$", re.ASCII)
REMOVED_COLUMNS = ["file", "row", "item_id", "reasons", "bench_ids"]  # row = position in that file
SAME_ID = "dup:item_id"
MALFORMED_ROWS = ("malformed_line", "malformed_row")  # problems that are whole rows the adapter could not read


@dataclass
class FilterResult:
    """The rows to drop from a training set and why (no data read yet)."""

    train: str
    reasons_asked: tuple[str, ...]
    removed: pd.DataFrame  # REMOVED_COLUMNS, one row per dropped source row, in source order
    source_rows: int  # rows of the source files, as recorded in the provenance
    items: int  # rows the adapter turned into items
    repeated_rows: int  # rows repeating an earlier row's id
    counts: dict[str, int] = field(default_factory=dict)  # dropped rows per reason (a row can have several)
    malformed_rows: int = 0  # rows the adapter could not read (e.g. a line that is not JSON): kept as they are

    @property
    def kept_rows(self) -> int:
        return self.source_rows - len(self.removed)

    @property
    def rows_without_item(self) -> int:
        """Source rows that made no item and repeat none (no id, malformed, outside the subset): kept."""
        return self.source_rows - self.items - self.repeated_rows

    def drop_positions(self) -> dict[str, set[int]]:
        """{file: positions in that file} of the removed rows."""
        out: dict[str, set[int]] = {}
        for file, row in zip(self.removed["file"], self.removed["row"], strict=True):
            out.setdefault(str(file), set()).add(int(row))
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "train": self.train,
            "reasons_asked": list(self.reasons_asked),
            "source_rows": self.source_rows,
            "items": self.items,
            "repeated_rows": self.repeated_rows,
            "rows_without_item_kept": self.rows_without_item,
            "malformed_rows_kept": self.malformed_rows,
            "removed_rows": len(self.removed),
            "kept_rows": self.kept_rows,
            "removed_by_reason": dict(sorted(self.counts.items())),
        }


def check_reasons(reasons: Iterable[str]) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(r.strip().lower() for r in reasons if r.strip()))
    bad = [r for r in out if not _REASON_RE.match(r) or (r.startswith("ngram:") and not 1 <= int(r[6:]) <= MAX_NGRAM)
           or (r.startswith("id:") and r[3:] not in KEY_KINDS)]
    if bad:
        raise InputError(f"unknown drop reason '{bad[0]}'; use id, id:<kind> (kind: {', '.join(KEY_KINDS)}), fix, "
                         f"dup, ngram:<n> (n from 1 to {MAX_NGRAM}) or spec:harness")
    if not out:
        raise InputError("no drop reason given; use e.g. --drop id --drop dup")
    return out


def _id_active(reasons: tuple[str, ...], kind: str) -> bool:
    return "id" in reasons or f"id:{kind}" in reasons


def _fix_pair(row: Mapping[str, Any], has_relation: bool) -> bool:
    kinds = str(row.get("kinds") or "").split(";")
    return "fix" in kinds or (has_relation and str(row.get("fix_relation")) in FIX_RELATIONS)


def _truthy(series: pd.Series) -> pd.Series:
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.fillna(0).astype(float) > 0
    return series.astype("string").str.lower().isin(["true", "1", "yes"]).fillna(False)


def _flagged_by_columns(reason: str, pairs: pd.DataFrame, items: pd.DataFrame) -> set[str] | None:
    """Train ids flagged by a `<family>_<arg>` column of the pairs or the train items (None: no column)."""
    column = reason.replace(":", "_")
    found: set[str] | None = None
    if column in pairs.columns:
        found = set(pairs.loc[_truthy(pairs[column]), "train_id"])
    if column in items.columns:
        found = (found or set()) | set(items.loc[_truthy(items[column]), "item_id"])
    return found


def _duplicate_components(dups: pd.DataFrame) -> list[tuple[list[str], dict[str, set[str]]]]:
    """Connected groups of train items sharing a key (transitively), with the kinds each item shared."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    kinds: dict[str, set[str]] = {}
    for group in dups.itertuples(index=False):
        ids = str(group.item_ids).split(";")
        for item in ids:
            kinds.setdefault(item, set()).add(str(group.kind))
            parent[find(item)] = find(ids[0])
    components: dict[str, list[str]] = {}
    for item in kinds:
        components.setdefault(find(item), []).append(item)
    return [(members, kinds) for members in components.values()]


def filter_split(result, reasons: Iterable[str] = DEFAULT_REASONS, *,
                 flagged: Mapping[str, Iterable[str]] | None = None) -> FilterResult:
    """Decide which training rows to drop for a `CompareResult` (all its benchmarks) and why."""
    asked = check_reasons(reasons)
    train = result.train
    items = train.items
    pairs = result.pairs
    why: dict[str, set[str]] = {}
    benches: dict[str, set[str]] = {}

    def drop(item_id: str, reason: str, bench_id: str | None = None) -> None:
        why.setdefault(item_id, set()).add(reason)
        if bench_id is not None:
            benches.setdefault(item_id, set()).add(bench_id)

    has_relation = "fix_relation" in pairs.columns
    for row in pairs.to_dict(orient="records"):
        bench_ref = f"{row['bench']}:{row['bench_id']}" if len(result.benches) > 1 else str(row["bench_id"])
        for kind in str(row["kinds"]).split(";"):
            if kind and kind != "fix" and _id_active(asked, kind):
                drop(row["train_id"], f"id:{kind}", bench_ref)
        if "fix" in asked and _fix_pair(row, has_relation):
            drop(row["train_id"], "fix", bench_ref)

    for reason in (r for r in asked if r.startswith(("ngram:", "spec:"))):
        given = (flagged or {}).get(reason)
        found = _flagged_by_columns(reason, pairs, items)
        if given is None and found is None:
            column = reason.replace(":", "_")
            raise InputError(f"drop reason '{reason}' asked for, but the result has no '{column}' column; run "
                             "the check that provides it first, or leave the reason out")
        for item_id in set(given or ()) | (found or set()):
            drop(str(item_id), reason)

    if "dup" in asked:
        # a streamed side holds its matched items only; its grouped ones (every member of a group) apart
        grouped = train.totals.grouped_items if train.totals is not None else items
        row_of = grouped.set_index("item_id")["row"]
        for members, kinds in _duplicate_components(result.train_duplicates):
            ordered = sorted(members, key=lambda i: row_of[i])
            free = [i for i in ordered if i not in why]
            keep = free[0] if free else ordered[0]
            for item_id in ordered:
                if item_id != keep:
                    for kind in sorted(kinds[item_id]):
                        drop(item_id, f"dup:{kind}")

    removed = _removed_rows(_located(train, why, same_id_is_dup="dup" in asked), why, benches,
                            same_id_is_dup="dup" in asked)
    counts: dict[str, int] = {}
    for reasons_of in removed["reasons"]:
        for reason in reasons_of.split(";"):
            counts[reason] = counts.get(reason, 0) + 1
    source_rows = sum(int(f.rows or 0) for f in train.provenance.files if "@" not in f.path)
    repeated = len(train.totals.repeat_rows) if train.totals is not None else len(train.repeats)
    item_count = train.item_count
    if source_rows < item_count + repeated:
        raise InputError(f"{train.name}: the provenance records {source_rows} source rows but the adapter made "
                         f"{item_count} items from {item_count + repeated} rows; it did not record its files' "
                         "row counts")
    malformed = sum(p.count for p in train.problems if p.what in MALFORMED_ROWS)
    return FilterResult(train.name, asked, removed, source_rows, item_count, repeated, counts, malformed)


def _located(train, why: dict[str, set[str]], same_id_is_dup: bool) -> pd.DataFrame:
    """item_id, file, file_row, row, first of the rows a decision can reach: every row of the dropped items,
    and with `dup` every repeat. A held side has them in its items and repeats; a streamed side finds them
    by reading its id column again (`SideTotals.locate`), so only the dropped rows are ever held."""
    if train.totals is not None:
        return train.totals.locate(set(why), same_id_is_dup)
    return pd.concat([train.items[["item_id", "file", "file_row", "row"]].assign(first=True),
                      train.repeats.assign(first=False)], ignore_index=True)


def _removed_rows(located: pd.DataFrame, why: dict[str, set[str]], benches: dict[str, set[str]],
                  same_id_is_dup: bool) -> pd.DataFrame:
    """One row per dropped source row of `located`: every row of a dropped item (its first row and its
    repeats), and with `dup` the repeats of kept items, in source order."""
    records = []
    for item_id, file, file_row, order, first in located.itertuples(index=False):
        if item_id in why:
            reasons = why[item_id]
        elif same_id_is_dup and not first:
            reasons = {SAME_ID}
        else:
            continue
        records.append({"order": int(order), "file": file, "row": int(file_row), "item_id": item_id,
                        "reasons": ";".join(sorted(reasons)),
                        "bench_ids": ";".join(sorted(benches.get(item_id, ())))})
    frame = pd.DataFrame.from_records(records, columns=["order", *REMOVED_COLUMNS])
    return frame.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)
