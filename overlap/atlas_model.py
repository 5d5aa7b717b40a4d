"""The atlas's result (`overlap.api.atlas`) and the two tables it publishes, with their column types fixed
here so every run writes the same schema (`data/cells.parquet`, `data/pairs.parquet`; docs/outputs.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from . import __version__
from .model import COUNTED_PAIR_KINDS, Dataset, Provenance

# One row per (train, bench) cell. `share` = bench_items_matched / bench_items; `plain_matched` = bench items
# the plain join (task keys as written, docs/outputs.md) finds; `matched_<pair kind>` = bench items in a counted pair
# of that kind.
CELL_SCHEMA = pa.schema([
    ("train", pa.string()), ("train_role", pa.string()), ("train_revision", pa.string()),
    ("bench", pa.string()), ("bench_revision", pa.string()),
    ("bench_items", pa.int64()), ("bench_items_matched", pa.int64()), ("share", pa.float64()),
    ("plain_matched", pa.int64()), ("train_items", pa.int64()), ("train_items_matched", pa.int64()),
    ("pairs", pa.int64()), ("related_pairs", pa.int64()),
    *[(f"matched_{kind}", pa.int64()) for kind in COUNTED_PAIR_KINDS],
    ("by_subset", pa.string()),  # JSON: {subset: {bench_items, bench_items_matched, share, ...}}
    ("baseline_status", pa.string()), ("baseline_observed", pa.int64()),
    ("baseline_expected_uniform", pa.float64()), ("baseline_expected_within_project", pa.float64()),
    ("baseline_p_uniform", pa.float64()), ("baseline_p_within_project", pa.float64()),
    ("evidence", pa.string()),  # which checks made the cell: "ids" (the id join)
    ("skipped", pa.string()),  # "" or why the cell was not joined ("own subset")
    # With `overlap atlas --text` (null without it): the n-gram check compare --text runs for the pair.
    ("text_ran", pa.bool_()), ("text_reason", pa.string()),  # false: why not (a side has no text field)
    ("text_fields", pa.string()),  # "TRAIN_FIELD:BENCH_FIELD"
    ("text_flagged_train_items", pa.int64()), ("text_flagged_bench_items", pa.int64()),  # at the largest n
    ("text_flagged_rest", pa.int64()),  # flagged train items in no counted id pair, at the largest n
    ("text_summary", pa.string()),  # JSON: compare's text section for the pair (every n, runs, boilerplate)
])

PAIR_SCHEMA = pa.schema([
    ("train", pa.string()), ("bench", pa.string()), ("train_id", pa.string()), ("bench_id", pa.string()),
    ("kinds", pa.string()), ("match_type", pa.string()), ("pair_kind", pa.string()), ("counted", pa.bool_()),
    ("train_raw", pa.string()), ("bench_raw", pa.string()),
])


@dataclass
class AtlasEntry:
    """One dataset of the atlas: its role, pinned revision, fingerprint (None: not cacheable) and keys. A
    streamed training set's `dataset` keeps its provenance, problems and whole-side counts (`item_count`,
    `keys_by_kind()`, `has_kind()`): its rows are released once its cells are made (`api.atlas_stream`);
    `cached` is True when it was not read in this run."""

    name: str
    role: str
    revision: str | None
    fingerprint: str | None
    cached: bool
    dataset: Dataset


@dataclass
class AtlasResult:
    entries: list[AtlasEntry]
    cells: list[dict[str, Any]]  # rows of CELL_SCHEMA (missing columns are null)
    # Each joined cell's pairs, as a table of PAIR_SCHEMA, by (train, bench), in cell order: Arrow columns, not
    # a Python dict per pair (an atlas of ~1,000 cells holds ~1M pairs).
    cell_pairs: dict[tuple[str, str], pa.Table]
    recomputed: list[tuple[str, str]]  # the (train, bench) cells joined in this run (the rest came from the cache)
    parameters: dict[str, Any] = field(default_factory=dict)
    mapping_provenance: Provenance | None = None

    def cells_table(self) -> pa.Table:
        return pa.Table.from_pylist([{c: row.get(c) for c in CELL_SCHEMA.names} for row in self.cells],
                                    schema=CELL_SCHEMA)

    def pairs_table(self) -> pa.Table:
        """Every cell's pairs, in cell order, as one table (one chunk: the same bytes however it was made)."""
        tables = list(self.cell_pairs.values())
        return pa.concat_tables(tables).combine_chunks() if tables else PAIR_SCHEMA.empty_table()

    @property
    def pairs(self) -> list[dict[str, Any]]:
        """Rows of PAIR_SCHEMA (every pair as a dict: for small atlases; `pairs_table()` for large)."""
        return self.pairs_table().to_pylist()

    def provenance(self) -> list[dict[str, Any]]:
        """Each dataset's repo, revision and files (with sha256), as read."""
        out = []
        for entry in self.entries:
            prov = entry.dataset.provenance.to_dict()
            out.append({"name": entry.name, "role": entry.role, "repo": prov.get("repo_id"),
                        "revision": entry.revision, "origin": prov.get("origin"),
                        "files": [{"path": f["path"], "sha256": f["sha256"], "rows": f["rows"]}
                                  for f in prov.get("files", [])],
                        "items": entry.dataset.item_count})
        return out

    def summary(self) -> dict[str, Any]:
        return {"tool": {"name": "overlap", "version": __version__}, "parameters": self.parameters,
                "datasets": self.provenance(), "cells": len(self.cells),
                "recomputed": [f"{t} × {b}" for t, b in self.recomputed],
                "mapping": None if self.mapping_provenance is None else self.mapping_provenance.to_dict()}
