"""Hand-made fixtures for the SWE-rebench (first version), SWE-rebench leaderboard and SWE-bench-Live
declarations, each written at test time as a folder laid out like the Hub repo and in its real schema (the
sources are named in each declaration's comment).

| set | rows | what it shows |
|---|---|---|
| SWE-rebench v1 | 3 in test (2 shards), 1 in filtered | test only; a task also in SWE-bench, one in the leaderboard |
| SWE-rebench leaderboard | 2 in test | a task also in the first version |
| SWE-bench-Live | 3 in full (2 shards), lite, verified | split full only; pull_number as text |
"""

from __future__ import annotations

from pathlib import Path

from coverage_fixtures import diff, sha, write_parquet

# A task SWE-bench's coverage fixture also holds (sympy__sympy-20590 at the same base commit).
SHARED_WITH_SWEBENCH = ("sympy__sympy-20590", "sympy/sympy", sha("D3"))
BASE = {tag: sha(tag) for tag in ("R1", "R2", "R3", "R4", "L1", "L2", "L3", "L4")}


def rebench_row(instance_id: str, repo: str, base: str, image: str | None = None) -> dict:
    """A SWE-rebench row: SWE-bench's columns as SWE-rebench/SWE-bench-fork reads them (install_config a struct),
    with the image, license and meta columns public loaders read."""
    return {
        "instance_id": instance_id, "repo": repo, "base_commit": base,
        "patch": diff("src/m.py", "a = 1", "a = 2"), "test_patch": diff("tests/test_m.py", "x", "y"),
        "problem_statement": f"Issue of {instance_id}", "hints_text": "", "created_at": "2025-01-15T10:00:00Z",
        "version": "1.0", "environment_setup_commit": base,
        "FAIL_TO_PASS": ["tests/test_m.py::test_a"], "PASS_TO_PASS": ["tests/test_m.py::test_b"],
        "install_config": {"python": "3.11", "install": "pip install -e .", "test_cmd": "pytest -rA",
                           "log_parser": "parse_log_pytest", "pre_install": [], "reqs_path": ["requirements.txt"]},
        "meta": {"is_lite": False, "llm_score": {"difficulty_score": 1, "issue_text_score": 0, "test_score": 0}},
        "license_name": "MIT License", "docker_image": image,
    }


def _image(instance_id: str) -> str:
    return "swerebench/sweb.eval.x86_64." + instance_id.lower().replace("__", "_1776_")


REBENCH_TEST = [
    rebench_row(*SHARED_WITH_SWEBENCH),
    rebench_row("encode__httpx-3001", "encode/httpx", BASE["R1"], _image("encode__httpx-3001")),
    rebench_row("tobymao__sqlglot-4500", "tobymao/sqlglot", BASE["R2"]),
]
REBENCH_FILTERED = [rebench_row("beeware__briefcase-2001", "beeware/briefcase", BASE["R3"],
                                _image("beeware__briefcase-2001"))]
LEADERBOARD_TEST = [
    rebench_row("tobymao__sqlglot-4500", "tobymao/sqlglot", BASE["R2"], _image("tobymao__sqlglot-4500")),
    rebench_row("Textualize__textual-5600", "Textualize/textual", BASE["L1"], _image("Textualize__textual-5600")),
]


def live_row(repo: str, number: int, base: str) -> dict:
    """A SWE-bench-Live full-split row (build_dataset.py's task, make_full.py's text pull_number and issue_numbers,
    difficulty, and the harness's test_cmds / log_parser)."""
    return {
        "repo": repo, "pull_number": str(number), "instance_id": f"{repo.replace('/', '__')}-{number}",
        "issue_numbers": [str(number - 1)], "base_commit": base,
        "patch": diff("pkg/core.py", "old()", "new()"), "test_patch": diff("tests/test_core.py", "a", "b"),
        "problem_statement": f"Bug in {repo}", "hints_text": "", "all_hints_text": "",
        "commit_urls": [f"https://github.com/{repo}/commit/{base}"], "created_at": "2025-03-02T08:00:00Z",
        "FAIL_TO_PASS": ["tests/test_core.py::test_new"], "PASS_TO_PASS": ["tests/test_core.py::test_old"],
        "difficulty": {"files": 1, "hunks": 1, "lines": 2}, "test_cmds": ["pytest -rA tests/test_core.py"],
        "log_parser": "pytest",
    }


LIVE_FULL = [live_row("conan-io/conan", 17800, BASE["L2"]), live_row("pylint-dev/pylint", 10200, BASE["L3"]),
             live_row("encode/httpx", 3001, BASE["R1"])]  # the last: the same PR and base as a SWE-rebench task


def write_pr_sets(root: Path) -> dict[str, Path]:
    """Every fixture folder under `root`; returns {dataset name: folder} for `data=`."""
    rebench = root / "SWE-rebench" / "data"
    write_parquet(rebench / "test-00000-of-00002.parquet", REBENCH_TEST[:2])
    write_parquet(rebench / "test-00001-of-00002.parquet", REBENCH_TEST[2:])
    write_parquet(rebench / "filtered-00000-of-00001.parquet", REBENCH_FILTERED)
    write_parquet(root / "SWE-rebench-leaderboard" / "data" / "test-00000-of-00001.parquet", LEADERBOARD_TEST)
    live = root / "SWE-bench-Live" / "data"
    write_parquet(live / "full-00000-of-00002.parquet", LIVE_FULL[:2])
    write_parquet(live / "full-00001-of-00002.parquet", LIVE_FULL[2:])
    write_parquet(live / "lite-00000-of-00001.parquet", LIVE_FULL[:1])
    write_parquet(live / "verified-00000-of-00001.parquet", LIVE_FULL[1:2])
    return {"swe-rebench-v1": root / "SWE-rebench", "swe-rebench-leaderboard": root / "SWE-rebench-leaderboard",
            "swe-bench-live": root / "SWE-bench-Live"}
