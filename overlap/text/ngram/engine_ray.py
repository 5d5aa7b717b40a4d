"""The Ray engine of the n-gram scan: the train side as a Ray Dataset, scanned by an actor pool.

- The train side: files are read by Ray itself (``read_parquet`` with projection, ``read_json``), so a
  cluster reads its shards where they are (local disk, ``s3://``, ``hf://``); any other input (DataFrame,
  Arrow table, record batches) is put in the object store batch by batch.
- The bench index is put in the object store once (``ray.put``) and shared by a pool of actors
  (``map_batches`` with a callable class, ``concurrency`` = workers); each actor holds it once.
- Each actor scans a whole batch with the local engine's own task code (``_TaskSource``, ``scan_task``)
  and sends back one payload; the driver merges the payloads in input order (``preserve_order``) with the
  local engine's collector, so the flags are byte-identical to the local engine's.
- A dead actor is restarted and its batch run again (``max_restarts``/``max_task_retries``): a batch's
  payload is merged once, when it comes back, so nothing is counted twice.

Ray is an optional extra (``pip install 'overlap[ray]'``): it is imported here only, when the engine runs.
Progress comes from Ray Data's own progress bars on stderr.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Sequence
from types import SimpleNamespace

import pyarrow as pa

from ...errors import InputError
from ...reach import import_ray, ray_session
from ..cell_checks import CellCounts
from ..identifiers import Targets
from ..text_inputs import IdentifierTee
from .index import BenchIndex
from .stream import LONG_ROW_BYTES, ScanResult, _Collector, _has_text, _TaskSource
from .workers import scan_task

RAY_FORMATS = ("parquet", "json")  # read by Ray itself (json: uncompressed JSON lines); other inputs
# (csv, compressed JSON, Hub files, frames, batches) stream through the object store
# blocks of the train dataset: about four per actor (even load at the end of the scan), within these bounds
MIN_BLOCK_BYTES, MAX_BLOCK_BYTES = 4 << 20, 128 << 20


class BatchScanner:
    """An actor of the pool: holds the bench index, scans one train batch per call."""

    def __init__(self, index, pairs, id_col: str, text_col: str, ident_col: str | None, limits: tuple,
                 cap: int | None = None):
        ray = import_ray(data=True)
        # the index and the pairs come as object refs: fetched once per actor, zero-copy for the arrays
        self.index: BenchIndex = ray.get(index) if isinstance(index, ray.ObjectRef) else index
        self.pairs: dict[str, list[int]] = ray.get(pairs) if isinstance(pairs, ray.ObjectRef) else pairs
        _ = self.index.prefilter
        self.id_col, self.text_col, self.ident_col, self.limits, self.cap = id_col, text_col, ident_col, limits, cap
        self.wanted = pa.array(sorted(self.pairs), pa.string())

    def __call__(self, table: pa.Table) -> pa.Table:
        cells = CellCounts(self.text_col) if self.cap is None else CellCounts(self.text_col, cap=self.cap)
        tee = IdentifierTee(table.combine_chunks().to_batches(), self.id_col, self.ident_col, self.wanted)
        source = _TaskSource(tee, self.id_col, self.text_col, self.pairs, False, *self.limits, cells=cells)
        try:
            parts = [(scan_task(self.index, task), ids, base, _has_text(task[1])) for task, ids, base in source]
        except KeyError as exc:
            raise InputError(f"train: no column {exc}") from None
        payload = {"rows": table.num_rows, "parts": parts, "pair_seen": source.pair_seen,
                   "null_ids": source.null_ids, "non_utf8": source.non_utf8, "cells": cells, "targets": tee.values}
        return pa.table({"payload": pa.array([pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)],
                                             pa.large_binary())})


def scan_ray(index: BenchIndex, files, stream: Callable[[], Iterable[pa.RecordBatch]], columns: Sequence[str], *,
             id_col: str, text_col: str, ident_col: str | None, pairs: dict[str, list[int]], workers: int | None,
             chunk_bytes: int, chunk_rows: int, progress=None, cells: CellCounts | None = None,
             address: str | None = None, nbytes: int | None = None, long_row_bytes: int | None = None,
             scanner: type = BatchScanner) -> tuple[ScanResult, dict[str, Targets]]:
    """Scan the train side on Ray; the same result as the local engine's ``scan`` (and the targets).

    ``files``: the train files (``engines.TrainFiles``) that Ray may read itself, or None; ``stream``: the
    train record batches otherwise (a callable, called only when they are needed); ``nbytes``: input size.

    ``address`` (or ``RAY_ADDRESS``): attach to that cluster; else a local Ray with ``workers`` CPUs is
    started (and stopped after the scan). When Ray is already initialised in this process, that is used.
    ``workers``: actors in the pool (None: one per CPU of the cluster). ``scanner``: the actor class
    (tests give a subclass that fails on purpose).
    """
    with ray_session(address, workers, data=True) as ray:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        n_actors = workers or cpus
        # CPUs an actor asks for: one, less when the actors would leave none to list and read the files
        # (Ray Data's read tasks need a CPU each: with every CPU held by an actor the scan would wait forever)
        actor_cpus = max(0.01, min(1.0, int(100 * (cpus - 1) / n_actors) / 100))
        ctx = ray.data.DataContext.get_current()
        keep = ctx.execution_options.preserve_order, ctx.target_max_block_size
        ctx.execution_options.preserve_order = True  # results merged in input order: same flags as local
        ctx.target_max_block_size = block_bytes(nbytes, n_actors)
        try:
            dataset = _dataset(ray, files, stream, columns, id_col, ctx.target_max_block_size)
            limits = (chunk_bytes, chunk_rows, long_row_bytes or LONG_ROW_BYTES)
            # held until the scan ends: a restarted actor fetches them again
            index_ref, pairs_ref = ray.put(index), ray.put(pairs)
            scanned = dataset.map_batches(
                scanner, batch_size=chunk_rows, batch_format="pyarrow", num_cpus=actor_cpus,
                compute=ray.data.ActorPoolStrategy(size=n_actors),
                fn_constructor_args=(index_ref, pairs_ref, id_col, text_col, ident_col, limits,
                                     cells.cap if cells is not None else None),
                # Ray Data's actor pools restart a dead actor and run its batch again (max_restarts and
                # max_task_retries -1 by default): tests/text/test_engines_ray.py kills one mid-scan
            )
            return _merge(scanned, index, cells, progress)
        finally:
            ctx.execution_options.preserve_order, ctx.target_max_block_size = keep


def block_bytes(nbytes: int | None, n_actors: int) -> int:
    """Target block size: about four blocks per actor when the input size is known."""
    if nbytes is None:
        return 32 << 20
    return int(min(MAX_BLOCK_BYTES, max(MIN_BLOCK_BYTES, nbytes // (4 * n_actors))))


def _dataset(ray, files, stream, columns: Sequence[str], id_col: str, group_bytes: int):
    """The train side as a Ray Dataset of the needed columns, rows in input order."""
    columns = list(dict.fromkeys(columns))
    listed = files.data_files() if files is not None else []
    formats = {fmt for _, fmt in listed}
    text_is_id = files is not None and files.id_column in columns and files.id_column != id_col
    if len(formats) == 1 and formats <= set(RAY_FORMATS) and not text_is_id:  # Ray reads the files where they are
        paths = [path for path, _ in listed]
        ds = ray.data.read_parquet(paths) if formats == {"parquet"} else ray.data.read_json(paths)
        read, renames = files.read_columns(columns, id_col)
        names = ds.schema().names
        missing = [c for c in read if c not in names]
        if missing:
            raise InputError(f"train: no column {', '.join(repr(c) for c in missing)} (columns: {', '.join(names)})")
        ds = ds.select_columns(read)  # projection: parquet reads only these columns
        return ds.rename_columns(renames) if renames else ds
    # in-memory or streamed inputs: batches into the object store, in groups (fewer, larger blocks)
    refs, group, size = [], [], 0
    for batch in stream():
        group.append(batch)
        size += batch.nbytes
        if size >= group_bytes:
            refs.append(ray.put(pa.Table.from_batches(group)))
            group, size = [], 0
    if group or not refs:
        schema = group[0].schema if group else pa.schema([(c, pa.string()) for c in columns])
        refs.append(ray.put(pa.Table.from_batches(group, schema=schema)))
    return ray.data.from_arrow_refs(refs)


def _merge(scanned, index: BenchIndex, cells: CellCounts | None, progress) -> tuple[ScanResult, dict[str, Targets]]:
    """The payloads, in input order, through the local engine's collector."""
    collector = _Collector(index.ns, progress)
    seen = SimpleNamespace(non_utf8=0, pair_seen=set(), null_ids=set())
    targets: dict[str, Targets] = {}
    row_base = 0
    for block in scanned.iter_batches(batch_format="pyarrow", batch_size=None):
        for raw in block.column("payload").to_pylist():
            p = pickle.loads(raw)
            for result, ids, base, has_text in p["parts"]:
                collector.add(result, ids, row_base + base, has_text)
            row_base += p["rows"]
            seen.non_utf8 += p["non_utf8"]
            seen.pair_seen |= p["pair_seen"]
            seen.null_ids |= p["null_ids"]
            for k, v in p["targets"].items():
                targets.setdefault(k, v)
            if cells is not None:
                merge_cells(cells, p["cells"])
    return collector.result(seen), targets


def merge_cells(into: CellCounts, part: CellCounts) -> None:
    """Add one batch's cell counts to the scan's (batches in input order: the first example is kept)."""
    into.non_text += part.non_text
    into.non_text_types.update(part.non_text_types)
    into.truncated += part.truncated
    if into.non_text_example is None:
        into.non_text_example = part.non_text_example
    if into.truncated_example is None:
        into.truncated_example = part.truncated_example

