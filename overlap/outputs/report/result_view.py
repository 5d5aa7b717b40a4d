"""A result as the report sees it: read back from a saved folder (`load_result`) or taken from an in-memory
`CompareResult` (`view_of`), with the texts, patches and crash lines of the paired and duplicated items
(`pair_items`, kept in pair_items.parquet so `overlap report DIR` can re-render without the inputs).

`fetch_paired_columns` fetches, before anything is written, the lazily loaded columns (texts, patches) of
the paired items only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ...errors import InputError
from ...evidence.patches import PatchBook, relate_patches
from ...jsonout import dumps_json
from ...model import PAIR_COLUMNS
from ...sources.places.taskfiles import fetch_item_files
from ...sources.registry.swe import TEXT, ensure_columns
from ...sources.rows.item_paths import cybergym_task_path
from ...words import plural
from ..folders import require_kind
from .sections import MAX_TEXT_CHARS, ResultView

PAIR_ITEMS_FILE = "pair_items.parquet"


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _read_parquet(path: Path) -> pd.DataFrame:
    with open(path, "rb") as source:  # a handle: Arrow cannot open a path that is not UTF-8
        return pd.read_parquet(source)


def load_result(folder: Path, command: str = "report") -> ResultView:
    """Read a result folder written by `overlap compare` (summary.json, pairs.csv, duplicates.csv and,
    when present, pair_items.parquet for the side-by-side examples). Any other folder (a matrix, ngram or
    filter result, an empty folder, a summary.json that is not JSON or of another schema_version) is
    refused with one line naming what it is and which command reads it (`folders.require_kind`)."""
    folder = Path(folder)
    summary = require_kind(folder, "compare", command)
    try:
        pairs = _read_csv(folder / "pairs.csv") if (folder / "pairs.csv").is_file() else pd.DataFrame()
        dups = _read_csv(folder / "duplicates.csv") if (folder / "duplicates.csv").is_file() else pd.DataFrame()
        items = _read_parquet(folder / PAIR_ITEMS_FILE) if (folder / PAIR_ITEMS_FILE).is_file() else None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{folder}: cannot read its tables ({type(exc).__name__}); re-run `overlap compare "
                         "--out`") from None
    # the report and the card read every pair by these columns (pairs.csv's first ones, docs/outputs.md)
    lost = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if len(pairs) and lost:
        raise InputError(f"{folder}/pairs.csv: not the pairs of a compare (no column {', '.join(lost)}); re-run "
                         "`overlap compare --out`")
    if items is not None and not {"dataset", "item_id"} <= set(items.columns):
        raise InputError(f"{folder}/{PAIR_ITEMS_FILE}: not the paired items of a compare (no dataset/item_id "
                         "columns); re-run `overlap compare --out` or delete the file (the report then shows ids "
                         "only)")
    # the tables must be the ones the summary counts, in all and benchmark by benchmark: a report or card of a
    # folder that lost them (or whose pairs name another benchmark) would show counts with no pair behind them
    counted = [(str(b["bench"]), int(b.get("pairs", 0))) for b in summary["benches"]]
    total = sum(n for _, n in counted)
    if len(pairs) != total:
        found = "is missing" if not (folder / "pairs.csv").is_file() else f"holds {plural(len(pairs), 'pair')}"
        raise InputError(f"{folder}/pairs.csv {found}, but summary.json counts {total}; re-run `overlap compare "
                         "--out`")
    per_bench = pairs["bench"].astype(str).value_counts() if len(pairs) else {}
    for name, n in counted:
        if int(per_bench.get(name, 0)) != n:
            raise InputError(f"{folder}/pairs.csv holds {plural(int(per_bench.get(name, 0)), 'pair')} of {name}, but "
                             f"summary.json counts {n}; re-run `overlap compare --out`")
    groups = sum(int((block.get("duplicates") or {}).get("groups", 0))
                 for block in (summary["train"], *(b.get("dataset") or {} for b in summary["benches"])))
    if groups and not (folder / "duplicates.csv").is_file():
        raise InputError(f"{folder}/duplicates.csv is missing, but summary.json counts {plural(groups, 'group')} of "
                         "duplicates; re-run `overlap compare --out`")
    if groups != len(dups) and (folder / "duplicates.csv").is_file():
        raise InputError(f"{folder}/duplicates.csv holds {plural(len(dups), 'group')}, but summary.json counts "
                         f"{groups}; re-run `overlap compare --out`")
    return ResultView(summary, pairs, dups, items, folder)


def crash_lines(text: str | None, limit: int = 6) -> str:
    """The lines of a sanitizer report a reader compares: the error, the top frames, the summary."""
    if not text:
        return ""
    picked, frames = [], 0
    for line in str(text).splitlines():
        stripped = line.strip()
        if "Sanitizer" in stripped and ("ERROR" in stripped or stripped.startswith(("SUMMARY", "AddressSan"))):
            picked.append(stripped)
        elif stripped.startswith("#") and " in " in stripped and frames < 3:
            picked.append(stripped)
            frames += 1
        if len(picked) >= limit:
            break
    return "\n".join(picked)


def _crash_texts(dataset, ids: list[str]) -> dict[str, str]:
    """Crash reports of the given items: the `crash_report` column, else CyberGym's per-task error.txt."""
    items = dataset.items.set_index("item_id")
    if "crash_report" in items.columns:
        return {i: items.at[i, "crash_report"] for i in ids if pd.notna(items.at[i, "crash_report"])}
    if getattr(dataset.provenance, "adapter", None) == "cybergym":
        files = fetch_item_files(dataset, ids, "error.txt", cybergym_task_path)
        return {i: f.text for i, f in files.items() if f.text}
    return {}


def _paired_ids(result, dataset) -> set[str]:
    if dataset is result.train:
        return set(result.pairs["train_id"].astype(str)) if len(result.pairs) else set()
    comp = next(c for c in result.benches if c.bench is dataset)
    return set(comp.pairs["bench_id"].astype(str)) if len(comp.pairs) else set()


def fetch_paired_columns(result) -> None:
    """Fetch the lazily loaded texts and patches (SWE-rebench-V2: the key scan leaves them for later) of the
    paired items only, so the side-by-side view shows the train text and the fix relation sees both
    patches. Pairs whose fix relation was not worked out because a lazy side had no patch yet are related
    again now (pairs.csv and the evidence counts then agree). A no-op for sets that load everything."""
    datasets = [result.train, *[c.bench for c in result.benches]]
    for dataset in datasets:
        ids = _paired_ids(result, dataset)
        for column in (TEXT, "patch") if ids else ():  # one at a time: an item with its patch still lacks its text
            ensure_columns(dataset, ids, (column,))
    for comp in result.benches:
        pairs = comp.pairs
        if not len(pairs) or "fix_reason" not in pairs.columns:
            continue
        redo = pairs["fix_reason"].astype("string").str.contains("has no patch", regex=False).fillna(False)
        if not redo.any():
            continue
        books = [PatchBook.from_items(d.items) if "patch" in d.items.columns else None
                 for d in (result.train, comp.bench)]
        if None in books:
            continue
        for index in pairs.index[redo.to_numpy(dtype=bool)]:
            rel = relate_patches(books[0].get(str(pairs.at[index, "train_id"])),
                                 books[1].get(str(pairs.at[index, "bench_id"])), sides=("train", "bench"))
            if rel.reason and "has no patch" in str(rel.reason):
                continue
            pairs.at[index, "fix_relation"], pairs.at[index, "fix_reason"] = rel.relation, rel.reason
            if "fix_method" in pairs.columns:
                pairs.at[index, "fix_method"] = rel.method
        fix = (comp.sections.get("evidence") or {}).get("fix")
        if isinstance(fix, dict) and "by_relation" in fix:
            fix["by_relation"] = dict(sorted(pairs["fix_relation"].dropna().astype(str).value_counts().items()))
            if "by_method" in fix and "fix_method" in pairs.columns:
                fix["by_method"] = dict(sorted(pairs["fix_method"].dropna().astype(str).value_counts().items()))


def pair_items(result) -> pd.DataFrame:
    """Items in a pair or a duplicate group, with their texts and patches (cut) and crash lines, for the
    examples."""
    frames = []
    datasets = [result.train, *[c.bench for c in result.benches]]
    dups = [result.train_duplicates, *[c.duplicates for c in result.benches]]
    for dataset, dup in zip(datasets, dups, strict=True):
        side = "train_id" if dataset is result.train else "bench_id"
        ids = set(result.pairs[side]) if len(result.pairs) else set()
        for joined in dup.get("item_ids", pd.Series([], dtype=str)):
            ids |= set(str(joined).split(";"))
        chosen = dataset.items[dataset.items["item_id"].isin(ids)]
        if dataset.totals is not None:  # a streamed side holds its grouped items apart from its paired ones
            grouped = dataset.totals.grouped_items
            grouped = grouped[grouped["item_id"].isin(ids) & ~grouped["item_id"].isin(chosen["item_id"])]
            chosen = pd.concat([chosen, grouped[[c for c in grouped.columns if c in chosen.columns]]],
                               ignore_index=True)
        chosen = chosen.sort_values("row")
        keep = [c for c in ("item_id", "row", "subset", "project") if c in chosen.columns]
        texts = [*dataset.text_columns, *(["patch"] if "patch" in chosen.columns else [])]
        frame = chosen[keep + texts].copy()
        for column in texts:
            frame[column] = frame[column].map(lambda t: t if pd.isna(t) else str(t)[:MAX_TEXT_CHARS])
        crashes = _crash_texts(dataset, frame["item_id"].tolist())
        frame["crash_lines"] = frame["item_id"].map(lambda i, c=crashes: crash_lines(c.get(i)) or None)
        frame.insert(0, "dataset", dataset.name)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    return out.astype({c: "string" for c in out.columns if c != "row"}).astype({"row": "int64"})



def view_of(result) -> ResultView:
    """The in-memory view of a `CompareResult`, exactly as a saved folder reads back (the summary goes
    through the same JSON as summary.json, so key order and number types match)."""
    dups = pd.concat([result.train_duplicates, *[b.duplicates for b in result.benches]], ignore_index=True)
    return ResultView(json.loads(dumps_json(result.summary())), result.pairs, dups, pair_items(result))
