"""Reading the files of the SWE task sets: rows of one file streamed with counted problems (parquet by row
group, JSON lines line by line, CSV), the Hub/folder file listing, and subset membership from a second repo.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import HubUnavailableError, InputError, OverlapError
from ..model import Dataset, FileRecord
from .builder import DatasetBuilder
from .files import FileSource, HubRepo, LocalFolder, SingleFile, SplitSource, first_line, read_records, sha256_of
from .spec import DatasetSpec

BY_ID = (("instance_id",),)  # the columns that make an item: the id alone


def file_rows(
    source: FileSource,
    builder: DatasetBuilder,
    relpath: str,
    kind: str,
    columns: list[str],
    needed_any: tuple[tuple[str, ...], ...] = BY_ID,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) of one file of the dataset (`relpath`; "" for the user's single file), holding only
    `columns`; `kind` is its format: parquet, jsonl or csv. `where` names the row for problem reports.

    Once all rows are read the file is recorded in the provenance with the number of rows read.
    `needed_any` (parquet): the column groups of which one must be present for the file to be usable.
    """
    path = source.fetch(relpath)
    label = relpath or path.name
    suffix = path.suffix.lower()  # the file's own format wins (a filtered split is parquet whatever it was)
    kind = {".parquet": "parquet", ".jsonl": "jsonl", ".csv": "csv"}.get(suffix, kind)
    if kind == "parquet":
        rows = _parquet_rows(builder, path, label, columns, needed_any)
    elif kind == "jsonl":
        rows = _jsonl_rows(builder, path, label, columns)
    else:
        rows = _csv_rows(builder, path, label, columns)
    count = 0
    # A malformed line comes through as None: it holds a position in the file but makes no item.
    for _, (where, row) in builder.rows_of(label, rows):
        count += 1
        if row is not None:
            yield where, row
    source.record(label, path, count)


def _parquet_open(builder: DatasetBuilder, path: Path, label: str, wanted: list[str],
                  needed_any: tuple[tuple[str, ...], ...]) -> tuple[Any, list[str] | None] | None:
    """(handle, the wanted columns the file has) of one parquet file, `present` None when no group of
    `needed_any` is fully there (counted `unusable_file`); None when it cannot be read (`unreadable_file`).
    A wanted column the file lacks is counted (`missing_column`)."""
    try:
        handle = pq.ParquetFile(path)
        names = set(handle.schema_arrow.names)
    except (pa.ArrowInvalid, OSError) as exc:
        builder.problem("unreadable_file", f"{label}: {first_line(exc)}", "the file is not readable parquet")
        return None
    for column in wanted:
        if column not in names:
            builder.problem("missing_column", f"{label}: {column}", "a column the file lacks is read as empty")
    if not any(all(c in names for c in group) for group in needed_any):
        builder.problem("unusable_file", label, "the file has none of the columns an item id is made from")
        return handle, None
    return handle, [c for c in wanted if c in names]


def _parquet_rows(
    builder: DatasetBuilder, path: Path, label: str, wanted: list[str], needed_any: tuple[tuple[str, ...], ...]
) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Rows of one parquet file, one row group at a time, reading only `wanted` columns (`_parquet_open`).

    When nothing could make an item the file yields a None per row (its rows are still rows of the source).
    A file that cannot be read at all is counted as unreadable.
    """
    opened = _parquet_open(builder, path, label, wanted, needed_any)
    if opened is None:
        return
    handle, present = opened
    if present is None:
        for position in range(handle.metadata.num_rows):
            yield f"{label} row {position}", None
        return
    offset = 0
    try:
        for index in range(handle.num_row_groups):
            rows = handle.read_row_group(index, columns=present).to_pylist()
            for position, row in enumerate(rows):
                yield f"{label} row {offset + position}", row
            offset += len(rows)
    except (pa.ArrowInvalid, OSError) as exc:
        builder.problem("unreadable_file", f"{label}: {first_line(exc)}", "the file is not readable parquet")


def parquet_columns(source: FileSource, builder: DatasetBuilder, relpath: str, wanted: list[str],
                    needed_any: tuple[tuple[str, ...], ...] = BY_ID) -> tuple[str, Any, int]:
    """(label, table, rows) of one parquet file of the dataset read column-wise: the `wanted` columns it has,
    row group by row group, with the problems `file_rows` counts; `table` is None when no row can make an
    item (`rows` still counts them). The file is recorded in the provenance with its rows read."""
    path = source.fetch(relpath)
    label = relpath or path.name
    opened = _parquet_open(builder, path, label, wanted, needed_any)
    table, rows = None, 0
    if opened is not None and opened[1] is None:
        rows = opened[0].metadata.num_rows
    elif opened is not None:
        handle, present = opened
        groups = []
        try:
            for index in range(handle.num_row_groups):
                groups.append(handle.read_row_group(index, columns=present))
        except (pa.ArrowInvalid, OSError) as exc:
            builder.problem("unreadable_file", f"{label}: {first_line(exc)}", "the file is not readable parquet")
        table = pa.concat_tables(groups) if groups else handle.schema_arrow.empty_table().select(present)
        rows = table.num_rows
    source.record(label, path, rows)
    return label, table, rows


def _jsonl_rows(builder: DatasetBuilder, path: Path, label: str, columns: list[str]
                ) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Rows of a JSON-lines file, streamed line by line (files of hundreds of MB hold test logs the
    adapters do not need). Every non-blank line is a row; a bad line is counted and yields None."""
    with open(path, "rb") as handle:
        for index, raw in enumerate(handle):
            if not raw.strip():
                continue
            where = f"{label} line {index + 1}"
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                builder.problem("malformed_line", where, "not UTF-8 text")
                yield where, None
                continue
            except json.JSONDecodeError as exc:
                builder.problem("malformed_line", where, f"invalid JSON ({exc.msg})")
                yield where, None
                continue
            except RecursionError:
                builder.problem("malformed_line", where, "JSON nested too deeply to read")
                yield where, None
                continue
            if not isinstance(row, dict):
                builder.problem("malformed_line", where, "not a JSON object")
                yield where, None
                continue
            yield where, {c: row[c] for c in columns if c in row}


def _csv_rows(builder: DatasetBuilder, path: Path, label: str, columns: list[str]
              ) -> Iterator[tuple[str, dict[str, Any]]]:
    import pandas as pd

    try:
        header = pd.read_csv(path, nrows=0).columns.tolist()
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        builder.problem("unreadable_file", f"{label}: {first_line(exc)}", "the file is not readable CSV")
        return
    for column in columns:
        if column not in header:
            builder.problem("missing_column", f"{label}: {column}", "a column the file lacks is read as empty")
    for index, row in enumerate(read_records(path, columns)):
        yield f"{label} row {index}", row


def selected(spec: DatasetSpec, subsets: tuple[str, ...]) -> tuple[str, ...]:
    """The subsets to read: those asked for, else the spec's defaults, else all its files."""
    return subsets or spec.default_subsets or tuple(spec.files)


def list_files(source: FileSource, suffix: str) -> list[str]:
    """Repo-relative paths of all files ending in `suffix`: the Hub's file list (HfApi.list_repo_files), or
    the local folder (glob), or the cached snapshot when offline. Sorted; hidden folders left out."""
    if isinstance(source, SplitSource):
        return source.listed(suffix)
    if isinstance(source, LocalFolder):
        root = Path(source.root)
        found = [p.relative_to(root).as_posix() for p in root.rglob(f"*{suffix}") if p.is_file()]
        return sorted(f for f in found if not any(part.startswith(".") for part in f.split("/")))
    if isinstance(source, HubRepo):
        return sorted(f for f in _hub_files(source) if f.endswith(suffix)
                      and not any(part.startswith(".") for part in f.split("/")))
    raise InputError(f"{source.location}: a listing needs a folder or a Hub repo")  # pragma: no cover


def _hub_files(source: HubRepo) -> list[str]:
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub import errors as hf_errors

    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
    try:
        if offline:
            raise hf_errors.OfflineModeIsEnabled("HF_HUB_OFFLINE is set")
        return list(HfApi().list_repo_files(source.repo_id, repo_type="dataset", revision=source.revision))
    except hf_errors.RepositoryNotFoundError:
        raise InputError(f"{source.repo_id}: no such Hub dataset (or it is private and no token is set)") from None
    except hf_errors.RevisionNotFoundError:
        raise InputError(f"{source.repo_id}: revision '{source.revision}' not found; give a commit sha, branch "
                         "or tag that exists") from None
    except Exception:  # offline, no network, server error: fall back to a cached snapshot
        pass
    try:
        folder = snapshot_download(source.repo_id, repo_type="dataset", revision=source.revision,
                                   cache_dir=source._cache_dir(), local_files_only=True)
    except Exception:
        raise HubUnavailableError(
            f"{source.repo_id}@{source.revision}: cannot list the repo's files (no network) and no snapshot is "
            "cached; run once with internet, or pass --data NAME=DIR with a folder laid out like the repo"
        ) from None
    root = Path(folder)
    source.origin = "hub-cache"
    return [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]


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


def membership(source: FileSource, spec: DatasetSpec, builder: DatasetBuilder) -> set[str] | None:
    """Instance ids of the subset named in `spec.extra['member_of']` = (flag, repo_id, revision, file).

    From the Hub: that repo at its pinned revision. From a local folder: a folder named like that repo
    (e.g. `SWE-bench_Verified/`) inside the dataset's folder or beside it, laid out like the repo. When
    it cannot be found the flag stays null and the reason is reported.
    """
    flag, repo_id, revision, relpath = spec.extra["member_of"]
    folder_name = repo_id.split("/")[-1]
    try:
        if isinstance(source, HubRepo):
            other = HubRepo(origin="hub", repo_id=repo_id, revision=revision)
            path = other.fetch(relpath)
            revision = other.revision
        elif isinstance(source, LocalFolder):
            root = Path(source.root)
            candidates = [root / folder_name / relpath, root.parent / folder_name / relpath]
            path = next((p for p in candidates if p.is_file()), None)
            if path is None:
                raise InputError(f"no {folder_name}/{relpath} inside or beside {root}")
        else:
            raise InputError("a single file has no subset membership")
    except OverlapError as exc:
        builder.problem("subset_unavailable", f"{flag}: {exc}",
                        f"{flag} is left empty; put a folder {folder_name}/ laid out like {repo_id} beside the "
                        "dataset's folder")
        return None
    try:
        rows = read_records(path, ["instance_id"], required=["instance_id"])
    except InputError as exc:
        builder.problem("subset_unavailable", f"{flag}: {exc}", f"{flag} is left empty")
        return None
    ids = {str(r["instance_id"]) for r in rows if r.get("instance_id") is not None}
    source.records.append(FileRecord(path=f"{repo_id}@{revision}/{relpath}", sha256=sha256_of(path),
                                     rows=len(rows)))
    return ids
