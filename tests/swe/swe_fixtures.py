"""Hand-made SWE fixtures in the real schemas (as their declarations name them), written as local folders
laid out like the Hub repos.

The cases, by PR (train = SWE-rebench-V2):

| PR | train | benchmarks | what it shows |
|---|---|---|---|
| clap-rs/clap#941 | as `kbknapp/clap-rs`, base A1 | MSB rust, base A1 | known rename: repo_pr via renames, base_pr |
| prettier/prettier#5012 | as `jlongster/prettier`, A2 | PolyBench (`5012.0`), A2 | known rename, float PR |
| BurntSushi/ripgrep#1367 | A3 | MSB A3; Multilingual `burntsushi/ripgrep` A3; PolyBench A3 | lowercase repo |
| tokio-rs/tokio#2145 | A4 | MSB A4; Multilingual B4 | the same PR at two base commits |
| keras-team/keras#19284 | A5 | PolyBench `19284.0`, A5 in upper case (Verified); SWE-bench A5 | float PR, base case |
| alibaba/fastjson2#2775 | A6 (+ a duplicated row) | MSB java A6 | duplicated instance id |
| mui/material-ui | #32000 A7 | MSB ts #33000 B7 | repo present, no overlap |
| Kotlin/kotlinx.coroutines#3000 | A8 | MSB kotlin/ A8 | subset kotlin_ext |
| tokio-rs/tokio#2146 / #2150 | #2146 at C9 | Multilingual #2150 at C9 | same base, other PR (not counted) |
| ansible/ansible | #80000 A10 fix PA; #80001 A11 fix PB | Pro A10 fix PA; Pro A11 fix PC | Pro: same fix counted |
| django/django#11099 | A12 | SWE-bench test A12 (Verified); MSB python/ (left out) | python/ excluded |
| sharkdp/bat#1000 | empty base | Multilingual B13 | empty base: same PR, base unknown |
| not-an-id | base A14 | - | malformed id: base key only |
| microsoft/vscode#100 | A16 | PolyBench without repo, A16 | base_pr finds a row without repo |
| rust-lang-nursery/futures-rs#1800 | A17 | MSB as `rust-lang/futures-rs`, A17 | suggested rename |
| redis/redis#9000 | - | Multilingual B20; Pro B20 same patch | Pro vs Multilingual identical fix |

The test modules import the fixtures from here (`from swe_fixtures import ...`) instead of a conftest.py, so
this folder adds no `conftest` module that other test folders' `from conftest import ...` could pick up.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


def sha(tag: str) -> str:
    return hashlib.sha1(tag.encode()).hexdigest()


def diff(path: str, removed: str, added: str, index: bool = False) -> str:
    head = f"diff --git a/{path} b/{path}\n"
    if index:
        head += f"index {sha(path + removed)[:10]}..{sha(path + added)[:10]} 100644\n"
    return head + (f"--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n context one\n-{removed}\n+{added}\n"
                   " context two\n")


A = {n: sha(f"A{n}") for n in range(1, 21)}
B = {n: sha(f"B{n}") for n in range(1, 21)}
C9 = sha("C9")
PATCH = {
    "tokio": diff("tokio/src/runtime.rs", "let x = 1;", "let x = 2;"),
    "bat": diff("src/printer.rs", "print(a)", "print(b)"),
    "PA": diff("lib/ansible/module.py", "return None", "return value", index=True),
    "PB": diff("lib/ansible/config.py", "x = 1", "x = 2"),
    "PC": diff("lib/ansible/config.py", "x = 1", "x = 3"),
    "redis": diff("src/server.c", "int a = 0;", "int a = 1;", index=True),
}


def write_parquet(path: Path, rows: list[dict], row_group_size: int | None = None, schema=None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, row_group_size=row_group_size)


def write_jsonl(path: Path, rows: list, extra_lines: tuple[str, ...] = ()) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) if not isinstance(r, str) else r for r in rows] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_csv(path: Path, rows: list[dict]) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, dtype=str).to_csv(path, index=False)


# --- SWE-rebench-V2 (train) ---------------------------------------------------------------------------


def rebench_row(instance_id, repo, base, patch=None, language="rust", text=None):
    return {"instance_id": instance_id, "repo": repo, "base_commit": base,
            "problem_statement": text or f"Issue text of {instance_id}", "patch": patch or diff("f.txt", "a", "b"),
            "language": language}


REBENCH_ROWS = [
    rebench_row("kbknapp__clap-rs-941", "kbknapp/clap-rs", A[1]),
    rebench_row("jlongster__prettier-5012", "jlongster/prettier", A[2], language="js"),
    rebench_row("burntsushi__ripgrep-1367", "BurntSushi/ripgrep", A[3]),
    rebench_row("tokio-rs__tokio-2145", "tokio-rs/tokio", A[4], patch=PATCH["tokio"]),
    rebench_row("keras-team__keras-19284", "keras-team/keras", A[5], language="python"),
    rebench_row("alibaba__fastjson2-2775", "alibaba/fastjson2", A[6], language="java"),
    rebench_row("mui__material-ui-32000", "mui/material-ui", A[7], language="ts"),
    rebench_row("kotlin__kotlinx.coroutines-3000", "Kotlin/kotlinx.coroutines", A[8], language="kotlin"),
    rebench_row("tokio-rs__tokio-2146", "tokio-rs/tokio", C9),
    rebench_row("ansible__ansible-80000", "ansible/ansible", A[10], patch=PATCH["PA"], language="python"),
    rebench_row("ansible__ansible-80001", "ansible/ansible", A[11], patch=PATCH["PB"], language="python"),
    rebench_row("django__django-11099", "django/django", A[12], language="python"),
    rebench_row("sharkdp__bat-1000", "sharkdp/bat", "", patch=PATCH["bat"]),
    rebench_row("not-an-id", "foo/bar", A[14]),
    rebench_row("alibaba__fastjson2-2775", "alibaba/fastjson2", A[6], language="java"),  # duplicated id
    rebench_row("microsoft__vscode-100", "microsoft/vscode", A[16], language="ts"),
    rebench_row("rust-lang-nursery__futures-rs-1800", "rust-lang-nursery/futures-rs", A[17]),
]


# --- Multi-SWE-bench ----------------------------------------------------------------------------------


def msb_row(org, repo, number, base, patch=None, issue="Bug report", instance_id=True):
    row = {"org": org, "repo": repo, "number": number, "state": "closed", "title": f"Fix #{number}",
           "body": "PR body", "base": {"label": f"{org}:master", "ref": "master", "sha": base},
           "resolved_issues": [{"number": 1, "title": issue, "body": f"{issue} body"}],
           "fix_patch": patch or diff("src/lib.rs", "old", "new"), "test_patch": diff("tests/t.rs", "t0", "t1"),
           "fixed_tests": {"t": {"run": "PASS", "test": "FAIL", "fix": "PASS"}}}
    if instance_id:
        row["instance_id"] = f"{org}__{repo}-{number}"
    return row


def write_msb(root: Path) -> None:
    write_jsonl(root / "rust" / "clap-rs__clap_dataset.jsonl", [msb_row("clap-rs", "clap", 941, A[1])])
    write_jsonl(root / "rust" / "BurntSushi__ripgrep_dataset.jsonl", [msb_row("BurntSushi", "ripgrep", 1367, A[3])])
    write_jsonl(root / "rust" / "tokio-rs__tokio_dataset.jsonl",
                [msb_row("tokio-rs", "tokio", 2145, A[4], patch=PATCH["tokio"])])
    write_jsonl(root / "rust" / "rust-lang__futures-rs_dataset.jsonl",
                [msb_row("rust-lang", "futures-rs", 1800, A[17], instance_id=False)])
    no_number = msb_row("alibaba", "fastjson2", None, sha("E1"))
    no_number["instance_id"] = "alibaba__fastjson2-2800"
    write_jsonl(root / "java" / "alibaba__fastjson2_dataset.jsonl", [msb_row("alibaba", "fastjson2", 2775, A[6]),
                                                                     no_number])
    write_jsonl(root / "ts" / "mui__material-ui_dataset.jsonl", [msb_row("mui", "material-ui", 33000, B[7])],
                extra_lines=('{"org": "mui", "repo": "material-ui", "number": 1',))  # a truncated line
    write_jsonl(root / "kotlin" / "Kotlin__kotlinx.coroutines_dataset.jsonl",
                [msb_row("Kotlin", "kotlinx.coroutines", 3000, A[8])])
    write_jsonl(root / "python" / "django__django_dataset.jsonl", [msb_row("django", "django", 11099, A[12])])


# --- SWE-PolyBench (+ Verified) -----------------------------------------------------------------------


def poly_row(instance_id, repo, pull_number, base, language="Python", patch=None):
    return {"instance_id": instance_id, "repo": repo, "base_commit": base, "patch": patch or diff("a.py", "x", "y"),
            "test_patch": diff("test_a.py", "t", "u"), "problem_statement": f"Problem of {instance_id}",
            "F2P": "['test_a']", "P2P": "[]", "language": language, "Dockerfile": "FROM python:3.11",
            "test_command": "pytest", "task_category": "Bug Fix", "pull_number": pull_number}


POLY_ROWS = [
    poly_row("prettier__prettier-5012", "prettier/prettier", "5012.0", A[2], language="JavaScript"),
    poly_row("keras-team__keras-19284", "keras-team/keras", "19284.0", A[5].upper()),
    poly_row("microsoft__vscode-100", "", "100", A[16], language="TypeScript"),
    poly_row("angular__angular-abc", "angular/angular", "abc", sha("D4"), language="TypeScript"),
    poly_row("huggingface__transformers-500", "huggingface/transformers", "500", ""),
    poly_row("BurntSushi__ripgrep-1367", "BurntSushi/ripgrep", "1367.0", A[3], language="Rust"),
]
POLY_VERIFIED_IDS = ["keras-team__keras-19284", "huggingface__transformers-500"]


# --- SWE-bench family ---------------------------------------------------------------------------------


def swebench_row(instance_id, repo, base, patch=None):
    return {"repo": repo, "instance_id": instance_id, "base_commit": base, "patch": patch or diff("m.py", "p", "q"),
            "test_patch": diff("tests/test_m.py", "a", "b"), "problem_statement": f"Issue {instance_id}",
            "hints_text": "", "created_at": "2020-01-01T00:00:00Z", "version": "3.0", "FAIL_TO_PASS": "[]",
            "PASS_TO_PASS": "[]", "environment_setup_commit": sha("env" + repo)}


MULTILINGUAL_ROWS = [
    swebench_row("burntsushi__ripgrep-1367", "burntsushi/ripgrep", A[3]),
    swebench_row("tokio-rs__tokio-2145", "tokio-rs/tokio", B[4], patch=PATCH["tokio"]),
    swebench_row("tokio-rs__tokio-2150", "tokio-rs/tokio", C9),
    swebench_row("sharkdp__bat-1000", "sharkdp/bat", B[13], patch=PATCH["bat"]),
    swebench_row("redis__redis-9000", "redis/redis", B[20], patch=PATCH["redis"]),
    swebench_row("burntsushi__ripgrep-1367", "burntsushi/ripgrep", A[3]),  # duplicated id
]
SWEBENCH_TEST = [
    swebench_row("django__django-11099", "django/django", A[12]),
    swebench_row("psf__requests-2317", "psf/requests", sha("F1")),
    swebench_row("keras-team__keras-19284", "keras-team/keras", A[5]),
]
SWEBENCH_DEV = [swebench_row("sqlfluff__sqlfluff-4764", "sqlfluff/sqlfluff", sha("G1"))]
SWEBENCH_VERIFIED = [swebench_row("django__django-11099", "django/django", A[12])]


def pro_row(instance_id, repo, base, patch):
    return {"repo": repo, "instance_id": instance_id, "base_commit": base, "patch": patch,
            "test_patch": diff("test/t.py", "a", "b"), "problem_statement": f"Pro task {instance_id}",
            "requirements": "Must do X", "interface": "No new interfaces", "repo_language": "python",
            "fail_to_pass": "[]", "pass_to_pass": "[]"}


PRO = {
    "p1": pro_row(f"instance_ansible__ansible-{A[10]}-v0f01c69f", "ansible/ansible", A[10], PATCH["PA"]),
    "p2": pro_row(f"instance_ansible__ansible-{A[11]}-v0f01c69f", "ansible/ansible", A[11], PATCH["PC"]),
    "p3": pro_row(f"instance_redis__redis-{B[20]}-v1", "redis/redis", B[20], PATCH["redis"]),
}


def write_all(root: Path) -> dict[str, Path]:
    """Write every fixture folder under `root`; returns {dataset name: folder} for `data=`."""
    write_parquet(root / "SWE-rebench-V2" / "data" / "train-00000-of-00001.parquet", REBENCH_ROWS)
    write_msb(root / "Multi-SWE-bench")
    write_csv(root / "SWE-PolyBench" / "test.csv", POLY_ROWS)
    write_csv(root / "SWE-PolyBench_Verified" / "test.csv",
              [r for r in POLY_ROWS if r["instance_id"] in POLY_VERIFIED_IDS])
    write_parquet(root / "SWE-bench_Multilingual" / "data" / "test-00000-of-00001.parquet", MULTILINGUAL_ROWS)
    write_parquet(root / "SWE-bench" / "data" / "test-00000-of-00001.parquet", SWEBENCH_TEST)
    write_parquet(root / "SWE-bench" / "data" / "dev-00000-of-00001.parquet", SWEBENCH_DEV)
    write_parquet(root / "SWE-bench_Verified" / "data" / "test-00000-of-00001.parquet", SWEBENCH_VERIFIED)
    pro = root / "SWE-bench_Pro" / "data"
    write_parquet(pro / "default" / "test-00000-of-00001.parquet", [PRO["p1"], PRO["p2"], PRO["p3"]])
    write_parquet(pro / "hard" / "test-00000-of-00001.parquet", [PRO["p2"]])
    write_parquet(pro / "v1" / "test-00000-of-00001.parquet", [PRO["p1"], PRO["p2"], PRO["p3"]])
    write_jsonl(root / "Multi-SWE-RL" / "data_20240601_20250331" / "multi_swe_bench_discarded_instances.jsonl",
                [{"org": "BurntSushi", "repo": "ripgrep", "number": 1368},
                 {"org": "tokio-rs", "repo": "tokio", "number": 2145}])
    return {
        "swe-rebench-v2": root / "SWE-rebench-V2",
        "multi-swe-bench": root / "Multi-SWE-bench",
        "swe-polybench": root / "SWE-PolyBench",
        "swe-polybench-verified": root / "SWE-PolyBench_Verified",
        "swe-bench-multilingual": root / "SWE-bench_Multilingual",
        "swe-bench": root / "SWE-bench",
        "swe-bench-verified": root / "SWE-bench_Verified",
        "swe-bench-pro": root / "SWE-bench_Pro",
        "multi-swe-rl-discarded": root / "Multi-SWE-RL",
    }


# --- SWE-rebench-V2-PRs: several files, row groups of 2, a file missing a column, one unusable ----------

PRS_SCHEMA = pa.schema([("instance_id", pa.string()), ("repo", pa.string()), ("pull_number", pa.int64()),
                        ("base_commit", pa.string()), ("problem_statement", pa.string()), ("patch", pa.string())])


def prs_row(instance_id, repo, pull_number, base, text, patch=None):
    return {"instance_id": instance_id, "repo": repo, "pull_number": pull_number, "base_commit": base,
            "problem_statement": text, "patch": patch or diff("x.rs", "1", "2")}


def write_prs(root: Path) -> Path:
    folder = root / "SWE-rebench-V2-PRs"
    write_parquet(folder / "data" / "train-00000-of-00003.parquet", [
        prs_row("kbknapp__clap-rs-941", "kbknapp/clap-rs", 941, A[1], "LLM text clap"),
        prs_row("burntsushi__ripgrep-1367", "BurntSushi/ripgrep", 1367, A[3], "LLM text ripgrep (first)"),
        prs_row("burntsushi__ripgrep-1367", "BurntSushi/ripgrep", 1367, A[3], "LLM text ripgrep (repeat)"),
        prs_row("burntsushi__ripgrep-1367", "BurntSushi/ripgrep", 1367, sha("Z"), "LLM text ripgrep (other base)"),
        prs_row("tokio-rs__tokio-2145", "tokio-rs/tokio", 2145, A[4], "LLM text tokio", patch=PATCH["tokio"]),
    ], row_group_size=2, schema=PRS_SCHEMA)
    # pull_number as text in this file, one of them not a number
    text_schema = pa.schema([(f.name, pa.string()) for f in PRS_SCHEMA])
    write_parquet(folder / "data" / "train-00001-of-00003.parquet", [
        prs_row("x__y-5", "x/y", "five", sha("X5"), "LLM text x"),
        prs_row("mui__material-ui-33000", "mui/material-ui", "33000", B[7], "LLM text mui"),
    ], row_group_size=2, schema=text_schema)
    # a file without base_commit
    rows = [prs_row("alibaba__fastjson2-2775", "alibaba/fastjson2", 2775, None, "LLM text fastjson2")]
    for row in rows:
        del row["base_commit"]
    write_parquet(folder / "data" / "train-00002-of-00003.parquet", rows)
    # a file with no id columns at all: unusable, counted
    write_parquet(folder / "extra" / "texts-only.parquet", [{"problem_statement": "orphan", "patch": "orphan"}])
    return folder


@pytest.fixture(scope="session")
def swe_data(tmp_path_factory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("swe"))


@pytest.fixture(scope="session")
def prs_folder(tmp_path_factory) -> Path:
    return write_prs(tmp_path_factory.mktemp("prs"))


@pytest.fixture(autouse=True)
def offline_hub(monkeypatch):
    """Tests never touch the network."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
