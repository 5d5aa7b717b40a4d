"""The filtered split on disk: one output shard per input file, streamed, and read back for the checks.

Each input file of the training set becomes one shard under `data/`, named like the input file:

- parquet stays parquet, one output row group per input row group (its rows less the dropped ones), with
  the input's schema, so a 40-shard, 2.7 GB input stays 40 shards and memory stays one row group;
- JSON lines stay JSON lines: the kept lines are copied byte for byte (a malformed line made no item and
  is kept as it was);
- CSV stays CSV: the header and the kept records are copied byte for byte (a record may span lines);
- a JSON array becomes JSON lines (`.jsonl`, one element a line), since it cannot be cut into pieces and stay
  one array;
- a `.gz` / `.zst` file (parquet too) gives a shard compressed as its name says; it is read as its bytes are
  (a `.gz` holding plain text is read as text, as a compare reads it; a compressed parquet file is
  decompressed to a temporary file first, since parquet seeks).

Two input files that would give one shard (`a.json`, an array, and `a.jsonl`) are refused by the caller
(`splits`) before anything is written; a failure to read an input again names the input file.

A row's position is the one the adapters count: the row index for parquet, CSV and JSON arrays, the index
among non-blank lines for JSON lines. Shards whose column types drift (int64 in one, string in another)
are written with one unified schema; a drift that cannot be unified is refused naming shard and column.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...errors import InputError
from ...sources.formats.whole_file import read_json_rows
from ...sources.places.files import first_line
from ...sources.places.streams import MAX_LINE_BYTES, sniff

SHARD_FOLDER = "data"
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}


def compression_of(path: Path) -> str | None:
    return COMPRESSIONS.get(path.suffix.lower())


def _plain_suffix(path: Path) -> str:
    """The format suffix under any compression suffix: `x.csv.gz` → `.csv`."""
    return Path(path.stem).suffix.lower() if compression_of(path) else path.suffix.lower()


def open_bytes(path: Path):
    """A binary reader of a file, decompressed when its bytes are gzip or zstd: as the readers of a compare take
    it (`overlap.sources.places.streams.sniff`), so a `.gz` that is not compressed is copied as the text it is."""
    codec = sniff(str(path), None, "", compression_of(path))[1]
    return io.BufferedReader(pa.input_stream(str(path), compression=codec)) if codec else open(path, "rb")


def parquet_file(path: Path) -> pq.ParquetFile:
    """A parquet file opened for reading; a compressed one (`x.parquet.zst`, as a compare reads it) is first
    decompressed into an anonymous temporary file (parquet needs to seek): disk, not memory."""
    codec = sniff(str(path), None, "", compression_of(path))[1]
    if not codec:
        return pq.ParquetFile(path)
    spool = tempfile.TemporaryFile()
    with pa.input_stream(str(path), compression=codec) as stream:
        shutil.copyfileobj(stream, spool, 4 << 20)
    spool.seek(0)
    return pq.ParquetFile(spool)


def _reading(source: Path, rows: Iterator[Any]) -> Iterator[Any]:
    """`rows`, with a failure to read them named as the input file's: a write beside them must not take the
    blame for it (an error while writing the output folder names the folder)."""
    while True:
        try:
            item = next(rows)
        except StopIteration:
            return
        except (OSError, EOFError, pa.ArrowInvalid) as exc:
            raise InputError(f"{source}: cannot read the file again to write its shard ({first_line(exc)}); is it "
                             "complete?") from None
        yield item


def _create(path: Path, like: Path):
    """A binary writer of `path`, compressed as `like` is (gzip output holds no time: reruns are identical)."""
    codec = compression_of(like)
    return pa.output_stream(str(path), compression=codec) if codec else open(path, "wb")


@dataclass(frozen=True)
class Shard:
    """One input file and the shard it becomes."""

    label: str  # the file as the provenance names it
    source: Path  # where it was read
    relpath: str  # the shard inside the output folder

    @property
    def kind(self) -> str:
        suffix = _plain_suffix(self.source)
        if suffix == ".json" and _is_json_array(self.source):
            return "json"
        return {".parquet": "parquet", ".csv": "csv"}.get(suffix, "jsonl")


def shard_for(label: str, source: Path) -> Shard:
    """The shard of an input file: `data/<label>` with the format's suffix, never outside `data/`."""
    name = PurePosixPath(label or source.name)
    parts = [p for p in name.parts if p not in ("", ".", "..", "/")] or [source.name]
    target = PurePosixPath(*parts)
    probe = Shard(label, source, "")
    if probe.kind == "json":  # x.json → x.jsonl, x.json.gz → x.jsonl.gz
        codec = target.suffix if compression_of(Path(target.name)) else ""
        plain = target.with_suffix("") if codec else target
        target = plain.with_name(plain.stem + ".jsonl" + codec)
    return Shard(label, source, f"{SHARD_FOLDER}/{target.as_posix()}")


def _is_json_array(path: Path) -> bool:
    try:
        with open_bytes(path) as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except (OSError, EOFError, pa.ArrowInvalid) as exc:
        raise InputError(f"{path}: cannot read the file again to write its shard ({first_line(exc)}); is it "
                         "complete?") from None
    return head.startswith(b"[")


# --- reading a file as positioned pieces -----------------------------------------------------------------


def table_pieces(shard: Shard, schema: pa.Schema | None = None) -> Iterator[tuple[int, pa.Table]]:
    """(position of the first row, rows) of a parquet input, one row group at a time."""
    handle = parquet_file(shard.source)
    offset = 0
    for index in range(handle.num_row_groups):
        group = handle.read_row_group(index)
        yield offset, group if schema is None else group.cast(schema)
        offset += group.num_rows


def line_rows(shard: Shard) -> Iterator[tuple[int, bytes]]:
    """(position, line as bytes) of a JSON-lines input or a JSON array (one element re-serialised a line)."""
    if shard.kind == "json":
        for position, row in enumerate(read_json_rows(shard.source)):
            yield position, (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
        return
    position = 0
    with open_bytes(shard.source) as handle:
        for raw in handle:
            if not raw.strip():
                continue  # not a row: the adapters skip blank lines too
            yield position, raw if raw.endswith(b"\n") else raw + b"\n"
            position += 1


def csv_records(path: Path) -> tuple[bytes, Iterator[tuple[int, bytes]]]:
    """(header, iterator of (position, record as written)) of a CSV file. The csv module pulls exactly the
    lines of one record at a time, so each record's text, quoted newlines included, is copied as written;
    blank lines are no rows (the adapters' CSV reader skips them too)."""
    csv.field_size_limit(MAX_LINE_BYTES)  # a cell as long as the readers take (a patch, a long statement)
    handle = io.TextIOWrapper(open_bytes(path), encoding="utf-8", newline="")
    consumed: list[str] = []

    def lines() -> Iterator[str]:
        for line in handle:
            consumed.append(line)
            yield line

    reader = csv.reader(lines())
    try:
        next(reader, None)
    except (csv.Error, UnicodeDecodeError) as exc:
        handle.close()
        raise InputError(f"{path}: cannot read CSV ({first_line(exc)})") from None
    header = "".join(consumed).encode("utf-8")
    consumed.clear()

    def records() -> Iterator[tuple[int, bytes]]:
        position = 0
        try:
            for record in reader:
                text = "".join(consumed)
                consumed.clear()
                if not record:
                    continue
                yield position, (text if text.endswith(("\n", "\r")) else text + "\n").encode("utf-8")
                position += 1
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read CSV ({first_line(exc)})") from None
        finally:
            handle.close()

    return header, records()


def _input_rows(shard: Shard) -> tuple[bytes, Iterator[tuple[int, bytes]]]:
    """(header, (position, row as written)) of a text input, a failure to read it naming the input file."""
    try:
        header, rows = csv_records(shard.source) if shard.kind == "csv" else (b"", line_rows(shard))
    except (OSError, EOFError, pa.ArrowInvalid) as exc:
        raise InputError(f"{shard.source}: cannot read the file again to write its shard ({first_line(exc)}); is "
                         "it complete?") from None
    return header, _reading(shard.source, rows)


# --- the schema every parquet shard is written with --------------------------------------------------------


def unified_schema(shards: list[Shard]) -> tuple[pa.Schema | None, list[str]]:
    """One schema for all table shards (None when there are none) and the columns unified to text.

    pyarrow's own promotion covers widening (int32 → int64, null → any); a column that is a number in one
    shard and text in another becomes text. Anything else (a struct against a string) is refused."""
    schemas = [(s, _reading_schema(s)) for s in shards if s.kind == "parquet"]
    if not schemas:
        return None, []
    try:
        return pa.unify_schemas([sc for _, sc in schemas], promote_options="permissive"), []
    except (pa.ArrowInvalid, pa.ArrowTypeError, NotImplementedError):
        pass
    # Column by column, so that one column of numbers and text leaves the others to pyarrow's widening (an
    # all-null shard's null type, int32 → int64): only the columns pyarrow cannot promote become text.
    first_seen: dict[str, tuple[Shard, pa.Field]] = {}
    merged: dict[str, pa.Field] = {}
    as_text: list[str] = []
    for shard, schema in schemas:
        for fld in schema:
            seen = first_seen.setdefault(fld.name, (shard, fld))
            if fld.name in as_text or merged.setdefault(fld.name, fld).type == fld.type:
                continue
            # pyarrow does not unify a dictionary-encoded column (a pandas category) with plain values, while
            # `datasets` reads both as their values: the shards agree once it is decoded
            left, right = (f.with_type(_decoded(f.type)) for f in (merged[fld.name], fld))
            try:
                merged[fld.name] = pa.unify_schemas([pa.schema([left]), pa.schema([right])],
                                                    promote_options="permissive").field(fld.name)
                continue
            except (pa.ArrowInvalid, pa.ArrowTypeError, NotImplementedError):
                pass
            if _scalar(left.type) and _scalar(right.type):
                as_text.append(fld.name)
                continue
            raise InputError(f"{shard.label}: column '{fld.name}' is {fld.type} here but {seen[1].type} in "
                             f"{seen[0].label}; make the shards agree on its type, then filter again")
    fields = [pa.field(name, pa.string()) if name in as_text else fld for name, fld in merged.items()]
    return pa.schema(fields), sorted(as_text)


def _reading_schema(shard: Shard) -> pa.Schema:
    try:
        return parquet_file(shard.source).schema_arrow
    except (OSError, EOFError, pa.ArrowInvalid) as exc:
        raise InputError(f"{shard.source}: cannot read the file again to write its shard ({first_line(exc)}); is "
                         "it complete?") from None


def _decoded(kind: pa.DataType) -> pa.DataType:
    return kind.value_type if isinstance(kind, pa.DictionaryType) else kind


def _scalar(kind: pa.DataType) -> bool:
    return (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_string(kind)
            or pa.types.is_large_string(kind) or pa.types.is_boolean(kind) or pa.types.is_null(kind))


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with `schema`'s columns, in its order and types (a column a shard lacks is null)."""
    columns = [_cast(table.column(f.name), f.type) if f.name in table.column_names
               else pa.nulls(table.num_rows, f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _cast(column, kind: pa.DataType):
    """A column in the unified type; a NaN made text is null, the missing value it stands for, not `nan`."""
    if pa.types.is_floating(column.type) and pa.types.is_string(kind):
        column = pc.if_else(pc.fill_null(pc.is_nan(column), False), pa.scalar(None, column.type), column)
    return column.cast(kind)


# --- writing ----------------------------------------------------------------------------------------------


def _mask(offset: int, count: int, positions: np.ndarray, keep_listed: bool) -> pa.Array:
    listed = np.isin(np.arange(offset, offset + count, dtype=np.int64), positions)
    return pa.array(listed if keep_listed else ~listed)


def as_array(positions: set[int]) -> np.ndarray:
    return np.fromiter(sorted(positions), dtype=np.int64, count=len(positions))


def write_shard(shard: Shard, root: Path, positions: set[int], keep_listed: bool,
                schema: pa.Schema | None) -> int:
    """Write the rows of `shard` whose position is (keep_listed) or is not (not keep_listed) in
    `positions` to `root / shard.relpath`; returns the number of rows read."""
    target = root / shard.relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    if shard.kind in ("jsonl", "json", "csv"):
        read = 0
        header, rows = _input_rows(shard)
        with _create(target, shard.source) as out:
            out.write(header)
            for position, line in rows:
                read += 1
                if (position in positions) == keep_listed:
                    out.write(line)
        return read
    read = 0
    writer = None
    listed = as_array(positions)
    # a compressed parquet input (`x.parquet.zst`) gives a shard compressed the same way (parquet writes ahead)
    sink = _create(target, shard.source) if compression_of(shard.source) else None
    try:
        for offset, piece in _reading(shard.source, table_pieces(shard)):
            read += piece.num_rows
            rows = piece.filter(_mask(offset, piece.num_rows, listed, keep_listed))
            rows = conform(rows, schema) if schema is not None and shard.kind == "parquet" else rows
            if writer is None:
                writer = pq.ParquetWriter(sink or target, rows.schema, compression="zstd")
            if rows.num_rows:
                writer.write_table(rows, row_group_size=max(1, rows.num_rows))
        if writer is None:  # a file without row groups still becomes a (rowless) shard
            empty = schema if schema is not None else _reading_schema(shard)
            writer = pq.ParquetWriter(sink or target, empty, compression="zstd")
    finally:
        if writer is not None:
            writer.close()
        if sink is not None:
            sink.close()
    return read


def same_table(a: pa.Table, b: pa.Table) -> bool:
    """Whether two tables hold the same values, a NaN equal to a NaN: `Table.equals` finds a float column
    holding NaN unequal even to itself, and pandas writes every missing float as NaN."""
    if a.equals(b):
        return True
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    return all(_same_values(x.combine_chunks(), y.combine_chunks()) for x, y in zip(a.columns, b.columns,
                                                                                   strict=True))


def _same_values(x: pa.Array, y: pa.Array) -> bool:
    if x.equals(y):
        return True
    if not x.is_valid().equals(y.is_valid()):
        return False
    if pa.types.is_floating(x.type):
        nan_x, nan_y = pc.fill_null(pc.is_nan(x), False), pc.fill_null(pc.is_nan(y), False)
        zero = pa.scalar(0, x.type)
        return nan_x.equals(nan_y) and pc.if_else(nan_x, zero, x).equals(pc.if_else(nan_y, zero, y))
    if pa.types.is_struct(x.type):
        return all(_same_values(a, b) for a, b in zip(x.flatten(), y.flatten(), strict=True))
    if pa.types.is_list(x.type) or pa.types.is_large_list(x.type):
        return x.value_lengths().equals(y.value_lengths()) and _same_values(x.flatten(), y.flatten())
    return False


def same_rows(shard: Shard, root: Path, positions: set[int], keep_listed: bool,
              schema: pa.Schema | None) -> str | None:
    """Read the written shard back and compare it with the input rows it should hold; None when equal,
    else where they first differ."""
    written = root / shard.relpath
    if shard.kind in ("jsonl", "json", "csv"):
        header, rows = _input_rows(shard)
        with open_bytes(written) as handle:
            if header and handle.read(len(header)) != header:
                return f"{shard.relpath}: the header differs from {shard.label}'s"
            for position, line in rows:
                if (position in positions) == keep_listed and handle.read(len(line)) != line:
                    return f"{shard.relpath}: the row from {shard.label} position {position} differs"
            return f"{shard.relpath}: holds rows the input has not" if handle.read(1) else None
    out_groups = parquet_file(written)
    listed = as_array(positions)
    group = 0
    for offset, piece in table_pieces(shard):
        expected = piece.filter(_mask(offset, piece.num_rows, listed, keep_listed))
        if not expected.num_rows:
            continue
        if schema is not None and shard.kind == "parquet":
            expected = conform(expected, schema)
        if group >= out_groups.num_row_groups or not same_table(out_groups.read_row_group(group), expected):
            last = offset + piece.num_rows - 1
            return f"{shard.relpath}: the rows from {shard.label} positions {offset}–{last} differ"
        group += 1
    return f"{shard.relpath}: holds rows the input has not" if group != out_groups.num_row_groups else None
