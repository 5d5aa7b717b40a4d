"""`overlap filter` on generated training mixes, differential against the mix oracle: with `--drop id --drop dup`
the removed rows are exactly the oracle's (every row of a train item in a counted pair with any benchmark, the
extra copies of one bug, the rows repeating an id), the kept rows are exactly the other input rows, in order
and unchanged, and each removed row carries the reason the oracle gives it. Through the library and the CLI."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from mix_oracle import Columns, FilterPlan, filter_plan
from mix_run import cli_filter, input_rows, kept_rows, library_filter, removed_csv
from mix_strategies import MixCase, Written, mix_cases, row

SETTINGS = {"deadline": None, "database": None, "derandomize": True,
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}
CYBERGYM = ("cybergym", None, None)

REPORTED = MixCase(Columns(), [row("arvo:10055"), row("https://github.com/Owner/Repo/pull/12"), row("arvo:10055")],
                   "jsonl", [CYBERGYM])
# A CSV training file: its kept rows are written as parquet and must be read back as such.
CSV = MixCase(Columns(), [row("arvo:10055"), row("arvo:20001")], "csv", [CYBERGYM])
BESIDE_SWE = MixCase(Columns(), [row("oss-fuzz:42471120"), row("arvo_11873"), row("arvo:20001")], "parquet",
                     [CYBERGYM, ("swe", [row("psf__requests-2317", "psf/requests", 2317)], "csv")])


def _check(case: MixCase, written: Written, plan: FilterPlan, removed: list[tuple[int, str]], kept: list) -> None:
    """`removed`: (row position, reasons) of every removed row of the one training file."""
    story = f"{case!r}\noracle:\n{plan.describe(written.train)}\ntool removed: {removed}"
    positions = [p for p, _ in removed]
    assert len(positions) == len(set(positions)), f"a row removed twice\n{story}"
    assert set(positions) == set(plan.removed), (
        f"removed rows differ: tool only {sorted(set(positions) - set(plan.removed))}, "
        f"oracle only {sorted(set(plan.removed) - set(positions))}\n{story}")
    for position, reasons in removed:
        parts = reasons.split(";")
        if plan.removed[position] == "id":
            assert any(p.startswith("id:") for p in parts), f"row {position} joins a benchmark: {reasons}\n{story}"
        else:
            assert all(p.startswith("dup") for p in parts), f"row {position} is only a copy: {reasons}\n{story}"
    source = input_rows(written.train_path)
    assert kept == [source[p] for p in plan.kept], f"kept rows are not the oracle's clean input rows\n{story}"


@settings(max_examples=15, **SETTINGS)
@example(REPORTED)
@example(BESIDE_SWE)
@example(CSV)
@given(mix_cases())
def test_library_filter_removes_exactly_the_oracle_rows(tmp_path_factory, case):
    folder = tmp_path_factory.mktemp("mix")
    written = case.write(folder)
    plan = filter_plan(written.train, written.benches)
    _, decision, report = library_filter(written, case.columns, folder / "out")
    assert {str(f) for f in decision.removed["file"]} <= {written.train_path.name}, decision.removed
    removed = [(int(r), str(why)) for r, why in zip(decision.removed["row"], decision.removed["reasons"], strict=True)]
    _check(case, written, plan, removed, kept_rows(folder / "out", written.train_path))
    assert report.verification["rows_matching"] == 0


@settings(max_examples=6, **SETTINGS)
@example(REPORTED)
@given(mix_cases())
def test_cli_filter_removes_exactly_the_oracle_rows(tmp_path_factory, case):
    folder = tmp_path_factory.mktemp("mix")
    written = case.write(folder)
    plan = filter_plan(written.train, written.benches)
    run = cli_filter(written, case.columns, folder / "out")
    assert run.exit_code == 0 and not run.crash, f"{run.describe()}\n{case!r}"
    removed = [(int(r["row"]), r["reasons"]) for r in removed_csv(folder / "out")]
    _check(case, written, plan, removed, kept_rows(folder / "out", written.train_path))
    assert "verified: 0 of" in run.stdout, run.stdout
