"""What recognising a batch of ids gives: its keys, and a report of what each recogniser took.

`overlap.ids.recognise.recognise` makes a `Recognition`; the reports of a side's batches are merged into one
`RecognitionReport`, which the summary and the stderr line show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RecogniserCount:
    count: int = 0
    example: str | None = None


@dataclass
class RecognitionReport:
    """How many values each recogniser took (with one example), and the values none took."""

    taken: dict[str, RecogniserCount] = field(default_factory=dict)
    unrecognised: int = 0
    unrecognised_examples: list[str] = field(default_factory=list)
    missing: int = 0  # rows with no id at all (null or blank)
    scheme: str | None = None
    # the columns read beside the id that some file has (a named column no file has is likely misspelt:
    # `overlap.api.compare` says so)
    found_columns: set[str] = field(default_factory=set)

    @property
    def values(self) -> int:
        return sum(c.count for c in self.taken.values()) + self.unrecognised + self.missing

    def merge(self, other: RecognitionReport) -> None:
        for name, counted in other.taken.items():
            mine = self.taken.setdefault(name, RecogniserCount())
            mine.count += counted.count
            mine.example = mine.example or counted.example
        self.unrecognised += other.unrecognised
        self.found_columns |= other.found_columns
        room = 5 - len(self.unrecognised_examples)
        self.unrecognised_examples += other.unrecognised_examples[:max(room, 0)]
        self.missing += other.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme or "auto",
            "recognised": {name: {"count": c.count, "example": c.example} for name, c in sorted(self.taken.items())},
            "unrecognised": {"count": self.unrecognised, "examples": list(self.unrecognised_examples)},
            "missing": self.missing,
        }

    def summary(self) -> str:
        """One line for a report: `ossfuzz 812 (e.g. arvo:1065); unrecognised 3 (e.g. 'x', 'y')`."""
        parts = [f"{name} {c.count} (e.g. {c.example})" for name, c in sorted(self.taken.items()) if c.count]
        if self.unrecognised:
            shown = ", ".join(repr(v) for v in self.unrecognised_examples)
            parts.append(f"unrecognised {self.unrecognised} (e.g. {shown})")
        if self.missing:
            parts.append(f"no id {self.missing}")
        return "; ".join(parts) or "no values"


@dataclass
class Recognition:
    """Keys found in one batch of values (`keys`: a pyarrow Table row, kind, value, raw) and the report.
    `recogniser` holds, per row, the name of the recogniser that took its value (null: none)."""

    keys: Any
    report: RecognitionReport
    recogniser: Any
    # (each row's PR number, canonical repo) as its PR keys carry them (null: no such key), so a reader need
    # not parse them back out of the key strings; None when the scalar parsers made keys
    pr_fields: tuple[Any, Any] | None = None
