"""Record batches of any dataset, streamed with column projection: a local file, a folder (its data files,
recursively), a glob, or a Hub dataset `owner/name[:config][@revision]`.

Over 400 lines on purpose: every input form (file, folder, glob, Hub) goes through one projection path.

    source = open_batches("me/my-rl-mix@main", ["extra_info.instance_id", "repo"], split="train")
    for batch in source:          # pyarrow.RecordBatch, columns named as asked (dotted names kept)
        ...
    source.provenance             # Hub id, the revision as a commit sha, files read with sha256 and rows

Formats: `.parquet`, `.jsonl`, `.json` (JSON lines or one JSON array), `.csv`, each also `.gz` / `.zst`
compressed. Parquet is read one row group at a time and only the asked columns (a dotted name reads only
that leaf of a struct); JSON lines and CSV through pyarrow's streaming readers, block by block. Memory is
bounded by the batch, never by the file. CSV cells are read as text, exactly as written.

A dotted name (`extra_info.instance_id`) is a column of that literal name when the file has one, else a
path into structs (a numeric part indexes a list: `prompt.0.content`). A missing column or an unreadable
file is an InputError naming the file and the column, and listing the columns the file has.

Hub datasets are read through `huggingface_hub.HfFileSystem` (ranged reads: a 2.7 GB set is streamed, not
downloaded); the revision is resolved to a commit sha first. With `HF_HUB_OFFLINE=1` the Hub cache is read
instead (its snapshot folder names the commit), as the registered datasets' loader does.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..model import FileRecord, Provenance
from .csv_rows import csv_batches, csv_header
from .json_rows import ABSENT, exact_numbers, json_python
from .places.hub_files import open_hub
from .places.local_files import _local_files
from .places.naming import DataFile, data_format, file_uri_path, is_data_file, parse_hub_id
from .places.streams import open_stream, refuse_binary, refuse_lfs_pointer, refuse_non_utf8_path, sniff

_JSON_BLOCK = 16 << 20  # pyarrow's JSON reader needs a whole line in one block; longer lines fall back


# --- the public entry point ------------------------------------------------------------------------


@dataclass
class BatchSource:
    """Record batches of one dataset, projected on `columns`; iterate it (more than once if needed).

    `provenance.files` lists each file once it has been read to the end, with its sha256 and rows.
    """

    label: str
    files: list[DataFile]
    columns: list[str]
    optional: tuple[str, ...] = ()
    batch_rows: int = 65536
    filesystem: Any = None  # None: local files
    provenance: Provenance = field(default_factory=lambda: Provenance(name="", origin="local-file"))
    hash_files: bool = True
    # columns read as text (the text check's): a JSON number, boolean, list or object there is refused, not
    # written as text the way an id cell is (the text "12345" would then be scanned as words)
    text_columns: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        self.provenance.files = []
        for data_file in self.files:
            rows = 0
            for batch in read_file_batches(data_file, self.columns, optional=self.optional,
                                           batch_rows=self.batch_rows, filesystem=self.filesystem,
                                           text_columns=self.text_columns):
                rows += batch.num_rows
                yield batch
            self.provenance.files.append(FileRecord(path=data_file.name, sha256=self._sha256(data_file),
                                                    rows=rows))

    def iter_files(self) -> Iterator[tuple[DataFile, Iterator[Any]]]:
        """(file, its batches) one file at a time, for readers that need to know where a row came from."""
        self.provenance.files = []
        for data_file in self.files:
            counted = _Counted(read_file_batches(data_file, self.columns, optional=self.optional,
                                                 batch_rows=self.batch_rows, filesystem=self.filesystem,
                                                 text_columns=self.text_columns))
            yield data_file, counted
            for _ in counted:  # the rest, if the caller stopped early: rows are rows read
                pass
            self.provenance.files.append(FileRecord(path=data_file.name, sha256=self._sha256(data_file),
                                                    rows=counted.rows))

    def _sha256(self, data_file: DataFile) -> str:
        if data_file.sha256:
            return data_file.sha256
        if self.filesystem is None and self.hash_files:
            digest = hashlib.sha256()
            with open(data_file.path, "rb") as handle:
                for block in iter(lambda: handle.read(4 << 20), b""):
                    digest.update(block)
            return digest.hexdigest()
        return ""


@dataclass
class MemoryBatches(BatchSource):
    """The record batches of an in-memory dataset (`overlap.sources.in_memory`), projected on the asked columns
    as a file's are: one file, named by the dataset's label, whose provenance record has no sha256 (the
    provenance's `in_memory` says what was given instead)."""

    memory: Any = None

    def __iter__(self) -> Iterator[Any]:
        for _, batches in self.iter_files():
            yield from batches

    def iter_files(self) -> Iterator[tuple[DataFile, Iterator[Any]]]:
        self.provenance.files = []
        data_file = self.files[0]
        counted = _Counted(self._projected())
        yield data_file, counted
        for _ in counted:  # the rest, if the caller stopped early: rows are rows read
            pass
        self.memory.rows = counted.rows
        self.provenance.files.append(FileRecord(path=data_file.name, sha256="", rows=counted.rows))
        self.provenance.in_memory = self.memory.record()

    def _projected(self) -> Iterator[Any]:
        optional = set(self.optional)
        tops = sorted({c.split(".")[0] for c in self.columns} | set(self.columns))
        known = self.memory.columns()
        if known is not None:  # said before reading, as a file's footer says it
            self._refuse_missing(known)
        schema = plans = None
        for raw in self.memory.raw_batches(self.batch_rows, tops):
            if raw.schema != schema:  # a stream's batches may each be typed by their own values
                schema = raw.schema
                if known is None:
                    self._refuse_missing(schema.names, _describe(schema))
                plans = _plan(schema, self.columns, optional, self.label)
            yield _batch(raw, plans, self.columns)

    def _refuse_missing(self, names: list[str], described: str | None = None) -> None:
        for column in self.columns:
            if column not in self.optional and column not in names and column.split(".")[0] not in names:
                shown = described or ", ".join(names[:20]) or "no columns"
                raise InputError(f"{self.label}: no column '{column}'; it has {shown}; name a column it has (dotted "
                                 "for a nested field: extra_info.instance_id)")


class _Counted:
    def __init__(self, batches: Iterator[Any]) -> None:
        self._batches = batches
        self.rows = 0

    def __iter__(self) -> Iterator[Any]:
        for batch in self._batches:
            self.rows += batch.num_rows
            yield batch


def open_batches(
    source: str | os.PathLike | Any,
    columns: Sequence[str],
    *,
    split: str | None = None,
    optional: Sequence[str] = (),
    batch_rows: int = 65536,
    filesystem: Any = None,
    hash_files: bool = True,
) -> BatchSource:
    """The record batches of `source`: a local file, folder or glob, a Hub dataset
    `owner/name[:config][@revision]` (`filesystem`: an fsspec filesystem standing for `HfFileSystem`), or an
    in-memory dataset (`overlap.sources.in_memory`: `split` picks a DatasetDict's split).

    `columns` must all be present in every file (else InputError naming file and column); `optional`
    columns may be missing (read as nulls). Batches have the columns `columns + optional`, named as asked.
    """
    columns = list(dict.fromkeys([*columns, *optional]))
    if not columns:
        raise InputError("open_batches: name at least one column to read")
    if batch_rows < 1:
        raise InputError(f"batch_rows {batch_rows}: give a positive number of rows")
    if not isinstance(source, (str, os.PathLike)):
        from .in_memory import ORIGIN, memory_input  # imported here: pyarrow, needed only for in-memory data

        memory = memory_input(source, split)
        # the split is said by the in-memory record (not as a subset of a name: the label is the name given)
        provenance = Provenance(name=memory.label, origin=ORIGIN, in_memory=memory.record())
        return MemoryBatches(memory.label, [DataFile("", memory.label)], columns, tuple(optional), batch_rows, None,
                             provenance, False, memory=memory)
    text = file_uri_path(os.fspath(source))
    local = _local_files(text, split)
    if local is not None:
        files, origin, label = local
        provenance = Provenance(name=label, origin=origin, location=text)
        return BatchSource(label, files, columns, tuple(optional), batch_rows, None, provenance, hash_files)
    parsed = parse_hub_id(text)
    if parsed is None:
        raise InputError(f"{text}: no such file, folder or glob, and not a Hub dataset id (owner/name[@revision])")
    repo_id, config, revision = parsed
    hub = open_hub(repo_id, revision, config=config, split=split, filesystem=filesystem)
    provenance = Provenance(name=repo_id, origin=hub.origin, repo_id=repo_id, revision=hub.sha,
                            location=hub.location, subsets=[s for s in (config, split) if s])
    return BatchSource(repo_id, hub.files, columns, tuple(optional), batch_rows, hub.filesystem, provenance,
                       hash_files)


# --- reading one file ------------------------------------------------------------------------------


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


class _Projection:
    """How each asked column is taken from a file's schema: a top-level column, or a path into it."""

    def __init__(self, name: str, top: str, path: list[str]) -> None:
        self.name, self.top, self.path = name, top, path

    @property
    def leaf(self) -> str:
        """The parquet column path to read (`extra_info.instance_id`: only that leaf of the struct)."""
        return ".".join([self.top, *self.path]) if self.path and not any(_index(p) for p in self.path) \
            else self.top

    def take(self, table_or_batch) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        array = table_or_batch.column(self.top)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        for part in self.path:
            if pa.types.is_struct(array.type):
                array = pc.struct_field(array, [part])
            else:  # a list too short (or null) has no element there: a null cell, as in a JSON row
                index = int(part)
                long_enough = pc.greater(pc.list_value_length(array), index)
                array = pc.list_element(pc.if_else(long_enough, array, pa.scalar(None, array.type)), index)
        return array


def _index(part: str) -> bool:
    """Whether a dotted-path part is a list index: ASCII digits an int64 holds (`str.isdigit` also takes `²`
    and `０`, which int() then refuses or reads, and a longer number overflows pyarrow's index)."""
    return part.isascii() and part.isdigit() and len(part) <= 18


def _plan(schema, columns: list[str], optional: set[str], file_name: str) -> list[_Projection | None]:
    """The projection of each asked column in a file with `schema` (None: an optional column it lacks)."""
    import pyarrow as pa

    plans: list[_Projection | None] = []
    names = schema.names
    for column in columns:
        for top in {column, column.split(".")[0]}:
            if names.count(top) > 1:  # which of them is meant cannot be told: never pick one silently
                raise InputError(f"{file_name}: column '{top}' appears {names.count(top)} times; rename all but "
                                 "one (or name another column)")
        if column in names:
            plans.append(_Projection(column, column, []))
            continue
        parts = column.split(".")
        plan = None
        if parts[0] in names:
            kind = schema.field(parts[0]).type
            for part in parts[1:]:
                if pa.types.is_struct(kind) and kind.get_field_index(part) >= 0:
                    kind = kind.field(part).type
                elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and _index(part):
                    kind = kind.value_type
                else:
                    break
            else:
                plan = _Projection(column, parts[0], parts[1:])
        if plan is None and column not in optional:
            raise InputError(f"{file_name}: no column '{column}'; the file has {_describe(schema)}; every file read "
                             "must have it (reading on would leave this file's rows out): add it, name the column "
                             "the files have, or move this file out of the set")
        plans.append(plan)
    return plans


def _describe(schema) -> str:
    """The columns of a schema, with one level of struct fields (`extra_info.{instance_id, …}`)."""
    import pyarrow as pa

    out = []
    for item in schema:
        if pa.types.is_struct(item.type):
            inner = ", ".join(item.type.field(i).name for i in range(item.type.num_fields))
            out.append(f"{item.name}.{{{inner}}}")
        else:
            out.append(item.name)
    shown = ", ".join(out[:20])
    return (shown + f", … ({len(out)} columns)") if len(out) > 20 else (shown or "no columns")


def absent(field) -> bool:
    """Whether a batch's column is one its file does not have (its nulls are no cells: `ABSENT`)."""
    return bool(field.metadata) and field.metadata.get(b"overlap.absent") == b"1"


def _batch(source, plans: list[_Projection | None], columns: list[str]):
    import pyarrow as pa

    arrays = [plan.take(source) if plan else pa.nulls(source.num_rows, pa.string()) for plan in plans]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([
        pa.field(name, array.type, metadata=None if plan else ABSENT)
        for name, array, plan in zip(columns, arrays, plans, strict=True)]))


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
