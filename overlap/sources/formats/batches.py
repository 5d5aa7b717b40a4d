"""Record batches of any dataset, streamed with column projection: a local file, a folder (its data files,
recursively), a glob, a Hub dataset `owner/name[:config][@revision]`, or an in-memory dataset.

    source = open_batches("me/my-rl-mix@main", ["extra_info.instance_id", "repo"], split="train")
    for batch in source:          # pyarrow.RecordBatch, columns named as asked (dotted names kept)
        ...
    source.provenance             # Hub id, the revision as a commit sha, files read with sha256 and rows

`open_batches` finds the files through `places/` (`local_files`, `hub_files`: Hub datasets are read through
`huggingface_hub.HfFileSystem`, ranged reads, or from the Hub cache with `HF_HUB_OFFLINE=1`), then reads each
with `file_batches` (every format through one projection path, `projection`). Memory is bounded by the batch,
never by the file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError
from ...model import FileRecord, Provenance
from ..places.hub_files import open_hub
from ..places.local_files import _local_files
from ..places.naming import DataFile, file_uri_path, parse_hub_id
from .file_batches import read_file_batches
from .projection import _batch, _describe, _plan


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
    """The record batches of an in-memory dataset (`overlap.sources.formats.in_memory`), projected on the asked columns
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
    in-memory dataset (`overlap.sources.formats.in_memory`: `split` picks a DatasetDict's split).

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
