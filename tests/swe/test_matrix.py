# ruff: noqa: F811  (pytest fixtures imported from swe_fixtures are test arguments of the same name)
"""`overlap matrix multi-swe-bench swe-polybench swe-bench-multilingual swe-bench swe-bench-pro` on local
Hub-like folders (counts checked by hand against conftest's table), through the library and through the CLI
function registered on a small typer app."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer
from swe_fixtures import offline_hub, swe_data  # noqa: F401
from typer.testing import CliRunner

from overlap.api import matrix
from overlap.cli.matrix import matrix as matrix_command

BENCHES = ["multi-swe-bench", "swe-polybench", "swe-bench-multilingual", "swe-bench", "swe-bench-pro"]


def data_args(data) -> list[str]:
    return [arg for name, path in data.items() for arg in ("--data", f"{name}={path}")]


@pytest.fixture(scope="module")
def cli():
    app = typer.Typer()
    app.command()(matrix_command)

    @app.command()
    def version() -> None:  # a second command, so `matrix` is a named subcommand as in the real app
        """Print nothing."""

    return app


@pytest.fixture(scope="module")
def result(swe_data):
    return matrix(BENCHES, data=swe_data)


def found(result, bench, other):
    cells = result.cells.set_index(["bench", "other"])
    return int(cells.loc[(bench, other), "bench_items_found"]), float(cells.loc[(bench, other), "share"])


def test_cells(result):
    assert found(result, "multi-swe-bench", "swe-bench-multilingual") == (2, 0.25)  # ripgrep, tokio (other base)
    assert found(result, "swe-bench-multilingual", "multi-swe-bench") == (2, 0.4)
    assert found(result, "multi-swe-bench", "swe-polybench") == (1, 0.125)
    assert found(result, "swe-polybench", "swe-bench") == (1, 0.1667)  # keras
    assert found(result, "swe-bench-pro", "swe-bench-multilingual") == (1, 0.3333)  # redis, identical fix
    assert found(result, "multi-swe-bench", "swe-bench") == (0, 0.0)  # python/ is left out
    assert len(result.cells) == 20 and not result.cells["skipped"].any()


def test_items_in_other_benchmarks(result):
    rows = {r["bench"]: (r["items"], r["in_ge1_other"], r["in_ge2_other"]) for r in result.bench_rows()}
    assert rows == {"multi-swe-bench": (8, 2, 1), "swe-polybench": (6, 2, 1), "swe-bench-multilingual": (5, 3, 1),
                    "swe-bench": (3, 1, 0), "swe-bench-pro": (3, 1, 0)}


def test_pair_kinds_and_shared_repos(result):
    couples = result.couples.set_index(["a", "b"])
    ml = couples.loc[("multi-swe-bench", "swe-bench-multilingual")]
    assert (ml["pairs_same_pr_same_base"], ml["pairs_same_pr_other_base"], ml["shared_repos"]) == (1, 1, 2)
    pro = couples.loc[("swe-bench-multilingual", "swe-bench-pro")]
    assert (pro["pairs_same_base_identical_fix_no_pr"], pro["pairs_counted"]) == (1, 1)
    assert result.shared_repos[("multi-swe-bench", "swe-bench-multilingual")] == ["burntsushi/ripgrep",
                                                                                 "tokio-rs/tokio"]
    assert couples["shared_repos"].to_dict()[("swe-polybench", "swe-bench")] == 1
    assert set(result.pairs["pair_kind"]) == {"same_pr_same_base", "same_pr_other_base",
                                              "same_base_identical_fix_no_pr"}


def test_a_benchmark_is_not_compared_with_its_own_subset(swe_data):
    result = matrix(["swe-bench", "swe-bench-verified", "multi-swe-bench", "multi-swe-bench:kotlin_ext",
                     "swe-polybench", "swe-polybench-verified"], data=swe_data)
    skipped = result.couples[result.couples["skipped"] != ""][["a", "b"]].values.tolist()
    assert skipped == [["swe-bench", "swe-bench-verified"], ["multi-swe-bench", "multi-swe-bench:kotlin_ext"],
                       ["swe-polybench", "swe-polybench-verified"]]
    cells = result.cells.set_index(["bench", "other"])
    assert bool(cells.loc[("swe-bench-verified", "swe-bench"), "skipped"])
    assert found(result, "swe-polybench-verified", "swe-bench") == (1, 0.5)


def test_cli_formats_and_report_folder(cli, swe_data, tmp_path):
    base = ["matrix", *BENCHES, *data_args(swe_data)]
    as_json = CliRunner().invoke(cli, [*base, "--format", "json", "--out", str(tmp_path / "m")])
    assert as_json.exit_code == 0, as_json.output
    summary = json.loads(as_json.stdout)
    assert [b["in_ge1_other"] for b in summary["benches"]] == [2, 2, 3, 1, 1]
    assert {p.name for p in (tmp_path / "m").iterdir()} == {".overlap-output", "summary.json", "cells.csv",
                                                          "couples.csv", "pairs.csv"}
    assert (tmp_path / "m" / "summary.json").read_text() == as_json.stdout
    as_csv = CliRunner().invoke(cli, [*base, "--format", "csv"])
    assert as_csv.stdout.splitlines()[0] == "bench,other,bench_items,skipped,bench_items_found,share"
    assert "swe-bench-pro,swe-bench-multilingual,3,False,1,0.3333" in as_csv.stdout
    as_md = CliRunner().invoke(cli, [*base, "--format", "md"])
    assert "| swe-bench-multilingual | 5 | 2 (40.0%) | 1 (20.0%) | - | 0 (0.0%) | 1 (20.0%) | 3 (60.0%) | 1 (20.0%) |" \
        in as_md.stdout
    table = CliRunner().invoke(cli, base)
    assert table.exit_code == 0 and "overlap matrix" in table.stdout
    again = CliRunner().invoke(cli, [*base, "--format", "json"])
    assert again.stdout == as_json.stdout  # deterministic


def test_cli_errors_exit_2(cli, swe_data):
    one = CliRunner().invoke(cli, ["matrix", "swe-bench", *data_args(swe_data)])
    assert one.exit_code == 2 and "at least two" in one.stderr
    unknown = CliRunner().invoke(cli, ["matrix", "swe-bench", "no-such-bench"])
    assert unknown.exit_code == 2 and "unknown dataset" in unknown.stderr


def test_cli_module_imports_nothing_heavy():
    code = ("import sys, overlap.cli.matrix; heavy = [m for m in ('pandas', 'pyarrow', 'huggingface_hub', "
            "'datasets', 'scipy') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_subset_is_never_a_second_benchmark(swe_data):
    """keras#19284 of SWE-bench is in SWE-PolyBench and in its Verified subset: one other benchmark, not two."""
    result = matrix(["swe-bench", "swe-polybench", "swe-polybench-verified"], data=swe_data)
    rows = {r["bench"]: (r["in_ge1_other"], r["in_ge2_other"]) for r in result.bench_rows()}
    assert rows["swe-bench"] == (1, 0)
    assert result.families()["swe-polybench-verified"] == "swe-polybench"
    assert found(result, "swe-bench", "swe-polybench-verified") == (1, 0.3333)  # the cell itself still counts
    summary = result.summary()
    assert summary["schema_version"] == 1 and summary["kind"] == "matrix"
    assert [d["family"] for d in summary["datasets"]] == ["swe-bench", "swe-polybench", "swe-polybench"]


@pytest.mark.parametrize("order", [["swe-bench-pro:hard", "swe-bench-pro"], ["swe-bench-pro", "swe-bench-pro:hard"]])
def test_a_subset_is_named_as_one_whatever_the_order(swe_data, order):
    """`NAME:SUBSET` is labelled so in every table (it was labelled NAME when it came first, and NAME:SUBSET
    before NAME was refused as the same dataset twice)."""
    result = matrix([*order, "swe-polybench"], data=swe_data)
    names = [r["bench"] for r in result.bench_rows()]
    assert sorted(names) == ["swe-bench-pro", "swe-bench-pro:hard", "swe-polybench"]
    skipped = result.couples[result.couples["skipped"] != ""][["a", "b"]].values.tolist()
    assert sorted(map(sorted, skipped)) == [["swe-bench-pro", "swe-bench-pro:hard"]]
