"""`compare(train, benches)`: the key join, then the stages that add evidence, chance baselines and the text
check to the same result (`filter_train` and `keep_mask`, which run it to decide a split: `overlap.api.filtering`)."""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..evidence.attach import FIX_JOIN_MODES, attach_evidence
from ..evidence.swe_pairs import classify_result, swe_sections
from ..ids.ossfuzz import OssFuzzMapping, canonicalize_keys
from ..join import duplicates, join, shared_keys
from ..keyjoin import stream_train
from ..model import Dataset
from ..progress import stage
from ..results import BenchComparison, CompareResult
from ..sources.formats.batches import open_batches
from ..sources.formats.in_memory import MemoryInput, is_in_memory, memory_input
from ..sources.load import check_pool, data_paths, load_dataset, load_identity
from ..sources.registry.registry import is_registered
from ..sources.rows.columns import GenericColumns
from ..sources.rows.generic import read_generic
from ..stats.attach import attach_baselines
from ..text.api import ngram_sizes
from ..text.attach import attach_text, text_field
from ..text.ngram.engines import check_engine


def canonical_ossfuzz_ids(datasets: list[Dataset], data: dict[str, Path],
                          mapping: OssFuzzMapping | None = None):
    """Every dataset's OSS-Fuzz keys translated to canonical (new-tracker) ids, in place, whenever any of
    them has one: an old id on one side and its new id on the other are the same bug. The mapping (`arvo`)
    is loaded only then, unless given. Returns (mapping or None, its provenance or None)."""
    if not any((d.keys["kind"] == "ossfuzz").any() for d in datasets):
        return mapping, None
    provenance = None
    if mapping is None:
        mapping, provenance = load_identity("arvo", data)
    for dataset in datasets:
        dataset.keys = canonicalize_keys(dataset.keys, mapping)
    return mapping, provenance


def _label(dataset: Dataset) -> str:
    subsets = dataset.provenance.subsets
    return f"{dataset.name}:{','.join(subsets)}" if subsets else dataset.name


def _registered(arg: Any) -> bool:
    """Whether a dataset argument is a registered name (never an in-memory dataset or a loaded Dataset)."""
    return isinstance(arg, str) and is_registered(arg)


def _read_datasets(args: list[str | Dataset | MemoryInput], data: dict[str, Path], columns: GenericColumns | None,
                   split: str | None, skip_first: bool = False) -> list[Dataset]:
    """Each dataset argument read: a Dataset as given, a registered name through its declaration, anything
    else (a file, folder, glob, Hub id or in-memory dataset) by the named `columns` when given. Columns that no
    argument uses are refused: an option that silently does nothing would be a wrong answer waiting to happen.
    `skip_first`: the first argument is checked but not read (a training set that is streamed)."""
    if columns is not None and all(isinstance(a, Dataset) or _registered(a) for a in args):
        raise InputError(f"the id column {columns.id!r} names a column of your own files or Hub datasets, and every "
                         "dataset given is registered (its columns are declared); leave the column options out")
    out = []
    for arg in args[1:] if skip_first else args:
        if isinstance(arg, Dataset):
            out.append(arg)
        elif isinstance(arg, MemoryInput) and columns is None:
            raise InputError(f"{arg.label}: an in-memory dataset is read by its columns; name its id column "
                             "(id_column=NAME, or columns={'id': NAME, ...})")
        elif columns is not None and not _registered(arg):
            out.append(read_generic(arg, columns, split=split))
        elif columns is None and not is_registered(arg) and not Path(arg).exists() and "/" in arg:
            raise InputError(f"{arg}: not a registered dataset; to read it by its columns, name its id column "
                             "(CLI: --id-column NAME; library: id_column=NAME), or declare it (--registry FILE)")
        else:
            out.append(load_dataset(arg, data))
    return out


def _dataset_args(value: Any, what: str) -> list[str | Dataset | Any]:
    """One dataset (name, path, Dataset or in-memory dataset) or a list of them."""
    if isinstance(value, (str, os.PathLike, Dataset)) or is_in_memory(value):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{what}: expected a dataset name, a path or a list of them, got {type(value).__name__}")
    out: list[str | Dataset] = []
    for item in value:
        if isinstance(item, os.PathLike):
            item = os.fspath(item)
        if not isinstance(item, (str, Dataset)) and not is_in_memory(item):
            raise InputError(f"{what}: expected a dataset name, a path, a Dataset or an in-memory dataset (a "
                             "datasets.Dataset, a DataFrame, a pyarrow Table, …), got {type(item).__name__}")
        out.append(item)
    return out


def _in_memory(args: list[Any], split: str | None) -> list[Any]:
    """`args` with each in-memory dataset wrapped to be read as a file (`overlap.sources.formats.in_memory`), `split`
    picking a DatasetDict's split; two of one type are told apart by their place (`pandas.DataFrame-2`), as the
    result names every dataset once."""
    out: list[Any] = []
    seen: dict[str, int] = {}
    for arg in args:
        if is_in_memory(arg):
            arg = memory_input(arg, split)
            seen[arg.label] = seen.get(arg.label, 0) + 1
            if seen[arg.label] > 1 and not arg.named:  # a name the caller gave twice is refused as such
                arg.label = f"{arg.label}-{seen[arg.label]}"
        out.append(arg)
    return out



def _text_pairs(text: Any) -> list[tuple[str, str]] | None:
    """`text` as (train field, bench field) pairs: None = each dataset's default, [] or "none" = off; items
    are "TRAIN_FIELD:BENCH_FIELD" strings or 2-tuples."""
    if text is None:
        return None
    if isinstance(text, str):
        text = [] if text == "none" else [text]
    if not isinstance(text, (list, tuple)):
        raise InputError(f"text: expected a list of 'TRAIN_FIELD:BENCH_FIELD' strings, got {type(text).__name__}")
    out = []
    for value in text:
        if isinstance(value, str):
            train_field, sep, bench_field = value.partition(":")
            pair = (train_field.strip(), bench_field.strip()) if sep else None
        elif isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, str) for v in value):
            pair = (value[0].strip(), value[1].strip())
        else:
            pair = None
        if pair is None or not all(pair):
            raise InputError(f"text {value!r}: expected 'TRAIN_FIELD:BENCH_FIELD' or (train_field, bench_field), "
                             "e.g. 'prompt:description'")
        out.append(pair)
    return out


def _columns_arg(columns: Any) -> dict[str, Any] | None:
    """`columns` as a dict: a string or a list would be read by `dict()` as pairs of characters."""
    if columns is None:
        return None
    if not isinstance(columns, Mapping):
        raise InputError(f"columns: expected a dict {{role: column name}}, e.g. {{'id': 'instance_id', 'repo': "
                         f"'repo'}}, got {type(columns).__name__}")
    return dict(columns)


def _whole(value: Any, what: str, none_ok: bool = False) -> None:
    """Refuse a count or seed that is no whole number (a text, a boolean), before the stages that use it."""
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{what}: expected a whole number{' or None' if none_ok else ''}, got {value!r}")


def compare(
    train: str | os.PathLike | Dataset,
    benches: str | os.PathLike | Dataset | list[str | os.PathLike | Dataset],
    *,
    data: Mapping[str, str | os.PathLike] | None = None,
    mapping: OssFuzzMapping | None = None,
    pool: str | None = "auto",
    strata: str | None = "project",
    permutations: int = 100_000,
    seed: int = 0,
    reference: str | None = None,
    reference_range: bool = False,
    evidence: bool = True,
    fix_join: str = "auto",
    text: str | list[str | tuple[str, str]] | None = None,
    ngram_ns: int | tuple[int, ...] = (13, 8),
    boilerplate_threshold: int | None = None,
    id_column: str | None = None,
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    workers: int | None = None,
    stream: bool = True,
) -> CompareResult:
    """Join a training set with one or more benchmarks on normalised source identities.

    Datasets are given as names/specs (see `overlap datasets`), already-loaded `Dataset`s, or in-memory datasets
    (a `datasets.Dataset`, `DatasetDict` with `split`, `IterableDataset`, pandas or polars DataFrame, pyarrow
    Table, RecordBatchReader or pyarrow dataset; `overlap.named` names one), read by `id_column` / `columns` as
    one file is and streamed as one (`overlap.sources.formats.in_memory`). `data` maps
    registered names to local folders/files. The OSS-Fuzz mapping is loaded (`arvo`) only when a side
    has OSS-Fuzz ids and none is passed.

    Chance baselines (`overlap.stats`): `pool` ("auto": ARVO-Meta for OSS-Fuzz sets, skipped with a reason
    when it cannot be had; a name/path; None) stratified by the pool column `strata`, cross-checked by
    `permutations` seeded draws; `reference` (e.g. `multi-swe-rl-discarded`) adds the SWE inclusion test.

    Evidence (`overlap.evidence`, with `evidence`): fix relation and crash grade of every pair (per-item
    files fetched only for the pairs that need them), pairs found by the same fix alone (`fix_join`: auto =
    OSS-Fuzz/CVE sets, on, off), related bugs from the pool's records.

    Text (`overlap.text`): for each (train field, bench field) in `text` (None: each dataset's default
    text; []: off), what an n-gram filter (`ngram_ns`) flags among the id-matched and the rest, and the
    pairs' longest shared runs. The scan runs on `engine` ("local", or "ray": a Ray cluster at `ray_address`,
    default `RAY_ADDRESS`, else a local Ray) with `workers` processes or actors (None: chosen from the input
    size), as in `overlap.text.text_check`; every engine gives the same flags.

    Any dataset as training set (`overlap.sources.rows.generic`): with `id_column` (dotted for nested fields) or
    `columns` ({"id": …, "repo": …, "pr": …, "base": …, "patch": …, "text": …, "project": …, "fix": …,
    "cve": …, "scheme": …}), `train` is read as a local file, folder, glob or Hub dataset
    `owner/name[:config][@revision]` (`split` picks the Hub split or files), its ids recognised from the values.
    Such a training set is streamed against the benchmarks' keys (`overlap.keyjoin`: memory is the
    benchmarks and a batch, never a row per training row; the key scan runs on `engine` too) unless its columns
    name a text or a patch (the text check and the fix join read every row's), a `reference` is given, or
    `stream` is False; the result is the same either way.
    """
    if fix_join not in FIX_JOIN_MODES:
        raise InputError(f"fix_join {fix_join!r}: use one of {', '.join(FIX_JOIN_MODES)}")
    check_engine(engine)  # before the slow stages
    data = data_paths(data)
    if isinstance(train, (list, tuple)):
        raise InputError("train: give one training set (a name, a path or a Dataset), not a list")
    (train,) = _dataset_args(train, "train")
    benches = _dataset_args(benches, "benches")
    train, *benches = _in_memory([train, *benches], split)
    if engine != "local" and isinstance(train, MemoryInput):
        raise InputError(f"engine {engine!r}: an in-memory training set is scanned in this process (engine='local'); "
                         "to run on Ray, write it to parquet files and give their folder")
    text = _text_pairs(text)
    ngram_ns = ngram_sizes(ngram_ns)
    _whole(seed, "seed")
    _whole(workers, "workers", none_ok=True)
    _whole(boilerplate_threshold, "boilerplate_threshold", none_ok=True)
    if mapping is not None and not isinstance(mapping, OssFuzzMapping):
        raise InputError(f"mapping: expected an OssFuzzMapping (or None: loaded from 'arvo'), got "
                         f"{type(mapping).__name__}; to use a mapping file, give data={{'arvo': PATH}}")
    if pool is not None and not isinstance(pool, (str, os.PathLike)):
        raise InputError(f"pool: expected 'auto', a pool name or path, or None, got {type(pool).__name__}")
    check_pool(pool)
    if not benches:
        raise InputError("give at least one benchmark to compare with")
    columns = _columns_arg(columns)
    generic = GenericColumns.of(columns or {}, id_column=id_column) if id_column is not None or columns else None
    if split is not None and generic is None:  # nothing is read by its columns: the split would pick nothing
        raise InputError(f"split {split!r}: picks the split of a dataset read by its columns (CLI: --id-column; "
                         "library: id_column=...); a registered dataset's files are declared, so leave it out")
    stage("reading the datasets")
    streamed = stream and _streams(train, generic, reference)
    train_dups = mapping_provenance = None
    if streamed:
        # The training set is found before anything is read or fetched for the others: a wrong path says so,
        # not that a benchmark or the mapping could not be downloaded (nothing is read or hashed here).
        open_batches(train, [generic.id], split=split, hash_files=False)
        bench_ds = _read_datasets([train, *benches], data, generic, split, skip_first=True)
        stage("joining ids")
        train_ds, train_dups, mapping, mapping_provenance = _streamed_train(train, generic, split, bench_ds, data,
                                                                            mapping, engine, ray_address, workers)
    else:
        if engine != "local" and text == []:  # an engine asked for with nothing to run on it: said, not ignored
            raise InputError(f"engine {engine!r}: nothing in this compare runs on it (it runs the text check, and "
                             "the key scan of a training set read by its columns); drop the engine or turn the "
                             "text check on")
        train_ds, *bench_ds = _read_datasets([train, *benches], data, generic, split)
    names = [train_ds.name] + [b.name for b in bench_ds]
    if len(set(names)) != len(names):
        raise InputError(f"the same dataset is named twice ({', '.join(names)}); compare distinct datasets")
    if generic is not None:
        _named_columns_filled(generic, [ds for arg, ds in zip([train, *benches], [train_ds, *bench_ds], strict=True)
                                        if not isinstance(arg, Dataset) and not _registered(arg)])
    if text:
        for train_field, bench_field in text:  # fail before the slow stages, in the library's words
            text_field(train_ds, train_field, f"text '{train_field}:{bench_field}'")
            for b in bench_ds:
                text_field(b, bench_field, f"text '{train_field}:{bench_field}'")
    if not streamed:
        stage("joining ids")
        mapping, mapping_provenance = canonical_ossfuzz_ids([train_ds, *bench_ds], data, mapping)
    result = id_comparison(train_ds, bench_ds, train_duplicates=train_dups, mapping=mapping,
                           mapping_provenance=mapping_provenance,
                           # labels: the datasets as selected (`cybergym:arvo`), for titles; train/benches stay
                           # the names
                           parameters={"train": names[0], "benches": names[1:],
                                       "labels": [_label(d) for d in (train_ds, *bench_ds)]})
    stage("chance baselines")
    attach_baselines(result, data=data, pool=pool, strata=strata, permutations=permutations, seed=seed,
                     reference=reference, reference_range=reference_range)
    if evidence:
        stage("evidence (fixes, crashes)")
        attach_evidence(result, fix_join=fix_join, seed=seed)
    if text != []:
        stage("text check")
        attach_text(result, text, ns=tuple(ngram_ns), boilerplate_threshold=boilerplate_threshold, workers=workers,
                    engine=engine, ray_address=ray_address)
    return result


def _named_columns_filled(columns: GenericColumns, datasets: list[Dataset]) -> None:
    """A column named beside the id (repo, PR, base, …) that no file of the datasets read by the columns has is
    refused: misspelt, it would silently count every row as missing its repo or base, and turn pairs at the same
    base commit into pairs of unknown base. (A column that is there with every cell empty is counted as such.)"""
    filled = set().union(*(getattr(ds, "recognition", None).found_columns for ds in datasets
                           if getattr(ds, "recognition", None) is not None))
    for role in ("repo", "pr", "base", "patch", "text", "project", "fix", "cve"):
        column = getattr(columns, role)
        if column and column not in filled and datasets:
            read = ", ".join(ds.name for ds in datasets)
            raise InputError(f"{read}: no file has a column '{column}' (--{role}-column); check its name (dotted "
                             "for nested fields: extra_info.repo), or leave the option out")


def _streams(train: Any, generic: GenericColumns | None, reference: str | None) -> bool:
    """Is the training set read by columns, with nothing that needs every row's text (see `compare`)?"""
    return (generic is not None and (isinstance(train, MemoryInput) or (isinstance(train, str)
                                                                      and not is_registered(train)))
            and generic.text is None and generic.patch is None and reference is None)


def _streamed_train(train: str, columns: GenericColumns, split: str | None, benches: list[Dataset],
                    data: dict[str, Path], mapping: OssFuzzMapping | None, engine: str, ray_address: str | None,
                    workers: int | None):
    """(train Dataset, its duplicates, mapping, mapping provenance): the training set streamed against the
    benchmarks' keys, OSS-Fuzz ids made canonical as `canonical_ossfuzz_ids` makes them (the mapping loaded
    when a side has one: before the scan for a benchmark's, at the first training one otherwise)."""
    loaded: list = []

    def load():
        found, provenance = load_identity("arvo", data)
        loaded.append(provenance)
        return found

    if mapping is None and any((b.keys["kind"] == "ossfuzz").any() for b in benches):
        mapping = load()
    for bench in benches if mapping is not None else ():
        bench.keys = canonicalize_keys(bench.keys, mapping)
    train_ds, dups = stream_train(train, columns, benches, split=split, mapping=mapping,
                                  mapping_for=load if mapping is None else None, engine=engine,
                                  ray_address=ray_address, workers=workers)
    if mapping is None and train_ds.mapping is not None:  # loaded by the training side: the benches have no
        mapping = train_ds.mapping  # OSS-Fuzz key, but are typed as canonical keys are
        for bench in benches:
            bench.keys = canonicalize_keys(bench.keys, mapping)
    return train_ds, dups, mapping, (loaded[0] if loaded else None)


def id_comparison(train: Dataset, benches: list[Dataset], *, train_duplicates=None, bench_duplicates=None,
                  mapping: OssFuzzMapping | None = None, mapping_provenance=None,
                  parameters: dict[str, Any] | None = None, sections: bool = True) -> CompareResult:
    """The id stage of a compare (keys already canonical): the normalised and the plain join, shared keys,
    duplicates (given when already computed) and every pair's kind, the counted pairs kept as the overlap and
    the reported ones in `related`. `compare` and the atlas both build their cells with it (the atlas without
    the SWE report sections, `sections=False`: its cells need the counts alone)."""
    comparisons = [
        BenchComparison(bench=b, pairs=join(train, b, on="value"), plain_pairs=join(train, b, on="raw"),
                        shared=shared_keys(train, b),
                        duplicates=duplicates(b) if bench_duplicates is None else bench_duplicates[i])
        for i, b in enumerate(benches)
    ]
    result = CompareResult(train=train, benches=comparisons,
                           train_duplicates=duplicates(train) if train_duplicates is None else train_duplicates,
                           mapping=mapping, mapping_provenance=mapping_provenance, parameters=dict(parameters or {}))
    _attach_pair_kinds(result, sections=sections)
    return result


def _attach_pair_kinds(result: CompareResult, sections: bool = True) -> None:
    """Classify every pair by its own key kinds (same OSS-Fuzz issue, same PR at the same base, same base
    and another PR, …), keep the counted ones as the overlap and move the reported-only ones to `related`;
    add the SWE sections when a side has pull-request keys."""
    classify_result(result)
    swe = swe_sections(result) if sections else {}
    if swe:
        per_bench = swe.pop("benches")
        result.sections["swe"] = swe
        for comp, block in zip(result.benches, per_bench, strict=True):
            comp.sections["swe"] = block
    for comp in result.benches:
        counted = comp.pairs["counted"].fillna(True).astype(bool)
        comp.related = comp.pairs[~counted].reset_index(drop=True)
        comp.pairs = comp.pairs[counted].reset_index(drop=True)
