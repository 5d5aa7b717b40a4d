"""What feeds the n-gram scan and what runs it: the train input, the engine and the worker count.

The train side is any of: a pandas DataFrame, an Arrow table, an iterable of record batches, or files
(a path, folder or glob: ``TrainFiles``) read batch by batch with projection, so memory follows the batch
size and the bench index, never the input size. Engines:

- ``local``: :func:`overlap.text.ngram_scan.scan`, in this process or a process pool;
- ``ray``: :mod:`overlap.text.engine_ray` (optional extra ``overlap[ray]``), the train side as a Ray Dataset.

Both merge the task results in input order with the same collector, so they give the same flags byte for
byte.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..errors import InputError
from .cells import CellCounts
from .identifiers import Targets
from .ngram_index import BenchIndex
from .ngram_scan import ScanResult, scan
from .text_inputs import IdentifierTee, train_batches

ENGINES = ("local", "ray")

# TODO-MEASURE: numbers go here
POOL_PAYS_OFF_BYTES = 150 << 20

# what pyarrow.dataset reads, by file suffix
FILE_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".csv": "csv",
                ".arrow": "ipc", ".feather": "ipc", ".ipc": "ipc"}


@dataclass(frozen=True)
class TrainFiles:
    """A train side given as files: one file, the files of a folder (recursively), or a glob; or object
    store / Hub URIs (``s3://``, ``gs://``, ``hf://``), read where they are."""

    paths: tuple[str, ...]
    format: str  # parquet, json, csv, ipc
    nbytes: int | None = None  # on disk; None when not known (remote)


def train_files(spec: str | os.PathLike) -> TrainFiles:
    """Resolve a file, folder or glob (or URIs) to the data files it names, in sorted order."""
    text = os.fspath(spec)
    if "://" in text:
        fmt = _format_of(text.rstrip("/")) or "parquet"
        return TrainFiles((text,), fmt)
    path = Path(text)
    if path.is_dir():
        found = sorted(str(p) for p in path.rglob("*") if p.is_file() and _format_of(str(p)))
    elif path.is_file():
        found = [str(path)]
    else:
        found = sorted(p for p in glob.glob(text, recursive=True) if os.path.isfile(p) and _format_of(p))
    if not found:
        raise InputError(f"{text}: no data files (parquet, jsonl/json, csv, arrow) there")
    formats = {_format_of(p) for p in found}
    if None in formats:
        raise InputError(f"{text}: not a data file this reads (suffixes: {', '.join(sorted(FILE_FORMATS))})")
    if len(formats) > 1:
        raise InputError(f"{text}: files of several formats ({', '.join(sorted(formats))}); give one kind")
    return TrainFiles(tuple(found), formats.pop(), sum(os.path.getsize(p) for p in found))


def _format_of(path: str) -> str | None:
    name = path.lower()
    for suffix in (".gz", ".zst", ".bz2"):
        name = name.removesuffix(suffix)
    return FILE_FORMATS.get(os.path.splitext(name)[1])


def file_batches(files: TrainFiles, columns: Sequence[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The files' record batches, only ``columns`` read, at most ``batch_rows`` rows each, in file order."""
    import pyarrow.dataset as ds

    columns = list(dict.fromkeys(columns))
    try:
        dataset = ds.dataset(list(files.paths), format=files.format)
        missing = [c for c in columns if c not in dataset.schema.names]
        if missing:
            raise InputError(f"train: no column {', '.join(repr(c) for c in missing)} "
                             f"(columns: {', '.join(dataset.schema.names)})")
        # little read-ahead: memory stays at a few batches whatever the input size
        yield from dataset.to_batches(columns=columns, batch_size=batch_rows, batch_readahead=2,
                                      fragment_readahead=1)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"train: {str(exc).splitlines()[0]}") from None


def as_train(train):
    """A path, folder or glob as ``TrainFiles``; every other train input as given."""
    if isinstance(train, (str, os.PathLike)):
        return train_files(train)
    return train


def input_bytes(train) -> int | None:
    """Size of a train input when it is known before reading it (files, tables, frames), else None."""
    if isinstance(train, TrainFiles):
        return train.nbytes
    if isinstance(train, (pa.Table, pa.RecordBatch)):
        return int(train.nbytes)
    if type(train).__name__ == "DataFrame":
        return int(train.memory_usage(deep=True, index=False).sum())
    return None


def usable_cores() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def choose_workers(requested: int | None, nbytes: int | None) -> tuple[int, int]:
    """(worker processes, bytes to scan in this process before the pool starts) for a local scan.

    ``requested``: a count (1 = in process) or None (automatic: 1 below ``POOL_PAYS_OFF_BYTES``, else one
    worker per usable core; a stream of unknown size starts in this process and takes the pool past it).
    """
    if requested is not None:
        return max(1, int(requested)), 0
    cores = usable_cores()
    if cores == 1 or (nbytes is not None and nbytes < POOL_PAYS_OFF_BYTES):
        return 1, 0
    return cores, (POOL_PAYS_OFF_BYTES if nbytes is None else 0)


def train_stream(train, columns: Sequence[str], batch_rows: int, cells: CellCounts | None,
                 id_col: str) -> Iterator[pa.RecordBatch]:
    """Record batches of any train input (files read with projection)."""
    if isinstance(train, TrainFiles):
        train = file_batches(train, columns, batch_rows)
    return train_batches(train, columns, batch_rows, cells, id_col)


def run_scan(index: BenchIndex, train, *, engine: str = "local", id_col: str, text_col: str,
             ident_col: str | None, pairs: dict[str, list[int]], workers: int | None, chunk_bytes: int,
             chunk_rows: int, progress=None, cells: CellCounts | None = None,
             ray_address: str | None = None) -> tuple[ScanResult, dict[str, Targets]]:
    """Scan the train side on an engine: the scan result and the identifier targets of the paired rows
    (``ident_col``: the column they are read from; None: no identifier evidence)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}' (choose {', '.join(ENGINES)})")
    train = as_train(train)
    columns = [id_col, text_col] + ([ident_col] if ident_col and ident_col != text_col else [])
    if engine == "ray":
        from .engine_ray import scan_ray

        return scan_ray(index, train, columns, id_col=id_col, text_col=text_col, ident_col=ident_col,
                        pairs=pairs, workers=workers, chunk_bytes=chunk_bytes, chunk_rows=chunk_rows,
                        progress=progress, cells=cells, address=ray_address)
    n_workers, pool_after = choose_workers(workers, input_bytes(train))
    counts = {text_col: cells} if cells is not None else None
    batches = train_stream(train, columns, chunk_rows, counts, id_col)
    tee = IdentifierTee(batches, id_col, ident_col, pa.array(sorted(pairs), pa.string()))
    try:
        res = scan(index, tee, id_col=id_col, text_col=text_col, pairs=pairs, workers=n_workers,
                   chunk_bytes=chunk_bytes, chunk_rows=chunk_rows, progress=progress, cells=cells,
                   pool_after_bytes=pool_after)
    except KeyError as exc:
        raise InputError(f"train: no column {exc}") from None
    return res, tee.values
