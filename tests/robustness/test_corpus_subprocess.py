"""Robustness corpus, real processes: `python -m overlap.cli` (HF_HUB_OFFLINE=1) with a timeout, for inputs that
would hang or kill an in-process run (FIFOs and /dev/zero as input files, stdout to /dev/full, huge option
values) and a representative subset of the in-process cases. The cases run concurrently in one module fixture
(each in its own folder, snapshotted around its run); each case is then checked as its own test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from corpus_contract import FAST, check_contract, cyber_data, data_args, invoke, snapshot, swe_data

TIMEOUT = 30
GARBAGE = bytes((i * 131 + 7) % 256 for i in range(4096))


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.symlink("/dev/zero", path)


def _cyber(root):
    return cyber_data(root / "data")


def _compare(paths, bench="cybergym", *extra):
    return ["compare", "mimo-cyber", bench, *data_args(paths), "--no-report", "--format", "json", *FAST, *extra]


# Each case: root folder → (args, expected exit codes or None).
def case_fifo_tasks(root):
    paths = _cyber(root)
    _fifo(paths["cybergym"] / "tasks.json")
    return _compare(paths), {2}


def case_zero_tasks(root):
    paths = _cyber(root)
    _zero(paths["cybergym"] / "tasks.json")
    return _compare(paths), {2}


def case_fifo_mapping(root):
    paths = _cyber(root)
    _fifo(paths["arvo"] / "arvo" / "oss_fuzz_mappings.csv")
    return _compare(paths), {2}


def case_zero_mapping_file(root):
    paths = _cyber(root)
    _zero(root / "mapping.csv")
    return [*_compare({k: v for k, v in paths.items() if k != "arvo"}), "--data", f"arvo={root / 'mapping.csv'}"], {2}


def case_zero_parquet(root):
    paths = _cyber(root)
    _zero(paths["mimo-cyber"] / "cyber.parquet")
    return _compare(paths), {2}


def case_fifo_secbench(root):
    paths = _cyber(root)
    _fifo(paths["sec-bench"] / "data" / "eval-oss.jsonl")
    return _compare(paths, "sec-bench"), {2}


def case_fifo_prs_shard(root):
    paths = swe_data(root / "data")
    _fifo(paths["swe-rebench-v2-prs"] / "data" / "train-00009-of-00010.parquet")
    return ["compare", "swe-rebench-v2-prs", "swe-bench-multilingual", *data_args(paths), "--no-report", *FAST], None


def case_fifo_msb_language_file(root):
    paths = swe_data(root / "data")
    _fifo(paths["multi-swe-bench"] / "go" / "x__y_dataset.jsonl")
    return ["compare", "swe-rebench-v2", "multi-swe-bench", *data_args(paths), "--no-report", *FAST], None


def case_fifo_polybench_csv(root):
    paths = swe_data(root / "data")
    _fifo(paths["swe-polybench"] / "test.csv")
    return ["compare", "swe-rebench-v2", "swe-polybench", *data_args(paths), "--no-report", *FAST], {2}


def case_fifo_ngram_local_file(root):
    _fifo(root / "a.jsonl")
    (root / "b.jsonl").write_text(json.dumps({"id": "b", "text": "a b c"}) + "\n")
    return ["ngram", "a.jsonl", "b.jsonl", "--field", "text:text", "--id-column", "id"], {2}


def case_fifo_ngram_background(root):
    paths = _cyber(root)
    _fifo(root / "bg.txt")
    return ["ngram", "mimo-cyber", "cybergym", *data_args(paths), "--field", "prompt:description", "--background",
            "bg.txt"], {2}


def case_zero_ngram_background(root):
    paths = _cyber(root)
    _zero(root / "bg.txt")
    return ["ngram", "mimo-cyber", "cybergym", *data_args(paths), "--field", "prompt:description", "--background",
            "bg.txt"], {2}


def case_fifo_card(root):
    paths = _cyber(root)
    run = invoke("setup", ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", root / "res", *FAST],
                 root=root)
    assert run.code == 0, run.stderr
    _fifo(root / "README.md")
    return ["card", "res", "--card", "README.md", "--out", root / "card"], {2}


def case_fifo_summary_json(root):
    paths = _cyber(root)
    run = invoke("setup", ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--out", root / "res", *FAST],
                 root=root)
    assert run.code == 0, run.stderr
    _fifo(root / "res" / "summary.json")
    return ["report", "res", "--out", root / "rep"], {2}


def case_fifo_pool_file(root):
    paths = _cyber(root)
    _fifo(root / "pool.csv")
    return _compare(paths)[:-len(FAST)] + ["--pool", "pool.csv", "--no-evidence", "--text", "none"], {2}


def case_fifo_audit_fix(root):
    (root / "repo").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root / "repo", check=True)
    _fifo(root / "fix.diff")
    return ["audit", "repo", "--fix", "fix.diff"], {2}


def case_zero_audit_instance(root):
    (root / "repo").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root / "repo", check=True)
    _zero(root / "task.json")
    return ["audit", "repo", "--instance", "task.json"], {2}


def case_deep_json(root):
    paths = _cyber(root)
    (paths["cybergym"] / "tasks.json").write_text("[" * 100_000)
    return _compare(paths), {2}


def case_garbage_parquet(root):
    paths = _cyber(root)
    (paths["mimo-cyber"] / "cyber.parquet").write_bytes(GARBAGE)
    return _compare(paths), {2}


def case_fail_on_nan(root):
    return _compare(_cyber(root), "cybergym", "--fail-on", "nan%"), {2}


def case_fail_on_count(root):
    return _compare(_cyber(root), "cybergym", "--fail-on", "1"), {1}


def case_permutations_huge(root):
    paths = _cyber(root)
    return ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--no-report", "--no-evidence", "--text", "none",
            "--permutations", "99999999999"], {2}


def case_seed_negative(root):
    return _compare(_cyber(root), "cybergym", "--seed", "-1"), {2}


def case_ngram_zero(root):
    paths = _cyber(root)
    return ["ngram", "mimo-cyber", "cybergym", *data_args(paths), "--field", "prompt:description", "-n", "0"], {2}


def case_ngram_huge(root):
    return _compare(_cyber(root), "cybergym", "--ngram", "99999999999999999999"), {2}


def case_out_nonempty(root):
    paths = _cyber(root)
    (root / "mydata").mkdir()
    (root / "mydata" / "only-copy.parquet").write_bytes(b"x")
    return ["compare", "mimo-cyber", "cybergym", *data_args(paths), *FAST, "--out", "mydata"], {2}


def case_out_success(root):
    paths = _cyber(root)
    return ["compare", "mimo-cyber", "cybergym", *data_args(paths), "--format", "json", *FAST, "--out", "rep"], {0}


def case_usage_error(root):
    return ["compare", "--no-such-option"], {2}


CASES = {name[len("case_"):]: func for name, func in sorted(globals().items()) if name.startswith("case_")}
DEV_FULL = {"stdout_dev_full": lambda root: (_compare(_cyber(root)), {2})}


def _run_case(name, func, base: Path):
    root = base / name
    root.mkdir()
    try:
        args, expect = func(root)
    except Exception as exc:  # a setup failure is reported by the case's test
        return name, exc, None
    if name in DEV_FULL:
        return name, _dev_full(name, args, root), expect
    return name, invoke(f"subprocess:{name}", args, root=root, subprocess_run=True, timeout=TIMEOUT), expect


def _dev_full(name, args, root):
    from corpus_contract import Run, out_of

    before = snapshot(root)
    env = dict(os.environ, HF_HUB_OFFLINE="1", OVERLAP_OFFLINE="1")
    with open("/dev/full", "w") as full:
        try:
            proc = subprocess.run([sys.executable, "-m", "overlap.cli", *args], cwd=root, env=env, stdout=full,
                                  stderr=subprocess.PIPE, text=True, errors="replace", timeout=TIMEOUT)
            code, stderr, timed_out = proc.returncode, proc.stderr, False
        except subprocess.TimeoutExpired:
            code, stderr, timed_out = -9, "", True
    return Run(f"subprocess:{name}", args, code, "", stderr, out_of(args, root), before, snapshot(root), timed_out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("subprocess")
    todo = dict(CASES)
    if os.path.exists("/dev/full"):
        todo.update(DEV_FULL)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda item: _run_case(item[0], item[1], base), todo.items()))
    yield {name: (run, expect) for name, run, expect in results}
    # FIFOs and links are removed with the folder; nothing was opened through them here.
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("name", [*CASES, *DEV_FULL])
def test_subprocess_case(name, runs):
    if name not in runs:
        pytest.skip("/dev/full is not available")
    run, expect = runs[name]
    if isinstance(run, Exception):
        raise run
    check_contract(run, expect=expect)
