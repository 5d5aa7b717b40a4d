"""SWE task sets (GitHub pull requests at a base commit): SWE-rebench-V2 and its PRs companion, Multi-SWE-bench,
Multi-SWE-RL's discarded PRs, SWE-PolyBench, SWE-bench Multilingual, SWE-bench (+ Verified) and SWE-bench Pro.
Each is declared in `declarations/<name>.toml`; this module names what the rest of overlap uses of them.

The adapters live beside it: `swe_tasks` (row → item + PR keys), `swe_files` (streamed reading),
`swe_rebench` (key scan; texts later by `fetch_columns` / `ensure_columns`), `swe_multi` (Multi-SWE-bench,
Multi-SWE-RL) and `swe_bench` (SWE-bench, Multilingual, PolyBench, Pro). Bad rows are counted, never
silently dropped; an adapter fails (exit 2) only when nothing usable remains.
"""

from __future__ import annotations

from .swe_rebench import ensure_columns, fetch_columns, lazy_columns
from .swe_tasks import BASE_FIELDS, TEXT

__all__ = ["BASE_FIELDS", "TEXT", "ensure_columns", "fetch_columns", "lazy_columns"]
