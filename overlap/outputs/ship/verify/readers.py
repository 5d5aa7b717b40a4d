"""The plainest readers of a written split: parquet by pyarrow.parquet, CSV by pyarrow.csv, JSON lines by the
standard library, and a split held in memory from its Arrow batches; each row as (position, where, cells)."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}
# Larger than any CSV row the readers take (16 MiB blocks): a row the filter wrote is a row this reads back.
CSV_BLOCK_BYTES = 64 << 20


def _stream(path: Path):
    codec = COMPRESSIONS.get(path.suffix.lower())
    return pa.input_stream(str(path), compression=codec)


def _seekable(path: Path):
    """A parquet shard as parquet reads it: a compressed one (`x.parquet.zst`) decompressed to an anonymous
    temporary file, since parquet seeks."""
    if path.suffix.lower() not in COMPRESSIONS:
        return path
    spool = tempfile.TemporaryFile()
    with _stream(path) as stream:
        while block := stream.read(4 << 20):
            spool.write(block)
    spool.seek(0)
    return spool


def _format(path: Path) -> str:
    name = path.name.lower()
    for suffix in COMPRESSIONS:
        name = name.removesuffix(suffix)
    return name.rpartition(".")[2]


def _top_columns(columns: Iterable[str], available: list[str]) -> list[str]:
    out = []
    for name in columns:
        top = name if name in available else name.split(".", 1)[0]
        if top in available:
            out.append(top)
    return list(dict.fromkeys(out))


def read_rows(path: Path, wanted: Iterable[str]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(position, where, cells) of each row of a written shard: parquet by pyarrow.parquet, CSV by pyarrow.csv
    (every cell text, as written), JSON lines by the stdlib `json`, line by line (a malformed line is a row
    with no cells). Compressed `.gz` / `.zst` files are read through pyarrow's decompressing streams."""
    kind = _format(path)
    wanted = list(wanted)
    if kind == "parquet":
        handle = pq.ParquetFile(_seekable(path))
        columns = _top_columns(wanted, handle.schema_arrow.names)
        position = 0
        for batch in handle.iter_batches(columns=columns or None, batch_size=65536):
            for row in batch.to_pylist() if columns else [{}] * batch.num_rows:
                yield position, f"row {position}", row
                position += 1
        return
    if kind == "csv":  # a block at a time, the asked columns only: a shard of millions of rows is never held
        header = _csv_header(path)
        columns = _top_columns(wanted, header)
        with _stream(path) as stream:
            reader = pcsv.open_csv(stream, read_options=pcsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
                                   convert_options=pcsv.ConvertOptions(
                strings_can_be_null=False, quoted_strings_can_be_null=False,
                column_types={c: pa.string() for c in header}, include_columns=columns))
            position = 0
            for batch in reader:
                for row in batch.to_pylist() if columns else [{}] * batch.num_rows:
                    yield position, f"row {position}", {k: (v if v != "" else None) for k, v in row.items()}
                    position += 1
        return
    with _stream(path) as stream:
        position = 0
        for line_no, raw in enumerate(io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace"), start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (ValueError, RecursionError):
                value = None
            yield position, f"line {line_no}", value if isinstance(value, dict) else {}
            position += 1


def memory_rows(batches: Iterable[Any], wanted: Iterable[str]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(position, where, cells) of each row of a split held in memory, from its Arrow batches, as `read_rows`
    reads a parquet shard's."""
    wanted = list(wanted)
    position = 0
    for batch in batches:
        columns = _top_columns(wanted, batch.schema.names)
        for row in batch.select(columns).to_pylist() if columns else [{}] * batch.num_rows:
            yield position, f"row {position}", row
            position += 1


def _csv_header(path: Path) -> list[str]:
    with _stream(path) as stream:
        first = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="").readline()
    return next(csv.reader([first]), [])


def reader_name(path: Path) -> str:
    kind = _format(path)
    return {"parquet": "pyarrow.parquet", "csv": "pyarrow.csv"}.get(kind, "json (standard library), line by line")
