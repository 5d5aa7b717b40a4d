"""What `filter_train` returns: the compare it ran, the rows it dropped and why, and the split it wrote and
verified. A NamedTuple, so `result, decision, report = filter_train(...)` keeps working."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

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
    def kept(self) -> Any:
        """For an in-memory training set, the kept rows in the type it was given in (a `datasets.Dataset` with
        its features and row order, a DataFrame with its index; a stream read back from the verified split in
        `out`); None for files and names, whose split is the folder `out`."""
        return vars(self).get("kept") if hasattr(self, "__dict__") else None

    @property
    def removed(self) -> Any:
        """For an in-memory training set, the removed rows with why each went (columns `overlap_reasons` and
        `overlap_bench_ids`), in its own type (a stream's as a pyarrow Table); None for files and names (their
        removed rows are `decision.removed` and the folder's removed.csv)."""
        return vars(self).get("removed") if hasattr(self, "__dict__") else None

    @property
    def out(self) -> Path:
        """The folder the split was written to."""
        return self.report.out

    def __repr__(self) -> str:
        # short: the decision's table of removed rows would fill the screen
        return (f"<FilteredSplit {self.decision.train}: {len(self.decision.removed):,} of "
                f"{self.decision.source_rows:,} rows removed, {self.report.kept_rows:,} kept in {self.report.out}; "
                f"{self.report.verified_line()}>")


class InMemorySplit(FilteredSplit):
    """A FilteredSplit of an in-memory training set: also `kept` and `removed`, in the type it was given in."""

    def __new__(cls, comparison: CompareResult, decision: FilterResult, report: SplitReport, kept: Any = None,
                removed: Any = None) -> InMemorySplit:
        split = super().__new__(cls, comparison, decision, report)
        vars(split).update(kept=kept, removed=removed)
        return split
