"""Every registered dataset is read by the one reading path, and on every fixture it gives what the
per-dataset adapters it replaced gave (`reference/*.json`, recorded from them): the same items with the same
fields, keys, problems, repeats and files read.

One case was re-recorded on purpose, where the one reader keeps a rule the adapter did not: r2e-gym-subset's
ids no recogniser takes are counted as `unrecognised_id` only when the row has no key from its other columns
either (R2E-Gym's commit ids are its fix-commit keys). Cases whose only change is a column that is null
everywhere (an absent `subset`) compare equal after `normalised`.
"""

from __future__ import annotations

import json

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
