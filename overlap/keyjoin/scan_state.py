"""What the streamed scan of a training side holds while it reads: the spills and stores its batches add to.

`overlap.keyjoin.scan` says what each holds and why it is bounded; `items_pass` and `side_dataset` read it
once every batch is in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .batch import BatchPart
from .first_rows import FirstRows
from .ossfuzz_keys import OssfuzzKeys
from .spill import RowStore, Spill


@dataclass
class _State:
    facts: Spill
    task_keys: Spill
    ids: RowStore
    key_strings: RowStore
    problem_rows: RowStore
    ossfuzz: OssfuzzKeys  # every row's, until the repeats are known (read back without them)
    projects: list[str] = field(default_factory=list)  # project names by code
    pr_repos: list[str] = field(default_factory=list)  # canonical repos of PR tasks by code
    rows: int = 0
    missing: int = 0
    first_missing: tuple[str, int] | None = None
    # the first row of each id only (`first_rows`): held by the distinct ids, however often a side repeats them
    matched: FirstRows = field(default_factory=FirstRows)  # the matched items, following them their keys

    def add(self, part: BatchPart) -> None:
        self.matched.schema = self.matched.schema or part.matched_items.schema  # for a side where no row matched
        self.rows += part.rows
        self.missing += part.missing
        self.first_missing = self.first_missing or part.first_missing
        self.facts.add(part.facts)
        self.task_keys.add(part.task_keys)
        self.ids.add(part.id_strings)
        self.key_strings.add(part.key_strings)
        self.problem_rows.add(part.problem_rows)
        self.ossfuzz.add(part.ossfuzz)
        self.matched.add(part.matched_items, part.matched_keys)
