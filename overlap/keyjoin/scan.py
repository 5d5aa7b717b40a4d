"""The streamed key join of a training side read by columns: every batch against the benchmarks' keys, and
the whole-side counts gathered on the way, so memory is the benchmarks, a batch and the bounded state below.

`stream_train(source, columns, benches)` returns a `Dataset` whose `items` and `keys` hold only the items
that have a key some benchmark has (a superset of the items in a pair: the joins run on them unchanged), and
whose `totals` hold what the outputs count over the whole side. `duplicates` is the side's
`overlap.join.duplicates` table. What is kept, and why it is bounded:

- rows with an id, one fact row each (id, row, project, filled columns, keys by kind): in a `Spill` (memory
  up to `spill_rows`, then hash partitions on disk); read back partition by partition, the first row of each
  id is found exactly (an item), the others are repeats (kept: their rows, so nothing of theirs is counted);
- task-kind keys (OSS-Fuzz, CVE, fix commit, PR) with their item: a second `Spill`; per partition, the
  (kind, value) held by two items or more are the side's duplicate groups;
- the OSS-Fuzz keys themselves (the chance baselines and related bugs read them): bounded by the tracker's
  issues, not by the side;
- the matched rows (items and keys): bounded by the benchmarks.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..ids.recognise import RecognitionReport
from ..join import duplicates
from ..model import Dataset, Problem, SideTotals
from ..sources.assemble import LABEL, unrecognised_problem
from ..sources.generic import GenericColumns, _file_source, iter_key_batches
from .batch import (
    FACT_SCHEMA,
    PRESENT_COLUMNS,
    TASK_KEY_SCHEMA,
    UNRECOGNISED_BIT,
    BatchJoin,
    BatchPart,
    BenchKeys,
    unpack_kinds,
)
from .clean import clean_ids
from .spill import Spill

BATCH_ROWS = 65536  # rows of one batch read
SPILL_ROWS = 1_000_000  # rows of each spill held in memory before it goes to disk (~100 MB)
DUPLICATE_DETAIL = "a repeated id keeps its first row; `filter` drops or keeps every copy with it"


@dataclass
class _State:
    facts: Spill
    task_keys: Spill
    rows: int = 0
    missing: int = 0
    first_missing: tuple[str, int] | None = None
    ossfuzz: list[pa.Table] = field(default_factory=list)
    matched_items: list[pa.Table] = field(default_factory=list)
    matched_keys: list[pa.Table] = field(default_factory=list)
    item_schema: pa.Schema | None = None  # the items' columns, for a side where no row matched

    def add(self, part: BatchPart) -> None:
        self.item_schema = self.item_schema or part.matched_items.schema
        self.rows += part.rows
        self.missing += part.missing
        self.first_missing = self.first_missing or part.first_missing
        self.facts.add(part.facts)
        self.task_keys.add(part.task_keys)
        for store, table in ((self.ossfuzz, part.ossfuzz), (self.matched_items, part.matched_items),
                             (self.matched_keys, part.matched_keys)):
            if table.num_rows:
                store.append(table)


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
    state = _State(Spill(FACT_SCHEMA, "item_id", max_rows=spill_rows, folder=spill_folder),
                   Spill(TASK_KEY_SCHEMA, "value", max_rows=spill_rows, folder=spill_folder))
    try:
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
    finally:
        state.facts.close()
        state.task_keys.close()
    dataset.source = _file_source(provenance, source)
    dataset.recognition = report  # type: ignore[attr-defined]
    dataset.generic_columns = columns  # type: ignore[attr-defined]
    dataset.mapping = joiner.mapping  # type: ignore[attr-defined]  # loaded at the first OSS-Fuzz key, or None
    repeats = dataset.totals.clean_ids  # the repeat rows, bound below
    dataset.totals.clean_ids = lambda matched: clean_ids(source, columns.id, repeats, matched, split=split,
                                                         filesystem=filesystem, batch_rows=batch_rows)
    return dataset, dups


def _items_pass(state: _State):
    """(items, keys by kind, items per project, filled-columns bits, sorted repeat rows, first repeat's id)."""
    items, packed_total, projects, present = 0, Counter(), Counter(), 0
    repeat_rows, first_repeat = [], None
    alone, alone_first = 0, []  # items whose id no scheme took and that have no key; the first ones
    for table in state.facts.partitions_read():
        if not table.num_rows:
            continue
        # each id's first row (rows are unique: the row itself says whether it is the first)
        firsts = table.group_by("item_id", use_threads=False).aggregate([("row", "min")]).column("row_min")
        first = pc.is_in(table.column("row"), value_set=firsts).to_numpy(zero_copy_only=False)
        items += int(first.sum())
        packed_total.update(unpack_kinds(table.column("kinds").to_numpy()[first]))
        present |= int(np.bitwise_or.reduce(table.column("present").to_numpy()[first], initial=0))
        bits = table.column("present").to_numpy()
        lone = first & ((bits >> UNRECOGNISED_BIT) & 1).astype(bool) & (table.column("kinds").to_numpy() == 0)
        if lone.any():
            alone += int(lone.sum())
            rows = table.column("row").to_numpy()[lone]
            ids = table.column("item_id").filter(pa.array(lone)).to_pylist()
            alone_first = sorted([*alone_first, *zip(rows.tolist(), ids, strict=True)])[:3]
        counted = pc.value_counts(pc.drop_null(table.column("project").filter(pa.array(first))))
        projects.update({str(v["values"]): int(v["counts"]) for v in counted.to_pylist()})
        if not first.all():
            rows = table.column("row").to_numpy()
            repeats = np.flatnonzero(~first)
            repeat_rows.append(rows[repeats])
            at = int(repeats[np.argmin(rows[repeats])])
            if first_repeat is None or rows[at] < first_repeat[0]:
                first_repeat = (int(rows[at]), table.column("item_id")[at].as_py())
    repeats = np.sort(np.concatenate(repeat_rows)) if repeat_rows else np.zeros(0, np.int64)
    unrecognised = (alone, [i for _, i in alone_first])
    return items, dict(packed_total), dict(projects), present, repeats, first_repeat, unrecognised


def _not_repeats(table: pa.Table, repeats: np.ndarray) -> pa.Table:
    if not len(repeats) or not table.num_rows:
        return table
    return table.filter(pa.array(~np.isin(table.column("row").to_numpy(), repeats)))


def _duplicate_keys(state: _State, repeats: np.ndarray) -> pa.Table:
    """The task keys of items (first rows) whose (kind, value) another item also has."""
    found = []
    for table in state.task_keys.partitions_read():
        table = _not_repeats(table, repeats)
        if not table.num_rows:
            continue
        # an item is one row, and a row holds a (kind, value) once: its count is the count of items holding it
        counts = table.group_by(["kind", "value"], use_threads=False).aggregate([("row", "count")])
        shared = counts.filter(pc.greater(counts.column("row_count"), 1))
        if shared.num_rows:
            found.append(table.join(shared.select(["kind", "value"]), ["kind", "value"], join_type="inner",
                                    use_threads=False))
    keys = pa.concat_tables(found) if found else TASK_KEY_SCHEMA.empty_table()
    return keys.set_column(2, "raw", pc.coalesce(keys.column("raw"), keys.column("value")))


def _concat(tables: list[pa.Table], schema: pa.Schema | None = None) -> pa.Table | None:
    if tables:
        return pa.concat_tables(tables, promote_options="permissive")
    return schema.empty_table() if schema is not None else None


def _finish(state: _State, label: str, provenance, columns: GenericColumns, report: RecognitionReport):
    items, by_kind, projects, present, repeats, first_repeat, unrecognised = _items_pass(state)
    if not items:
        raise InputError(f"{label}: no usable rows (no row has an id in column '{columns.id}')")
    problems = [] if columns.scheme == LABEL else unrecognised_problem(*unrecognised, columns.scheme)
    if state.missing:
        file, file_row = state.first_missing
        problems.append(Problem("missing_id", state.missing, f"{file} row {file_row}",
                                "rows without an id cannot be joined or listed"))
    if len(repeats):
        problems.append(Problem("duplicate_id", int(len(repeats)), first_repeat[1], DUPLICATE_DETAIL))
    provenance.name = label
    dups, same_pr, grouped = _duplicates(label, provenance, _duplicate_keys(state, repeats))
    oss = _not_repeats(_concat(state.ossfuzz, pa.schema([("row", pa.int64()), ("item_id", pa.string()),
                                                         ("value", pa.string()), ("raw", pa.string())])), repeats)
    ossfuzz_keys = _key_frame(oss.column("item_id"), pa.repeat(pa.scalar("ossfuzz"), oss.num_rows),
                              oss.column("value"), oss.column("raw"))
    matched = _not_repeats(_concat(state.matched_items, state.item_schema), repeats)
    keys = _concat(state.matched_keys)
    totals = SideTotals(items=items, keys_by_kind=by_kind, projects=projects, same_pr=same_pr,
                        ossfuzz_keys=ossfuzz_keys, grouped_items=grouped, clean_ids=repeats)
    dataset = Dataset(label, _items_frame(matched, present, columns), _matched_keys(matched, keys), provenance,
                      sorted(problems, key=lambda p: p.what), totals=totals)
    return dataset, dups


def _key_frame(item_id, kind, value, raw) -> pd.DataFrame:
    return pa.table({"item_id": item_id, "kind": kind, "value": value, "raw": raw}).to_pandas().astype("string")


def _matched_keys(matched: pa.Table, keys: pa.Table | None) -> pd.DataFrame:
    """Every key of the matched items, named by item id (as `read_generic` builds its key frame)."""
    if keys is None or not matched.num_rows:
        empty = pa.array([], pa.string())
        return _key_frame(empty, empty, empty, empty)
    where = pc.index_in(keys.column("row"), value_set=matched.column("row"))
    keys = keys.filter(pc.is_valid(where))
    item = matched.column("item_id").take(pc.drop_null(where))
    return _key_frame(item, keys.column("kind"), keys.column("value"), keys.column("raw"))


def _items_frame(matched: pa.Table, present: int, columns: GenericColumns) -> pd.DataFrame:
    """The matched items as `read_generic` types them, with the columns the whole side has: a column no item
    of the side fills is left out (however the matched ones fill it), unless the side declares it."""
    out = matched.drop_columns([c for c in matched.column_names if c.startswith("_")]).to_pandas()
    out["pr"] = out["pr"].astype("Int64")
    for column in out.columns:
        if column not in ("row", "file_row", "pr"):
            out[column] = out[column].astype("string")
    out = out[["item_id", *[c for c in out.columns if c != "item_id"]]]
    declared = {"project"} if columns.project else set()
    absent = [c for bit, c in enumerate(PRESENT_COLUMNS) if not present & (1 << bit) and c not in declared]
    return out.drop(columns=absent).reset_index(drop=True)


def _duplicates(label: str, provenance, keys: pa.Table) -> tuple[pd.DataFrame, dict[str, int], pd.DataFrame]:
    """`overlap.join.duplicates` of the side, from the keys that two items share (the same function on the
    items and keys that can be in a group, so the table is the one a Dataset of every row gives), the same-PR
    counts of the SWE section, and the grouped items (item_id, row, project: what the report shows of them)."""
    frame = keys.to_pandas()
    items = frame[["item_id", "row", "project"]].drop_duplicates("item_id").astype({"item_id": "string",
                                                                                     "project": "string"})
    mini = Dataset(label, items, frame[["item_id", "kind", "value", "raw"]].astype("string"), provenance)
    dups = duplicates(mini)
    same = dups[dups["kind"] == "repo_pr"] if len(dups) else dups
    grouped = items.sort_values("row").reset_index(drop=True)
    return dups, {"groups": int(len(same)), "items": int(same["items"].sum()) if len(same) else 0}, grouped

