"""The reported cases, spelled out: a training mix whose id column holds an OSS-Fuzz id and a PR URL, compared
with `--id-column task` against the demo CyberGym, matched nothing; an unrelated SWE benchmark beside CyberGym
wiped out CyberGym's matches; `--id-scheme ossfuzz` read a PR URL as an OSS-Fuzz issue; `overlap matrix` neither
translated old OSS-Fuzz ids nor counted OSS-Fuzz pairs. Each is checked against the mix oracle too, so the
expected answers here are the documented rules', not hand-picked."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from mix_oracle import REPO_ROOT, Columns, Data, cybergym, filter_plan, matched_bench, matrix_cells
from mix_run import QUIET, cli, data_args, kept_rows
from mix_strategies import DATA

from overlap.api import compare
from overlap.api.matrix import matrix
from overlap.sources.rows.generic import read_generic

MIX = ['{"task": "arvo:10055"}', '{"task": "https://github.com/Owner/Repo/pull/12"}']


def _write(folder, lines, name="mix.jsonl"):
    path = folder / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_reported_mix_finds_the_ossfuzz_match_through_the_library(tmp_path):
    train = _write(tmp_path, MIX)
    oracle = matched_bench(Data("mix.jsonl", [json.loads(line) for line in MIX]), cybergym())
    assert oracle == {"arvo:10055"}
    result = compare(str(train), ["cybergym"], id_column="task", data=DATA, **QUIET)
    assert result["cybergym"].contaminated_ids() == ["arvo:10055"], result["cybergym"].pairs.to_dict("records")


def test_reported_mix_finds_the_ossfuzz_match_through_python_m_overlap_cli(tmp_path):
    train = _write(tmp_path, MIX)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, "-m", "overlap.cli", "compare", str(train), "cybergym", "--id-column", "task",
            *data_args(), "--format", "json", "--no-report", "--pool", "none", "--no-evidence", "--text", "none"]
    done = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    (bench,) = json.loads(done.stdout)["benches"]
    assert bench["bench"] == "cybergym"
    assert bench["bench_items_matched"] == 1, json.dumps(bench, indent=1)[:3000]


def test_reported_mix_filter_with_default_reasons_drops_the_ossfuzz_row(tmp_path):
    train = _write(tmp_path, MIX)
    plan = filter_plan(Data("mix.jsonl", [json.loads(line) for line in MIX]), [cybergym()])
    assert plan.kept == [1]
    run = cli(["filter", str(train), "cybergym", "--id-column", "task", *data_args(), "--out", str(tmp_path / "out")])
    assert run.exit_code == 0 and not run.crash, run.describe()
    assert kept_rows(tmp_path / "out", train) == [MIX[1]], run.stdout


def test_an_unrelated_swe_benchmark_does_not_change_cybergym(tmp_path):
    train = _write(tmp_path, ['{"task": "arvo_42471001"}', '{"task": "oss-fuzz:42471120"}'])
    swe = _write(tmp_path, ['{"task": "psf__requests-2317"}'], "swe.jsonl")
    alone = compare(str(train), ["cybergym"], id_column="task", data=DATA, **QUIET)
    beside = compare(str(train), ["cybergym", str(swe)], id_column="task", data=DATA, **QUIET)
    expected = ["arvo:10055", "oss-fuzz:42471120"]
    rows = [{"task": "arvo_42471001"}, {"task": "oss-fuzz:42471120"}]
    assert matched_bench(Data("mix.jsonl", rows), cybergym()) == set(expected)
    assert alone["cybergym"].contaminated_ids() == expected
    assert beside["cybergym"].contaminated_ids() == expected


def test_forced_ossfuzz_scheme_does_not_read_a_pr_url_as_an_issue(tmp_path):
    # CyberGym holds arvo:10340; the PR URL's number is 10340, but it is a pull request, not that issue.
    lines = ['{"task": "https://github.com/google/oss-fuzz/pull/10340"}', '{"task": "bug-12007"}']
    train = _write(tmp_path, lines)
    columns = Columns(scheme="ossfuzz")
    assert matched_bench(Data("mix.jsonl", [json.loads(line) for line in lines], columns), cybergym()) == {"arvo:12007"}
    result = compare(str(train), ["cybergym"], columns=columns.options(), data=DATA, **QUIET)
    assert result["cybergym"].contaminated_ids() == ["arvo:12007"]


def test_matrix_translates_old_ids_and_counts_ossfuzz_pairs(tmp_path):
    # arvo_11873 is CyberGym's oss-fuzz:42471120 under its old id; arvo_42471001 its arvo:10055 under the new one.
    lines = ['{"task": "arvo_11873"}', '{"task": "arvo_42471001"}', '{"task": "https://github.com/Owner/Repo/pull/12"}']
    train = _write(tmp_path, lines)
    expected = matrix_cells([Data("mix.jsonl", [json.loads(line) for line in lines]), cybergym()])
    assert expected == {("mix.jsonl", "cybergym"): 2, ("cybergym", "mix.jsonl"): 2}
    result = matrix([read_generic(str(train), id_column="task"), "cybergym"], data=DATA)
    cells = {(r["bench"], r["other"]): int(r["bench_items_found"]) for r in result.cells.to_dict("records")}
    assert cells == expected
