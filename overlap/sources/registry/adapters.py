"""Readers by name: every dataset is read by the one reader (`adapter = "columns"`, the default of a declaration
with a `[columns]` table: `overlap.sources.registry.declared`); identity data (ARVO's id mapping, pools) by its own
loader. Also the few functions a declaration names for what it cannot say as values (`item_path`).

The registry reads declarations and never imports this module; `load` does, to run the reader a declaration
names. Adding a dataset is a declaration file, not code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import InputError
from ..places.files import FileSource
from ..pools.arvo import load_arvo_mapping
from ..pools.arvo_meta import load_arvo_meta, load_arvo_projects
from ..rows.item_paths import cybergym_task_path
from ..spec import DatasetSpec
from .declared import read_declared

# An adapter turns the resolved files of a dataset into a Dataset (or, for mapping and pool data, the
# mapping or pool). `subsets` is the selection (empty = all); `single` is True when the user gave one file
# instead of the repo layout.
Adapter = Callable[[FileSource, DatasetSpec, tuple[str, ...], bool], Any]



ADAPTERS: dict[str, Adapter] = {
    "columns": read_declared,
    "arvo-mapping": load_arvo_mapping,
    "arvo-meta": load_arvo_meta,
    "arvo-projects": load_arvo_projects,
}

# Functions a declaration names in `extra` (e.g. `item_path`: where a task's per-item files live).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "cybergym_task_path": cybergym_task_path,
}


def adapter_of(spec: DatasetSpec) -> Adapter:
    """The adapter `spec` names; an unknown name says which exist."""
    try:
        return ADAPTERS[spec.adapter]
    except KeyError:
        raise InputError(f"{spec.origin or spec.name}: unknown adapter {spec.adapter!r}; known adapters: "
                         f"{', '.join(sorted(ADAPTERS))}") from None


def function_of(spec: DatasetSpec, key: str) -> Callable[..., Any] | None:
    """The function named by `spec.extra[key]`, or None when the declaration names none."""
    name = spec.extra.get(key)
    if name is None:
        return None
    try:
        return FUNCTIONS[name]
    except KeyError:
        raise InputError(f"{spec.origin or spec.name}: extra.{key} names {name!r}, which overlap does not know; "
                         f"known: {', '.join(sorted(FUNCTIONS))}") from None
