"""Columns fetched later, for the items that need them: a training set too large to hold its texts (SWE-rebench's
2.7 GB of PRs) is read by its key columns only, and its texts and patches (`extra.lazy_columns`) are read back
from the same files afterwards, row group by row group, for the wanted items only.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...errors import InputError, OverlapError
from ...ids.github import canonical_repo, instance_id_for, parse_instance_id, parse_pr
from ...model import Dataset
from ..places.files import FileSource, HubRepo, LocalFolder, SingleFile
from .registry import get_spec

TEXT = "text_problem_statement"
REBENCH_KEYS = ["instance_id", "repo", "pull_number", "base_commit"]


def str_or_none(value: Any) -> str | None:
    """The value as text; None for None, NaN (pandas' empty cell) and blank text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return text if text.strip() else None


def pr_from_id(item_id: str | None) -> int | None:
    """The PR number of an `owner__repo-N` instance id (the number after the last `-`); None otherwise."""
    parsed = parse_instance_id(item_id) if item_id else None
    return parsed[2] if parsed else None


def _rebench_identity(row: dict[str, Any], pr_column: bool) -> tuple[str | None, Any, str]:
    """(item id, PR value, where the PR came from) of a row, as the reader made its item: V2 has no PR column
    (the PR is the number after the last `-` of `owner__repo-N`); the PRs set has `pull_number`. Without
    `instance_id`, the id is made from repo + PR (`owner__name-N`)."""
    item_id = str_or_none(row.get("instance_id"))
    if pr_column and "pull_number" in row:
        pr, field = row.get("pull_number"), "pull_number"
    else:
        pr, field = pr_from_id(item_id), "instance_id"
    if item_id is None:
        repo, number = str_or_none(row.get("repo")), parse_pr(pr)
        if repo and number is not None and canonical_repo(repo):
            item_id = instance_id_for(repo.strip(), number)
    return item_id, pr, field


def reopen(dataset: Dataset) -> FileSource:
    """The file source a loaded dataset was read from (for fetching more columns later)."""
    if getattr(dataset, "source", None) is not None:
        return dataset.source  # e.g. a written split read back: its provenance names no place to reopen
    prov = dataset.provenance
    if prov.origin == "local-folder":
        return LocalFolder(origin=prov.origin, location=prov.location, root=Path(prov.location or "."),
                           repo_id=prov.repo_id, revision=prov.revision)
    if prov.origin == "local-file":
        return SingleFile(origin=prov.origin, location=prov.location, path=Path(prov.location or "."))
    return HubRepo(origin=prov.origin, repo_id=prov.repo_id, revision=prov.revision)


def lazy_columns(dataset: Dataset) -> dict[str, str]:
    """Item columns a dataset fetches on demand ({item column: source column}); empty for most sets."""
    try:
        spec = get_spec(dataset.provenance.adapter or dataset.name)
    except OverlapError:
        return {}
    return dict(spec.extra.get("lazy_columns", {}))


def fetch_columns(dataset: Dataset, item_ids, columns: tuple[str, ...] = (TEXT, "patch")):
    """The lazy `columns` (e.g. `text_problem_statement`, `patch`) of the given items only, as a DataFrame
    indexed by item id, read from the files the dataset was loaded from.

    Only the id columns of each row group are scanned; a row group's text columns are read only when it
    holds a wanted item. Items are found the way the key scan made them (first row of a repeated id).
    """
    import pandas as pd
    import pyarrow.parquet as pq

    lazy = lazy_columns(dataset)
    unknown = [c for c in columns if c not in lazy]
    if unknown:
        raise InputError(f"{dataset.name}: column(s) {', '.join(unknown)} cannot be fetched later; "
                         f"fetchable: {', '.join(lazy) or 'none'}")
    wanted = {str(i) for i in item_ids}
    found: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    spec = get_spec(dataset.provenance.adapter or dataset.name)
    pr_column = spec.extra.get("pr_column", False)
    source = reopen(dataset)
    for record in dataset.provenance.files:
        if len(found) == len(wanted) or "@" in record.path:
            continue
        path = source.fetch(record.path)
        handle = pq.ParquetFile(path)
        names = set(handle.schema_arrow.names)
        id_columns = [c for c in REBENCH_KEYS if c in names and (pr_column or c != "pull_number")]
        text_columns = [lazy[c] for c in columns if lazy[c] in names]
        for index in range(handle.num_row_groups):
            rows = handle.read_row_group(index, columns=id_columns).to_pylist()
            hits: dict[int, str] = {}
            for position, row in enumerate(rows):
                item_id = _rebench_identity(row, pr_column)[0]
                if item_id is None or item_id in seen:
                    continue
                seen.add(item_id)
                if item_id in wanted:
                    hits[position] = item_id
            if not hits or not text_columns:
                for item_id in hits.values():
                    found[item_id] = {}
                continue
            table = handle.read_row_group(index, columns=text_columns)
            taken = table.take(sorted(hits)).to_pylist()
            for position, values in zip(sorted(hits), taken, strict=True):
                found[hits[position]] = values
    by_source = {lazy[c]: c for c in columns}
    records = [{"item_id": i, **{c: None for c in columns},
                **{by_source[k]: str_or_none(v) for k, v in found[i].items() if k in by_source}}
               for i in sorted(found)]
    frame = pd.DataFrame.from_records(records, columns=["item_id", *columns]).set_index("item_id")
    return frame.astype({c: "string" for c in columns})


def ensure_columns(dataset: Dataset, item_ids, columns: tuple[str, ...] = (TEXT, "patch")) -> int:
    """Fill the lazy `columns` of the given items in `dataset.items`, in place (fetching only items whose
    values are not there yet). Returns how many items were fetched; 0 for sets that load everything."""
    lazy = lazy_columns(dataset)
    columns = tuple(c for c in columns if c in lazy)
    if not columns:
        return 0
    items = dataset.items
    for column in columns:
        if column not in items.columns:
            items[column] = None
            items[column] = items[column].astype("string")
    wanted = set(map(str, item_ids))
    mask = items["item_id"].isin(wanted) & items[list(columns)].isna().all(axis=1)
    todo = items.loc[mask, "item_id"].tolist()
    if not todo:
        return 0
    frame = fetch_columns(dataset, todo, columns)
    position = items.index[mask & items["item_id"].isin(frame.index)]
    for column in columns:
        items.loc[position, column] = frame.loc[items.loc[position, "item_id"], column].to_numpy()
    return len(todo)


def iter_lazy_batches(dataset: Dataset, column: str):
    """Record batches (`item_id`, `column`) over every item of a lazily loaded set, one parquet row group
    at a time, so a text check can stream a 2.7 GB training set with memory bounded by the row group.
    Items are the key scan's (first row of a repeated id); rows that made no item are skipped."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lazy = lazy_columns(dataset)
    if column not in lazy:
        raise InputError(f"{dataset.name}: column {column} cannot be fetched later; fetchable: "
                         f"{', '.join(lazy) or 'none'}")
    spec = get_spec(dataset.provenance.adapter or dataset.name)
    pr_column = spec.extra.get("pr_column", False)
    items = set(dataset.items["item_id"])
    seen: set[str] = set()
    source = reopen(dataset)
    for record in dataset.provenance.files:
        if "@" in record.path:
            continue
        handle = pq.ParquetFile(source.fetch(record.path))
        names = set(handle.schema_arrow.names)
        id_columns = [c for c in REBENCH_KEYS if c in names and (pr_column or c != "pull_number")]
        text_column = [lazy[column]] if lazy[column] in names else []
        for index in range(handle.num_row_groups):
            group = handle.read_row_group(index, columns=id_columns + text_column)
            ids = [_rebench_identity(row, pr_column)[0] for row in group.select(id_columns).to_pylist()]
            keep = [i for i, item_id in enumerate(ids) if item_id in items and item_id not in seen]
            seen.update(ids[i] for i in keep)
            if not keep:
                continue
            if text_column:
                texts = group.column(lazy[column]).take(keep).combine_chunks().cast(pa.string())
            else:
                texts = pa.nulls(len(keep), pa.string())
            yield pa.RecordBatch.from_arrays([pa.array([ids[i] for i in keep], pa.string()), texts],
                                             names=["item_id", column])
