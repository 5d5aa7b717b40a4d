"""The command line on a user's own dataset: `overlap compare my.jsonl cybergym --id-column …` and the same
from a Hub dataset id (a Hub cache, HF_HUB_OFFLINE=1) give the registered adapter's pairs; `overlap filter`
writes and verifies a split of it; column options nobody uses and unknown Hub ids are one clear error."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fake_hub import make_hub_cache

from overlap.api.demo import DEMO_ROOT

SHA = "0123456789abcdef0123456789abcdef01234567"
DEMO = [f"--data={name}={DEMO_ROOT / name}" for name in ("cybergym", "arvo")]
QUICK = ["--pool", "none", "--no-evidence", "--text", "none"]


def run(*args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
    return subprocess.run([sys.executable, "-m", "overlap.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def pairs_of(folder: Path) -> list[tuple[str, str, str]]:
    with open(folder / "pairs.csv", newline="") as handle:
        return sorted((r["train_id"], r["bench_id"], r["kinds"]) for r in csv.DictReader(handle))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """The demo MiMo rows as a user's JSONL, and the registered compare of the same rows for reference."""
    folder = tmp_path_factory.mktemp("any")
    rows = pq.read_table(DEMO_ROOT / "mimo-cyber" / "cyber.parquet").to_pylist()
    (folder / "my.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run("compare", "mimo-cyber", "cybergym", f"--data=mimo-cyber={DEMO_ROOT / 'mimo-cyber'}", *DEMO, *QUICK,
               "--out", "registered", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


def test_compare_a_jsonl_by_its_id_column(work):
    done = run("compare", "my.jsonl", "cybergym", "--id-column", "extra_info.instance_id", *DEMO, *QUICK,
               "--out", "mine", cwd=work)
    assert done.returncode == 0, done.stderr
    assert pairs_of(work / "mine") == pairs_of(work / "registered") and pairs_of(work / "mine")
    summary = json.loads((work / "mine" / "summary.json").read_text())
    assert summary["train"]["name"] == "my.jsonl"  # the label is the file name, never a guess
    rows = len((work / "my.jsonl").read_text().splitlines())
    recognition = summary["train"]["id_recognition"]
    assert recognition["recognised"]["ossfuzz"]["count"] == rows and recognition["unrecognised"]["count"] == 0
    assert "my.jsonl: ids read as ossfuzz" in done.stderr


def test_compare_a_hub_dataset_by_id_and_revision(work, tmp_path):
    cache = tmp_path / "hub"
    make_hub_cache(cache, "me/my-rl-mix", {"cyber.parquet": DEMO_ROOT / "mimo-cyber" / "cyber.parquet"}, SHA,
                   refs=("main", "v1"))
    done = run("compare", "me/my-rl-mix@v1", "cybergym", "--id-column", "extra_info.instance_id", *DEMO, *QUICK,
               "--out", tmp_path / "hub-run", cwd=work, env={"HF_HUB_CACHE": str(cache)})
    assert done.returncode == 0, done.stderr
    assert pairs_of(tmp_path / "hub-run") == pairs_of(work / "registered")
    train = json.loads((tmp_path / "hub-run" / "summary.json").read_text())["train"]
    assert train["provenance"]["revision"] == SHA and train["provenance"]["repo_id"] == "me/my-rl-mix"


def test_filter_a_jsonl_keeps_what_the_registered_filter_keeps(work):
    mine = run("filter", "my.jsonl", "cybergym", "--id-column", "extra_info.instance_id", *DEMO, "--out", "f-mine",
               cwd=work)
    assert mine.returncode == 0, mine.stderr
    registered = run("filter", "mimo-cyber", "cybergym", f"--data=mimo-cyber={DEMO_ROOT / 'mimo-cyber'}", *DEMO,
                     "--out", "f-registered", cwd=work)
    assert registered.returncode == 0, registered.stderr
    assert "verified: 0 of" in mine.stdout
    kept = [json.loads(line) for line in (work / "f-mine" / "data" / "my.jsonl").read_text().splitlines()]
    kept_registered = pq.read_table(work / "f-registered" / "data" / "cyber.parquet").to_pylist()
    assert [r["extra_info"]["instance_id"] for r in kept] == [r["extra_info"]["instance_id"] for r in kept_registered]
    inputs = (work / "my.jsonl").read_text().splitlines()
    assert all(line in inputs for line in (work / "f-mine" / "data" / "my.jsonl").read_text().splitlines())


@pytest.mark.parametrize("args, words", [
    (["compare", "me/not-registered", "cybergym"], "--id-column"),
    (["compare", "cybergym", "sec-bench", "--id-column", "id"], "registered"),
    (["compare", "my.jsonl", "cybergym", "--id-column", "no_such_column"], "no_such_column"),
    (["compare", "my.jsonl", "cybergym", "--id-column", "extra_info.instance_id", "--id-scheme", "nope"], "nope"),
    (["compare", "my.jsonl", "cybergym", "--id-column", "extra_info.instance_id", "--split", "test"], "split"),
])
def test_misuse_is_one_clear_line(work, args, words):
    done = run(*args, *DEMO, "--no-report", cwd=work)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and words in done.stderr and "Traceback" not in done.stderr
