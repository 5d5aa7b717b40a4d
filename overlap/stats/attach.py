"""Attach chance baselines to a compare result (summary sections), choosing the pool or reference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import HubUnavailableError
from ..sources.load import load_dataset, load_pool
from .wiring import cyber_baselines, pool_for, swe_inclusion


def attach_baselines(result, *, data: dict[str, Path] | None = None, pool: str | None = "auto",
                     strata: str | None = "project", permutations: int = 100_000, seed: int = 0,
                     reference: str | None = None, reference_range: bool = False) -> None:
    """Add `baselines` to each benchmark block and to the summary of `result` (in place).

    `pool="auto"` uses the pool that fits the datasets (ARVO-Meta for OSS-Fuzz sets) and, when it cannot
    be had (offline, not cached), records the baselines as not run with the reason instead of failing the
    compare; a pool named explicitly must load. `pool=None` or `"none"` skips the cyber baselines.
    """
    result.parameters.update({"pool": pool, "strata": strata, "permutations": permutations, "seed": seed,
                              "reference": reference, "reference_range": reference_range})
    chosen = pool_for(result) if pool == "auto" else (None if pool in (None, "none") else pool)
    if chosen is not None:
        try:
            loaded = load_pool(chosen, data=data, mapping=result.mapping)
        except HubUnavailableError as exc:
            if pool != "auto":
                raise
            result.sections["baselines"] = {"status": "not_run", "pool": chosen, "reason": str(exc)}
        else:
            result.pool = loaded
            block = cyber_baselines(result, loaded, strata=strata, permutations=permutations, seed=seed)
            _place(result, block)
    if reference is not None:
        block = swe_inclusion(result, load_dataset(reference, data), restrict_to_train_range=reference_range,
                              permutations=permutations, seed=seed)
        _place(result, block, key="inclusion")


def _place(result, block: dict[str, Any], key: str = "baselines") -> None:
    per_bench = block.pop("benches")
    result.sections[key] = block | {"status": "ran"}
    for comparison in result.benches:
        if comparison.bench.name in per_bench:
            comparison.sections[key] = per_bench[comparison.bench.name]
