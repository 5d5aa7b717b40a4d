"""Hand-made fixtures for the coverage declarations, each written at test time as a folder laid out like the real
repository and in its real schema (the sources are named in each declaration's comment).

| set | rows | what it shows |
|---|---|---|
| SWE-Gym | moto#7365, mypy#15050, sympy#20590 (at Lite's base) | owner__repo-N → PR keys; a task also in Lite |
| SWE-Gym-Raw | getmoto/moto#7365 (pull_number), pandas-dev/pandas#50000 | PR from the pull_number column |
| SWE-bench (+ Verified) | django#11099, requests#2317, sympy#20590 (test); sqlfluff#4764 (dev) | what Lite joins |
| SWE-bench Lite | django#11099, sympy#20590 (test); sqlfluff#4764 (dev, not read) | a subset of SWE-bench test |
| SWE-bench Multimodal | Chart.js#11116, p5.js#5771 (test); one dev row (not read) | image_assets as a JSON string |
| SWE-smith | a procedural bug and a PR-mirror bug | synthetic ids: no key |
| R2E-Gym-Subset | two commits of pandas and numpy (one written in upper case) | fix_commit key from commit_hash |
| Multi-SWE-RL | clap-rs/clap#941 (rust), cli/cli#5000 (go) + the discarded list | language folders under a dated root |
| MiMo code | two format-code-task ids and a broken instance_json | JSON-in-a-string, no key |
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def sha(tag: str) -> str:
    return hashlib.sha1(tag.encode()).hexdigest()


def diff(path: str, removed: str, added: str) -> str:
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n context\n-{removed}\n"
            f"+{added}\n context\n")


def write_parquet(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


BASE = {tag: sha(tag) for tag in ("D1", "D2", "D3", "D4", "G1", "G2", "M1", "M2", "M3", "P1")}
R2E = {"pandas": sha("R1"), "numpy": sha("R2")}


def swebench_row(instance_id: str, repo: str, base: str, **extra) -> dict:
    """SWE-bench's columns (and SWE-Gym's, which follows SWE-bench's collection procedure)."""
    return {"repo": repo, "instance_id": instance_id, "base_commit": base,
            "patch": diff("src/m.py", "a = 1", "a = 2"), "test_patch": diff("tests/test_m.py", "x", "y"),
            "problem_statement": f"Issue of {instance_id}", "hints_text": "", "created_at": "2023-05-01T00:00:00Z",
            "version": "1.0", "FAIL_TO_PASS": '["tests/test_m.py::test_a"]', "PASS_TO_PASS": "[]", **extra}


SWE_GYM = [
    {**swebench_row("getmoto__moto-7365", "getmoto/moto", BASE["G1"]), "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": []},
    {**swebench_row("python__mypy-15050", "python/mypy", BASE["G2"]), "FAIL_TO_PASS": ["t2"], "PASS_TO_PASS": []},
    {**swebench_row("sympy__sympy-20590", "sympy/sympy", BASE["D3"]), "FAIL_TO_PASS": ["t3"], "PASS_TO_PASS": []},
]
SWE_GYM_RAW = [
    {"repo": "getmoto/moto", "pull_number": 7365, "instance_id": "getmoto__moto-7365", "issue_numbers": ["7364"],
     "base_commit": BASE["G1"], "patch": diff("moto/s3.py", "a", "b"), "test_patch": diff("tests/t.py", "a", "b"),
     "problem_statement": "S3 bug", "hints_text": "", "created_at": "2024-02-01T00:00:00Z"},
    {"repo": "pandas-dev/pandas", "pull_number": 50000, "instance_id": "pandas-dev__pandas-50000",
     "issue_numbers": ["49999"], "base_commit": BASE["P1"], "patch": diff("pandas/core/frame.py", "a", "b"),
     "test_patch": "", "problem_statement": "DataFrame bug", "hints_text": "", "created_at": "2022-12-01T00:00:00Z"},
]
SWEBENCH_TEST = [swebench_row("django__django-11099", "django/django", BASE["D1"]),
                 swebench_row("psf__requests-2317", "psf/requests", BASE["D2"]),
                 swebench_row("sympy__sympy-20590", "sympy/sympy", BASE["D3"])]
SWEBENCH_DEV = [swebench_row("sqlfluff__sqlfluff-4764", "sqlfluff/sqlfluff", BASE["D4"])]
LITE_TEST = [swebench_row("django__django-11099", "django/django", BASE["D1"]),
             swebench_row("sympy__sympy-20590", "sympy/sympy", BASE["D3"])]
MULTIMODAL_TEST = [
    swebench_row("chartjs__Chart.js-11116", "chartjs/Chart.js", BASE["M1"],
                 image_assets=json.dumps({"problem_statement": ["https://example.invalid/chart.png"]})),
    swebench_row("processing__p5.js-5771", "processing/p5.js", BASE["M2"], image_assets="{}"),
]
MULTIMODAL_DEV = [swebench_row("diegomura__react-pdf-1552", "diegomura/react-pdf", BASE["M3"], image_assets="{}")]


def smith_row(upstream: str, commit: str, bug: str) -> dict:
    """SWE-smith's task instance (swesmith/harness/gather.py) with the card's problem_statement."""
    mirror = f"{upstream.replace('/', '__')}.{commit[:8]}"
    return {"instance_id": f"{mirror}.{bug}", "patch": diff("src/x.py", "ok()", "broken()"),
            "FAIL_TO_PASS": ["tests/test_x.py::test_ok"], "PASS_TO_PASS": ["tests/test_x.py::test_other"],
            "image_name": f"swesmith.x86_64.{mirror.lower()}", "repo": f"swesmith/{mirror}",
            "problem_statement": f"{bug} breaks x"}


SWE_SMITH = [smith_row("oauthlib/oauthlib", sha("S1"), "combine_file__09vlzwgc"),
             smith_row("pandas-dev/pandas", sha("S2"), "pr_53820")]


def r2e_row(repo_name: str, commit: str) -> dict:
    """R2E-Gym's row (src/r2egym/agenthub/runtime/docker.py, app/app.py): parsed_commit_content is a JSON string."""
    parsed = {"file_diffs": [], "old_commit_hash": sha("parent" + commit), "new_commit_hash": commit.lower(),
              "commit_message": "Fix a bug", "commit_date": "2021-03-01T00:00:00", "metadata": {}}
    return {"repo_name": repo_name, "docker_image": f"namanjain12/{repo_name}_final:{commit.lower()}",
            "commit_hash": commit, "parsed_commit_content": json.dumps(parsed), "problem_statement": f"{repo_name} bug",
            "expected_output_json": "{}", "relevant_files": ["a.py"], "modified_files": ["a.py"]}


R2E_GYM = [r2e_row("pandas", R2E["pandas"]), r2e_row("numpy", R2E["numpy"].upper())]


def msb_row(org: str, repo: str, number: int, base: str) -> dict:
    """Multi-SWE-bench's schema, which Multi-SWE-RL's rows share."""
    return {"org": org, "repo": repo, "number": number, "state": "closed", "title": f"Fix #{number}", "body": "",
            "base": {"label": f"{org}:main", "ref": "main", "sha": base},
            "resolved_issues": [{"number": 1, "title": "Bug", "body": "It breaks"}],
            "fix_patch": diff("src/lib.rs", "old", "new"), "test_patch": diff("tests/t.rs", "a", "b"),
            "instance_id": f"{org}__{repo}-{number}"}


def mimo_code_row(instance: dict | str) -> dict:
    """MiMo-V2.6-RL-oss code.parquet: the task is the JSON string extra_info.instance_json."""
    text = instance if isinstance(instance, str) else json.dumps(instance)
    return {"data_source": "code", "prompt": [{"role": "user", "content": "Fix the failing tests"}],
            "reward_model": {"ground_truth": "", "style": "rule"}, "extra_info": {"instance_json": text}}


def mimo_code_task(number: int, statement: str, runner: str, cwd: str) -> dict:
    task = f"format-code-task-{number:06d}"
    return mimo_code_row({"instance_id": task, "problem_statement": statement,
                          "test_patch": diff("mimo_test_command.sh", "", runner),
                          "test_command": "bash mimo_test_command.sh", "cwd": cwd, "docker_image": f"{task}:latest"})


MIMO_CODE = [mimo_code_task(1, "Add a --json flag", "pytest", "/testbed"),
             mimo_code_task(2, "Fix the parser", "go test", "/workspace/repo"),
             mimo_code_row("{not json")]


def write_coverage(root: Path) -> dict[str, Path]:
    """Every fixture folder under `root`; returns {dataset name: folder} for `data=`."""
    write_parquet(root / "SWE-Gym" / "data" / "train-00000-of-00001.parquet", SWE_GYM)
    write_parquet(root / "SWE-Gym-Raw" / "data" / "train-00000-of-00006.parquet", SWE_GYM_RAW[:1])
    write_parquet(root / "SWE-Gym-Raw" / "data" / "train-00001-of-00006.parquet", SWE_GYM_RAW[1:])
    write_parquet(root / "SWE-bench" / "data" / "test-00000-of-00001.parquet", SWEBENCH_TEST)
    write_parquet(root / "SWE-bench" / "data" / "dev-00000-of-00001.parquet", SWEBENCH_DEV)
    write_parquet(root / "SWE-bench_Verified" / "data" / "test-00000-of-00001.parquet", SWEBENCH_TEST[:1])
    write_parquet(root / "SWE-bench_Lite" / "data" / "test-00000-of-00001.parquet", LITE_TEST)
    write_parquet(root / "SWE-bench_Lite" / "data" / "dev-00000-of-00001.parquet", SWEBENCH_DEV)
    write_parquet(root / "SWE-bench_Multimodal" / "data" / "test-00000-of-00001.parquet", MULTIMODAL_TEST)
    write_parquet(root / "SWE-bench_Multimodal" / "data" / "dev-00000-of-00001.parquet", MULTIMODAL_DEV)
    write_parquet(root / "SWE-smith" / "data" / "train-00000-of-00001.parquet", SWE_SMITH)
    write_parquet(root / "R2E-Gym-Subset" / "data" / "train-00000-of-00001.parquet", R2E_GYM)
    rl = root / "Multi-SWE-RL" / "data_20240601_20250331"
    write_jsonl(rl / "rust" / "clap-rs__clap_dataset.jsonl", [msb_row("clap-rs", "clap", 941, sha("C1"))])
    write_jsonl(rl / "go" / "cli__cli_dataset.jsonl", [msb_row("cli", "cli", 5000, sha("C2"))])
    write_jsonl(rl / "multi_swe_bench_discarded_instances.jsonl", [{"org": "tokio-rs", "repo": "tokio", "number": 1}])
    write_parquet(root / "MiMo-V2.6-RL-oss" / "code.parquet", MIMO_CODE)
    return {"swe-gym": root / "SWE-Gym", "swe-gym-raw": root / "SWE-Gym-Raw", "swe-bench": root / "SWE-bench",
            "swe-bench-verified": root / "SWE-bench_Verified", "swe-bench-lite": root / "SWE-bench_Lite",
            "swe-bench-multimodal": root / "SWE-bench_Multimodal", "swe-smith": root / "SWE-smith",
            "r2e-gym-subset": root / "R2E-Gym-Subset", "multi-swe-rl": root / "Multi-SWE-RL",
            "mimo-code": root / "MiMo-V2.6-RL-oss"}


def keys_of(dataset, item_id: str) -> dict[str, set[str]]:
    """{kind: values} of one item's keys."""
    rows = dataset.keys[dataset.keys["item_id"] == item_id]
    out: dict[str, set[str]] = {}
    for kind, value in zip(rows["kind"], rows["value"], strict=True):
        out.setdefault(kind, set()).add(value)
    return out
