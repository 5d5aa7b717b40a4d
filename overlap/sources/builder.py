"""The helpers adapters use to collect Items, Keys and counted problems, then build a Dataset.

Row identity lives here, in one place: the reader tells the builder which file it reads and the position
of each row in that file (`rows_of`), so an item always knows where it came from (`file`, `file_row`:
its position in that file as read, before any row is skipped; `row`: the same position across all files
read, in read order). A row whose id an earlier row already took is not an item, but it is recorded in
`repeats` with its own location, so `overlap filter` drops every copy of a matched id, not only the first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import pandas as pd

from ..errors import InputError
from ..ids.values import id_text
from ..model import REPEAT_COLUMNS, Dataset, Problem, Provenance, cap_field
from .files import FileSource

LOCATION = ("file", "file_row", "row")


class DatasetBuilder:
    """Collects rows; a row without an id is skipped and counted, a repeated id keeps its first row (the
    others are counted and located in `repeats`). Items and keys are kept as columns (lists), a few times
    less memory than a dict per row for the 100k-row training sets."""

    def __init__(self, name: str, fields: tuple[str, ...] | None = None) -> None:
        self.name = name
        # `fields`: the item columns an adapter fills, fixed up front; None lets any field appear (a column
        # first seen late is back-filled with nulls).
        self.fields = fields
        self.items: dict[str, list] = {c: [] for c in ("item_id", *LOCATION, *(fields or ()))}
        self.keys: dict[str, list] = {c: [] for c in ("item_id", "kind", "value", "raw")}
        self.repeats: dict[str, list] = {c: [] for c in REPEAT_COLUMNS}
        self._ids: set[str] = set()
        self._problems: dict[str, list[str]] = defaultdict(list)
        self._details: dict[str, str] = {}
        self._file: str | None = None
        self._file_row = 0
        self._offset = 0  # rows of the files read before the current one

    @property
    def count(self) -> int:
        return len(self.items["item_id"])

    # --- where the reader is ---------------------------------------------------------------------------

    def rows_of(self, label: str, rows: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        """(position, row) of every row of one file, telling the builder where each row sits.

        `label` names the file as the provenance records it. Every row the reader yields counts as a
        position, including rows the adapter then skips; the next file's positions start after this one's.
        """
        self._file, self._file_row = label, -1
        position = -1
        for position, row in enumerate(rows):
            self._file_row = position
            yield position, row
        self._offset += position + 1
        self._file = None

    def _location(self) -> dict[str, Any]:
        return {"file": self._file, "file_row": self._file_row, "row": self._offset + self._file_row}

    # --- rows ------------------------------------------------------------------------------------------

    def problem(self, what: str, example: object, detail: str = "") -> None:
        self._problems[what].append(str(example))
        if detail:
            self._details.setdefault(what, detail)

    def add_item(self, item_id: object, where: str, **fields: Any) -> str | None:
        """Add the current row as an item; returns its id as text, or None (counted) when it cannot be one.

        `where` names the row for the report (e.g. `data/eval-oss.jsonl row 7`). Text and patch fields
        over the size cap are truncated for matching and counted.
        """
        if self.fields is not None and set(fields) - set(self.fields):  # pragma: no cover - adapter bug
            raise ValueError(f"{self.name}: unknown item field(s) {sorted(set(fields) - set(self.fields))}")
        item_id = self._claim_id(item_id, where)
        if item_id is None:
            return None
        self.items["item_id"].append(item_id)
        for column, value in self._location().items():
            self.items[column].append(value)
        for column, value in fields.items():
            if isinstance(value, str) and (column.startswith("text_") or column in ("patch", "crash_report")):
                value, truncated = cap_field(value)
                if truncated:
                    self.problem("truncated_field", f"{item_id}: {column}",
                                 "a field over the size cap is truncated for matching")
            self._column(column).append(value)
        for values in self.items.values():  # fields this row does not have stay null
            if len(values) < self.count:
                values.append(None)
        return item_id

    def _column(self, name: str) -> list:
        if name not in self.items:
            self.items[name] = [None] * (self.count - 1)
        return self.items[name]

    def note_repeat(self, item_id: str) -> None:
        """Record the current row as another copy of `item_id` (listed again on purpose, e.g. SWE-bench Pro's
        overlapping configs): not an item, not a problem, but a row that goes wherever its item goes."""
        self.repeats["item_id"].append(item_id)
        for column, value in self._location().items():
            self.repeats[column].append(value)

    def _claim_id(self, item_id: object, where: str) -> str | None:
        """The row's id as text, now taken; None (counted) when it is missing or an earlier row has it."""
        try:
            text = id_text(item_id)
        except InputError as exc:
            raise InputError(f"{self.name}: {where}: id {exc}") from None
        if text is None:
            self.problem("missing_id", where, "rows without an id cannot be joined or listed")
            return None
        if text in self._ids:
            self.problem("duplicate_id", text, "a repeated id keeps its first row; `filter` drops or keeps "
                                               "every copy with it")
            self.note_repeat(text)
            return None
        self._ids.add(text)
        return text

    def has(self, item_id: str) -> bool:
        return item_id in self._ids

    def add_key(self, item_id: str, kind: str, value: object, raw: object) -> None:
        if value is None or str(value) == "":
            return  # an empty value must never become a join key
        self.keys["item_id"].append(str(item_id))
        self.keys["kind"].append(kind)
        self.keys["value"].append(str(value))
        self.keys["raw"].append(str(raw))

    def build(self, source: FileSource, what: str = "") -> Dataset:
        if not self.count:
            reasons = "; ".join(f"{k}: {v[0]}" for k, v in sorted(self._problems.items()))
            where = source.location or source.repo_id or self.name
            raise InputError(f"{self.name}: no usable rows in {where}{what}"
                             + (f" ({reasons})" if reasons else "") + "; check the files and their columns")
        # With declared fields (the SWE sets, which share one field list), a text, flag or patch column the
        # source does not have stays absent, not all-null; other adapters name only what their schema has.
        for name in [c for c in self.items if self.fields and (c.startswith(("text_", "in_")) or c == "patch")]:
            if all(v is None for v in self.items[name]):
                del self.items[name]
        problems = [
            Problem(what=k, count=len(v), example=v[0], detail=self._details.get(k, ""))
            for k, v in sorted(self._problems.items())
        ]
        provenance = Provenance(
            name=self.name,
            origin=source.origin,
            repo_id=source.repo_id,
            revision=source.revision,
            files=list(source.records),
            location=source.location,
            adapter=self.name,
        )
        return Dataset(self.name, pd.DataFrame(self.items), pd.DataFrame(self.keys), provenance, problems,
                       repeats=pd.DataFrame(self.repeats))
