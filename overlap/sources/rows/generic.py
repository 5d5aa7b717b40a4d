"""Any dataset, read by named columns: a local file, folder or glob, or a Hub dataset `owner/name[:config][@rev]`.

`read_generic(source, GenericColumns(id="extra_info.instance_id"))` builds the same `Dataset` (Items, Keys,
provenance) a registered adapter builds, with keys from the id scheme recognised in the id values
(`overlap.ids.recognise`) and from the optional repo / PR / base-commit / fix / CVE columns. Rows are read
in Arrow batches (`overlap.sources.formats.batches`) and keys are derived column-wise with pyarrow.compute
(`batch_keys`): no Python dict per row. The dataset's label is the Hub id or the file (folder) name, never a guess.

On the same rows, the keys are those of the registered adapters: `arvo:N` / `arvo_N` / `<project>.ossfuzz-N`
→ `ossfuzz`, `<project>.cve-…` → `cve`, `owner__repo-N` with repo / base columns → the PR keys of
`overlap.ids.github.pr_keys`, so a compare gives the same pairs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import InputError
from ...ids.recognition import RecognitionReport
from ...model import Dataset
from ..formats.batches import BatchSource, open_batches
from ..places.files import FileSource, HubRepo, LocalFolder, SingleFile
from ..places.local_files import glob_source
from .assemble import assemble
from .batch_keys import _batch_items
from .columns import GenericColumns


@dataclass
class KeyScan:
    """The Arrow result of a key scan: `items` (one row per row read: item_id, project, repo, pr, base_commit,
    texts, file, file_row, row), `keys` (row, kind, value, raw), the recognition report and provenance."""

    label: str
    items: Any
    keys: Any
    report: RecognitionReport
    provenance: Any


def iter_key_batches(source: str | os.PathLike | BatchSource, spec: GenericColumns, report: RecognitionReport, *,
                     split: str | None = None, filesystem: Any = None, batch_rows: int = 65536,
                     transform: Any = None, subset_of: Any = None):
    """Yield (label, provenance) once, then (items, keys) per batch of `source`: Arrow tables whose `row`
    counts rows across every file (items also carry `file`, `file_row` and, with `subset_of(file)`, `subset`).
    `source` is a place (`open_batches`) or batches already opened; `transform` (a row transform,
    `overlap.sources.rows.transforms`; called with the batch, its file's name and first row) turns each raw batch
    into the columns `spec` names. `report` takes each
    batch's recognition counts. Memory is one batch: a caller that keeps only what it needs (a streamed join)
    stays bounded whatever the size of `source`."""
    if isinstance(source, BatchSource):
        batches = source
    else:
        batches = open_batches(source, [spec.id], optional=[c for c in spec.wanted() if c != spec.id],
                               split=split, batch_rows=batch_rows, filesystem=filesystem)
    yield batches.label, batches.provenance
    offset = 0
    for data_file, file_batches in batches.iter_files():
        file_row = 0
        subset = subset_of(data_file) if subset_of else None
        for batch in file_batches:
            if transform is not None:
                batch = transform(batch, data_file.name, file_row)
            _check_id_type(batch.column(spec.id).type, data_file.name, spec.id)
            items, keys = _batch_items(batch, spec, report)
            n = batch.num_rows
            positions = pa.array(np.arange(file_row, file_row + n, dtype=np.int64))
            items = items.append_column("file", pa.repeat(pa.scalar(data_file.name, pa.string()), n))
            items = items.append_column("file_row", positions)
            items = items.append_column("row", pc.add(positions, offset))
            if subset_of and (subset is not None or "subset" not in items.column_names):
                # The file's subset wins; a file of no subset keeps what its rows say (a cell, a transform).
                named = pa.repeat(pa.scalar(subset, pa.string()), n)
                names = items.column_names
                items = items.set_column(names.index("subset"), "subset", named) if "subset" in names \
                    else items.append_column("subset", named)
            yield items, keys.set_column(0, "row", pc.add(keys.column("row"), offset + file_row))
            file_row += n
        offset += file_row


def scan_keys(source: str | os.PathLike | BatchSource, columns: GenericColumns | dict[str, Any] | None = None, *,
              split: str | None = None, filesystem: Any = None, batch_rows: int = 65536,
              allow_empty: bool = False, transform: Any = None, subset_of: Any = None, **options: Any) -> KeyScan:
    """Items and keys of every row of `source`, column-wise (pyarrow.compute), batch by batch: memory is
    the batch plus the key columns, never the skipped text columns. No rows is an InputError unless
    `allow_empty` (a filtered split may keep none)."""
    spec = GenericColumns.of(columns, **options)
    report = RecognitionReport(scheme=spec.scheme)
    stream = iter_key_batches(source, spec, report, split=split, filesystem=filesystem, batch_rows=batch_rows,
                              transform=transform, subset_of=subset_of)
    label, provenance = next(stream)
    item_parts, key_parts = [], []
    for items, keys in stream:
        item_parts.append(items)
        key_parts.append(keys)
    if not item_parts:
        if not allow_empty:
            raise InputError(f"{label}: no usable rows (no rows read); check the files")
        empty = pa.RecordBatch.from_pydict({c: pa.array([], pa.string()) for c in dict.fromkeys([spec.id,
                                                                                                 *spec.wanted()])})
        items, keys = _batch_items(empty, spec, report)
        for name, kind in (("file", pa.string()), ("file_row", pa.int64()), ("row", pa.int64()),
                           *((("subset", pa.string()),) if subset_of else ())):
            items = items.append_column(name, pa.array([], kind))
        item_parts, key_parts = [items], [keys]
    items = pa.concat_tables(item_parts, promote_options="permissive")
    keys = pa.concat_tables(key_parts, promote_options="permissive")
    return KeyScan(label, items, keys, report, provenance)


def read_generic(source: str | os.PathLike, columns: GenericColumns | dict[str, Any] | None = None, *,
                 split: str | None = None, name: str | None = None, filesystem: Any = None,
                 batch_rows: int = 65536, allow_empty: bool = False, **options: Any) -> Dataset:
    """A Dataset from any file, folder, glob or Hub dataset, by named columns (`id_column=` required).

    The recognition report (how many ids each scheme took, unrecognised values) is `dataset.recognition`
    (the summary's `id_recognition`); unrecognised ids are also counted as a problem `unrecognised_id` with
    their first examples. Rows without an id and repeated ids are counted as the
    registered adapters count them (the first row of a repeated id is the item; the others are `repeats`).
    """
    spec = GenericColumns.of(columns, **options)
    scan = scan_keys(source, spec, split=split, filesystem=filesystem, batch_rows=batch_rows, allow_empty=allow_empty)
    dataset = assemble(scan, spec, name or scan.label, allow_empty=allow_empty)
    dataset.source = _file_source(dataset.provenance, source)
    return dataset


def _check_id_type(kind: pa.DataType, file: str, column: str) -> None:
    """An id column holds text or whole numbers; a column of lists, structs or bytes is no id column, and
    saying so beats counting every row as a row without an id. (A boolean or a fraction is a cell without an
    id, as it is in a JSON column that mixes them with ids: a batch of them alone is no different.)"""
    if isinstance(kind, pa.DictionaryType):
        kind = kind.value_type
    if pa.types.is_decimal(kind) or pa.types.is_temporal(kind):
        # read as no id, every row would be counted as missing one; beside repo and PR columns the rows would
        # be named by those alone, and an id the benchmark holds (a decimal 10055) would keep its row
        raise InputError(f"{file}: column '{column}' holds {kind} values, not ids; write the column as text or "
                         "integers (e.g. cast it with pyarrow or pandas), then run again")
    if pa.types.is_nested(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        raise InputError(f"{file}: column '{column}' holds {kind} values, not ids; name a field of text or whole "
                         "numbers (a part of a struct or list by its path, e.g. 'extra_info.instance_id' or "
                         "'ids.0')")


def _file_source(provenance, source) -> FileSource:
    """A FileSource for the same place, so later stages (reopen, per-item files) find the data again; an
    in-memory dataset is its own source (the split writer reads its rows again)."""
    if provenance.origin == "in-memory":
        return source
    if provenance.origin in ("hub", "hub-cache"):
        return HubRepo(origin=provenance.origin, repo_id=provenance.repo_id, revision=provenance.revision)
    path = os.fspath(source)
    if provenance.origin == "local-folder":
        return LocalFolder(origin="local-folder", location=path, root=Path(path))
    if provenance.origin == "local-glob":
        return glob_source(path)
    return SingleFile(origin=provenance.origin, location=path, path=Path(path))
