"""Library entry points: `compare(...)`. The CLI is a thin layer over these."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import __version__
from .errors import InputError
from .ids.ossfuzz import OssFuzzMapping, canonicalize_keys, describe_ids
from .join import duplicates, join, shared_keys
from .model import Dataset, Provenance
from .progress import stage
from .sources.load import load_dataset, load_identity


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
        matched = set(self.pairs["train_id"])
        items = self.train.items.sort_values("row")
        return [i for i in items["item_id"] if i not in matched]

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
        return f"<CompareResult {self.train.name} ({len(self.train.items)} items) vs {benches}>"

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(b.name)}</td><td>{b.items:,}</td><td>{b.items_matched:,}</td>"
            f"<td>{(b.items_matched / b.items if b.items else 0):.1%}</td><td>{len(b.pairs):,}</td>"
            f"<td>{int(b.plain_pairs['bench_id'].nunique()) if len(b.plain_pairs) else 0:,}</td></tr>"
            for b in self.benches)
        return (f"<p><b>overlap</b>: {escape(self.train.name)} ({len(self.train.items):,} items), "
                f"{len(self.train_clean_ids()):,} in no pair</p>"
                "<table><thead><tr><th>benchmark</th><th>items</th><th>items matched</th><th>share</th>"
                "<th>pairs</th><th>matched by a plain id join</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")


def _needs_mapping(datasets: list[Dataset]) -> bool:
    return any((d.keys["kind"] == "ossfuzz").any() for d in datasets)


def _data_paths(data: Mapping[str, str | os.PathLike] | None) -> dict[str, Path]:
    """`data` as {registered name: absolute Path}: names may be aliases, paths str or Path, relative to the
    current folder or absolute (resolved once, here)."""
    from .sources.registry import get_spec

    if not data:
        return {}
    if not isinstance(data, Mapping):
        raise InputError("data: expected a dict {dataset name: local folder or file}, e.g. {'arvo': './ARVO'}")
    out: dict[str, Path] = {}
    for name, path in data.items():
        spec = get_spec(str(name))
        try:
            target = Path(path).expanduser().resolve()
        except TypeError as exc:
            raise InputError(f"data[{name!r}]: expected a folder or file path, got {type(path).__name__}") from exc
        if not target.exists():
            raise InputError(f"data[{name!r}]: {target} does not exist")
        out[spec.name] = target
    return out


def _label(dataset: Dataset) -> str:
    subsets = dataset.provenance.subsets
    return f"{dataset.name}:{','.join(subsets)}" if subsets else dataset.name


def _dataset_args(value: Any, what: str) -> list[str | Dataset]:
    """One dataset (name, path or Dataset) or a list of them."""
    if isinstance(value, (str, os.PathLike, Dataset)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{what}: expected a dataset name, a path or a list of them, got {type(value).__name__}")
    out: list[str | Dataset] = []
    for item in value:
        if isinstance(item, os.PathLike):
            item = os.fspath(item)
        if not isinstance(item, (str, Dataset)):
            raise InputError(f"{what}: expected a dataset name, a path or a Dataset, got {type(item).__name__}")
        out.append(item)
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
) -> CompareResult:
    """Join a training set with one or more benchmarks on normalised source identities.

    Datasets are given as names/specs (see `overlap datasets`) or already-loaded `Dataset`s. `data` maps
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
    pairs' longest shared runs.
    """
    from .evidence.attach import FIX_JOIN_MODES

    if fix_join not in FIX_JOIN_MODES:
        raise InputError(f"fix_join {fix_join!r}: use one of {', '.join(FIX_JOIN_MODES)}")
    data = _data_paths(data)
    if isinstance(train, (list, tuple)):
        raise InputError("train: give one training set (a name, a path or a Dataset), not a list")
    (train,) = _dataset_args(train, "train")
    benches = _dataset_args(benches, "benches")
    text = _text_pairs(text)
    ngram_ns = (ngram_ns,) if isinstance(ngram_ns, int) else tuple(ngram_ns)
    if not benches:
        raise InputError("give at least one benchmark to compare with")
    stage("reading the training set")
    train_ds = train if isinstance(train, Dataset) else load_dataset(train, data)
    stage("reading the benchmarks")
    bench_ds = [b if isinstance(b, Dataset) else load_dataset(b, data) for b in benches]
    names = [train_ds.name] + [b.name for b in bench_ds]
    if len(set(names)) != len(names):
        raise InputError(f"the same dataset is named twice ({', '.join(names)}); compare distinct datasets")
    if text:
        from .text.attach import text_field

        for train_field, bench_field in text:  # fail before the slow stages, in the library's words
            text_field(train_ds, train_field, f"text '{train_field}:{bench_field}'")
            for b in bench_ds:
                text_field(b, bench_field, f"text '{train_field}:{bench_field}'")
    mapping_provenance = None
    stage("joining ids")
    if _needs_mapping([train_ds, *bench_ds]):
        if mapping is None:
            mapping, mapping_provenance = load_identity("arvo", data)
        for dataset in (train_ds, *bench_ds):
            dataset.keys = canonicalize_keys(dataset.keys, mapping)
    comparisons = [
        BenchComparison(
            bench=b,
            pairs=join(train_ds, b, on="value"),
            plain_pairs=join(train_ds, b, on="raw"),
            shared=shared_keys(train_ds, b),
            duplicates=duplicates(b),
        )
        for b in bench_ds
    ]
    result = CompareResult(
        train=train_ds,
        benches=comparisons,
        train_duplicates=duplicates(train_ds),
        mapping=mapping,
        mapping_provenance=mapping_provenance,
        # labels: the datasets as selected (`cybergym:arvo`), for titles; train/benches stay the names
        parameters={"train": names[0], "benches": names[1:],
                    "labels": [_label(d) for d in (train_ds, *bench_ds)]},
    )
    _attach_swe(result)
    from .stats.attach import attach_baselines

    stage("chance baselines")
    attach_baselines(result, data=data, pool=pool, strata=strata, permutations=permutations, seed=seed,
                     reference=reference, reference_range=reference_range)
    if evidence:
        from .evidence.attach import attach_evidence

        stage("evidence (fixes, crashes)")
        attach_evidence(result, fix_join=fix_join, seed=seed)
    if text != []:
        from .text.attach import attach_text

        stage("text check")
        attach_text(result, text, ns=tuple(ngram_ns), boilerplate_threshold=boilerplate_threshold)
    return result


def filter_train(
    train: str | Dataset,
    benches: list[str | Dataset],
    out: Path,
    *,
    reasons: tuple[str, ...] | list[str] = ("id", "fix", "dup"),
    data: dict[str, Path] | None = None,
    mapping: OssFuzzMapping | None = None,
    flagged: dict[str, list[str]] | None = None,
    seed: int = 0,
):
    """Write the training set without the rows that overlap the benchmarks into the folder `out`, checked.

    Runs the compare stages the `reasons` need (ids always; evidence for `fix` and `spec:*`; the text check
    for `ngram:<n>`), decides which rows go (`overlap.outputs.filter_plan`), writes the split and proves it:
    the kept split, read back through the same adapter and compared again the same way, matches nothing
    (`overlap.outputs.splits.write_split`). Returns (CompareResult, FilterResult, SplitReport).
    """
    from .outputs.splits import check_reasons, filter_split, write_split

    asked = check_reasons(reasons)
    ns = tuple(sorted({int(r.split(":")[1]) for r in asked if r.startswith("ngram:")}, reverse=True))
    options: dict[str, Any] = {
        "pool": None,  # chance baselines do not decide what a filter drops
        "seed": seed,
        "evidence": any(r == "fix" or r.startswith("spec:") for r in asked),
        "text": None if ns else [],
        "ngram_ns": ns or (13,),
    }
    result = compare(train, benches, data=data, mapping=mapping, **options)
    decision = filter_split(result, asked, flagged=flagged)
    bench_sets = [b.bench for b in result.benches]

    def recheck(kept: Dataset) -> CompareResult:
        return compare(kept, bench_sets, mapping=result.mapping, **options)

    report = write_split(result, decision, out, recheck=None if flagged else recheck)
    return result, decision, report


def _attach_swe(result: CompareResult) -> None:
    """SWE sets: classify pairs (same PR same base, other base, …), keep the counted ones as the overlap
    and move the reported-only ones (same base, different PR) to `related`."""
    from .swe_report import swe_sections

    sections = swe_sections(result)
    if not sections:
        return
    per_bench = sections.pop("benches")
    result.sections["swe"] = sections
    for comp, block in zip(result.benches, per_bench, strict=True):
        comp.sections["swe"] = block
        counted = comp.pairs["counted"].fillna(True).astype(bool)  # non-SWE pairs (no kind) count
        comp.related = comp.pairs[~counted].reset_index(drop=True)
        comp.pairs = comp.pairs[counted].reset_index(drop=True)


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _dataset_block(dataset: Dataset, dups: pd.DataFrame, mapping: OssFuzzMapping | None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "name": dataset.name,
        "items": int(len(dataset.items)),
        "keys_by_kind": {k: int(v) for k, v in sorted(dataset.keys["kind"].value_counts().items())},
        "duplicates": {"groups": int(len(dups)), "items": int(dups["items"].sum()) if len(dups) else 0},
        "problems": [p.__dict__ for p in dataset.problems],
        "provenance": dataset.provenance.to_dict(),
    }
    if dataset.subsets():
        counts = dataset.items["subset"].value_counts()
        block["subsets"] = {s: int(counts[s]) for s in dataset.subsets()}
    if mapping is not None and (dataset.keys["kind"] == "ossfuzz").any():
        block["ossfuzz_ids"] = describe_ids(dataset.keys, mapping)
    return block


def _by_subset(dataset: Dataset, matched: set[str], plain: set[str], side: str) -> dict[str, Any]:
    """Per subset of one side: items, items matched by the normalised and by the plain join."""
    subset_of = dataset.items.set_index("item_id")["subset"]
    out = {}
    for subset in dataset.subsets():
        total = int((dataset.items["subset"] == subset).sum())
        found = sum(1 for i in matched if subset_of[i] == subset)
        found_plain = sum(1 for i in plain if subset_of[i] == subset)
        out[subset] = {
            f"{side}_items": total,
            f"{side}_items_matched": found,
            "share": _share(found, total),
            f"plain_{side}_items_matched": found_plain,
        }
    return out


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
    `compare`, `overlap/outputs/schemas/compare-summary.schema.json`)."""
    from .outputs.jsonout import to_jsonable, versioned

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
    summary["train_items_clean"] = len(result.train.items) - summary["train_items_in_any_pair"]
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
