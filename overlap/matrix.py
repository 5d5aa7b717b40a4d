"""Every benchmark against every other: `matrix([...]) -> MatrixResult`.

For each two benchmarks (skipping a benchmark against its own subset, e.g. SWE-bench vs SWE-bench Verified)
the key join gives pairs, classified into pair kinds as in a compare (`overlap.swe_report`). The result
holds, per ordered pair (bench, other), how many of bench's items are in a counted pair with other and
their share; per unordered pair, the pair kinds and the repos both hold; per benchmark, its items found in
at least one / at least two other benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import InputError, OverlapError
from .join import join
from .model import Dataset
from .swe_report import COUNTED_KINDS, PAIR_KINDS, classify_pairs

MATRIX_PAIR_COLUMNS = ("a", "b", "a_id", "b_id", "kinds", "match_type", "a_raw", "b_raw")


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _family(dataset: Dataset) -> str:
    """The registered dataset a loaded set belongs to (a Verified set belongs to its full set)."""
    from .sources.registry import get_spec

    name = dataset.provenance.adapter or dataset.name
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


@dataclass
class MatrixResult:
    datasets: list[Dataset]
    pairs: pd.DataFrame  # classified pairs of every compared two (a, b in argument order); stages add columns
    cells: pd.DataFrame  # one row per ordered (bench, other)
    couples: pd.DataFrame  # one row per unordered (a, b): pair kinds, shared repos, skipped
    shared_repos: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)

    def families(self) -> dict[str, str]:
        """Each benchmark's family: benchmarks joined by an own-subset couple (SWE-PolyBench and its Verified
        subset) share one, named after the first of them in argument order."""
        family = {d.name: d.name for d in self.datasets}
        skipped = self.couples[self.couples["skipped"] != ""] if len(self.couples) else self.couples
        for a, b in zip(skipped.get("a", []), skipped.get("b", []), strict=True):
            old, new = family[b], family[a]
            family = {name: new if fam == old else fam for name, fam in family.items()}
        return family

    def bench_rows(self) -> list[dict[str, Any]]:
        """Per benchmark: items, items found in at least one / two other benchmarks (counted pairs). A
        benchmark and its own subset are one other benchmark, never two (`families`)."""
        counted = self.pairs[self.pairs["counted"].fillna(False).astype(bool)] if len(self.pairs) else self.pairs
        family = self.families()
        others: dict[str, dict[str, set[str]]] = {d.name: {} for d in self.datasets}
        for a, b, a_id, b_id in zip(counted.get("a", []), counted.get("b", []), counted.get("a_id", []),
                                    counted.get("b_id", []), strict=True):
            others[a].setdefault(a_id, set()).add(family[b])
            others[b].setdefault(b_id, set()).add(family[a])
        rows = []
        for dataset in self.datasets:
            n = len(dataset.items)
            found = others[dataset.name]
            one = sum(1 for v in found.values() if len(v) >= 1)
            two = sum(1 for v in found.values() if len(v) >= 2)
            rows.append({"bench": dataset.name, "items": n, "in_ge1_other": one, "share_ge1_other": _share(one, n),
                         "in_ge2_other": two, "share_ge2_other": _share(two, n)})
        return rows

    def summary(self) -> dict[str, Any]:
        """JSON-ready and deterministic: everything the matrix shows, plus provenance."""
        cells = self.cells.to_dict(orient="records")
        couples = []
        for row in self.couples.to_dict(orient="records"):
            row = dict(row)
            row["shared_repo_names"] = self.shared_repos.get((row["a"], row["b"]), [])
            couples.append(row)
        from .outputs.jsonout import to_jsonable, versioned

        return to_jsonable(versioned("matrix", {
            "parameters": self.parameters,
            "benches": self.bench_rows(),
            "cells": cells,
            "couples": couples,
            "pair_kinds": {"counted": list(COUNTED_KINDS),
                           "reported_not_counted": [k for k in PAIR_KINDS if k not in COUNTED_KINDS]},
            "datasets": [
                {"name": d.name, "items": int(len(d.items)), "problems": [p.__dict__ for p in d.problems],
                 "provenance": d.provenance.to_dict(), "family": self.families()[d.name]}
                for d in self.datasets
            ],
        }))


def _load_all(benches: list[str | Dataset], data: dict[str, Path] | None) -> list[Dataset]:
    from .sources.load import load_dataset
    from .sources.registry import parse_selection

    for bench in benches:  # every name is checked before anything is loaded
        if not isinstance(bench, Dataset):
            parse_selection(bench)
    loaded: list[Dataset] = []
    for bench in benches:
        dataset = bench if isinstance(bench, Dataset) else load_dataset(bench, data)
        if not isinstance(bench, Dataset) and any(d.name == dataset.name for d in loaded):
            dataset.name = bench  # the same dataset selected twice (e.g. NAME and NAME:SUBSET): keep them apart
            dataset.provenance.name = bench
        loaded.append(dataset)
    names = [d.name for d in loaded]
    if len(set(names)) != len(names):
        raise InputError(f"the same dataset is named twice ({', '.join(names)}); give distinct benchmarks")
    return loaded


def _repos(dataset: Dataset) -> set[str]:
    if "project" not in dataset.items.columns:
        return set()
    return set(dataset.items["project"].dropna().astype(str))


def matrix(benches: list[str | Dataset], *, data: dict[str, Path] | None = None) -> MatrixResult:
    """Join every benchmark with every other (names as in `overlap datasets`, or loaded Datasets).

    A benchmark is not compared with its own subset (see `is_own_subset`); such couples are listed as
    skipped. Pairs are classified into pair kinds (`overlap.swe_report.classify_pairs`); the shares count
    counted kinds only.
    """
    if len(benches) < 2:
        raise InputError("give at least two benchmarks to compare with each other")
    datasets = _load_all(list(benches), data)
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
        parameters={"benches": [d.name for d in datasets]},
    )


# --- renderings -----------------------------------------------------------------------------------------


def matrix_rows(result: MatrixResult) -> tuple[list[str], list[list[str]]]:
    """The main table: one row per benchmark, one column per other benchmark (`found/items (share)`),
    then items in at least one / two other benchmarks."""
    names = [d.name for d in result.datasets]
    header = ["bench", "items", *names, ">=1 other", ">=2 others"]
    cells = {(c["bench"], c["other"]): c for c in result.cells.to_dict(orient="records")}
    rows = []
    for bench in result.bench_rows():
        row = [bench["bench"], str(bench["items"])]
        for other in names:
            cell = cells.get((bench["bench"], other))
            if cell is None:
                row.append("-")
            elif cell["skipped"]:
                row.append("subset")
            else:
                row.append(f"{cell['bench_items_found']} ({cell['share']:.1%})")
        row.append(f"{bench['in_ge1_other']} ({bench['share_ge1_other']:.1%})")
        row.append(f"{bench['in_ge2_other']} ({bench['share_ge2_other']:.1%})")
        rows.append(row)
    return header, rows


def couple_rows(result: MatrixResult) -> tuple[list[str], list[list[str]]]:
    header = ["a", "b", *PAIR_KINDS, "shared repos", "note"]
    rows = []
    for couple in result.couples.to_dict(orient="records"):
        rows.append([couple["a"], couple["b"], *[str(couple[f"pairs_{k}"]) for k in PAIR_KINDS],
                     str(couple["shared_repos"]), couple["skipped"] and "skipped: own subset"])
    return header, rows


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def render_matrix(result: MatrixResult, fmt: str) -> str | None:
    """Text for stdout in `fmt` (json, csv, md), or None for the rich table."""
    from .outputs.report import dumps_json, to_csv_text

    if fmt == "json":
        return dumps_json(result.summary())
    if fmt == "csv":
        return to_csv_text(result.cells)
    if fmt == "md":
        note = ("Cells: bench items (row) in a counted pair with the column's benchmark, and their share. "
                "Counted kinds: " + ", ".join(COUNTED_KINDS) + ".\n\n")
        return _markdown(*matrix_rows(result)) + "\n" + note + _markdown(*couple_rows(result))
    return None


def write_matrix_report(result: MatrixResult, out: Path) -> Path:
    """summary.json, cells.csv, couples.csv and pairs.csv in `out`, written atomically."""
    from .outputs.atomic import atomic_folder
    from .outputs.report import dumps_json, to_csv_text

    with atomic_folder(out, command="matrix") as tmp:
        (tmp / "summary.json").write_text(dumps_json(result.summary()), encoding="utf-8")
        (tmp / "cells.csv").write_text(to_csv_text(result.cells), encoding="utf-8")
        (tmp / "couples.csv").write_text(to_csv_text(result.couples), encoding="utf-8")
        (tmp / "pairs.csv").write_text(to_csv_text(result.pairs), encoding="utf-8")
    return Path(out)
