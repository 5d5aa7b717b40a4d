"""`bench_keys(benches)`: the benchmarks' task keys, built once, and the lookup of ids against them, for a
caller that sees training rows one batch at a time (a pipeline step) and keeps nothing else.

The keys are `overlap filter`'s: the benchmarks are read as `compare` / `filter` read them (a registered
name through its declaration, a file, folder or Hub id by its `columns`), OSS-Fuzz keys are made canonical
with the old→new mapping, and an id is read by the same recognisers (`overlap.ids.recognise`) as a training
set given by its id column. A row whose id shares a task key (`join.TASK_KINDS`: OSS-Fuzz issue, CVE, fix
commit, pull request) with a benchmark item is the row `overlap filter --drop id` removes; the kinds reported
are every kind the two share, as the filter's `id:<kind>` reasons name them (a PR's `repo_pr_exact` too).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa

from ..errors import InputError
from ..ids.ossfuzz import OssFuzzMapping
from ..ids.recognise import recognise
from ..ids.recognisers import RECOGNISERS
from ..join import TASK_KINDS
from ..model import Dataset
from ..sources.load import data_paths
from ..sources.rows.columns import GenericColumns
from .compare import _dataset_args, _read_datasets, canonical_ossfuzz_ids

TASK_SET = frozenset(TASK_KINDS)


@dataclass(frozen=True)
class KeyMatch:
    """One benchmark item an id matched: the benchmark, its item id, and the key kinds they share."""

    bench: str
    bench_id: str
    kinds: tuple[str, ...]


@dataclass
class BenchKeys:
    """The task keys of some benchmarks: (kind, canonical value) → the (bench, bench item id) holding it."""

    benches: list[str]
    index: dict[tuple[str, str], list[tuple[str, str]]]
    mapping: OssFuzzMapping | None = None
    scheme: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    def match(self, ids: Sequence[Any]) -> list[list[KeyMatch]]:
        """For each id (text, a whole number or None), the benchmark items it is the same task as (an empty
        list: none), each benchmark item once with every kind they share, in benchmark then item order."""
        values = pa.array([None if v is None else str(v) for v in ids], pa.string())
        keys = recognise(values, scheme=self.scheme).keys
        found: dict[int, dict[tuple[str, str], set[str]]] = {}
        # column-wise to Python lists: iterating the table's cells one by one costs more than the recognisers
        for row, kind, value, raw in zip(*(keys.column(c).to_pylist() for c in ("row", "kind", "value", "raw")),
                                         strict=True):
            if kind == "base":
                continue
            if kind == "ossfuzz" and self.mapping is not None:  # canonical as `canonicalize_keys` makes it
                value = str(self.mapping.canonical(int(raw)))
            for bench_item in self.index.get((kind, value), ()):
                found.setdefault(row, {}).setdefault(bench_item, set()).add(kind)
        order = {name: i for i, name in enumerate(self.benches)}
        matches: list[list[KeyMatch]] = [[] for _ in ids]
        for row, items in found.items():
            # a pair counts when it shares a task key; `repo_pr_exact` (the repo as written) only refines `repo_pr`
            matches[row] = [KeyMatch(bench, bench_id, tuple(sorted(kinds)))
                            for (bench, bench_id), kinds in sorted(items.items(), key=lambda kv: (order[kv[0][0]],
                                                                                                kv[0][1]))
                            if kinds & TASK_SET]
        return matches


def bench_keys(benches: str | os.PathLike | Dataset | list[str | os.PathLike | Dataset], *,
               data: Mapping[str, str | os.PathLike] | None = None, columns: Mapping[str, str] | None = None,
               split: str | None = None, id_scheme: str | None = None) -> BenchKeys:
    """The benchmarks' task keys, read once (names, paths or Datasets, as `compare` takes them; `columns`
    for those read by their columns). `id_scheme`: how the ids later matched are read when no specific form
    recognises them (`overlap.ids.recognisers.RECOGNISERS`: `ossfuzz` reads a trailing issue number)."""
    if id_scheme is not None and id_scheme not in RECOGNISERS:
        raise InputError(f"id_scheme {id_scheme!r}: use one of {', '.join(RECOGNISERS)}")
    args = _dataset_args(benches, "benches")
    if not args:
        raise InputError("benches: give at least one benchmark")
    paths = data_paths(data)
    spec = GenericColumns.of(dict(columns)) if columns else None
    datasets = _read_datasets(args, paths, spec, split)
    # loaded when a benchmark holds OSS-Fuzz keys; without any, an OSS-Fuzz id can match nothing here
    mapping, _ = canonical_ossfuzz_ids(datasets, paths)
    index: dict[tuple[str, str], list[tuple[str, str]]] = {}
    counts: dict[str, int] = {}
    for dataset in datasets:
        keys: pd.DataFrame = dataset.keys[dataset.keys["kind"] != "base"]  # a shared base alone is no task
        for item_id, kind, value in sorted(set(zip(keys["item_id"].astype(str), keys["kind"], keys["value"].astype(str),
                                                   strict=True))):
            index.setdefault((kind, value), []).append((dataset.name, item_id))
        counts[dataset.name] = len(keys)
    return BenchKeys([d.name for d in datasets], index, mapping, id_scheme, counts)
