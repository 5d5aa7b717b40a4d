"""Chance baselines for a compare result: place each side in a pool, count, and run the nulls.

- `cyber_baselines(result, pool)`: OSS-Fuzz datasets. Items are placed in the pool by canonical OSS-Fuzz
  id (the `ossfuzz` keys of `result.train.keys` / `bench.keys`, canonical after `compare`). Counting is
  by distinct canonical id, so a bug listed twice on one side (old and new id) counts once. Items whose
  ids are outside the pool, and items without an OSS-Fuzz id, are counted and reported, not dropped
  silently; the baselines cover the in-pool part only.
- `swe_inclusion(result, reference)`: SWE datasets. Per benchmark, the inclusion test of
  `baselines.inclusion_test` on benchmark ∪ reference PRs, keyed by `repo_pr` (`owner/name#N`).

Every return value is JSON-ready (Python ints/floats/str/bool/None, lists, dicts).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..errors import InputError
from ..ids.github import split_key
from ..model import Dataset
from ..results import CompareResult
from ..sources.pools.arvo_meta import Pool
from .baselines import (
    LEVEL,
    count_strata,
    inclusion_test,
    permutation_check,
    stratified_baseline,
    uniform_baseline,
)

DEFAULT_POOL = "arvo-meta"


def pool_for(result: CompareResult) -> str | None:
    """The registered pool that fits a compare: `arvo-meta` when the training set and a benchmark both
    have OSS-Fuzz ids, else None (no pool is known)."""
    if result.train.has_kind("ossfuzz") and any(b.bench.has_kind("ossfuzz") for b in result.benches):
        return DEFAULT_POOL
    return None


def _pool_table(pool: Pool | pd.DataFrame, result: CompareResult) -> tuple[pd.DataFrame, dict[str, Any]]:

    if isinstance(pool, Pool):
        if result.mapping is not None and not pool.mapped:
            pool = pool.canonicalize(result.mapping)
        return pool.table, pool.summary()
    if not isinstance(pool, pd.DataFrame) or "canonical_id" not in pool.columns:
        raise InputError("pool: expected a Pool or a table with a 'canonical_id' column")
    return pool, {"name": "pool", "items": int(len(pool))}


def _side(dataset: Dataset, pool_ids: set[int], wanted: set[int] | None = None
          ) -> tuple[set[int], set[int], dict[str, Any]]:
    """(its canonical ids, those among `wanted` when given; its ids in the pool; counts block) of one side. Its
    OSS-Fuzz keys are read a frame at a time (a streamed side's are on disk: one per row of a side of distinct
    ids), an item's keys all in one frame (a held side's one frame; a streamed row's keys one batch's)."""
    kept = dataset.totals.ossfuzz_keys if dataset.totals is not None else None
    distinct = kept.distinct_values() if hasattr(kept, "distinct_values") else None
    every: set[int] | None = set() if distinct is None else None
    ids, inside, lowest_outside = set(), set(), None
    items_with_id = items_in_pool = 0
    for frame in dataset.ossfuzz_key_frames():
        item_ids, values = frame["item_id"].astype(str), frame["value"].astype("int64")
        in_pool = values.isin(pool_ids)
        items_with_id += item_ids.nunique()
        items_in_pool += item_ids[in_pool].nunique()
        inside.update(values[in_pool].tolist())
        outside = values[~in_pool]
        if len(outside):
            lowest = int(outside.min())
            lowest_outside = lowest if lowest_outside is None else min(lowest_outside, lowest)
        ids.update((values if wanted is None else values[values.isin(wanted)]).tolist())
        if every is not None:
            every.update(values.tolist())
    distinct = len(every) if every is not None else distinct
    block = {
        "name": dataset.name,
        "items": dataset.item_count,
        "items_without_ossfuzz_id": int(dataset.item_count - items_with_id),
        "items_in_pool": int(items_in_pool),
        "items_outside_pool": int(items_with_id - items_in_pool),
        "ids": distinct,
        "ids_in_pool": len(inside),
        "ids_outside_pool": distinct - len(inside),
        "example_outside_pool": str(lowest_outside) if lowest_outside is not None else None,
    }
    return ids, inside, block


def cyber_baselines(
    result: CompareResult,
    pool: Pool | pd.DataFrame,
    *,
    strata: str | None = "project",
    permutations: int = 100_000,
    seed: int = 0,
    level: float = LEVEL,
) -> dict[str, Any]:
    """Uniform and within-stratum chance baselines for every benchmark of an OSS-Fuzz compare.

    `pool`: a `Pool` (`overlap.sources.load.load_pool`) or a table with `canonical_id` and the
    strata column; a Pool not yet canonicalised is canonicalised with `result.mapping`. `strata`: the pool
    column that defines strata (`project`; also `sanitizer`, `crash_type`, `fuzzer`, …) or None for the
    uniform baseline only; pool items without a value form the `unknown` stratum. `permutations` draws
    (0 = skip) with `seed` cross-check the finest null computed (within strata, else uniform).

    Returns {"pool": …, "strata_by": …, "train": side counts, "benches": {bench name: block}} where a
    bench block has the bench's side counts, `shared_ids` (all shared canonical ids), `shared_in_pool`
    (the observed x of the baselines), `shared_outside_pool`, `uniform`, `stratified` (None without
    strata; holds the `strata` table) and `permutation`.
    """
    table, pool_block = _pool_table(pool, result)
    if strata is not None and strata not in table.columns:
        choices = ", ".join(c for c in table.columns if c not in {"canonical_id", "raw_id", "old_id", "fix_commit"})
        raise InputError(f"--strata {strata}: the pool has no such column; use one of {choices}, or none")
    present = table["canonical_id"].notna()
    pool_ids_list = table.loc[present, "canonical_id"].astype("int64").tolist()
    labels = table.loc[present, strata].tolist() if strata is not None else [None] * len(pool_ids_list)
    pool_ids = set(pool_ids_list)
    benches = [_side(comparison.bench, pool_ids) for comparison in result.benches]
    # of the training side's ids, only those a benchmark has are needed as ids (the rest are counted)
    train_ids, train_in, train_block = _side(result.train, pool_ids, set().union(*(ids for ids, _, _ in benches)))
    out: dict[str, Any] = {"pool": pool_block, "strata_by": strata, "train": train_block, "benches": {}}
    for comparison, (bench_ids, bench_in, bench_block) in zip(result.benches, benches, strict=True):
        shared = bench_ids & train_ids
        x = len(bench_in & train_in)
        block: dict[str, Any] = {
            "bench": bench_block,
            "shared_ids": len(shared),
            "shared_in_pool": x,
            "shared_outside_pool": len(shared - pool_ids),
            "uniform": uniform_baseline(len(pool_ids), len(bench_in), len(train_in), x, level=level),
            "stratified": None,
        }
        if strata is not None:
            counts = count_strata(pool_ids_list, labels, bench_in, train_in)
            block["stratified"] = stratified_baseline(counts, level=level) | {"by": strata}
            exact, check_strata = block["stratified"], counts
        else:
            exact = block["uniform"]
            check_strata = [("all", len(pool_ids), len(bench_in), len(train_in), x)]
        block["permutation"] = permutation_check(check_strata, draws=permutations, seed=seed, exact=exact)
        block["permutation"]["null"] = exact["null"]
        out["benches"][comparison.bench.name] = block
    return out


# --- SWE inclusion test ---------------------------------------------------------------------------


def _keyed(dataset: Dataset, kind: str) -> tuple[set[str], int]:
    keys = dataset.keys[dataset.keys["kind"] == kind]
    return set(keys["value"].astype(str)), int(len(dataset.items) - keys["item_id"].nunique())


def swe_inclusion(
    result: CompareResult,
    reference: Dataset,
    *,
    kind: str = "repo_pr",
    restrict_to_train_range: bool = False,
    permutations: int = 100_000,
    seed: int = 0,
    level: float = LEVEL,
) -> dict[str, Any]:
    """Inclusion test of every benchmark of a SWE compare against a reference set of comparable PRs
    (e.g. `multi-swe-rl-discarded`, the PRs Multi-SWE-bench's pipeline collected and removed).

    Per benchmark the population is benchmark ∪ reference PRs (by `kind` key, canonical `owner/name#N`),
    stratified by repo; a PR in both counts as a benchmark PR (`reference_also_in_bench`). "Included"
    means the training set has the same key. With `restrict_to_train_range` each repo keeps only PRs
    whose number lies within the training set's lowest…highest PR number in that repo.

    Returns {"reference": …, "key_kind": …, "restricted_to_train_range": …, "train": …,
    "benches": {bench name: {"bench_prs", "reference_prs", "reference_also_in_bench",
    "bench_items_without_key", "inclusion" (see `baselines.inclusion_test`), "permutation"}}}.
    """
    train_keys, train_missing = _keyed(result.train, kind)
    ref_keys, ref_missing = _keyed(reference, kind)
    ranges: dict[str, tuple[int, int]] = {}
    for value in train_keys:
        repo, number = split_key(value)
        if number is not None:
            low, high = ranges.get(repo, (number, number))
            ranges[repo] = (min(low, number), max(high, number))
    out: dict[str, Any] = {
        "reference": {"name": reference.name, "items": int(len(reference.items)), "prs": len(ref_keys),
                      "items_without_key": ref_missing, "provenance": reference.provenance.to_dict()},
        "key_kind": kind,
        "restricted_to_train_range": restrict_to_train_range,
        "train": {"name": result.train.name, "prs": len(train_keys), "items_without_key": train_missing},
        "benches": {},
    }
    for comparison in result.benches:
        bench_keys, bench_missing = _keyed(comparison.bench, kind)
        rows = []
        for value in sorted(bench_keys | ref_keys):
            repo, number = split_key(value)
            rows.append({"stratum": repo, "number": number, "is_bench": value in bench_keys,
                         "included": value in train_keys})
        test = inclusion_test(rows, train_ranges=ranges if restrict_to_train_range else None, level=level)
        out["benches"][comparison.bench.name] = {
            "bench_prs": len(bench_keys),
            "reference_prs": len(ref_keys - bench_keys),
            "reference_also_in_bench": len(ref_keys & bench_keys),
            "bench_items_without_key": bench_missing,
            "inclusion": test,
            "permutation": permutation_check(test["strata"], draws=permutations, seed=seed, exact=test)
            | {"null": "inclusion"},
        }
    return out
