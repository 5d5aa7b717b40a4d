"""SWE-rebench-V2 and SWE-rebench-V2-PRs: a key scan of the id columns, texts fetched later.

Both sets are read by key columns only, one parquet row group at a time (the PRs set is 2.7 GB); their
texts and patches are fetched afterwards, for the items that need them, by `fetch_columns` /
`ensure_columns`.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

import pyarrow as pa

from ..errors import InputError, OverlapError
from ..ids.github import canonical_repo, instance_id_for, normalize_base, parse_pr
from ..model import Dataset
from .builder import DatasetBuilder
from .files import FileSource
from .registry import get_spec
from .spec import DatasetSpec
from .swe_columns import LOCATED, OTHER_BASE, add_rows, derive, locate
from .swe_files import file_rows, list_files, parquet_columns, reopen
from .swe_tasks import BASE_FIELDS, TEXT, add_task, pr_from_id, str_or_none

REBENCH_KEYS = ["instance_id", "repo", "pull_number", "base_commit"]
REBENCH_LAZY = {TEXT: "problem_statement", "patch": "patch"}
REBENCH_FIELDS = (*BASE_FIELDS,)


def _rebench_identity(row: dict[str, Any], pr_column: bool) -> tuple[str | None, Any, str]:
    """(item id, PR value, where the PR came from) of a SWE-rebench row.

    V2 has no PR column (the PR is the number after the last `-` of `owner__repo-N`); the PRs set has
    `pull_number`. Without `instance_id`, the id is made from repo + PR (`owner__name-N`).
    """
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


def _scan_rebench(source: FileSource, spec: DatasetSpec, files: list[str]) -> Dataset:
    """Items and keys of SWE-rebench files, column-wise (`swe_columns`); JSON lines or CSV (a user's own file
    given for a rebench set) row by row, the same items."""
    if any(source.fetch(f).suffix.lower() in (".jsonl", ".csv") for f in files):
        return _scan_rebench_rows(source, spec, files)
    builder = DatasetBuilder(spec.name, REBENCH_FIELDS)
    pr_column = spec.extra.get("pr_column", False)
    wanted, needed_any = _rebench_columns(pr_column)
    parts, read = [], []
    offset = 0
    for relpath in files:
        label, table, rows = parquet_columns(source, builder, relpath, wanted, needed_any)
        if table is not None and rows:
            field = "pull_number" if pr_column and "pull_number" in table.column_names else "instance_id"
            parts.append(locate(derive(table, pr_column), label, offset, field))
            read.append((offset, table))
        offset += rows

    def cells(column: str, rows: list[int]) -> list:
        starts = [start for start, _ in read]
        out = []
        for row in rows:
            start, table = read[bisect_right(starts, row) - 1]
            out.append(table.column(column)[row - start].as_py() if column in table.column_names else None)
        return out

    add_rows(builder, pa.concat_tables(parts) if parts else LOCATED.empty_table(), cells, other_base=True)
    return builder.build(source)


def _rebench_columns(pr_column: bool) -> tuple[list[str], tuple[tuple[str, ...], ...]]:
    """(key columns read, the column groups one of which makes an item) of a rebench set."""
    wanted = [c for c in REBENCH_KEYS if pr_column or c != "pull_number"]
    return wanted, ((("instance_id",), ("repo", "pull_number")) if pr_column else (("instance_id",),))


def _scan_rebench_rows(source: FileSource, spec: DatasetSpec, files: list[str]) -> Dataset:
    """The row-by-row scan (`add_task` per row): JSON lines and CSV files, and the reference the column-wise
    scan is tested against."""
    builder = DatasetBuilder(spec.name, REBENCH_FIELDS)
    pr_column = spec.extra.get("pr_column", False)
    wanted, needed_any = _rebench_columns(pr_column)
    other_base: list[str] = []
    first_base: dict[str, str | None] = {}
    for relpath in files:
        for where, row in file_rows(source, builder, relpath, "parquet", wanted, needed_any):
            item_id, pr, field = _rebench_identity(row, pr_column)
            base = normalize_base(row.get("base_commit"))
            if item_id is not None and builder.has(item_id):
                if first_base.get(item_id) != base:
                    other_base.append(item_id)
            if add_task(builder, item_id, where, repo=row.get("repo"), pr=pr, base=row.get("base_commit"),
                        pr_field=field):
                first_base[item_id] = base
    for item_id in other_base:
        builder.problem("duplicate_id_other_base", item_id, OTHER_BASE)
    return builder.build(source)


def load_swe_rebench_v2(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...], single: bool) -> Dataset:
    return _scan_rebench(source, spec, [spec.files[""]])


def load_swe_rebench_v2_prs(source: FileSource, spec: DatasetSpec, subsets: tuple[str, ...],
                            single: bool) -> Dataset:
    files = [""] if single else list_files(source, ".parquet")
    if not files:
        raise InputError(f"{source.location or source.repo_id}: no parquet files found")
    return _scan_rebench(source, spec, files)


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
