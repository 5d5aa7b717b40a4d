"""Where an item's patch or crash report comes from: its column, else a per-item file fetched on demand.

A dataset whose rows carry the text (SEC-bench `patch`, `sanitizer_report`) serves it from the Items
table; one that keeps it in per-item files (CyberGym `patch.diff`, `error.txt`) names those files in its
registry entry (`extra["item_files"]`, `extra["item_path"]`) and they are fetched only for the items a
check asks for. Missing texts come back as TaskFiles with the reason, which the parsers turn into
`missing` (the check says `not_run` and why).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import FIELD_CAP_BYTES, cap_field
from ..sources.places.taskfiles import TaskFile, fetch_item_files
from ..sources.registry.adapters import function_of
from ..sources.registry.registry import get_spec, is_known


class ItemTexts:
    """One text field (`patch` or `crash_report`) of one dataset's items."""

    def __init__(self, dataset, field: str) -> None:
        self.dataset = dataset
        self.field = field
        items = dataset.items
        self.values: dict[str, str] = {}
        self.truncated = 0  # texts over the field cap, cut for matching
        self.truncated_example: str | None = None
        if field in items.columns:
            present = items[items[field].notna()]
            self.values = {i: self._capped(i, v) for i, v in zip(present["item_id"], present[field], strict=True)}
        self.file_name, self.path_of = _item_file(dataset, field)
        self.fetched: dict[str, TaskFile] = {}

    def _capped(self, item_id: str, value):
        value, cut = cap_field(value)
        if cut:
            self.truncated += 1
            self.truncated_example = self.truncated_example or str(item_id)
        return value

    def truncation(self) -> dict:
        """How many of this field's texts were over the cap (for the evidence section of the summary)."""
        return {"fields": self.truncated, "column": self.field, "example": self.truncated_example,
                "cap_bytes": FIELD_CAP_BYTES}

    @property
    def available(self) -> bool:
        """Whether any item can have this text at all (column values, or per-item files to fetch)."""
        return bool(self.values) or self.file_name is not None

    def why_not(self) -> str:
        return f"{self.dataset.name} has no {self.field}"

    def prefetch(self, item_ids: Iterable[str]) -> None:
        """Fetch the per-item files of `item_ids` that the column does not already cover."""
        if self.file_name is None:
            return
        todo = {i for i in item_ids if i not in self.values and i not in self.fetched}
        if todo:
            for item_id, got in fetch_item_files(self.dataset, todo, self.file_name, self.path_of).items():
                if got.text is not None:
                    text = self._capped(item_id, got.text)
                    got = got if text is got.text else TaskFile(text, got.reason)
                self.fetched[item_id] = got

    def get(self, item_id: str) -> str | TaskFile:
        if item_id in self.values:
            return self.values[item_id]
        if self.file_name is None:
            return TaskFile(None, self.why_not())
        if item_id not in self.fetched:
            self.prefetch([item_id])
        return self.fetched[item_id]


def _item_file(dataset, field: str):
    adapter = getattr(dataset.provenance, "adapter", None)
    if not adapter or not is_known(adapter):
        return None, None
    spec = get_spec(adapter)
    name = spec.extra.get("item_files", {}).get(field)
    path_of = function_of(spec, "item_path")
    return (name, path_of) if name and path_of else (None, None)
