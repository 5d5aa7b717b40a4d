"""Every benchmark against every other: `matrix([...]) -> MatrixResult`.

For each two benchmarks (skipping a benchmark against its own subset, e.g. SWE-bench vs SWE-bench Verified)
the key join gives pairs, classified into pair kinds as in a compare (`overlap.evidence.swe_pairs`). The result
holds, per ordered pair (bench, other), how many of bench's items are in a counted pair with other and
their share; per unordered pair, the pair kinds and the repos both hold; per benchmark, its items found in
at least one / at least two other benchmarks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError, OverlapError
from ..evidence.swe_pairs import classify_pairs
from ..join import join
from ..model import PAIR_KINDS, Dataset
from ..results import MatrixResult
from ..sources.formats.in_memory import MemoryInput
from ..sources.load import load_dataset
from ..sources.registry.registry import get_spec, parse_selection
from ..sources.rows.columns import GenericColumns
from ..sources.rows.generic import read_generic
from .compare import _columns_arg, _dataset_args, _in_memory, canonical_ossfuzz_ids, data_paths

MATRIX_PAIR_COLUMNS = ("a", "b", "a_id", "b_id", "kinds", "match_type", "a_raw", "b_raw")


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _family(dataset: Dataset) -> str:
    """The registered dataset a loaded set belongs to (a Verified set belongs to its full set)."""
    return registered_family(dataset.provenance.adapter or dataset.name)


def registered_family(name: str) -> str:
    """The registered dataset the dataset registered as `name` belongs to (itself, or the set it declares
    itself a subset of); an unregistered name is its own."""
    try:
        spec = get_spec(name)
    except OverlapError:
        return name
    return spec.extra.get("subset_of") or spec.name


def is_own_subset(a: Dataset, b: Dataset) -> bool:
    """True when one of the two is a subset of the other: same registered family, and one's item ids are
    all in the other (SWE-bench test vs Verified, Multi-SWE-bench vs its `kotlin_ext` subset)."""
    if _family(a) != _family(b):
        return False
    ids_a, ids_b = set(a.items["item_id"]), set(b.items["item_id"])
    return ids_a <= ids_b or ids_b <= ids_a


def _load_all(benches: list[str | Dataset | MemoryInput], data: dict[str, Path] | None,
              columns: GenericColumns | None = None) -> list[Dataset]:
    for bench in benches:  # every name is checked before anything is loaded
        if isinstance(bench, MemoryInput) and columns is None:
            raise InputError(f"{bench.label}: an in-memory dataset is read by its columns; name its id column "
                             "(id_column=NAME, or columns={'id': NAME, ...})")
        if not isinstance(bench, (Dataset, MemoryInput)):
            parse_selection(bench)
    if columns is not None and not any(isinstance(b, MemoryInput) for b in benches):
        raise InputError(f"the id column {columns.id!r} names a column of an in-memory dataset, and none is given; "
                         "leave the column options out")
    loaded: list[Dataset] = []
    for bench in benches:
        if isinstance(bench, MemoryInput):
            loaded.append(read_generic(bench, columns))
            continue
        dataset = bench if isinstance(bench, Dataset) else load_dataset(bench, data)
        subsets = () if isinstance(bench, Dataset) else parse_selection(bench).subsets
        if subsets:  # a subset is named as one (`swe-bench-pro:hard`), never as the whole set it is part of
            dataset.name = dataset.provenance.name = f"{dataset.name}:{','.join(subsets)}"
        loaded.append(dataset)
    names = [d.name for d in loaded]
    if len(set(names)) != len(names):
        raise InputError(f"the same dataset is named twice ({', '.join(names)}); give distinct benchmarks")
    return loaded


def _repos(dataset: Dataset) -> set[str]:
    if "project" not in dataset.items.columns:
        return set()
    return set(dataset.items["project"].dropna().astype(str))


def matrix(benches: list[str | Dataset | Any], *, data: dict[str, Path] | None = None, id_column: str | None = None,
           columns: Mapping[str, str] | None = None) -> MatrixResult:
    """Join every benchmark with every other (names as in `overlap datasets`, loaded Datasets, or in-memory
    datasets (a `datasets.Dataset`, a DataFrame, a pyarrow Table, …) read by `id_column` or `columns`, as
    `compare` reads them).

    A benchmark is not compared with its own subset (see `is_own_subset`); such couples are listed as
    skipped. OSS-Fuzz ids are translated to canonical ids first (as in a compare), and pairs are classified into
    pair kinds by their own keys (`overlap.evidence.swe_pairs.classify_pairs`); the shares count counted kinds
    only, of every scheme.
    """
    benches = _in_memory(_dataset_args(benches, "benches"), None)  # one name alone is one benchmark
    if len(benches) < 2:
        raise InputError("give at least two benchmarks to compare with each other")
    data = data_paths(data)
    columns = _columns_arg(columns)
    generic = GenericColumns.of(columns or {}, id_column=id_column) if id_column is not None or columns else None
    datasets = _load_all(benches, data, generic)
    _, mapping_provenance = canonical_ossfuzz_ids(datasets, data)
    frames, cells, couples = [], [], []
    shared: dict[tuple[str, str], list[str]] = {}
    found: dict[tuple[str, str], int] = {}
    for i, a in enumerate(datasets):
        for b in datasets[i + 1:]:
            repos = sorted(_repos(a) & _repos(b))
            shared[(a.name, b.name)] = repos
            couple: dict[str, Any] = {"a": a.name, "b": b.name, "skipped": "", "shared_repos": len(repos)}
            if is_own_subset(a, b):
                couple["skipped"] = "own subset"
                couple |= {f"pairs_{k}": 0 for k in PAIR_KINDS} | {"pairs_counted": 0}
                couples.append(couple)
                continue
            pairs = classify_pairs(join(a, b), a, b)
            pairs = pairs.rename(columns={"train_id": "a_id", "bench_id": "b_id", "train_raw": "a_raw",
                                          "bench_raw": "b_raw"}).drop(columns=["bench"])
            pairs.insert(0, "b", b.name)
            pairs.insert(0, "a", a.name)
            frames.append(pairs)
            counted = pairs[pairs["counted"].fillna(False).astype(bool)]
            found[(a.name, b.name)] = counted["a_id"].nunique()
            found[(b.name, a.name)] = counted["b_id"].nunique()
            for kind in PAIR_KINDS:
                couple[f"pairs_{kind}"] = int((pairs["pair_kind"] == kind).sum())
            couple["pairs_counted"] = int(len(counted))
            couples.append(couple)
    by_name = {d.name: d for d in datasets}
    for a in datasets:
        for b in datasets:
            if a is b:
                continue
            key = (a.name, b.name)
            skipped = key not in found
            n = len(by_name[a.name].items)
            cells.append({"bench": a.name, "other": b.name, "bench_items": n, "skipped": skipped,
                          "bench_items_found": 0 if skipped else int(found[key]),
                          "share": 0.0 if skipped else _share(int(found[key]), n)})
    if frames:
        all_pairs = pd.concat(frames, ignore_index=True)
    else:
        all_pairs = pd.DataFrame({c: pd.Series([], dtype="string") for c in MATRIX_PAIR_COLUMNS})
        for column, dtype in (("pair_kind", "string"), ("counted", "boolean"), ("fix_relation", "string"),
                              ("fix_reason", "string")):
            all_pairs[column] = pd.Series([], dtype=dtype)
    return MatrixResult(
        datasets=datasets,
        pairs=all_pairs,
        cells=pd.DataFrame.from_records(cells),
        couples=pd.DataFrame.from_records(couples),
        shared_repos=shared,
        parameters={"benches": [d.name for d in datasets]}
        | ({"ossfuzz_mapping": mapping_provenance.to_dict()} if mapping_provenance is not None else {}),
    )


# --- renderings -----------------------------------------------------------------------------------------
