"""Row transforms: the little a `[columns]` table cannot say, named by a declaration (`extra.transform`).

A transform turns each raw batch of a dataset's files into the columns its `[columns]` table names (e.g. the
id and text inside a JSON string), and may count what it could not read and finish the dataset once read
(e.g. merge configs that list the same task). Everything else (keys, problems, repeats, provenance) is the one
reader's (`overlap.sources.registry.declared`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...model import Problem


@dataclass
class Counted:
    """Problems a transform found, by kind: how many and the first example."""

    found: dict[str, list] = field(default_factory=dict)

    def note(self, what: str, example: str, detail: str, count: int = 1) -> None:
        entry = self.found.setdefault(what, [0, example, detail])
        entry[0] += count

    def __iter__(self):
        return iter(Problem(what, count, example, detail) for what, (count, example, detail) in self.found.items())


@dataclass
class Transform:
    rows: Callable[..., Any] | None = None  # (raw batch, file name, first row) -> batch with the declared columns
    problems: Counted = field(default_factory=Counted)
    finish: Callable[[Any], None] | None = None  # the Dataset, once read
    # Rows the transform could not read (where, e.g. `code.parquet row 2`): they stand as rows without an id,
    # and are counted under `unread_as` instead of `missing_id`.
    unread: list[str] = field(default_factory=list)
    unread_as: str = "malformed_row"
    unread_detail: str = ""
