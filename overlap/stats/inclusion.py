"""The SWE inclusion test: does a training set contain benchmark PRs at the rate of comparable PRs?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .exact import LEVEL, stratified_baseline
from .strata import stratum_label


def inclusion_test(rows: Any, *, train_ranges: Mapping[str, tuple[int, int]] | None = None,
                   level: float = LEVEL) -> dict[str, Any]:
    """Does a training set contain benchmark PRs at the rate it contains comparable reference PRs?

    `rows`: one row per PR of the benchmark ∪ reference set (a DataFrame or dicts) with `stratum` (the
    canonical repo), `is_bench` (True for a benchmark PR, False for a reference PR), `included` (the
    training set contains it) and, for the range restriction, `number` (the PR number).

    Within each repo the null is that inclusion does not depend on being a benchmark PR: of the repo's
    N_r PRs, the n_r included ones are a random subset, so the included benchmark PRs
    X_r ~ Hypergeometric(N_r, K_r benchmark PRs, n_r); the total is the exact convolution
    (`stratified_baseline`). `p_upper` small: the training set holds benchmark PRs more often than
    comparable PRs of the same repos (it drew on the benchmark, or both on one collection); `p_lower`
    small: less often (e.g. the benchmark was filtered out). Repos where the training set includes
    nothing are skipped. `bench_rate` = included benchmark PRs / benchmark PRs, `reference_rate` =
    included reference PRs / reference PRs (None when the denominator is 0), overall and per repo.

    `train_ranges` (repo → (lowest, highest) PR number of the training set in that repo) restricts each
    repo to that range: PRs outside it, PRs of repos the training set does not have, and PRs without a
    number are left out and counted in `restriction`.
    """
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
        rows = rows.to_dict(orient="records")
    rows = list(rows)
    restriction = None
    if train_ranges is not None:
        kept, outside, no_number = [], 0, 0
        for row in rows:
            number = row.get("number")
            span = train_ranges.get(stratum_label(row.get("stratum")))
            if number is None or number != number:
                no_number += 1
            elif span is not None and span[0] <= int(number) <= span[1]:
                kept.append(row)
            else:
                outside += 1
        restriction = {"rows_before": len(rows), "rows_kept": len(kept), "rows_outside_train_range": outside,
                       "rows_without_number": no_number}
        rows = kept
    counts: dict[str, list[int]] = {}
    for row in rows:
        entry = counts.setdefault(stratum_label(row.get("stratum")), [0, 0, 0, 0])
        is_bench, included = bool(row.get("is_bench")), bool(row.get("included"))
        entry[0] += 1
        entry[1] += is_bench
        entry[2] += included
        entry[3] += is_bench and included
    result = stratified_baseline([(name, *c) for name, c in counts.items()], level=level)
    result["null"] = "inclusion"
    for table_row in result["strata"]:
        table_row |= _rates(table_row["pool"], table_row["bench"], table_row["train"], table_row["shared"])
    result |= _rates(result["pool"], result["bench_in_pool"], result["train_in_pool"], result["observed"])
    result["restriction"] = restriction
    return result


def _rates(pool: int, bench: int, included: int, shared: int) -> dict[str, float | None]:
    reference = pool - bench
    return {
        "bench_rate": shared / bench if bench else None,
        "reference_rate": (included - shared) / reference if reference else None,
    }
