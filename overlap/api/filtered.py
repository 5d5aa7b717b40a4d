"""What `filter_train` returns: the compare it ran, the rows it dropped and why, and the split it wrote and
verified. A NamedTuple, so `result, decision, report = filter_train(...)` keeps working."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ..outputs.ship.filter_plan import FilterResult
from ..outputs.ship.splits import SplitReport
from ..results import CompareResult


class FilteredSplit(NamedTuple):
    """The training set without the rows that overlap the benchmarks, written and checked.

    - `comparison`: the `CompareResult` of the training set with the benchmarks (pairs, duplicates, evidence)
      that decided which rows go.
    - `decision`: the `FilterResult`: `removed` (one row per dropped source row: file, row, item_id, reasons,
      bench_ids), rows read, kept and per reason (`summary()` is filter.json's counts).
    - `report`: the `SplitReport` of what was written: `out`, `shards`, `kept_rows` and `verification` (the
      written split read back and compared again; `verified_line()` is the line the CLI prints).
    """

    comparison: CompareResult
    decision: FilterResult
    report: SplitReport

    @property
    def out(self) -> Path:
        """The folder the split was written to."""
        return self.report.out

    def __repr__(self) -> str:
        # short: the decision's table of removed rows would fill the screen
        return (f"<FilteredSplit {self.decision.train}: {len(self.decision.removed):,} of "
                f"{self.decision.source_rows:,} rows removed, {self.report.kept_rows:,} kept in {self.report.out}; "
                f"{self.report.verified_line()}>")
