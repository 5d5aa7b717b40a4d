"""The streamed key join of a training side read by columns: every batch against the benchmarks' keys, and
the whole-side counts gathered on the way, so memory is the benchmarks, a batch and the bounded state below.

`stream_train(source, columns, benches)` returns a `Dataset` whose `items` and `keys` hold only the items
that have a key some benchmark has (a superset of the items in a pair: the joins run on them unchanged), and
whose `totals` hold what the outputs count over the whole side. `duplicates` is the side's
`overlap.join.duplicates` table. What is kept, and why it is bounded:

- rows with an id, one fixed-width fact each (a hash of the id, row, project code, filled columns, keys by
  kind): in a `Spill` (memory up to `spill_rows`, then hash partitions on disk); read back partition by
  partition, a row whose id hash no other row has is an item; the rows whose hash others share are read
  back as strings and grouped on their ids: the first row of each id is an item, the others are repeats
  (kept: their rows, so nothing of theirs is counted);
- task-kind keys (OSS-Fuzz, CVE, fix commit, PR) as (hash of kind and value, row): a second `Spill`; per
  partition, the rows whose key hash another item shares are read back as strings, and the (kind, value)
  held by two items or more are the side's duplicate groups;
- the ids and the task keys as strings, in row order (`RowStore`s: memory, then one file): read back only
  for the rows the passes above name (so a hash collision costs a lookup, never a wrong count);
- every row's OSS-Fuzz keys as strings (the id description, the chance baselines and the related bugs read
  them): an `OssfuzzKeys` store (memory up to `spill_rows`, then a file) that outlives the scan and is read
  back a batch at a time without the repeats' keys (a side of distinct OSS-Fuzz ids has one a row);
- the matched rows (items and keys): bounded by the benchmarks.

The batches add to that state (`scan_state`); once every batch is in, the items pass (`items_pass`) finds each
id's first row and `side_dataset` makes the Dataset and the duplicates table.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pandas as pd

from ..allocator import objects_frozen
from ..errors import InputError
from ..ids.recognition import RecognitionReport
from ..model import Dataset
from ..sources.rows.columns import GenericColumns
from ..sources.rows.generic import _file_source, iter_key_batches
from .batch import (
    FACT_SCHEMA,
    ID_STRING_SCHEMA,
    KEY_STRING_SCHEMA,
    PROBLEM_SCHEMA,
    TASK_KEY_SCHEMA,
    BatchJoin,
)
from .bench_lookup import BenchKeys
from .clean import clean_ids, locate
from .ossfuzz_keys import OssfuzzKeys
from .scan_state import _State
from .side_dataset import _finish
from .spill import RowStore, Spill

BATCH_ROWS = 262_144  # rows of one batch read (fewer, larger batches: each step's fixed cost is paid less often)
SPILL_ROWS = 1_000_000  # rows of each spill held in memory before it goes to disk (~100 MB)


def stream_train(source: str | os.PathLike, columns: GenericColumns, benches: list[Dataset], *,
                 split: str | None = None, filesystem: Any = None, mapping: Any = None,
                 mapping_for: Callable[[], Any] | None = None, engine: str = "local", ray_address: str | None = None,
                 workers: int | None = None, batch_rows: int | None = None, spill_rows: int | None = None,
                 spill_folder: str | None = None) -> tuple[Dataset, pd.DataFrame]:
    """(the training side as a streamed Dataset, its duplicates table), read from `source` by `columns`
    against the keys of `benches` (canonical already). `mapping`: the OSS-Fuzz mapping, or `mapping_for()`
    called at the first OSS-Fuzz key (its result is kept in `joiner.mapping`). `engine`: "local", or "ray"
    (the batches' keys derived on Ray, `ray_address` / `workers` as the text scan's): the same result."""
    batch_rows, spill_rows = batch_rows or BATCH_ROWS, spill_rows or SPILL_ROWS
    report = RecognitionReport(scheme=columns.scheme)
    joiner = BatchJoin(BenchKeys.of(benches), mapping=mapping, mapping_for=mapping_for)
    state = _State(Spill(FACT_SCHEMA, "hash", max_rows=spill_rows, folder=spill_folder),
                   Spill(TASK_KEY_SCHEMA, "hash", max_rows=spill_rows, folder=spill_folder),
                   RowStore(ID_STRING_SCHEMA, max_rows=spill_rows, folder=spill_folder, consecutive=True),
                   RowStore(KEY_STRING_SCHEMA, max_rows=spill_rows, folder=spill_folder),
                   RowStore(PROBLEM_SCHEMA, max_rows=spill_rows, folder=spill_folder),
                   OssfuzzKeys(max_rows=spill_rows, folder=spill_folder), joiner.projects, joiner.pr_repos)
    try:
        with objects_frozen():
            if engine == "ray":
                from .engine_ray import ray_key_batches

                stream = ray_key_batches(source, columns, report, split=split, batch_rows=batch_rows,
                                         address=ray_address, workers=workers)
            else:
                stream = iter_key_batches(source, columns, report, split=split, filesystem=filesystem,
                                          batch_rows=batch_rows)
            label, provenance = next(stream)
            for items, keys in stream:
                state.add(joiner.process(items, keys))
            if not state.rows:
                raise InputError(f"{label}: no usable rows (no rows read); check the files")
            dataset, dups = _finish(state, label, provenance, columns, report)
    except BaseException:
        state.ossfuzz.close()
        raise
    finally:
        for kept in (state.facts, state.task_keys, state.ids, state.key_strings, state.problem_rows):
            kept.close()
    dataset.source = _file_source(provenance, source)
    dataset.recognition = report  # type: ignore[attr-defined]
    dataset.generic_columns = columns  # type: ignore[attr-defined]
    dataset.mapping = joiner.mapping  # type: ignore[attr-defined]  # loaded at the first OSS-Fuzz key, or None
    repeats = dataset.totals.repeat_rows
    reading = {"split": split, "filesystem": filesystem, "batch_rows": batch_rows}
    dataset.totals.clean_ids = lambda matched: clean_ids(source, columns, repeats, matched, **reading)
    dataset.totals.locate = lambda ids, with_repeats: locate(source, columns, repeats, ids, with_repeats, **reading)
    return dataset, dups
