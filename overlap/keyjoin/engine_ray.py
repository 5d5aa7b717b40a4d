"""The key scan of a streamed join on Ray Data: the training side's parquet files read by Ray where they are,
each batch's keys derived on a worker by the local reader's own code, and the batches handed back to the
driver in input order, as `overlap.sources.rows.generic.iter_key_batches` yields them. The driver joins them with
the benchmarks' keys and counts exactly as the local engine does (`scan.stream_train`), so the answer is the
same; what moves to the cluster is the reading and the id recognition, most of a scan's time.

Parquet only (a folder, glob or list of local or object-store files): other formats are read by the local
engine. Ray is an optional extra, imported here only, when the engine runs.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import InputError
from ..ids.recognition import RecognitionReport
from ..model import FileRecord
from ..reach import ray_session
from ..sources.formats.batches import open_batches
from ..sources.formats.projection import _batch, _plan
from ..sources.places.files import first_line
from ..sources.places.naming import data_format
from ..sources.rows.batch_keys import _batch_items
from ..sources.rows.columns import GenericColumns


def _keys_of(table: pa.Table, plans, columns: list[str], spec: GenericColumns) -> pa.Table:
    """A worker's part: one batch's (items, keys, recognition report), pickled, with the file it came from."""
    paths = table.column("path")
    batch = _batch(table.combine_chunks().to_batches()[0] if table.num_rows else table, plans, columns)
    report = RecognitionReport(scheme=spec.scheme)
    items, keys = _batch_items(batch, spec, report)
    payload = {"path": paths[0].as_py() if table.num_rows else None, "rows": table.num_rows, "items": items,
               "keys": keys, "report": report}
    return pa.table({"payload": pa.array([pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)],
                                         pa.large_binary())})


def ray_key_batches(source: str | os.PathLike, spec: GenericColumns, report: RecognitionReport, *,
                    split: str | None = None, batch_rows: int = 65536, address: str | None = None,
                    workers: int | None = None) -> Iterator[Any]:
    """As `iter_key_batches`: (label, provenance), then (items, keys) per batch, rows counted across files."""
    columns = list(dict.fromkeys([spec.id, *spec.wanted()]))
    optional = {c for c in columns if c != spec.id}
    batches = open_batches(source, [spec.id], optional=sorted(optional), split=split, batch_rows=batch_rows)
    if batches.filesystem is not None or any(data_format(f.name) != ("parquet", None) for f in batches.files):
        raise InputError(f"{batches.label}: the ray engine reads parquet files (local or object-store); read "
                         "other formats with the local engine")
    yield batches.label, batches.provenance
    plans_of = {f.path: _plan(_schema(f.path), columns, optional, f.name) for f in batches.files}
    with ray_session(address, workers, data=True) as ray:
        ctx = ray.data.DataContext.get_current()
        keep = ctx.execution_options.preserve_order
        ctx.execution_options.preserve_order = True  # batches come back in input order: rows count as locally
        try:
            parts = []
            for data_file in batches.files:
                plans = plans_of[data_file.path]
                tops = list(dict.fromkeys(p.top for p in plans if p))
                read = ray.data.read_parquet(data_file.path, include_paths=True).select_columns([*tops, "path"])
                parts.append(read.map_batches(_keys_of, batch_size=batch_rows, batch_format="pyarrow",
                                              fn_kwargs={"plans": plans, "columns": columns, "spec": spec}))
            dataset = parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0]
            try:
                yield from _gather(dataset, batches, report)
            except InputError:
                raise
            except Exception as exc:  # Ray wraps a worker's read error in its own kinds, the file unnamed
                raise InputError(f"{batches.label}: the ray engine could not read a training file ({first_line(exc)}"
                                 "); run with --engine local, which names the file and row") from None
        finally:
            ctx.execution_options.preserve_order = keep


def _schema(path: str) -> pa.Schema:
    """A parquet file's schema, or one line naming the file when it is no readable parquet (read here, on the
    driver: a worker's read error would reach the user without the file's name)."""
    try:
        return pq.ParquetFile(path).schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable parquet file ({first_line(exc)}); fix or replace it") from None


def _gather(dataset, batches, report: RecognitionReport) -> Iterator[tuple[pa.Table, pa.Table]]:
    """The workers' batches in input order, with file, file_row and row added as the local reader adds them."""
    files = list(batches.files)
    names = {f.path: f.name for f in files}
    rows_of: dict[str, int] = {}  # rows read of each file so far
    offset_of: dict[str, int] = {}  # rows of the files before it (they come whole, in order)
    for block in dataset.iter_batches(batch_format="pyarrow", batch_size=None):
        for raw in block.column("payload").to_pylist():
            part = pickle.loads(raw)
            if not part["rows"]:
                continue
            path = _local(part["path"], names)
            report.merge(part["report"])
            offset = offset_of.setdefault(path, sum(rows_of.values()))
            n, file_row = part["rows"], rows_of.get(path, 0)
            items, keys = part["items"], part["keys"]
            positions = pa.array(np.arange(file_row, file_row + n, dtype=np.int64))
            items = items.append_column("file", pa.repeat(pa.scalar(names[path], pa.string()), n))
            items = items.append_column("file_row", positions)
            items = items.append_column("row", pc.add(positions, offset))
            rows_of[path] = file_row + n
            yield items, keys.set_column(0, "row", pc.add(keys.column("row"), offset + file_row))
    batches.provenance.files = [FileRecord(path=f.name, sha256=batches._sha256(f), rows=rows_of.get(f.path, 0))
                                for f in files]


def _local(path: str, names: dict[str, str]) -> str:
    """The planned file a worker's path names (Ray may drop a scheme or resolve the path)."""
    if path in names:
        return path
    for planned in names:
        if os.path.abspath(planned) == os.path.abspath(path) or planned.endswith(path) or path.endswith(planned):
            return planned
    raise InputError(f"the ray engine read a file it was not given: {path}")
