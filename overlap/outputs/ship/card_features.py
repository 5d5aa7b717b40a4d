"""The column types a written split of JSON lines or CSV shards declares in its loading card.

`datasets` reads such a split by inferring the types of its first chunk and casting every later chunk to them.
The input rows agreed with that first chunk, but the kept rows need not: when the rows that gave a column its
type are removed, the first shard's column can be all null (or, in a CSV, all blank: float) while a later shard
holds text, and the split no longer loads although the input did. Declaring the types of all kept rows at once
(each chunk read as `datasets` reads it, an all-null column typed by the others, pyarrow's widening) lets every
chunk be cast to them. Parquet shards need none of this: they are written with one schema.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.json as pajson

from .split_files import open_bytes

CHUNK_BYTES = 8 << 20  # JSON lines read per chunk: bounded memory, whatever the shard's size
CSV_CHUNK_ROWS = 10_000  # the rows per chunk `datasets` reads a CSV by (pandas' iterator)


def _json_chunks(path: Path) -> Iterator[pa.Table]:
    with open_bytes(path) as handle:
        chunk: list[bytes] = []
        size = 0
        for line in handle:
            if line.strip():
                chunk.append(line if line.endswith(b"\n") else line + b"\n")
                size += len(line)
            if size >= CHUNK_BYTES:
                yield _read_json(chunk)
                chunk, size = [], 0
        if chunk:
            yield _read_json(chunk)


def _read_json(lines: list[bytes]) -> pa.Table:
    data = b"".join(lines)
    return pajson.read_json(io.BytesIO(data), read_options=pajson.ReadOptions(block_size=len(data) + 1))


def _csv_chunks(path: Path) -> Iterator[pa.Table]:
    with open_bytes(path) as handle:
        try:
            frames = pd.read_csv(handle, iterator=True, chunksize=CSV_CHUNK_ROWS, encoding="utf-8")
        except pd.errors.EmptyDataError:  # a file without even a header holds no rows to type
            return
        for frame in frames:
            yield pa.Table.from_pandas(frame, preserve_index=False)


def _typed_by_others(table: pa.Table) -> pa.Schema:
    """The chunk's schema with every all-null column as null (a CSV's blank column reads as float NaN), so that
    the chunks where it holds values decide its type."""
    return pa.schema([pa.field(f.name, pa.null()) if table.column(f.name).null_count == len(table) else f
                      for f in table.schema]).remove_metadata()


def split_schema(paths: list[Path], kind: str) -> pa.Schema | None:
    """One schema for all rows of the shards, or None when there are no rows or their types cannot be widened
    into one (then the card declares none, as before)."""
    # as the shards were written (`split_files`): CSV by its suffix, any other text shard is JSON lines (`x.json`
    # of JSON lines keeps its name)
    chunks = _csv_chunks if kind == "csv" else _json_chunks
    merged: pa.Schema | None = None
    try:
        for path in paths:
            for table in chunks(path):
                if len(table) == 0:
                    continue
                schema = _typed_by_others(table)
                merged = schema if merged is None else pa.unify_schemas([merged, schema],
                                                                         promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, NotImplementedError, ValueError, UnicodeDecodeError):
        return None
    return merged


def features_yaml(paths: list[Path], kind: str) -> str | None:
    """The `features` entry of the card's config, as YAML flow (JSON) text, or None."""
    schema = split_schema(paths, kind)
    if schema is None:
        return None
    import datasets  # imported here: heavy, and needed only for a split of text shards

    try:
        listed = datasets.Features.from_arrow_schema(schema)._to_yaml_list()
    except (TypeError, ValueError, NotImplementedError, AttributeError):  # AttributeError: a `datasets` without it
        return None
    return json.dumps(listed, sort_keys=False)
