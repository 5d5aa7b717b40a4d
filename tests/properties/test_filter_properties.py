"""Property tests of `overlap filter` over every training-side layout.

For each generated case (prop_layouts.cases) the filter runs through the CLI, offline, and every promise is
checked against an oracle that knows nothing of the tool's code (prop_oracle.check_promise):

- no kept row joins the benchmark, and every row that joins is removed, all copies of its id included;
- every kept row equals an input row (all columns, read back with pyarrow), in input order, and the kept
  rows are exactly the input rows not listed in removed.csv; with `--drop id` every clean row is kept,
  with the default reasons a clean row goes only as a duplicate of one that stays;
- kept + removed = rows read, and lines that are not JSON are counted in filter.json;
- removed.csv's item_id is the id the source holds at (file, row);
- the filter prints `verified: 0 of N rows match <bench>`;
- the inputs are byte-identical afterwards and nothing is written outside --out;
- a second run writes byte-identical files.

Examples are few and derandomized (the folder runs in well under 3 minutes on 2 cores, the same cases
every time). Shrinking is off by default because each example runs the filter twice; set
OVERLAP_PROPERTY_SHRINK=1 to get the smallest failing case, and OVERLAP_PROPERTY_EXAMPLES=N for more.
"""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, Phase, event, given, note, settings
from hypothesis import strategies as st
from prop_layouts import TRAIN_LAYOUTS, Case, cases
from prop_oracle import check_promise, dirty_positions, positions, run_filter, snapshot, tree_bytes

DEFAULT_REASONS = ("id", "fix", "dup")
PHASES = [Phase.explicit, Phase.generate] + ([Phase.shrink] if os.environ.get("OVERLAP_PROPERTY_SHRINK") else [])
EXAMPLES = int(os.environ.get("OVERLAP_PROPERTY_EXAMPLES", "6"))


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """Tests never touch the network (the root conftest does this too; the promise is stated here)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize("train", list(TRAIN_LAYOUTS))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, phases=PHASES,
          # the function-scoped fixtures only set environment variables, the same for every example
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_filter_keeps_its_promise(train, data, tmp_path_factory):
    root = tmp_path_factory.mktemp(train)
    case = data.draw(cases(train, lambda: root))
    drop = data.draw(st.sampled_from([("id",), ()]), label="--drop")  # () = the default reasons
    note(case.describe())
    record_events(case, drop or DEFAULT_REASONS)
    out = root / "out"
    (root / "cwd").mkdir()
    before = snapshot(root)

    run = run_filter(case, out, drop, cwd=root / "cwd")
    output = check_promise(case, out, run, drop or DEFAULT_REASONS)

    assert snapshot(root, skip=out) == before, "an input changed or a file was written outside --out"
    if output is None:  # refused a damaged input, with nothing written
        return
    first = tree_bytes(out)
    shutil.rmtree(out)
    again = run_filter(case, out, drop, cwd=root / "cwd")
    assert again.exit_code == 0, again.describe()
    second = tree_bytes(out)
    assert sorted(first) == sorted(second), "a second run wrote other files"
    changed = [name for name in first if first[name] != second[name]]
    assert not changed, f"a second run wrote other bytes in {changed}"


def record_events(case: Case, reasons: tuple[str, ...]) -> None:
    """What the case holds, for `pytest --hypothesis-show-statistics`: proof the generator reaches the
    interesting cases with the few examples CI runs."""
    rows = positions(case.train)
    truths = [t for t in rows.values() if t is not None]
    must, _ = dirty_positions(case, reasons)
    readable = len(truths)
    event("bench matches " + ("no row" if not must else "every row" if len(must) == readable else "some rows"))
    ids = [t.item_id for t in truths if t.item_id is not None]
    for label, present in [
        ("a line that is not JSON", len(truths) < len(rows)),
        ("a row without an id", len(ids) < readable),
        ("an id used twice", len(set(ids)) < len(ids)),
        ("rows in several files", sum(1 for r in case.train.files.values() if r) > 1),
    ]:
        if present:
            event(label)
