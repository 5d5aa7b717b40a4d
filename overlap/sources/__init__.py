"""Reading a dataset: a name or path goes down once, one part per step, to its items and keys.

    load.py      a dataset argument (registered name, Hub id, file, folder, glob, `--data NAME=DIR`)
      │            load_dataset, streamable_source
    registry/    its declaration (declarations/*.toml, `--registry FILE`) and the one reader of a declared
      │            dataset (declared.py); get_spec, parse_selection
    pools/       identity data a reader needs: ARVO's OSS-Fuzz id mapping, the pools of the chance baselines
      │
    rows/        rows into items and keys, column-wise, batch by batch (generic.py: read_generic, scan_keys,
      │            iter_key_batches; columns.py: GenericColumns)
    formats/     each format into record batches: parquet, JSON lines, JSON, CSV, in-memory data (open_batches,
      │            memory_input, named)
    places/      where the files are: a local file, folder or glob, the Hub, the Hub cache, GitHub
      │
    spec.py      the declaration type every step shares (DatasetSpec)

Each step imports only the steps below it (an import-linter contract in pyproject.toml). The names below are
loaded on first use (module `__getattr__`), so importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

# library-facing name → the module that defines it
_LAZY = {
    "load_dataset": "overlap.sources.load",
    "streamable_source": "overlap.sources.load",
    "get_spec": "overlap.sources.registry.registry",
    "parse_selection": "overlap.sources.registry.registry",
    "read_generic": "overlap.sources.rows.generic",
    "scan_keys": "overlap.sources.rows.generic",
    "GenericColumns": "overlap.sources.rows.columns",
    "open_batches": "overlap.sources.formats.batches",
    "memory_input": "overlap.sources.formats.in_memory",
    "named": "overlap.sources.formats.in_memory",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'overlap.sources' has no attribute {name!r}")
    # importlib, not an import statement: every step below is imported through this package, so a static import
    # of the top step here would read to the layer checker as every step importing it
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
