"""`OverlapFilter`: a datatrove pipeline step that drops the documents whose id is a benchmark task.

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from overlap.integrations.datatrove import OverlapFilter

    LocalPipelineExecutor(pipeline=[
        JsonlReader("data/train", text_key="prompt", id_key="instance_id"),
        OverlapFilter(["cybergym"], data={"cybergym": "./cybergym", "arvo": "./ARVO"}),
        JsonlWriter("data/train-minus-cybergym"),
    ], tasks=4).run()

A document's id is `doc.id`, or with `id_key` a metadata field (dotted for nested dicts: `extra_info.index`).
It is read by the recognisers `overlap filter` uses for a training set given by its id column, and matched
against the benchmarks' task keys (`overlap.api.bench_keys`): the same rows `overlap filter --drop id` removes.
A dropped document returns datatrove's `(False, reason)` with reason `overlap:<bench>` (the first benchmark it
matched, so datatrove's `dropped_<reason>` stats count per benchmark) and carries in its metadata
`overlap_benches`, `overlap_bench_ids` and `overlap_kinds` (the key kinds that matched, e.g. `ossfuzz`).

The benchmark keys are built once per task (a datatrove task runs its own copy of the step), on the first
batch, never per document; documents are matched in batches of `batch_size`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from datatrove.data import Document
from datatrove.pipeline.filters.base_filter import BaseFilter
from datatrove.pipeline.writers.disk_base import DiskWriter

from ..api.bench_keys import BenchKeys, bench_keys
from ..errors import InputError

REASON_PREFIX = "overlap"


class OverlapFilter(BaseFilter):
    """Drop documents whose id names a task of `benches` (names, paths or Hub ids, as `overlap filter`
    takes them). `data`: local places of named datasets (NAME → path, the CLI's `--data`); `bench_columns`:
    the columns of benchmarks read by their columns (`{"id": "instance_id"}`); `id_key`: the metadata field
    holding the id (None: `doc.id`); `id_scheme`: how to read ids no specific form recognises."""

    name = "overlap: benchmark tasks"

    def __init__(self, benches: str | os.PathLike | list[str | os.PathLike], *,
                 data: Mapping[str, str | os.PathLike] | None = None, bench_columns: Mapping[str, str] | None = None,
                 id_key: str | None = None, id_scheme: str | None = None, split: str | None = None,
                 exclusion_writer: DiskWriter | None = None, batch_size: int = 10_000) -> None:
        super().__init__(exclusion_writer=exclusion_writer, batch_size=batch_size)
        if id_key is not None and (not isinstance(id_key, str) or not id_key.strip()):
            raise InputError(f"id_key: expected a metadata field name, got {id_key!r}")
        self.benches = [os.fspath(b) for b in benches] if isinstance(benches, (list, tuple)) else [os.fspath(benches)]
        self.data = {k: os.fspath(v) for k, v in (data or {}).items()}
        self.bench_columns = dict(bench_columns) if bench_columns else None
        self.id_key = id_key
        self.id_scheme = id_scheme
        self.split = split
        self._keys: BenchKeys | None = None

    @property
    def keys(self) -> BenchKeys:
        """The benchmarks' keys, built on first use in this task."""
        if self._keys is None:
            self._keys = bench_keys(self.benches, data=self.data, columns=self.bench_columns, split=self.split,
                                    id_scheme=self.id_scheme)
        return self._keys

    def _id_of(self, doc: Document) -> Any:
        if self.id_key is None:
            return doc.id
        value: Any = doc.metadata
        for part in self.id_key.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        return self.filter_batch([doc])[0]

    def filter_batch(self, batch: list[Document]) -> list[bool | tuple[bool, str]]:
        matches = self.keys.match([self._id_of(doc) for doc in batch])
        results: list[bool | tuple[bool, str]] = []
        for doc, found in zip(batch, matches, strict=True):
            if not found:
                results.append(True)
                continue
            doc.metadata["overlap_benches"] = sorted({m.bench for m in found}, key=self.keys.benches.index)
            doc.metadata["overlap_bench_ids"] = [f"{m.bench}:{m.bench_id}" for m in found]
            doc.metadata["overlap_kinds"] = sorted({k for m in found for k in m.kinds})
            results.append((False, f"{REASON_PREFIX}:{found[0].bench}"))
        return results
