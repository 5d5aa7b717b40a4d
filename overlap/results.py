"""The results every layer shares: a compare (`CompareResult`, one `BenchComparison` per benchmark) and a
matrix (`MatrixResult`), with the summary each writes as summary.json.

They live low (beside `join`) so the stages that fill them (`stats`, `evidence`, `text`) and the writers
that read them (`outputs`) depend on this module, not on the entry points in `overlap.api` that build them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from typing import Any

import pandas as pd
import pyarrow as pa

from . import __version__
from .ids.ossfuzz import OssFuzzMapping, describe_ids
from .jsonout import to_jsonable, versioned
from .model import COUNTED_PAIR_KINDS, PAIR_KINDS, Dataset, Provenance


@dataclass(repr=False)
class BenchComparison:
    """One benchmark against the training set."""

    bench: Dataset
    pairs: pd.DataFrame  # normalised join
    plain_pairs: pd.DataFrame  # join on ids as written
    shared: pd.DataFrame  # distinct shared canonical keys
    duplicates: pd.DataFrame
    # Extra summary sections for this benchmark (evidence, text, baselines, SWE), merged into its block.
    sections: dict[str, Any] = field(default_factory=dict)
    # Pairs that are reported but not counted as overlap (e.g. same base commit, different PR).
    related: pd.DataFrame | None = None

    @property
    def name(self) -> str:
        return self.bench.name

    @property
    def items(self) -> int:
        """Benchmark items (tasks)."""
        return int(len(self.bench.items))

    @property
    def items_matched(self) -> int:
        """Benchmark items in at least one (counted) pair with the training set."""
        return int(self.pairs["bench_id"].nunique()) if len(self.pairs) else 0

    def contaminated_ids(self) -> list[str]:
        """Benchmark ids in a pair with the training set, in source order."""
        matched = set(self.pairs["bench_id"])
        return [i for i in self.bench.items.sort_values("row")["item_id"] if i in matched]

    def clean_ids(self) -> list[str]:
        """Benchmark ids in no pair with the training set, in source order (score a model on these)."""
        matched = set(self.pairs["bench_id"])
        return [i for i in self.bench.items.sort_values("row")["item_id"] if i not in matched]

    def pair_records(self) -> list[dict[str, Any]]:
        """The pairs as plain dicts, `kinds` as a list of key kinds (the `pairs` DataFrame and pairs.csv keep
        them joined by `;`)."""
        records = self.pairs.astype(object).where(self.pairs.notna(), None).to_dict("records")
        for record in records:
            kinds = record.get("kinds")
            record["kinds"] = [k for k in str(kinds).split(";") if k] if kinds is not None else []
        return records

    def __repr__(self) -> str:
        return (f"<BenchComparison {self.name}: {self.items_matched} of {self.items} items matched, "
                f"{len(self.pairs)} pairs>")


@dataclass(repr=False)
class CompareResult:
    """A training set compared with one or more benchmarks: what `overlap.compare` returns and summary.json
    is written from (`summary()`).

    - `train`: the training set as read (a `Dataset`: `items` one row per task, `keys` the long table of
      canonical ids, `provenance`, `problems`).
    - `benches`: one `BenchComparison` per benchmark, in argument order (also `result["cybergym"]` or
      `result[0]`): its `pairs` (normalised join), `plain_pairs` (ids as written), `shared` keys,
      `duplicates` and the stage `sections` (evidence, text, baselines, SWE).
    - `train_duplicates`: one row per canonical key that two or more training items share (one bug listed
      twice, e.g. under its old and its new OSS-Fuzz id), as duplicates.csv writes it.
    - `mapping`, `mapping_provenance`: the OSS-Fuzz old→new id mapping used, and where it came from (None
      when no dataset has OSS-Fuzz ids).
    - `parameters`: the options of the run (seed, n-gram sizes, pool, …), recorded in summary.json.
    - `sections`: summary sections of the whole run (chance baselines, inclusion test, SWE, …).
    - `pool`: the chance-baseline pool when one was loaded, else None.

    `pairs` and `related` are every benchmark's counted and reported-only pairs in one table;
    `train_clean_ids()` the training ids in no pair.
    """

    train: Dataset
    benches: list[BenchComparison]
    train_duplicates: pd.DataFrame
    mapping: OssFuzzMapping | None = None
    mapping_provenance: Provenance | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, Any] = field(default_factory=dict)  # extra top-level summary sections
    pool: Any = None  # the chance-baseline pool, when one was loaded (its records also feed related bugs)

    @property
    def pairs(self) -> pd.DataFrame:
        frames = [b.pairs for b in self.benches if len(b.pairs)]
        return pd.concat(frames, ignore_index=True) if frames else self.benches[0].pairs

    @property
    def related(self) -> pd.DataFrame:
        """Pairs reported beside the overlap but not counted in it (all benchmarks)."""
        frames = [b.related for b in self.benches if b.related is not None and len(b.related)]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=self.pairs.columns)

    def train_clean_ids(self) -> list[str]:
        """Train ids in no pair with any benchmark, in source order."""
        return [i for batch in self.train_clean_id_batches() for i in batch.to_pylist()]

    def train_clean_id_batches(self) -> Iterator[pa.Array]:
        """`train_clean_ids()` as string arrays, a batch at a time: what writes the list of a streamed side of
        any size in bounded memory (its ids are read again from the source)."""
        matched = set(self.pairs["train_id"])
        if self.train.totals is not None:
            yield from self.train.totals.clean_ids(matched)
            return
        items = self.train.items.sort_values("row")
        yield pa.array([i for i in items["item_id"] if i not in matched], pa.string())

    def summary(self) -> dict[str, Any]:
        return summarize(self)

    @property
    def bench_names(self) -> list[str]:
        return [b.name for b in self.benches]

    def __getitem__(self, key: str | int) -> BenchComparison:
        """One benchmark's comparison, by name (`result["cybergym"]`) or position."""
        if isinstance(key, int):
            return self.benches[key]
        for comp in self.benches:
            if comp.name == key:
                return comp
        raise KeyError(f"no benchmark {key!r} in this result; its benchmarks: {', '.join(self.bench_names)}")

    def __contains__(self, key: object) -> bool:
        return key in self.bench_names

    def __repr__(self) -> str:
        benches = "; ".join(f"{b.name}: {b.items_matched} of {b.items} items matched" for b in self.benches)
        return f"<CompareResult {self.train.name} ({self.train.item_count} items) vs {benches}>"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{escape(b.name)}</td><td>{b.items:,}</td><td>{b.items_matched:,}</td>"
            f"<td>{(b.items_matched / b.items if b.items else 0):.1%}</td><td>{len(b.pairs):,}</td>"
            f"<td>{int(b.plain_pairs['bench_id'].nunique()) if len(b.plain_pairs) else 0:,}</td></tr>"
            for b in self.benches)
        return (f"<p><b>overlap</b>: {escape(self.train.name)} ({self.train.item_count:,} items), "
                f"{sum(len(batch) for batch in self.train_clean_id_batches()):,} in no pair</p>"
                "<table><thead><tr><th>benchmark</th><th>items</th><th>items matched</th><th>share</th>"
                "<th>pairs</th><th>matched by a plain id join</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


# Input problems that are one id on several rows: the stderr problem lines count them, so the summary's
# duplicates count them too (beside the groups of distinct items sharing a key).
REPEATED_ID_PROBLEMS = ("duplicate_id", "duplicate_id_other_base")


def repeated_ids(problems) -> int:
    """Rows that repeat an earlier row's id, from a dataset's input problems (a `Problem` or its dict)."""
    total = 0
    for problem in problems:
        record = problem if isinstance(problem, dict) else problem.__dict__
        if record.get("what") in REPEATED_ID_PROBLEMS:
            total += int(record.get("count") or 0)
    return total


def _dataset_block(dataset: Dataset, dups: pd.DataFrame, mapping: OssFuzzMapping | None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "name": dataset.name,
        "items": dataset.item_count,
        "keys_by_kind": dataset.keys_by_kind(),
        "duplicates": {"groups": int(len(dups)), "items": int(dups["items"].sum()) if len(dups) else 0,
                       "repeated_ids": repeated_ids(dataset.problems)},
        "problems": [p.__dict__ for p in dataset.problems],
        "provenance": dataset.provenance.to_dict(),
    }
    if dataset.subsets():
        counts = dataset.items["subset"].value_counts()
        block["subsets"] = {s: int(counts[s]) for s in dataset.subsets()}
    if mapping is not None and dataset.has_kind("ossfuzz"):
        block["ossfuzz_ids"] = _described(dataset, mapping)
    recognition = getattr(dataset, "recognition", None)  # how ids were read, for what the user brought
    if recognition is not None and not getattr(dataset, "ids_known", False):
        block["id_recognition"] = recognition.to_dict()
    return block


def _described(dataset: Dataset, mapping: OssFuzzMapping) -> dict[str, int]:
    """`describe_ids` of a side's OSS-Fuzz keys, a frame at a time (its counts add up over frames): a streamed
    side's keys are never held at once."""
    total: dict[str, int] | None = None
    for frame in dataset.ossfuzz_key_frames():
        counts = describe_ids(frame, mapping)
        total = counts if total is None else {name: total[name] + count for name, count in counts.items()}
    return total if total is not None else describe_ids(dataset.keys_of_kind("ossfuzz"), mapping)


def _by_subset(dataset: Dataset, matched: set[str], plain: set[str], side: str) -> dict[str, Any]:
    """Per subset of one side: items, items matched by the normalised and by the plain join."""
    # An item outside every subset (a null subset, e.g. a CyberGym id with no `kind:` prefix) is in none.
    subset_of = {i: s for i, s in zip(dataset.items["item_id"], dataset.items["subset"], strict=True)
                 if isinstance(s, str)}
    out = {}
    for subset in dataset.subsets():
        total = int((dataset.items["subset"] == subset).fillna(False).sum())
        found = sum(1 for i in matched if subset_of.get(i) == subset)
        found_plain = sum(1 for i in plain if subset_of.get(i) == subset)
        out[subset] = {
            f"{side}_items": total,
            f"{side}_items_matched": found,
            "share": _share(found, total),
            f"plain_{side}_items_matched": found_plain,
        }
    return out


def _items_by_pair_kind(pairs: pd.DataFrame) -> dict[str, int]:
    """Bench items in a counted pair of each kind, every counted kind listed (zero too), in table order: what
    each scheme of a mixed dataset matched."""
    kinds = pairs["pair_kind"] if "pair_kind" in pairs.columns else pd.Series([], dtype="string")
    return {k: int(pairs.loc[(kinds == k).fillna(False).astype(bool), "bench_id"].nunique())
            for k in COUNTED_PAIR_KINDS}


def _bench_block(result: CompareResult, comp: BenchComparison) -> dict[str, Any]:
    bench, pairs, plain = comp.bench, comp.pairs, comp.plain_pairs
    n_bench = len(bench.items)
    matched_bench = set(pairs["bench_id"])
    plain_bench = set(plain["bench_id"])
    block: dict[str, Any] = {
        "bench": bench.name,
        "bench_items": n_bench,
        "shared_keys": int(len(comp.shared)),
        "shared_keys_by_kind": {k: int(v) for k, v in sorted(comp.shared["kind"].value_counts().items())},
        "pairs": int(len(pairs)),
        "pairs_by_match_type": {k: int(v) for k, v in sorted(pairs["match_type"].value_counts().items())},
        "train_items_matched": int(pairs["train_id"].nunique()),
        "bench_items_matched": len(matched_bench),
        "bench_share": _share(len(matched_bench), n_bench),
        "bench_items_by_pair_kind": _items_by_pair_kind(pairs),
        "plain_join": {
            "pairs": int(len(plain)),
            "train_items_matched": int(plain["train_id"].nunique()),
            "bench_items_matched": len(plain_bench),
            "bench_share": _share(len(plain_bench), n_bench),
        },
        "found_only_by_normalisation": {
            "bench_items": len(matched_bench - plain_bench),
            "train_items": int(len(set(pairs["train_id"]) - set(plain["train_id"]))),
        },
    }
    if bench.subsets():
        block["by_subset"] = _by_subset(bench, matched_bench, plain_bench, "bench")
    if result.train.subsets():
        block["train_by_subset"] = _by_subset(result.train, set(pairs["train_id"]), set(plain["train_id"]), "train")
    return block


# Stage sections of a compare summary: present whether the stage ran or not (`status` ran / not_run with a
# `reason`), so summary.json has the same keys for every run. Value: the reason given when it did not run.
BENCH_STAGES = {
    "baselines": "no chance-baseline pool was used (none fits these datasets, or --pool none)",
    "inclusion": "no reference set was given (--reference)",
    "evidence": "the evidence stage was off",
    "text": "the text check was off",
    "swe": "no pull-request keys on both sides (not SWE datasets)",
}
TOP_STAGES = {
    "baselines": BENCH_STAGES["baselines"],
    "inclusion": BENCH_STAGES["inclusion"],
    "swe": BENCH_STAGES["swe"],
    "mapping": "no OSS-Fuzz ids: the old→new id mapping was not needed",
}


def _stage_blocks(container: dict[str, Any], stages: dict[str, str], top: dict[str, Any] | None = None) -> None:
    """Give every stage of `stages` a block in `container` (in place): the stage's own with `status`, or
    `{"status": "not_run", "reason": ...}` (the summary-level reason when the summary has one)."""
    for key, reason in stages.items():
        block = container.get(key)
        if isinstance(block, dict):
            container[key] = {"status": "ran", **block}
        elif block is None:
            upper = (top or {}).get(key)
            if isinstance(upper, dict) and upper.get("status") == "not_run" and upper.get("reason"):
                reason = upper["reason"]
            container[key] = {"status": "not_run", "reason": reason}


def summarize(result: CompareResult) -> dict[str, Any]:
    """Every count of a compare, plus provenance and parameters: the content of summary.json (kind
    `compare`, `overlap/schemas/compare-summary.schema.json`)."""
    summary: dict[str, Any] = {
        "tool": {"name": "overlap", "version": __version__},
        "parameters": result.parameters,
        "train": _dataset_block(result.train, result.train_duplicates, result.mapping),
        "benches": [],
    }
    for comp in result.benches:
        block = _bench_block(result, comp)
        block["dataset"] = _dataset_block(comp.bench, comp.duplicates, result.mapping)
        block.update(comp.sections)
        summary["benches"].append(block)
    all_pairs = result.pairs
    summary["train_items_in_any_pair"] = int(all_pairs["train_id"].nunique())
    summary["train_items_clean"] = result.train.item_count - summary["train_items_in_any_pair"]
    summary.update(result.sections)
    if result.mapping_provenance is not None:
        summary["mapping"] = {
            "pairs": len(result.mapping),
            "skipped_rows": result.mapping.skipped_rows,
            "provenance": result.mapping_provenance.to_dict(),
        }
    _stage_blocks(summary, TOP_STAGES)
    summary.setdefault("train_specs_naming_the_harness", None)  # null: the evidence stage did not count them
    for block in summary["benches"]:
        _stage_blocks(block, BENCH_STAGES, summary)
    return to_jsonable(versioned("compare", summary))


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
        return to_jsonable(versioned("matrix", {
            "parameters": self.parameters,
            "benches": self.bench_rows(),
            "cells": cells,
            "couples": couples,
            "pair_kinds": {"counted": list(COUNTED_PAIR_KINDS),
                           "reported_not_counted": [k for k in PAIR_KINDS if k not in COUNTED_PAIR_KINDS]},
            "datasets": [
                {"name": d.name, "items": int(len(d.items)), "problems": [p.__dict__ for p in d.problems],
                 "provenance": d.provenance.to_dict(), "family": self.families()[d.name]}
                for d in self.datasets
            ],
        }))
