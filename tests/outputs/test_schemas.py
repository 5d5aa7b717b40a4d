# ruff: noqa: F811  (pytest fixtures imported from swe_fixtures are test arguments of the same name)
"""Every JSON file the tool writes follows its shipped schema, carries schema_version and the tool version, holds
numbers as numbers and booleans as booleans, and has the same keys (and CSV columns) whether a stage ran or not.
Run on the demo data and the SWE fixtures, through the real CLI."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "swe"))
from swe_fixtures import offline_hub, swe_data  # noqa: E402, F401

from overlap import __version__  # noqa: E402
from overlap.api import compare  # noqa: E402
from overlap.api.demo import demo_data  # noqa: E402
from overlap.cli import app  # noqa: E402
from overlap.jsonout import KINDS, SCHEMA_DIR, dumps_json, schema_of, to_jsonable, validate_output, versioned  # noqa: E402
from overlap.outputs.report.result_folders import PAIRS_CSV_COLUMNS  # noqa: E402


def run(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def data_args(data: dict) -> list[str]:
    return [arg for name, path in data.items() for arg in ("--data", f"{name}={path}")]


def strings_that_are_not_text(value, path="$"):
    """Strings that a writer made of a number, a boolean or a missing value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from strings_that_are_not_text(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings_that_are_not_text(item, f"{path}[{index}]")
    elif isinstance(value, str) and value in ("True", "False", "nan", "NaN", "None", "<NA>", "NaT"):
        yield path, value


def check(kind: str, path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    validate_output(kind, data)
    assert data["schema_version"] == 1 and data["kind"] == kind
    assert data["tool"] == {"name": "overlap", "version": __version__}
    assert list(strings_that_are_not_text(data)) == []
    return data


@pytest.fixture(scope="module")
def demo_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    run("demo", "--out", root / "demo")
    run("compare", "mimo-cyber", "cybergym", *data_args(demo_data()), "--no-evidence", "--text", "none",
        "--pool", "none", "--out", root / "bare")
    return root


def test_every_schema_file_is_a_valid_schema_and_shipped():
    import jsonschema

    for kind, name in KINDS.items():
        jsonschema.Draft202012Validator.check_schema(schema_of(kind))
        assert (SCHEMA_DIR / name).is_file()
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '"schemas/*"' in pyproject  # package-data: the schemas are in the wheel


def test_compare_summary_full_and_bare_have_the_same_keys(demo_folders):
    full = check("compare", demo_folders / "demo" / "summary.json")
    bare = check("compare", demo_folders / "bare" / "summary.json")
    assert set(full) == set(bare)
    assert set(full["benches"][0]) == set(bare["benches"][0])
    for key in ("evidence", "text", "baselines", "inclusion"):
        assert bare["benches"][0][key]["status"] == "not_run" and bare["benches"][0][key]["reason"]
    assert full["benches"][0]["evidence"]["status"] == "ran"


def test_pairs_csv_has_the_same_columns_whatever_ran(demo_folders):
    headers = [pd.read_csv(demo_folders / name / "pairs.csv", nrows=0).columns.tolist() for name in ("demo", "bare")]
    assert headers[0] == headers[1] == list(PAIRS_CSV_COLUMNS)
    dups = [(demo_folders / name / "duplicates.csv").read_text().splitlines()[0] for name in ("demo", "bare")]
    assert dups[0] == dups[1]


def test_swe_compare_matrix_and_ngram_outputs(swe_data, tmp_path):
    args = data_args(swe_data)
    run("compare", "swe-rebench-v2", "multi-swe-bench", "swe-bench-pro", *args, "--out", tmp_path / "c")
    summary = check("compare", tmp_path / "c" / "summary.json")
    assert summary["benches"][0]["swe"]["status"] == "ran" and summary["mapping"]["status"] == "not_run"
    header = pd.read_csv(tmp_path / "c" / "pairs.csv", nrows=0).columns.tolist()
    assert header == list(PAIRS_CSV_COLUMNS)
    run("matrix", "swe-bench", "swe-polybench", "swe-polybench-verified", "multi-swe-bench", *args,
        "--out", tmp_path / "m")
    matrix = check("matrix", tmp_path / "m" / "summary.json")
    assert all(isinstance(c["skipped"], bool) for c in matrix["cells"])
    run("ngram", "swe-rebench-v2", "swe-bench-multilingual", "--field", "problem_statement:problem_statement", *args,
        "-n", "3", "--out", tmp_path / "n")
    ngram = check("ngram", tmp_path / "n" / "summary.json")
    assert ngram["names"] == {"train": "swe-rebench-v2", "bench": "swe-bench-multilingual"}


def test_card_record_follows_its_schema(demo_folders, tmp_path):
    run("card", demo_folders / "demo", "--card", tmp_path / "none" / "README.md", "--out", tmp_path / "card")
    record = check("bench-record", tmp_path / "card" / ".overlap" / "cybergym.json")
    assert all(isinstance(v, bool) for p in record["pairs"] for k, v in p["evidence"].items()
               if k in ("names_function", "names_file"))


def test_filter_json_follows_its_schema(tmp_path):
    from overlap.api import filter_train

    filter_train("mimo-cyber", ["cybergym"], tmp_path / "f", data=demo_data(), reasons=("id",))
    data = json.loads((tmp_path / "f" / "filter.json").read_text())
    assert data["schema_version"] == 1 and data["verification"]["status"] == "passed"
    check("filter", tmp_path / "f" / "filter.json")


def test_json_values_are_typed():
    data = {"n": np.int64(3), "ok": np.bool_(False), "x": np.float32(0.5), "gone": float("nan"), "na": pd.NA,
            "inf": np.float64("inf"), "path": Path("/a/b"), "ids": {"b", "a"}, "arr": np.array([1, 2])}
    assert json.loads(dumps_json(data)) == {"n": 3, "ok": False, "x": 0.5, "gone": None, "na": None, "inf": None,
                                            "path": "/a/b", "ids": ["a", "b"], "arr": [1, 2]}
    assert to_jsonable({1: np.int32(2)}) == {"1": 2}
    with pytest.raises(TypeError):
        dumps_json({"x": object()})
    assert "NaN" not in dumps_json([math.nan])


def test_versioned_sets_the_header_and_refuses_an_unknown_kind():
    doc = versioned("compare", {"a": 1, "schema_version": 7})
    assert doc["schema_version"] == 1 and doc["kind"] == "compare" and doc["tool"]["version"] == __version__
    with pytest.raises(ValueError):
        versioned("nonsense", {})


def test_library_summary_is_versioned_and_typed():
    summary = compare("mimo-cyber", ["cybergym"], data=demo_data(), evidence=False, text=[]).summary()
    validate_output("compare", summary)
