"""What feeds the n-gram scan and what runs it: the train input, the engine and the worker count.

The train side is any of: a pandas DataFrame, an Arrow table, an iterable of record batches, or files
(a path, folder or glob: ``TrainFiles``) read batch by batch with projection, so memory follows the batch
size and the bench index, never the input size. Engines:

- ``local``: :func:`overlap.text.ngram.stream.scan`, in this process or a process pool;
- ``ray``: :mod:`overlap.text.ngram.engine_ray` (optional extra ``overlap[ray]``), the train side as a Ray Dataset.

Both merge the task results in input order with the same collector, so they give the same flags byte for
byte.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from ...errors import InputError
from ..cell_checks import CellCounts
from ..identifiers import Targets
from ..text_inputs import IdentifierTee, train_batches
from .index import BenchIndex
from .remote import interruptible, uri_filesystem
from .stream import ScanResult, scan

ENGINES = ("local", "ray")

# Below this many bytes of train text one process is faster than a pool: the pool's start-up is not won
# back. Measured with benchmarks/ngram_bench.py's issue-text workload on the compiled path (2,000 bench
# items, ~1.5 kB per train item; 2 cores shared with other jobs, CPU seconds of the scan and its workers):
#       items     MB    1 process (CPU s)   pool of 2 (CPU s)
#         20k     31         1.11                4.67
#        100k    153         2.44                6.70
#        300k    460         6.60               11.25
# so one process spends ~0.7 s starting (numba, the code point table) and 12.8 ms/MB (78 MB per CPU-second),
# a pool ~4.2 s (a spawned interpreter per worker: imports, numba, the index: ~1.5 CPU s each) and
# 15.3 ms/MB (reading and shipping the tasks: 1.2x the work). On two free cores a pool then saves
# 1 - 1.2 / 2 = 40 % of the per-byte time and costs ~2 s more at the start (the workers start side by side):
# it pays off past 2 s / (0.4 x 12.8 ms/MB) = ~390 MB at the rate measured here, ~750 MB at the
# ~150 MB/s per core of an idle core. Wall time, the same runs: 1 process 2.9 / 7.6 / 20.0 s, pool of 2
# 16.4 / 23.6 / 57.3 s (first result after 12-19 s: load 10-15 on 2 cores). Earlier, before the compiled
# path (~105 MB/s per worker, 0.6 s of start-up), the measured pay-off was ~140 MB.
# On a busy machine the pool does not pay off at all: hence the pool only on cores that other jobs leave
# free (``free_cores``).
# A stream of unknown size is scanned in this process up to this many bytes, then by the pool.
POOL_PAYS_OFF_BYTES = 512 << 20

# object-store URIs: read by pyarrow.dataset (local engine) or by Ray itself
URI_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".csv": "csv"}


@dataclass(frozen=True)
class TrainFiles:
    """A train side given as files: a local file, folder or glob, or a Hub dataset ``owner/name[@rev]``
    (listed by :func:`overlap.sources.formats.batches.open_batches`), or object-store URIs (``s3://``, ``gs://``:
    parquet by default) that pyarrow or Ray read where they are."""

    spec: str
    source: Any = None  # the BatchSource of local files and Hub datasets; None for URIs
    nbytes: int | None = None  # on disk; None when not known (Hub, URIs)
    id_column: str | None = None  # the files' id column, when not named as the scan's (read under its name)

    def read_columns(self, columns: Sequence[str], id_col: str) -> tuple[list[str], dict[str, str]]:
        """(columns to read from the files, renames file column -> scan column)."""
        if not self.id_column or self.id_column == id_col:
            return list(dict.fromkeys(columns)), {}
        return list(dict.fromkeys(self.id_column if c == id_col else c for c in columns)), {self.id_column: id_col}

    @property
    def uri(self) -> bool:
        return self.source is None

    def footer_rows(self) -> int | None:
        """Rows of the files from their parquet footers (metadata only), or None when not known without
        reading the data (JSON lines, CSV, object-store URIs)."""
        if self.uri:
            return None
        from ...sources.formats.footers import parquet_rows

        return parquet_rows(self.source.files, self.source.filesystem)

    def data_files(self) -> list[tuple[str, str]]:
        """(path, format) of each file, in reading order; format '' when Ray cannot read it itself."""
        from ...sources.places.naming import data_format

        if self.uri:
            return [(self.spec, URI_FORMATS.get(os.path.splitext(self.spec.rstrip("/"))[1], "parquet"))]
        if self.source.filesystem is not None:  # the Hub, read through its filesystem
            return [(f.path, "") for f in self.source.files]
        out = []
        for f in self.source.files:
            fmt, compression = data_format(f.path)
            out.append((f.path, "parquet" if fmt == "parquet" else "json" if fmt == "jsonl" and not compression
                        else ""))
        return out


def train_files(spec: str | os.PathLike, id_column: str | None = None) -> TrainFiles:
    """The data files a file, folder, glob, Hub id or URI names (InputError when none); ``id_column``: the
    files' id column when it is not the scan's ``id_col``."""
    text = os.fspath(spec)
    # hf:// is a Hub dataset, file:// a local file: listed as one
    if "://" in text and not text.lower().startswith(("hf://", "file://")):
        return TrainFiles(text, id_column=id_column)
    from ...sources.formats.batches import open_batches

    source = open_batches(text, ["item_id"], hash_files=False)  # the columns are set when it is read
    local = source.filesystem is None
    return TrainFiles(text, source, sum(os.path.getsize(f.path) for f in source.files) if local else None,
                      id_column)


def known_rows(train: Any) -> int | None:
    """Rows of a train side known before the scan (a progress bar's total): a table's length, the parquet
    footers of files; None for a stream or files whose rows only a full read counts."""
    if isinstance(train, TrainFiles):
        return train.footer_rows()
    if isinstance(train, pa.Table):
        return train.num_rows
    if hasattr(train, "columns") and hasattr(train, "__len__"):  # a pandas DataFrame
        return len(train)
    return None


def file_batches(files: TrainFiles, columns: Sequence[str], batch_rows: int,
                 id_col: str = "item_id") -> Iterator[pa.RecordBatch]:
    """The files' record batches, only ``columns`` read, at most ``batch_rows`` rows each, in file order; the
    files' id column is ``id_col`` in them, and also itself when asked for (an id column that is the text too)."""
    wanted = list(dict.fromkeys(columns))
    read, renames = files.read_columns(wanted, id_col)
    source_of = {renames.get(c, c): c for c in read}
    if files.id_column in wanted:
        source_of[files.id_column] = files.id_column
    # every asked column but the ids is text: a number there is refused, not scanned as the words of its digits
    texts = tuple(c for c in read if c not in renames and c != id_col)
    for batch in _file_batches(files, read, batch_rows, texts):
        if renames:
            batch = pa.RecordBatch.from_arrays([batch.column(source_of[c]) for c in wanted], names=wanted)
        yield batch


def _file_batches(files: TrainFiles, columns: list[str], batch_rows: int,
                  text_columns: tuple[str, ...] = ()) -> Iterator[pa.RecordBatch]:
    if not files.uri:
        yield from replace(files.source, columns=columns, batch_rows=batch_rows, text_columns=text_columns)
        return
    import pyarrow.dataset as ds

    try:
        def listed():  # the filesystem too is made in the helper thread: finding an S3 bucket's region is a call
            path, filesystem = _uri_place(files.spec)
            return ds.dataset(path, filesystem=filesystem, format=files.data_files()[0][1])

        dataset = interruptible(listed, "list-uri")
        missing = [c for c in columns if c not in dataset.schema.names]
        if missing:
            raise InputError(f"train: no column {', '.join(repr(c) for c in missing)} "
                             f"(columns: {', '.join(dataset.schema.names)})")
        # little read-ahead: memory stays at a few batches whatever the input size
        yield from dataset.to_batches(columns=columns, batch_size=batch_rows, batch_readahead=2,
                                      fragment_readahead=1)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"train: {files.spec}: {_short(exc)}; check the URI, the credentials and the network"
                         ) from None


def check_uri(files: TrainFiles) -> None:
    """InputError (one line naming the URI) when an object-store URI cannot be reached or names nothing; Ray
    Data lists it from this process too, so nothing that reads with Ray is refused here."""
    import pyarrow.fs as pafs

    def look() -> Any:
        path, filesystem = _uri_place(files.spec)
        return filesystem.get_file_info(path)

    try:
        info = interruptible(look, "check-uri")
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"train: {files.spec}: {_short(exc)}; check the URI, the credentials and the network"
                         ) from None
    if info.type == pafs.FileType.NotFound:
        raise InputError(f"train: {files.spec}: not found (or not readable with these credentials); check the URI")


def _uri_place(uri: str) -> tuple[str, Any]:
    """(path, filesystem) of an object-store URI, the filesystem with bounded retries."""
    filesystem, path = uri_filesystem(uri)
    return path, filesystem


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    if isinstance(exc, FileNotFoundError):
        return "not found (or not readable with these credentials)"
    return lines[0][:300] if lines else type(exc).__name__


def as_train(train):
    """A path, folder, glob, Hub id or URI as ``TrainFiles``; every other train input as given."""
    if isinstance(train, (str, os.PathLike)):
        return train_files(train)
    return train


def input_bytes(train) -> int | None:
    """Size of a train input when it is known before reading it (files, tables, frames), else None. Local
    parquet files count the bytes their footers say they hold once decompressed (text compresses 2-4x: the
    pool's pay-off size is bytes of text); other files their size on disk."""
    if isinstance(train, TrainFiles):
        return _decompressed_bytes(train)
    if isinstance(train, (pa.Table, pa.RecordBatch)):
        return int(train.nbytes)
    if type(train).__name__ == "DataFrame":
        return int(train.memory_usage(deep=True, index=False).sum())
    return None


def _decompressed_bytes(files: TrainFiles) -> int | None:
    if files.uri or files.source.filesystem is not None or files.nbytes is None:
        return files.nbytes
    import pyarrow.parquet as pq

    from ...sources.places.naming import data_format

    total = 0
    for f in files.source.files:
        fmt, compression = data_format(f.path)
        try:
            if fmt != "parquet" or compression:
                total += os.path.getsize(f.path)
                continue
            meta = pq.read_metadata(f.path)
            total += max(os.path.getsize(f.path), sum(meta.row_group(g).total_byte_size
                                                      for g in range(meta.num_row_groups)))
        except (OSError, pa.ArrowInvalid):  # the scan reports an unreadable file
            total += os.path.getsize(f.path) if os.path.exists(f.path) else 0
    return total


def usable_cores() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def free_cores() -> int:
    """Usable cores that other jobs leave free (1-minute load average, this process counted as one): a
    pool on a core another job holds is slower than one process (measured: see POOL_PAYS_OFF_BYTES)."""
    cores = usable_cores()
    try:
        others = max(0.0, os.getloadavg()[0] - 1.0)
    except (AttributeError, OSError):  # no load average on this system
        others = 0.0
    return max(1, min(cores, int(cores - others + 0.5)))


def choose_workers(requested: int | None, nbytes: int | None) -> tuple[int, int]:
    """(worker processes, bytes to scan in this process before the pool starts) for a local scan.

    ``requested``: a count (1 = in process) or None (automatic: 1 below ``POOL_PAYS_OFF_BYTES``, else one
    worker per free core; a stream of unknown size starts in this process and takes the pool past it).
    """
    if requested is not None:
        return max(1, int(requested)), 0
    cores = free_cores()
    if cores == 1 or (nbytes is not None and nbytes < POOL_PAYS_OFF_BYTES):
        return 1, 0
    return cores, (POOL_PAYS_OFF_BYTES if nbytes is None else 0)


def train_stream(train, columns: Sequence[str], batch_rows: int, cells: CellCounts | None,
                 id_col: str) -> Iterator[pa.RecordBatch]:
    """Record batches of any train input (files read with projection)."""
    if isinstance(train, TrainFiles):
        train = file_batches(train, columns, batch_rows, id_col)
    return train_batches(train, columns, batch_rows, cells, id_col)


def check_engine(engine: object) -> None:
    """An engine name that is none of `ENGINES`, refused before any work (the one check every caller makes)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}' (choose {', '.join(ENGINES)})")


def run_scan(index: BenchIndex, train, *, engine: str = "local", id_col: str, text_col: str,
             ident_col: str | None, pairs: dict[str, list[int]], workers: int | None, chunk_bytes: int,
             chunk_rows: int, progress=None, cells: CellCounts | None = None,
             ray_address: str | None = None) -> tuple[ScanResult, dict[str, Targets]]:
    """Scan the train side on an engine: the scan result and the identifier targets of the paired rows
    (``ident_col``: the column they are read from; None: no identifier evidence)."""
    check_engine(engine)
    train = as_train(train)
    columns = [id_col, text_col] + ([ident_col] if ident_col and ident_col != text_col else [])
    counts = {text_col: cells} if cells is not None else None
    if engine == "ray":
        if isinstance(train, TrainFiles) and train.uri:
            check_uri(train)  # before Ray starts: an unreachable store is one line, not Ray's start-up lines too
        from .engine_ray import scan_ray

        return scan_ray(index, train if isinstance(train, TrainFiles) else None,
                        lambda: train_stream(train, columns, chunk_rows, counts, id_col), columns, id_col=id_col,
                        text_col=text_col, ident_col=ident_col, pairs=pairs, workers=workers,
                        chunk_bytes=chunk_bytes, chunk_rows=chunk_rows, progress=progress, cells=cells,
                        address=ray_address, nbytes=input_bytes(train))
    n_workers, pool_after = choose_workers(workers, input_bytes(train))
    batches = train_stream(train, columns, chunk_rows, counts, id_col)
    tee = IdentifierTee(batches, id_col, ident_col, pa.array(sorted(pairs), pa.string()))
    try:
        res = scan(index, tee, id_col=id_col, text_col=text_col, pairs=pairs, workers=n_workers,
                   chunk_bytes=chunk_bytes, chunk_rows=chunk_rows, progress=progress, cells=cells,
                   pool_after_bytes=pool_after)
    except KeyError as exc:
        raise InputError(f"train: no column {exc}") from None
    return res, tee.values
