"""The atlas's training sets read as `compare` reads a user's file: streamed against the benchmarks' keys
(`overlap.keyjoin.stream_train`), so one training set's matched rows are held at a time, never its every row.

A registered training set is streamed when `load_dataset` would read it as one source by its columns alone
(`overlap.sources.load.streamable_source`), it belongs to no benchmark's family (the own-subset check reads
every item id), and no text check runs (it reads every row's text). Each is scanned once per run, against the
benchmarks whose cells with it are not cached, and not at all when every one is. Its whole-side counts are
cached under its fingerprint (`atlas_cache.save_side`): they decide its cells' cache keys, and stand in its
entry when it is not read. Once its cells are made its rows are released (`StreamedSide.release`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..ids.ossfuzz import OssFuzzMapping, canonicalize_keys
from ..keyjoin import stream_train
from ..model import ITEM_REQUIRED, KEY_COLUMNS, Dataset, Problem, Provenance, SideTotals
from ..sources.load import StreamableSource, load_identity
from ..sources.registry.registry import get_spec
from .atlas_cache import load_side, save_side


@dataclass
class RunMapping:
    """The OSS-Fuzz old→new mapping of one atlas run: loaded once, the first time a dataset has an OSS-Fuzz id
    (as `canonical_ossfuzz_ids` loads it for a compare), when every dataset read whole (`held`) is made
    canonical with it; a streamed training set is made canonical as it is scanned."""

    data: dict[str, Path]
    held: list[Dataset]
    mapping: OssFuzzMapping | None = None
    provenance: Provenance | None = None

    def load(self) -> OssFuzzMapping:
        if self.mapping is None:
            self.mapping, self.provenance = load_identity("arvo", self.data)
            for dataset in self.held:
                dataset.keys = canonicalize_keys(dataset.keys, self.mapping)
        return self.mapping

    def cell_key(self, *sides: Dataset) -> str:
        """What a cell of `sides` depends on of the mapping: its provenance when a side has an OSS-Fuzz id (the
        ids are joined canonical), else nothing."""
        if not any(side.has_kind("ossfuzz") for side in sides):
            return "none"
        self.load()
        return json.dumps(self.provenance.to_dict(), sort_keys=True, separators=(",", ":"))


def counts_only(name: str, provenance: Provenance, problems: list[Problem], counts: dict,
                ids_known: bool = False) -> Dataset:
    """A streamed training set without its rows: provenance, problems and the whole side's counts (`item_count`,
    `keys_by_kind()`, `has_kind()`, items per project, same-PR groups). Its OSS-Fuzz keys and grouped items
    are not kept (the cells that read them are made while the side's rows are there)."""
    items = pd.DataFrame({c: pd.Series([], dtype=t) for c, t in ITEM_REQUIRED.items()})
    keys = pd.DataFrame({c: pd.Series([], dtype=t) for c, t in KEY_COLUMNS.items()})
    totals = SideTotals(items=int(counts["items"]), keys_by_kind=dict(counts["keys_by_kind"]),
                        projects=dict(counts["projects"]), pr_repos=dict(counts["pr_repos"]),
                        same_pr=dict(counts["same_pr"]), ossfuzz_keys=keys,
                        grouped_items=pd.DataFrame({c: pd.Series([], dtype=t) for c, t in
                                                    (("item_id", "string"), ("row", "int64"), ("project", "string"))}))
    dataset = Dataset(name, items, keys, provenance, list(problems), totals=totals)
    dataset.ids_known = ids_known  # type: ignore[attr-defined]
    return dataset


@dataclass
class StreamedSide:
    """One streamed training set of the atlas: where it is read from, its fingerprint (None: never cached),
    its Dataset (counts only until scanned, the streamed Dataset after) and its duplicates table."""

    source: StreamableSource
    fingerprint: str | None
    ids_known: bool  # a built-in declaration's ids, whose recognition the user need not be shown
    dataset: Dataset | None = None  # None: neither cached nor scanned yet
    duplicates: pd.DataFrame | None = None
    scanned: bool = False

    @classmethod
    def of(cls, source: StreamableSource, fingerprint: str | None, cache: Path,
           registered: bool = True) -> StreamedSide:
        """The side, with its counts when the cache has them. `registered`: `source.name` is a declaration's
        (an in-memory dataset's name is the caller's)."""
        ids_known = registered and get_spec(source.name).builtin
        kept = load_side(cache, fingerprint)
        return cls(source, fingerprint, ids_known,
                   counts_only(*kept, ids_known=ids_known) if kept is not None else None)

    def scan(self, benches: list[Dataset], ids: RunMapping, cache: Path, engine: dict[str, Any]) -> None:
        """Stream the side against `benches` (keys canonical already): its matched items, its whole-side counts
        (kept in the cache) and its duplicates. The mapping is loaded at its first OSS-Fuzz id if not yet.
        `engine`: `stream_train`'s engine, ray_address and workers (the same result on each)."""
        source = self.source
        dataset, self.duplicates = stream_train(source.where, source.columns, benches, split=source.split,
                                                mapping=ids.mapping,
                                                mapping_for=ids.load if ids.mapping is None else None, **engine)
        # named and attributed as `load_dataset` names a registered dataset read by its columns
        dataset.name = dataset.provenance.name = source.name
        dataset.provenance.adapter = source.name
        dataset.ids_known = self.ids_known  # type: ignore[attr-defined]
        self.dataset, self.scanned = dataset, True
        save_side(cache, self.fingerprint, dataset)

    def release(self) -> None:
        """Drop the side's rows (matched items and keys, OSS-Fuzz keys, duplicates), keep its counts."""
        dataset = self.dataset
        if dataset is None or dataset.totals is None or not self.scanned:
            return
        totals = dataset.totals
        self.dataset = counts_only(dataset.name, dataset.provenance, dataset.problems,
                                   {"items": totals.items, "keys_by_kind": totals.keys_by_kind,
                                    "projects": totals.projects, "pr_repos": totals.pr_repos,
                                    "same_pr": totals.same_pr}, ids_known=self.ids_known)
        # how its ids were read stays, for the user's summary (`cli.shared.report_recognition`)
        self.dataset.recognition = getattr(dataset, "recognition", None)  # type: ignore[attr-defined]
        self.duplicates = None
