"""SWE task sets (GitHub pull requests at a base commit): the registry entries of SWE-rebench-V2 and its PRs
companion, Multi-SWE-bench, Multi-SWE-RL's discarded PRs, SWE-PolyBench, SWE-bench Multilingual, SWE-bench
(+ Verified) and SWE-bench Pro. Importing this module registers them all.

The adapters live beside it: `swe_tasks` (row → item + PR keys), `swe_files` (streamed reading),
`swe_rebench` (key scan; texts later by `fetch_columns` / `ensure_columns`), `swe_multi` (Multi-SWE-bench,
Multi-SWE-RL) and `swe_bench` (SWE-bench, Multilingual, PolyBench, Pro). Bad rows are counted, never
silently dropped; an adapter fails (exit 2) only when nothing usable remains.
"""

from __future__ import annotations

from .registry import DatasetSpec, register
from .swe_bench import load_swe_bench, load_swe_bench_multilingual, load_swe_bench_pro, load_swe_polybench
from .swe_files import list_files
from .swe_multi import MSB_LANGUAGES, load_multi_swe_bench, load_multi_swe_rl_discarded
from .swe_rebench import (
    REBENCH_LAZY,
    ensure_columns,
    fetch_columns,
    lazy_columns,
    load_swe_rebench_v2,
    load_swe_rebench_v2_prs,
)
from .swe_tasks import BASE_FIELDS, TEXT, add_task

__all__ = [
    "BASE_FIELDS", "TEXT", "add_task", "ensure_columns", "fetch_columns", "lazy_columns",
    "list_files", "load_multi_swe_bench", "load_multi_swe_rl_discarded", "load_swe_bench",
    "load_swe_bench_multilingual", "load_swe_bench_pro", "load_swe_polybench", "load_swe_rebench_v2",
    "load_swe_rebench_v2_prs", "POLY_VERIFIED", "SWEBENCH_VERIFIED",
]

_PR_EXTRACTS = "→ repo_pr, repo_pr_exact, base_pr, base keys; project (canonical repo), repo, pr, base_commit"
_LAZY_TEXTS = "key columns only, by row group; problem_statement and patch fetched later for the items that need them"

# A benchmark's Verified subset: (flag column, Hub repo, pinned revision, file). The flag is filled from this
# file, and the subset is registered as a dataset of its own from the same repo, revision and file.
POLY_VERIFIED = ("in_verified", "AmazonScience/SWE-PolyBench_Verified", "b3fca77b637379f0c01ad86d18753a7ac1998b53",
                 "test.csv")
# DATASETS.md gives "78f471bf…"; the full sha is the one several public projects pin for this repo.
SWEBENCH_VERIFIED = ("in_verified", "SWE-bench/SWE-bench_Verified", "78f471bf655a3137b2e8a75af1501690ec009ec3",
                     "data/test-00000-of-00001.parquet")


def _register_with_subset(bench: DatasetSpec, name: str, title: str, aliases: tuple[str, ...]) -> None:
    """Register `bench` and, as dataset `name`, the subset its `member_of` flag is read from."""
    register(bench)
    _flag, repo_id, revision, relpath = bench.extra["member_of"]
    register(DatasetSpec(name=name, title=title, hub_repo=repo_id, revision=revision, files={"": relpath},
                         extracts=f"as {bench.name} {_PR_EXTRACTS}", adapter=bench.adapter, aliases=aliases,
                         extra={"subset_of": bench.name}))


register(
    DatasetSpec(
        name="swe-rebench-v2",
        title="SWE-rebench-V2 (training)",
        hub_repo="nebius/SWE-rebench-V2",
        revision="475dd5e8703bb5fb22dd3c60b5d038b019eba1e0",
        files={"": "data/train-00000-of-00001.parquet"},
        extracts=f"instance_id (owner__repo-PR), repo, base_commit {_PR_EXTRACTS}; {_LAZY_TEXTS}",
        adapter=load_swe_rebench_v2,
        aliases=("swe-rebench", "rebench-v2"),
        extra={"lazy_columns": REBENCH_LAZY},
    )
)

register(
    DatasetSpec(
        name="swe-rebench-v2-prs",
        title="SWE-rebench-V2-PRs (training; 2.7 GB of parquet)",
        hub_repo="nebius/SWE-rebench-V2-PRs",
        revision="fbf0ecf50f268d5344149e2f0097db6bede83737",
        files={"": "**/*.parquet"},
        extracts=f"instance_id, repo, pull_number, base_commit {_PR_EXTRACTS}; {_LAZY_TEXTS}",
        adapter=load_swe_rebench_v2_prs,
        aliases=("rebench-v2-prs",),
        notes="all parquet files of the repo (listed, not named)",
        extra={"lazy_columns": REBENCH_LAZY, "pr_column": True, "listed": True},
    )
)

register(
    DatasetSpec(
        name="multi-swe-bench",
        title="Multi-SWE-bench (benchmark; languages other than Python, + Kotlin extension)",
        hub_repo="ByteDance-Seed/Multi-SWE-bench",
        revision="56ff018c04a38e27ada1e9d0a6d5839a51f88f0d",
        files={"": "<language>/*.jsonl (python/ left out)"},
        extracts=f"org/repo, number, base.sha {_PR_EXTRACTS}; resolved_issues title+body; fix_patch; "
        "subset = language folder (kotlin/ = kotlin_ext)",
        adapter=load_multi_swe_bench,
        aliases=("msb", "bytedance-seed/multi-swe-bench"),
        detect=("org", "number", "base", "fix_patch", "resolved_issues"),
        notes="python/ is a copy of SWE-bench Verified and is left out",
        extra={"subset_values": (*MSB_LANGUAGES, "kotlin_ext"), "exclude_folders": ("python",),
               "folder_subsets": {"kotlin": "kotlin_ext"}, "listed": True},
    )
)

register(
    DatasetSpec(
        name="multi-swe-rl-discarded",
        title="Multi-SWE-RL, PRs discarded by Multi-SWE-bench's pipeline (reference set)",
        hub_repo="ByteDance-Seed/Multi-SWE-RL",
        revision="9777648932daa214ba18c70c81e85821b5836f32",
        files={"": "data_20240601_20250331/multi_swe_bench_discarded_instances.jsonl"},
        extracts=f"org/repo, number (base.sha, fix_patch when present) {_PR_EXTRACTS}",
        adapter=load_multi_swe_rl_discarded,
        aliases=("msb-discarded",),
    )
)

_register_with_subset(
    DatasetSpec(
        name="swe-polybench",
        title="SWE-PolyBench (benchmark; in_verified from SWE-PolyBench_Verified)",
        hub_repo="AmazonScience/SWE-PolyBench",
        revision="d56445f9940eae4e9d2974ec66820c2f1d7754e6",
        files={"": "test.csv"},
        extracts=f"instance_id, repo, pull_number (int or float), base_commit {_PR_EXTRACTS}; problem_statement; "
        "patch; in_verified (SWE-PolyBench_Verified@b3fca77b test.csv)",
        adapter=load_swe_polybench,
        aliases=("polybench", "amazonscience/swe-polybench"),
        notes="in_verified needs SWE-PolyBench_Verified: from the Hub, or a folder SWE-PolyBench_Verified/ "
        "beside (or inside) the local folder",
        extra={"member_of": POLY_VERIFIED},
    ),
    "swe-polybench-verified", "SWE-PolyBench Verified (benchmark; subset of swe-polybench)", ("polybench-verified",),
)

register(
    DatasetSpec(
        name="swe-bench-multilingual",
        title="SWE-bench Multilingual (benchmark; repo names all lowercase)",
        hub_repo="SWE-bench/SWE-bench_Multilingual",
        revision="846e647b9f33c0b51b739d005d13d85493c9af09",
        files={"": "data/test-00000-of-00001.parquet"},
        extracts=f"instance_id (PR = trailing number), repo (lowercase), base_commit {_PR_EXTRACTS}; "
        "problem_statement; patch",
        adapter=load_swe_bench_multilingual,
        aliases=("multilingual", "swe-bench/swe-bench_multilingual"),
    )
)

_register_with_subset(
    DatasetSpec(
        name="swe-bench",
        title="SWE-bench (benchmark; split test, dev selectable; in_verified from SWE-bench_Verified)",
        hub_repo="SWE-bench/SWE-bench",
        # DATASETS.md gives "c6fe717f…"; the full sha is the one several public projects pin for this repo.
        revision="c6fe717fd7a4c3ac1daa4055a4fd082c6a1d28a2",
        files={"test": "data/test-00000-of-00001.parquet", "dev": "data/dev-00000-of-00001.parquet"},
        extracts=f"instance_id (PR = trailing number), repo, base_commit {_PR_EXTRACTS}; problem_statement; "
        "patch; in_verified (SWE-bench_Verified test)",
        adapter=load_swe_bench,
        aliases=("swebench", "swe-bench/swe-bench"),
        default_subsets=("test",),
        detect=("instance_id", "base_commit", "environment_setup_commit", "version"),
        notes="in_verified needs SWE-bench_Verified: from the Hub, or a folder "
        "SWE-bench_Verified/ beside (or inside) the local folder",
        extra={"member_of": SWEBENCH_VERIFIED},
    ),
    "swe-bench-verified", "SWE-bench Verified (benchmark; subset of swe-bench test)", ("swebench-verified",),
)

register(
    DatasetSpec(
        name="swe-bench-pro",
        title="SWE-bench Pro (benchmark; configs default, hard, v1 merged by instance_id; no PR numbers)",
        hub_repo="ScaleAI/SWE-bench_Pro",
        # DATASETS.md gives "2d52cb3d…"; the full sha is the one several public projects pin for this repo.
        revision="2d52cb3df914a3fcf80c7f66738b3a88ae37fc50",
        files={"default": "data/default/test-00000-of-00001.parquet",
               "hard": "data/hard/test-00000-of-00001.parquet",
               "v1": "data/v1/test-00000-of-00001.parquet"},
        extracts="instance_id, repo, base_commit → base key only (no PR number); project, repo; "
        "problem_statement; patch (pairs need the same fix); in_<config> flags",
        adapter=load_swe_bench_pro,
        aliases=("swebench-pro", "scaleai/swe-bench_pro"),
        detect=("instance_id", "base_commit", "requirements", "interface"),
    )
)
