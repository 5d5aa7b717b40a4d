"""Every registered dataset is read by the one reading path, and on every fixture it gives what the
per-dataset adapters it replaced gave (`reference/*.json`, recorded from them): the same items with the same
fields, keys, problems, repeats and files read.

Three cases were re-recorded on purpose, where the one reader keeps a rule the adapters did not:
- swe-polybench: a row whose repo cell is blank takes its repo from its id (`microsoft__vscode-100`), as a
  user's file read by columns always did; `missing_repo` is still counted.
- r2e-gym-subset: ids no recogniser takes are counted as `unrecognised_id` only when the row has no key from
  its other columns either; R2E-Gym's commit ids are its fix-commit keys.
- swe-rebench-v2-prs: a PR cell that is not a number (`five`) is counted `non_numeric_pr` and the row takes
  its id's PR (`x__y-5`), as a blank cell does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference_outputs import HERE, cases, normalised, snapshot

from overlap.sources.load import load_dataset

CASES = sorted(p.stem.replace("--", ":") for p in (HERE / "reference").glob("*.json"))


@pytest.fixture(scope="module")
def fixture_cases(tmp_path_factory):
    return cases(tmp_path_factory.mktemp("reference"))


@pytest.mark.parametrize("case", CASES)
def test_reader_gives_the_reference(case, fixture_cases):
    argument, data = fixture_cases[case]
    reference = json.loads((HERE / "reference" / f"{case.replace(':', '--')}.json").read_text())
    got = json.loads(json.dumps(snapshot(load_dataset(argument, data))))
    assert normalised(got) == normalised(reference)


def test_every_case_is_recorded(fixture_cases):
    assert sorted(fixture_cases) == CASES
