"""Every registered dataset is read by the one reading path, and on every fixture it gives what the
per-dataset adapters it replaced gave (`reference/*.json`, recorded from them): the same items with the same
fields, keys, problems, repeats and files read.

The reference covers the fixtures and seeded messy files in every schema (`generated_inputs.py`). Two cases were
re-recorded from the one reader, where it keeps a rule the adapter did not:
- r2e-gym-subset: ids no recogniser takes are counted as `unrecognised_id` only when the row has no key from
  its other columns either (R2E-Gym's commit ids are its fix-commit keys).
- generated-swe-polybench: a row without an id but with a repo and a PR is the task `owner__name-N` (only
  the SWE-rebench adapter made such ids; the others dropped the row as `missing_id`).
The reader also counts `duplicate_id_other_base` (a repeated id at another base commit) for every set with a
base commit, where only the SWE-rebench adapter did (ADDED_PROBLEMS). Cases whose only change is a column
that is null everywhere (an absent `subset`) compare equal after `normalised`.
"""

from __future__ import annotations

import json

import pytest
from reference_outputs import HERE, cases, normalised, snapshot

from overlap.sources.load import load_dataset

# Counted by the one reader for every dataset; by one adapter only before.
ADDED_PROBLEMS = {"duplicate_id_other_base"}

CASES = sorted(p.stem.replace("--", ":") for p in (HERE / "reference").glob("*.json"))


@pytest.fixture(scope="module")
def fixture_cases(tmp_path_factory):
    return cases(tmp_path_factory.mktemp("reference"))


@pytest.mark.parametrize("case", CASES)
def test_reader_gives_the_reference(case, fixture_cases):
    argument, data = fixture_cases[case]
    reference = json.loads((HERE / "reference" / f"{case.replace(':', '--')}.json").read_text())
    got = normalised(json.loads(json.dumps(snapshot(load_dataset(argument, data)))))
    reference = normalised(reference)
    known = {p[0] for p in reference["problems"]}
    got["problems"] = [p for p in got["problems"] if p[0] in known or p[0] not in ADDED_PROBLEMS]
    assert got == reference


def test_every_case_is_recorded(fixture_cases):
    assert sorted(fixture_cases) == CASES
