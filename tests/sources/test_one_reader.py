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
that is null everywhere (an absent `subset`) compare equal after `normalised`. Items also carry `pr_repo` (a PR
task's canonical repo, added after the reference was recorded), checked here against the documented rule.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from reference_outputs import HERE, cases, normalised, snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "properties"))
from mix_oracle import canonical_repo, cve_key, ossfuzz_key, parse_pr_id  # noqa: E402  (plain-Python rules)

from overlap.sources.load import load_dataset

DECLARATIONS = Path(__file__).resolve().parents[2] / "overlap" / "sources" / "registry" / "declarations"

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
    shot = json.loads(json.dumps(snapshot(load_dataset(argument, data))))
    id_fills = id_fills_blanks(case)
    for item in shot["items"]:
        assert item.pop("pr_repo", None) == expected_pr_repo(item, id_fills), json.dumps(item)
    shot["columns"] = [c for c in shot["columns"] if c != "pr_repo"]
    got = normalised(shot)
    reference = normalised(reference)
    known = {p[0] for p in reference["problems"]}
    got["problems"] = [p for p in got["problems"] if p[0] in known or p[0] not in ADDED_PROBLEMS]
    assert got == reference


def id_fills_blanks(case: str) -> bool:
    """The case's declaration says whether a blank repo cell takes the id's repo (`id_fills_blanks`)."""
    name = case.split(":")[0].removeprefix("generated-")
    declaration = DECLARATIONS / f"{name}.toml"
    if not declaration.exists():
        return True
    with open(declaration, "rb") as handle:
        return tomllib.load(handle).get("columns", {}).get("id_fills_blanks", True)


def expected_pr_repo(item: dict, id_fills: bool) -> str | None:
    """docs/outputs.md: a PR task's repo is its repo cell's when that is a GitHub repo, else its id's (unless
    the declaration says a blank repo cell stays blank); an OSS-Fuzz or CVE row without a PR is no PR task."""
    text = item["item_id"].strip()
    if (ossfuzz_key(text) or cve_key(text)) and item.get("pr") is None:
        return None
    parsed = parse_pr_id(text)
    if not id_fills and item.get("repo") is None:
        return None
    return canonical_repo(item.get("repo")) or (canonical_repo(parsed[0]) if parsed else None)


def test_every_case_is_recorded(fixture_cases):
    assert sorted(fixture_cases) == CASES
