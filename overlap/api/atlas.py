"""`atlas(names)`: every dataset against every benchmark among them, one cell per (train, bench).

A cell is what `compare TRAIN BENCH` finds by ids (the same `id_comparison`, so the numbers are the same):
bench items matched, their share, what a plain id join finds, bench items by pair kind, per subset, the pairs
reported beside the overlap, and the chance baseline where a pool fits the cell. A benchmark is paired with
every other dataset, benchmarks included, never with itself or its own subset (as the matrix skips them).

Benchmarks, and training sets that need every row, are read whole; a training set read by its columns alone
is streamed once against the benchmarks its uncached cells need (`atlas_stream`), as `compare` streams a
user's file, so memory is the benchmarks and one training set's matched rows.

Incremental (`atlas_cache`): a dataset read whole is cached under its fingerprint (its declaration, the pinned
Hub revision, or the sha256 of every local file it is read from), a streamed one's counts likewise, and each
cell under the two fingerprints and what else it depends on (the OSS-Fuzz mapping when a side has OSS-Fuzz
ids, the pool when both have); a re-run reads and joins only what changed and says which cells it recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .. import __version__
from ..atlas_model import CELL_SCHEMA, PAIR_SCHEMA, AtlasEntry, AtlasResult
from ..errors import HubUnavailableError, InputError
from ..join import duplicates
from ..model import COUNTED_PAIR_KINDS, Dataset
from ..progress import stage
from ..sources.load import StreamableSource, check_pool, load_dataset, load_pool, streamable_source
from ..sources.registry.registry import all_specs, get_spec, is_known, parse_selection
from ..stats.wiring import cyber_baselines
from ..text.ngram.engines import check_engine
from .atlas_cache import cache_folder, fingerprint, load_cell, load_keys, save_cell, save_keys
from .atlas_memory import memory_columns, memory_entry, role_of, split_names
from .atlas_stream import RunMapping, StreamedSide
from .atlas_text import CellText
from .compare import data_paths, id_comparison
from .matrix import is_own_subset, registered_family

ATLAS_ROLES = ("training", "benchmark", "reference", "dataset")


def _read(name: str, data: dict[str, Path], cache: Path) -> tuple[Dataset, str | None, bool]:
    """A dataset read whole: (dataset, fingerprint, read from the cache)."""
    fp = fingerprint(name, data)
    folder = cache / "keys" / fp if fp else None
    if folder is not None:
        cached = load_keys(folder)
        if cached is not None:
            return cached, fp, True
    dataset = load_dataset(name, data)
    if folder is not None:
        save_keys(folder, dataset)
    return dataset, fp, False


def atlas_names(names: list[str] | None) -> list[str]:
    """The datasets of an atlas: `names` (each a registered name, never a path), or every registered one."""
    if isinstance(names, (str, os.PathLike)):  # one name alone is one dataset, never its characters
        names = [names]
    if names is not None and not isinstance(names, (list, tuple)):
        raise InputError(f"names: expected a list of dataset names, got {type(names).__name__}")
    names = [os.fspath(n) if isinstance(n, os.PathLike) else n for n in names or ()]
    if not all(isinstance(n, str) for n in names):
        raise InputError(f"names: expected dataset names (text), got {names!r}")
    for name in names:
        # a path that is no registered name (a folder named like one, e.g. ./cybergym, is that dataset) would be
        # looked up by its file name
        if parse_selection(name).path is not None and not is_known(name.split("@")[0].split(":")[0]):
            raise InputError(f"{name}: a local file or folder; the atlas maps datasets by name: declare it in a "
                             "--registry file (name, role, path and [columns] id), or point a registered name at "
                             f"it with --data NAME={name}")
    if names:
        return list(dict.fromkeys(names))
    return [s.name for s in all_specs() if s.role in ATLAS_ROLES]


def _spec(name: str):
    return get_spec(parse_selection(name).name)


def _json_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _streamed_sources(chosen: list[str], data: dict[str, Path]) -> dict[str, StreamableSource]:
    """The training sets of `chosen` to stream, by name: read by their columns alone
    (`streamable_source`), and of no benchmark's family (the own-subset check compares every item id)."""
    families = {registered_family(_spec(n).name) for n in chosen if _spec(n).role == "benchmark"}
    out = {}
    for name in chosen:
        spec = _spec(name)
        if spec.role != "benchmark" and registered_family(spec.name) not in families:
            source = streamable_source(name, data)
            if source is not None:
                out[name] = source
    return out


@dataclass
class CellBaselines:
    """The chance baselines of the cells. A cell runs one when both its sides have OSS-Fuzz ids (the pool is
    OSS-Fuzz bugs) and a pool can be had, else says why not: `auto` loads ARVO-Meta the first time a cell
    needs it (when it cannot be had, the cells that need it say why); a pool named explicitly must load and is
    loaded at once. A cell's baseline depends on nothing else, so its cache key takes `key(train, bench)`."""

    pool: str | None
    data: dict[str, Path]
    ids: RunMapping
    _loaded: Any = None
    _reason: str | None = None
    _tried: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.pool not in (None, "none", "auto"):
            self._get()

    def _get(self):
        if not self._tried:
            self._tried = True
            try:
                self._loaded = load_pool("arvo-meta" if self.pool == "auto" else self.pool, data=self.data)
            except HubUnavailableError as exc:
                if self.pool != "auto":
                    raise
                self._reason = str(exc)
        if self._loaded is not None and self.ids.mapping is not None and not self._loaded.mapped:
            self._loaded = self._loaded.canonicalize(self.ids.mapping)  # a cell that needs it has OSS-Fuzz ids
        return self._loaded

    def _why_not(self, train: Dataset, bench: Dataset) -> str | None:
        if self.pool in (None, "none"):
            return "no pool (--pool none)"
        if not (train.has_kind("ossfuzz") and bench.has_kind("ossfuzz")):
            return "a side has no OSS-Fuzz id (the pool is OSS-Fuzz bugs)"
        return None if self._get() is not None else self._reason

    def key(self, train: Dataset, bench: Dataset) -> str:
        why = self._why_not(train, bench)
        return _json_text(["not_run", why] if why else [self.pool, self._get().summary()])

    def columns(self, result) -> dict[str, Any]:
        why = self._why_not(result.train, result.benches[0].bench)
        if why:
            return {"baseline_status": f"not_run: {why}"}
        bench = result.benches[0].name
        block = cyber_baselines(result, self._get(), strata="project", permutations=0)["benches"][bench]
        uniform, within = block["uniform"], block.get("stratified") or {}
        return {"baseline_status": "ran", "baseline_observed": int(uniform["observed"]),
                "baseline_expected_uniform": float(uniform["expected"]),
                "baseline_expected_within_project": within.get("expected"),
                "baseline_p_uniform": uniform.get("p_upper"), "baseline_p_within_project": within.get("p_upper")}


def _cell(train: AtlasEntry, bench: AtlasEntry, train_dups: pd.DataFrame, bench_dups: pd.DataFrame,
          baselines: CellBaselines) -> tuple[dict, list[dict]]:
    """One cell's row and its pairs (counted and reported), by the id stage of a compare."""
    result = id_comparison(train.dataset, [bench.dataset], train_duplicates=train_dups,
                           bench_duplicates=[bench_dups], sections=False)
    comp = result.benches[0]
    block = result.summary()["benches"][0]
    by_kind = block["bench_items_by_pair_kind"]
    row: dict[str, Any] = {
        "bench_items": block["bench_items"], "bench_items_matched": block["bench_items_matched"],
        "share": block["bench_share"], "plain_matched": block["plain_join"]["bench_items_matched"],
        "train_items": train.dataset.item_count, "train_items_matched": block["train_items_matched"],
        "pairs": block["pairs"], "related_pairs": int(len(comp.related)),
        **{f"matched_{k}": int(by_kind.get(k, 0)) for k in COUNTED_PAIR_KINDS},
        "by_subset": _json_text(block.get("by_subset", {})), "skipped": "", "evidence": "ids",
    }
    row |= baselines.columns(result)
    pairs = []
    for frame in (comp.pairs, comp.related):
        # column by column (a pandas record per pair costs more than the cell's join)
        columns = {name: _values(frame, name) for name in PAIR_COLUMNS}
        for values in zip(*columns.values(), strict=True):
            record = dict(zip(PAIR_COLUMNS, values, strict=True))
            record["counted"] = bool(record["counted"]) if record["counted"] is not None else True
            pairs.append({"train": train.name, "bench": bench.name} | record)
    return row, pairs


PAIR_COLUMNS = ("train_id", "bench_id", "kinds", "match_type", "pair_kind", "counted", "train_raw", "bench_raw")


def _values(frame: pd.DataFrame, name: str) -> list[Any]:
    """A column's values as Python objects, None for a missing value or a column the frame does not have."""
    if name not in frame.columns:
        return [None] * len(frame)
    return [None if value is None or value is pd.NA or value != value else value  # NaN is not itself
            for value in frame[name].tolist()]


def _schema_order(row: dict[str, Any]) -> dict[str, Any]:
    """A cell's row in the column order of CELL_SCHEMA: a cached row (JSON, keys sorted) and a joined one are the
    same dict, so the pages written from them are the same bytes."""
    return {name: row[name] for name in CELL_SCHEMA.names if name in row}


def _entry(name: str, dataset: Dataset | None, fp: str | None, cached: bool) -> AtlasEntry:
    spec = _spec(name)
    revision = (dataset.provenance.revision if dataset is not None else None) or spec.revision
    return AtlasEntry(name=spec.name if dataset is None else dataset.name, role=spec.role, fingerprint=fp,
                      cached=cached, revision=revision, dataset=dataset)


@dataclass
class _Run:
    """What every cell of one atlas run shares: the cache folder, the mapping, the baselines, the text check,
    each dataset's duplicates table (counted once, as compare counts them) and what the run made."""

    folder: Path
    ids: RunMapping
    baselines: CellBaselines
    texts: CellText | None
    engine: dict[str, Any] = field(default_factory=dict)  # the streamed key scans' engine, as `stream_train`'s
    dups: dict[str, pd.DataFrame] = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)
    pairs: dict[tuple[str, str], pa.Table] = field(default_factory=dict)
    recomputed: list[tuple[str, str]] = field(default_factory=list)

    def cell_key(self, train: AtlasEntry, bench: AtlasEntry) -> str | None:
        if not (train.fingerprint and bench.fingerprint):
            return None
        parts = (train.fingerprint, bench.fingerprint, self.ids.cell_key(train.dataset, bench.dataset),
                 self.baselines.key(train.dataset, bench.dataset), __version__,
                 *([self.texts.cache_key()] if self.texts else []))
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def duplicates_of(self, entry: AtlasEntry) -> pd.DataFrame:
        if entry.name not in self.dups:
            self.dups[entry.name] = duplicates(entry.dataset)
        return self.dups[entry.name]


def _scan_for_uncached(train: AtlasEntry, side: StreamedSide, partners: list[AtlasEntry], run: _Run) -> dict:
    """Stream `side` against the benchmarks among `partners` whose cells with it are not cached (all of them
    when its counts are not cached: its cells' keys need them); not at all when every cell is. Returns the
    cached cells found, by bench name."""
    found = {b.name: load_cell(run.folder, run.cell_key(train, b), train.name, b.name) for b in partners} \
        if train.dataset is not None else {}
    wanted = [b for b in partners if found.get(b.name) is None]
    if wanted:
        stage(f"streaming {train.name} against {len(wanted)} benchmark(s)")
        side.scan([b.dataset for b in wanted], run.ids, run.folder, run.engine)
        train.dataset, train.cached = side.dataset, False
        train.revision = side.dataset.provenance.revision or train.revision
        run.dups[train.name] = side.duplicates
    return {name: cell for name, cell in found.items() if cell is not None}


def _train_cells(train: AtlasEntry, benches: list[AtlasEntry], side: StreamedSide | None, run: _Run) -> None:
    """Every cell of one training set, from the cache or made (and cached)."""
    partners = [b for b in benches if b is not train and not is_own_subset(train.dataset, b.dataset)] \
        if side is None else [b for b in benches if b is not train]  # a streamed set is of no bench's family
    found = _scan_for_uncached(train, side, partners, run) if side is not None else {}
    for bench in benches:
        if bench is train:
            continue
        head = {"train": train.name, "train_role": train.role, "train_revision": train.revision,
                "bench": bench.name, "bench_revision": bench.revision}
        if bench not in partners:
            run.rows.append(head | {"bench_items": int(len(bench.dataset.items)), "skipped": "own subset"})
            continue
        key = run.cell_key(train, bench)
        cached = found.get(bench.name) or load_cell(run.folder, key, train.name, bench.name)
        if cached is None:
            stage(f"joining {train.name} × {bench.name}")
            row, cell_pairs = _cell(train, bench, run.duplicates_of(train), run.duplicates_of(bench), run.baselines)
            if run.texts is not None:
                stage(f"text check {train.name} × {bench.name}")
                row |= run.texts.cell(train, bench, cell_pairs)
            cached = {"row": row, "pairs": cell_pairs}
            save_cell(run.folder, key, cached, train.name, bench.name)
            run.recomputed.append((train.name, bench.name))
        run.rows.append(_schema_order(head | cached["row"]))
        run.pairs[(train.name, bench.name)] = pa.Table.from_pylist(cached["pairs"], schema=PAIR_SCHEMA)
    if side is not None:  # its rows are done with: memory stays one training set's matched rows
        side.release()
        train.dataset = side.dataset
        run.dups.pop(train.name, None)


def atlas(names: list[Any] | None = None, *, data: Mapping[str, str | os.PathLike] | None = None,
          cache: str | os.PathLike | None = None, pool: str | None = "auto", text: bool = False,
          engine: str = "local", ray_address: str | None = None, workers: int | None = None,
          stream: bool = True, id_column: str | None = None, columns: Mapping[str, str] | None = None,
          split: str | None = None) -> AtlasResult:
    """Every dataset of `names` (default: every registered training set, benchmark and reference set,
    declarations added with `--registry` included) against every benchmark among them.

    `names` may hold in-memory datasets beside the registered names (a `datasets.Dataset`, `DatasetDict` with
    `split`, `IterableDataset`, a pandas or polars DataFrame, a pyarrow Table, RecordBatchReader or dataset),
    read by `id_column` / `columns` as `compare` reads them; `overlap.named(value, NAME, role=...)` names one
    and gives its role (a training set by default). Their cells are cached by their content
    (`atlas_memory`); an in-memory stream's are made anew each run.

    `data` maps registered names to local files or folders, as for `compare`. `cache` is the folder of the
    key and cell caches (default: the user cache, `OVERLAP_CACHE`). `pool` ("auto", a pool name or path,
    None) gives the cells with OSS-Fuzz ids on both sides their chance baselines. `text` adds each cell's
    n-gram text check, as `compare` runs it (`overlap.api.atlas_text`), on `engine` ("local" or "ray", at
    `ray_address`) with `workers`; its training sets are read whole. `stream` (default): a training set read
    by its columns alone is streamed against the benchmarks (`atlas_stream`); False reads it whole (the same
    cells).
    """
    data = data_paths(data)
    names, memories = split_names(names, split)
    generic = memory_columns(memories, id_column, columns)
    for what, value in (("cache", cache), ("pool", pool)):  # a number would fail as a path deep in a stage
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise InputError(f"{what}: expected a name or path (str or Path) or None, got {type(value).__name__}")
    check_pool(pool)
    check_engine(engine)  # before any dataset is read
    chosen = atlas_names(names) if names or not memories else []
    given = [*chosen, *(m.label for m in memories)]
    if not given:
        raise InputError("no datasets to map; name some, or register them (overlap datasets)")
    if not any(_spec(n).role == "benchmark" for n in chosen) and not any(role_of(m) == "benchmark"
                                                                         for m in memories):
        raise InputError(f"none of {', '.join(given)} is declared a benchmark (role = \"benchmark\"; in memory: "
                         "overlap.named(value, NAME, role=\"benchmark\")); the atlas pairs every dataset with the "
                         "benchmarks among them")
    if len({_spec(n).name for n in chosen}) + len(memories) < 2:
        raise InputError(f"{given[0]} alone makes no cell: the atlas pairs every dataset with the benchmarks among "
                         "them; name another dataset (or none, for every registered one)")
    folder = cache_folder(cache)
    streams_memory = stream and not text and generic is not None and generic.text is None and generic.patch is None
    if engine != "local" and streams_memory and any(role_of(m) != "benchmark" for m in memories):
        raise InputError(f"engine {engine!r}: an in-memory training set is scanned in this process (engine='local'); "
                         "to run on Ray, write it to parquet files and register their folder")
    taken = {_spec(n).name for n in chosen} | {n for n in chosen}
    for memory in memories:  # before any dataset is read
        if memory.label in taken:
            raise InputError(f"the same dataset is named twice ({memory.label}); give the in-memory one another name "
                             "(overlap.named(value, NAME))")
        taken.add(memory.label)
    # a pool named explicitly must load: a damaged one is said before any dataset is read, not after all of them
    pool_loaded = load_pool(pool, data=data) if pool not in (None, "none", "auto") else None
    streamed = _streamed_sources(chosen, data) if stream and not text else {}
    entries, sides = [], {}
    for name in chosen:
        if name in streamed:
            side = StreamedSide.of(streamed[name], fingerprint(name, data), folder)
            entries.append(_entry(name, side.dataset, side.fingerprint, cached=True))
            sides[entries[-1].name] = side
        else:
            stage(f"reading {name}")
            dataset, fp, cached = _read(name, data, folder)
            subsets = parse_selection(name).subsets
            if subsets:  # a subset is named as one (`cybergym:arvo`), as the matrix names it, never as the whole set
                dataset.name = dataset.provenance.name = f"{dataset.name}:{','.join(subsets)}"
            entries.append(_entry(name, dataset, fp, cached))
    for memory in memories:
        entry, side = memory_entry(memory, generic, folder, streams_memory)
        entries.append(entry)
        if side is not None:
            sides[entry.name] = side
    named = [e.name for e in entries]
    if len(set(named)) != len(named):  # their cells, pairs and pages would be told apart by name alone
        raise InputError(f"the same dataset is named twice ({', '.join(named)}); give distinct datasets")
    # by the name each is known by in the cells: a set and its subset (`cybergym`, `cybergym:arvo`) share one
    # registered name, and a set whose keys came from the cache is read again for its texts as it was named
    texts = CellText(data, dict(zip(named, chosen, strict=False)), engine=engine, ray_address=ray_address,
                     workers=workers) if text else None
    ids = RunMapping(data, [e.dataset for e in entries if e.name not in sides])
    if any(e.dataset is not None and e.dataset.has_kind("ossfuzz") for e in entries):
        ids.load()  # a streamed set not yet counted loads it at its first OSS-Fuzz id, if none has before
    if engine != "local" and not text and not sides:  # an engine asked for with nothing to run on it
        raise InputError(f"engine {engine!r}: nothing in this atlas runs on it (it runs the text check, and the "
                         "key scan of a training set read by its columns from local data); drop the engine or add "
                         "the text check")
    run = _Run(folder, ids, CellBaselines(pool, data, ids, _loaded=pool_loaded, _tried=pool_loaded is not None),
               texts,
               {"engine": engine, "ray_address": ray_address, "workers": workers})
    benches = [e for e in entries if e.role == "benchmark"]
    for train in entries:
        _train_cells(train, benches, sides.get(train.name), run)
    return AtlasResult(entries=entries, cells=run.rows, cell_pairs=run.pairs, recomputed=run.recomputed,
                       parameters={"datasets": [e.name for e in entries], "benches": [b.name for b in benches],
                                   "pool": pool, **({"text": texts.parameters()} if texts else {})},
                       mapping_provenance=ids.provenance)
