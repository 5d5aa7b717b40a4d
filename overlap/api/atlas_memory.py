"""The atlas's in-memory datasets: a `datasets.Dataset`, a frame, a pyarrow table, … among the names, read by
the columns the caller names (`id_column=` / `columns=`) as `compare` reads one, in the role `overlap.named`
gives it (a training set when none is given).

An in-memory dataset has no declaration and no file to hash, so its cache fingerprint is its content: the
sha256 of the columns it is read by (as Arrow IPC, batch by batch), its name, role and column options. A
stream (an `IterableDataset`, a `RecordBatchReader`, a `pyarrow.dataset.Dataset`) is read once per run, so it
is never cached (fingerprint None): hashing it would read it a second time.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa

from .. import __version__
from ..atlas_model import AtlasEntry
from ..errors import InputError
from ..progress import stage
from ..sources.formats.in_memory import MemoryInput, is_in_memory
from ..sources.load import StreamableSource
from ..sources.rows.columns import GenericColumns
from ..sources.rows.generic import read_generic
from .atlas_stream import StreamedSide
from .compare import _columns_arg, _in_memory  # the entry points' one reading of these arguments

# rows per batch hashed: a fixed size, so one content gives one fingerprint however its source cut its batches
_HASH_BATCH_ROWS = 65536


def role_of(memory: MemoryInput) -> str:
    return memory.role or "training"


def memory_columns(memories: list[MemoryInput], id_column: str | None, columns: Any) -> GenericColumns | None:
    """The column options in-memory datasets are read by; refused when they are given without one, or missing
    with one (as compare refuses them)."""
    given = _columns_arg(columns)
    if not memories:
        if id_column is not None or given:
            raise InputError("id_column/columns name the columns of an in-memory dataset, and none is given; "
                             "registered datasets are read by their declarations: leave them out")
        return None
    if id_column is None and not given:
        raise InputError(f"{memories[0].label}: an in-memory dataset is read by its columns; name its id column "
                         "(id_column=NAME, or columns={'id': NAME, ...})")
    return GenericColumns.of(given or {}, id_column=id_column)


def memory_fingerprint(memory: MemoryInput, columns: GenericColumns) -> str | None:
    """What an in-memory dataset's keys depend on, hashed (see the module docstring); None for a stream."""
    if memory.streamed:
        return None
    used = [getattr(columns, f) for f in ("id", "repo", "pr", "base", "patch", "text", "project", "fix", "cve")]
    used += [source for _, source in columns.item_fields]
    tops = sorted({name.split(".")[0] for name in used if name})
    digest = hashlib.sha256()
    for batch in memory.raw_batches(_HASH_BATCH_ROWS, tops):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        digest.update(sink.getvalue())
    parts = {"tool": __version__, "in_memory": memory.label, "role": role_of(memory), "type": memory.given,
             "split": memory.split, "columns": asdict(columns), "content": digest.hexdigest()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def split_names(names: Any, split: str | None) -> tuple[Any, list[MemoryInput]]:
    """`names` as (the registered names, or None for every one; the in-memory datasets among them, each wrapped
    and told apart by place as compare tells them apart)."""
    if isinstance(names, (list, tuple)) and any(is_in_memory(n) for n in names):
        memories = _in_memory([n for n in names if is_in_memory(n)], split)
        return [n for n in names if not is_in_memory(n)], memories
    if is_in_memory(names):
        return [], _in_memory([names], split)
    if split is not None:
        raise InputError(f"split {split!r}: picks a split of an in-memory DatasetDict, and none is given; leave it out")
    return names, []


def memory_entry(memory: MemoryInput, columns: GenericColumns, cache: Path,
                  stream: bool) -> tuple[AtlasEntry, StreamedSide | None]:
    """An in-memory dataset's entry: a training set read by its id columns alone is streamed (as compare streams
    it: memory is its matched rows, never every row); anything else is read whole. Fingerprinted by content."""
    role = role_of(memory)
    fp = memory_fingerprint(memory, columns)
    if stream and role != "benchmark":
        side = StreamedSide.of(StreamableSource(memory.label, memory, columns, None), fp, cache, registered=False)
        return AtlasEntry(name=memory.label, role=role, revision=None, fingerprint=fp, cached=True,
                          dataset=side.dataset), side
    stage(f"reading {memory.label}")
    dataset = read_generic(memory, columns)
    return AtlasEntry(name=dataset.name, role=role, revision=None, fingerprint=fp, cached=False,
                      dataset=dataset), None
