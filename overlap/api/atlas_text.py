"""The atlas's text evidence, opt-in (`overlap atlas --text`): per cell, the n-gram check `compare --text` runs
for the same pair (each dataset's default text field, the cell's counted id pairs, the same sizes and
boilerplate threshold), recorded in the cell's `text_*` columns (docs/outputs.md).

A cell runs the check when both of its datasets have a text field (a declared text column, or the text an
adapter reads); otherwise `text_ran` is false and `text_reason` says which side has none. The key cache keeps
no texts, so a dataset whose keys came from it is read again (at its pinned revision, or from its local
files) the first time one of its cells needs the check, once per run. The scan runs on the engine asked for
(`local`, or `ray`); every engine gives the same flags, so the engine is no part of a cell's cache key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..model import Dataset
from ..sources.load import load_dataset
from ..text.api import DEFAULT_BOILERPLATE_THRESHOLD, DEFAULT_NS, text_check
from ..text.attach import default_field, texts_of
from ..text.ngram.engines import check_engine

# The columns a cell gains with --text (CELL_SCHEMA; null in an atlas run without it).
TEXT_COLUMNS = ("text_ran", "text_reason", "text_fields", "text_flagged_train_items", "text_flagged_bench_items",
                "text_flagged_rest", "text_summary")


@dataclass
class CellText:
    """The text check of the atlas's cells: `data` as for the atlas, `selections` each dataset's name as
    given (`NAME@REV:SUBSET`), by the name it is known by in the cells."""

    data: Mapping[str, Path]
    selections: Mapping[str, str]
    engine: str = "local"
    ray_address: str | None = None
    workers: int | None = None
    ns: tuple[int, ...] = DEFAULT_NS
    boilerplate_threshold: int = DEFAULT_BOILERPLATE_THRESHOLD
    _texts: dict[str, Dataset] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_engine(self.engine)  # before any dataset is read
        self.ns = tuple(sorted({int(n) for n in self.ns}, reverse=True))

    def parameters(self) -> dict[str, Any]:
        """What a text result depends on besides the two datasets: part of the cell cache key, and recorded."""
        return {"ns": list(self.ns), "boilerplate_threshold": self.boilerplate_threshold}

    def cache_key(self) -> str:
        return json.dumps({"text": self.parameters()}, sort_keys=True, separators=(",", ":"))

    def _with_texts(self, name: str, dataset: Dataset, cached: bool) -> Dataset:
        """The dataset with its text columns: as read this run, or read again when its keys came from the cache."""
        if not cached:
            return dataset
        if name not in self._texts:
            self._texts[name] = load_dataset(self.selections.get(name, name), dict(self.data))
        return self._texts[name]

    def cell(self, train, bench, pairs: list[dict]) -> dict[str, Any]:
        """The `text_*` columns of one cell (`train`, `bench`: atlas entries; `pairs`: the cell's pairs, of
        which the counted ones are the id-matched pairs compare gives the text check)."""
        train_ds = self._with_texts(train.name, train.dataset, train.cached)
        bench_ds = self._with_texts(bench.name, bench.dataset, bench.cached)
        t_field, b_field = default_field(train_ds), default_field(bench_ds)
        if t_field is None or b_field is None:
            missing = train.name if t_field is None else bench.name
            return dict.fromkeys(TEXT_COLUMNS) | {"text_ran": False, "text_reason": f"{missing} has no text field"}
        counted = pd.DataFrame([(p["train_id"], p["bench_id"]) for p in pairs if p["counted"]],
                               columns=["train_id", "bench_id"])
        checked = text_check(texts_of(train_ds, t_field, stream=True), texts_of(bench_ds, b_field), t_field,
                             b_field, ns=self.ns, boilerplate_threshold=self.boilerplate_threshold, pairs=counted,
                             workers=self.workers, engine=self.engine, ray_address=self.ray_address)
        summary = {"status": "ran"} | checked.summary()
        top = summary["flags"][str(self.ns[0])]
        return {"text_ran": True, "text_reason": None, "text_fields": f"{t_field}:{b_field}",
                "text_flagged_train_items": int(top["train_items_flagged"]),
                "text_flagged_bench_items": int(top["bench_items_hit"]),
                "text_flagged_rest": int(top["rest"]["flagged"]),
                "text_summary": json.dumps(summary, sort_keys=True, separators=(",", ":"), default=_plain)}


def _plain(value: Any) -> Any:
    """numpy scalars in a summary as plain numbers."""
    return value.item() if hasattr(value, "item") else str(value)
