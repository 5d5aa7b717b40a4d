"""`overlap filter` on every way of naming a training set: a local CSV (its split stays CSV and is read back as
CSV), compressed files, a Hub id without --out (the default folder is named without the registry), an asked
n-gram check that cannot run (refused, not recorded as passed), and `--text` naming a column of the user's
own file. Hub loading is a Hub cache with HF_HUB_OFFLINE=1: no network."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fake_hub import make_hub_cache

from overlap.api.demo import DEMO_ROOT

SHA = "0123456789abcdef0123456789abcdef01234567"
DEMO = [f"--data={name}={DEMO_ROOT / name}" for name in ("cybergym", "arvo")]
CONTAMINATED = 8  # demo MiMo rows dropped for CyberGym (the one bug listed twice is among them)


def run(*args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
    return subprocess.run([sys.executable, "-m", "overlap.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """The demo MiMo rows as a user's CSV (a quoted newline in one record) and JSON lines, plain and
    compressed."""
    folder = tmp_path_factory.mktemp("names")
    rows = pq.read_table(DEMO_ROOT / "mimo-cyber" / "cyber.parquet").to_pylist()
    records = [{"id": r["extra_info"]["instance_id"], "text": json.loads(r["extra_info"]["instance_json"])
                ["problem_statement"]} for r in rows]
    records[-1]["text"] += "\nsecond line"
    with open(folder / "mix.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "text"])
        writer.writeheader()
        writer.writerows(records)
    lines = "".join(json.dumps(r) + "\n" for r in records).encode()
    (folder / "mix.jsonl").write_bytes(lines)
    (folder / "mix.csv.gz").write_bytes(gzip.compress((folder / "mix.csv").read_bytes(), mtime=0))
    with pa.output_stream(str(folder / "mix.jsonl.zst"), compression="zstd") as out:
        out.write(lines)
    return folder


def _one_line_error(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert all(w in done.stderr for w in words), done.stderr


def test_a_csv_training_file_gives_a_csv_split_read_back_as_csv(work):
    done = run("filter", "mix.csv", "cybergym", "--id-column", "id", *DEMO, "--out", "f-csv", cwd=work)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (work / "f-csv" / "data").iterdir()) == ["mix.csv"]
    written = (work / "f-csv" / "data" / "mix.csv").read_text()
    source = (work / "mix.csv").read_text()
    kept = list(csv.DictReader(written.splitlines(keepends=True)))
    assert len(kept) == 11 - CONTAMINATED
    assert written.splitlines()[0] == source.splitlines()[0]
    assert all(line in source for line in written.splitlines())  # records copied as written
    verification = json.loads((work / "f-csv" / "filter.json").read_text())["verification"]
    assert verification["reader"] == ["pyarrow.csv"] and verification["rows_read"] == len(kept)


@pytest.mark.parametrize("name, shard, reader", [
    ("mix.csv.gz", "mix.csv.gz", "pyarrow.csv"),
    ("mix.jsonl.zst", "mix.jsonl.zst", "json (standard library), line by line"),
])
def test_a_compressed_training_file_keeps_its_compression(work, name, shard, reader):
    out = f"f-{name}"
    done = run("filter", name, "cybergym", "--id-column", "id", *DEMO, "--out", out, cwd=work)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in (work / out / "data").iterdir()] == [shard]
    info = json.loads((work / out / "filter.json").read_text())
    assert info["kept_rows"] == 3 and info["verification"]["reader"] == [reader]


def test_a_hub_id_read_by_columns_needs_no_out(work, tmp_path):
    cache = tmp_path / "hub"
    make_hub_cache(cache, "me/my-rl-mix", {"cyber.parquet": DEMO_ROOT / "mimo-cyber" / "cyber.parquet"}, SHA)
    env = {"HF_HUB_CACHE": str(cache)}
    done = run("filter", "me/my-rl-mix@main", "cybergym", "--id-column", "extra_info.instance_id", *DEMO,
               cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "filtered").iterdir()
    assert folder.name.startswith("me_my-rl-mix@main-minus-cybergym")
    assert json.loads((folder / "filter.json").read_text())["removed_rows"] == CONTAMINATED
    done = run("compare", "me/my-rl-mix", "cybergym", "--id-column", "extra_info.instance_id", *DEMO, "--pool",
               "none", "--no-evidence", "--text", "none", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    (report,) = (tmp_path / "reports").iterdir()
    assert report.name.startswith("me_my-rl-mix__cybergym") and (report / "pairs.csv").is_file()


def test_an_ngram_drop_that_cannot_run_is_refused(work):
    done = run("filter", "mix.jsonl", "cybergym", "--id-column", "id", *DEMO, "--drop", "ngram:13", "--out",
               "f-ngram", cwd=work)
    _one_line_error(done, "ngram:13", "no text field", "--text")
    assert not (work / "f-ngram").exists()


def test_text_names_a_column_of_the_users_own_file(work):
    done = run("filter", "mix.jsonl", "cybergym", "--id-column", "id", "--text", "text:description", *DEMO,
               "--drop", "id", "--drop", "ngram:13", "--out", "f-text", cwd=work)
    assert done.returncode == 0, done.stderr
    info = json.loads((work / "f-text" / "filter.json").read_text())
    assert info["reasons_asked"] == ["id", "ngram:13"]
    assert [n["reason"] for n in info["verification"]["not_checked"]] == ["ngram:13"]
    done = run("compare", "mix.jsonl", "cybergym", "--id-column", "id", "--text", "text:description", *DEMO,
               "--pool", "none", "--no-evidence", "--format", "json", "--no-report", cwd=work)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["benches"][0]["text"]["status"] == "ran"
