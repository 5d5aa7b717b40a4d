"""A small helper adapters use to collect Items, Keys and counted problems, then build a Dataset."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..errors import InputError
from ..model import Dataset, Problem, Provenance
from .files import FileSource


class DatasetBuilder:
    """Collects rows; a row without an id is skipped and counted, a repeated id keeps its first row."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: list[dict[str, Any]] = []
        self.keys: list[dict[str, str]] = []
        self._ids: set[str] = set()
        self._problems: dict[str, list[str]] = defaultdict(list)
        self._details: dict[str, str] = {}

    def problem(self, what: str, example: object, detail: str = "") -> None:
        self._problems[what].append(str(example))
        if detail:
            self._details.setdefault(what, detail)

    def add_item(self, item_id: object, where: str, *, file: str | None = None, row: int | None = None,
                 **fields: Any) -> bool:
        """Add one item; returns False (and counts why) when the row cannot be an item.

        `where` names the row for the report (e.g. `data/eval-oss.jsonl row 7`). `file` and `row` locate
        it in the source (row = position among all rows the adapter read, across files, so the original
        rows can be taken back by `overlap filter`); without them the row is the item's ordinal.
        """
        item_id = self._claim_id(item_id, where)
        if item_id is None:
            return False
        position = len(self.items) if row is None else row
        located = {"file": file} if file is not None else {}
        self.items.append({"item_id": item_id, "row": position, **located, **fields})
        return True

    def _claim_id(self, item_id: object, where: str) -> str | None:
        """The row's id as text, now taken; None (counted) when it is missing or an earlier row has it."""
        if item_id is None or (isinstance(item_id, str) and not item_id.strip()):
            self.problem("missing_id", where, "rows without an id cannot be joined or listed")
            return None
        item_id = str(item_id)
        if item_id in self._ids:
            self.problem("duplicate_id", item_id, "a repeated id keeps its first row")
            return None
        self._ids.add(item_id)
        return item_id

    def add_key(self, item_id: str, kind: str, value: object, raw: object) -> None:
        if value is None or str(value) == "":
            return  # an empty value must never become a join key
        self.keys.append({"item_id": str(item_id), "kind": kind, "value": str(value), "raw": str(raw)})

    def build(self, source: FileSource, what: str = "") -> Dataset:
        import pandas as pd

        if not self.items:
            where = source.location or source.repo_id or self.name
            raise InputError(f"{self.name}: no usable rows in {where}{what}; check the file and its columns")
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
        items = pd.DataFrame(self.items)
        keys = pd.DataFrame(self.keys, columns=["item_id", "kind", "value", "raw"])
        return Dataset(self.name, items, keys, provenance, problems)
