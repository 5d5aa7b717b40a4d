"""One file's record batches with exactly the asked columns, read by its format.

Formats: `.parquet`, `.jsonl`, `.json` (JSON lines or one JSON array), `.csv`, each also `.gz` / `.zst`
compressed. Parquet is read one row group at a time and only the asked columns (a dotted name reads only
that leaf of a struct); JSON lines and CSV through pyarrow's streaming readers, block by block. Memory is
bounded by the batch, never by the file. CSV cells are read as text, exactly as written. An unreadable
file is an InputError naming the file.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import InputError
from ..places.naming import DataFile, data_format, is_data_file
from ..places.streams import open_stream, refuse_binary, refuse_lfs_pointer, refuse_non_utf8_path, sniff
from .csv_rows import csv_batches, csv_header
from .json_rows import exact_numbers, json_python
from .projection import _batch, _plan

_JSON_BLOCK = 16 << 20  # pyarrow's JSON reader needs a whole line in one block; longer lines fall back


def read_file_batches(data_file: DataFile, columns: Sequence[str], *, optional: Sequence[str] = (),
                      batch_rows: int = 65536, filesystem: Any = None,
                      text_columns: Sequence[str] = ()) -> Iterator[Any]:
    """Record batches of one file with exactly `columns` (named as asked); see the module docstring."""
    import pyarrow as pa

    refuse_non_utf8_path(data_file.path, data_file.name)
    if filesystem is None:
        refuse_lfs_pointer(data_file.path, data_file.name)
    fmt, compression = data_format(data_file.name if is_data_file(data_file.name) else data_file.path)
    fmt, compression = sniff(data_file.path, filesystem, fmt, compression)
    reader = {"parquet": _parquet_batches, "csv": _csv_batches}.get(fmt, _json_batches)
    if reader is _json_batches and text_columns:
        reader = functools.partial(_json_batches, text_columns=tuple(text_columns))
    try:
        for batch in reader(data_file, list(columns), set(optional), batch_rows, filesystem, compression):
            for start in range(0, batch.num_rows, batch_rows):
                yield batch.slice(start, batch_rows) if batch.num_rows > batch_rows else batch
                if batch.num_rows <= batch_rows:
                    break
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, EOFError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{data_file.name}: cannot read the file as {fmt}"
                         f"{' (' + compression + ')' if compression else ''} ({_first_line(exc)}); is it complete?"
                         ) from None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def _parquet_batches(data_file, columns, optional, batch_rows, filesystem, compression):
    import pyarrow.parquet as pq

    if compression:
        handle = pq.ParquetFile(_spooled(data_file, filesystem, compression))
    else:
        # a local file is memory-mapped: its pages are read in place, not copied into buffers first (~10 % of
        # the read's CPU time on snappy-compressed text)
        handle = pq.ParquetFile(data_file.path, memory_map=True) if filesystem is None else \
            pq.ParquetFile(filesystem.open(data_file.path, "rb"))
    plans = _plan(handle.schema_arrow, columns, optional, data_file.name)
    leaves = list(dict.fromkeys(p.leaf for p in plans if p))
    if not leaves:  # only optional columns the file lacks: its rows still count
        import pyarrow as pa

        for group in range(handle.num_row_groups):
            yield _batch(pa.table({"_": pa.nulls(handle.metadata.row_group(group).num_rows)}), plans, columns)
        return
    # threads decode columns side by side: for one or two columns (a text scan's id and text) they only add
    # their hand-off, ~7 % of the read's CPU time
    for batch in handle.iter_batches(batch_size=batch_rows, columns=leaves, use_threads=len(leaves) > 2):
        yield _batch(batch, plans, columns)


def _spooled(data_file: DataFile, filesystem: Any, compression: str):
    """A compressed parquet file decompressed to a temporary file (parquet needs to seek), disk not RAM."""
    import tempfile

    spool = tempfile.TemporaryFile()
    stream = open_stream(data_file.path, filesystem, compression)
    while True:
        block = stream.read(4 << 20)
        if not block:
            break
        spool.write(block)
    spool.seek(0)
    return spool


def _csv_batches(data_file, columns, optional, batch_rows, filesystem, compression):
    import pyarrow as pa

    header, header_bytes = csv_header(data_file.path, data_file.name, filesystem, compression)
    plans = _plan(pa.schema([(name, pa.string()) for name in header]), columns, optional, data_file.name)
    include = list(dict.fromkeys(p.top for p in plans if p)) or header[:1]
    yield from csv_batches(data_file.path, data_file.name, filesystem, compression, include, header_bytes,
                           lambda batch: _batch(batch, plans, columns))


def _json_batches(data_file, columns, optional, batch_rows, filesystem, compression, text_columns=()):
    """JSON lines through pyarrow's streaming reader; a JSON array, a line longer than a block or a column
    whose type changes between blocks through the Python reader (resuming after the rows already given)."""
    import pyarrow as pa
    import pyarrow.json as pjson

    with open_stream(data_file.path, filesystem, compression) as stream:
        first = stream.read(4096).lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()
    if not first:
        return
    refuse_binary(first, data_file.name)
    given = 0
    # pyarrow's reader takes only a file whose first value is an object: a first `null` crashes the process
    # (SIGSEGV) and a first number aborts it at exit, so anything else goes to the Python reader, which names it
    if first.startswith(b"{"):
        try:
            stream = open_stream(data_file.path, filesystem, compression)
            reader = pjson.open_json(stream, read_options=pjson.ReadOptions(block_size=_JSON_BLOCK))
            plans = None
            for batch in reader:
                if plans is None:
                    plans = _plan(batch.schema, columns, optional, data_file.name)
                elif batch.schema != reader.schema:  # pragma: no cover - the reader keeps one schema
                    raise pa.ArrowInvalid("schema changed")
                out = _batch(batch, plans, columns)
                if any(not _texty(out.column(columns.index(c)).type) for c in text_columns if c in columns):
                    raise pa.ArrowInvalid("a text column holds no text")  # the Python reader names the line
                out = exact_numbers(out)
                out.validate(full=True)  # pyarrow takes invalid UTF-8 inside strings; the Python reader names the line
                yield out
                given += out.num_rows
            return
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # the Python reader below says precisely what is wrong, or reads what pyarrow could not
    yield from json_python(data_file, columns, optional, batch_rows, filesystem, compression, skip=given,
                            array=first.startswith(b"["), text_columns=text_columns)


def _texty(t) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)
