"""overlap: find where AI training sets and benchmarks contain the same tasks.

The library's entry points, loaded on first use::

    import overlap
    result = overlap.compare("mimo-cyber", ["cybergym"])       # CompareResult
    split = overlap.filter_train("mimo-cyber", ["cybergym"], "out/")   # FilteredSplit
    overlap.matrix([...]); overlap.text_check(...); overlap.audit("repo/", fix="fix.patch")
    overlap.atlas([overlap.named(df, "my-mix"), "cybergym"], id_column="instance_id")   # AtlasResult
    overlap.compare(ds, "cybergym", id_column="instance_id")   # ds: a datasets.Dataset, a DataFrame, a pyarrow Table, …
    mask = overlap.keep_mask(ds, ["cybergym"], id_column="instance_id")   # numpy bool per row: True = kept
    dataset = overlap.load_dataset("cybergym")

Import stays cheap: `import overlap` (and `overlap --help`) loads no pandas, pyarrow, datasets,
huggingface_hub or scipy; each name below imports its module when it is first used (module `__getattr__`).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name → the module that defines it; `overlap.api` is the front door (docs/architecture.md)
_LAZY = {
    "compare": "overlap.api",
    "filter_train": "overlap.api",
    "keep_mask": "overlap.api",
    "named": "overlap.api",
    "matrix": "overlap.api",
    "text_check": "overlap.api",
    "atlas": "overlap.api.atlas",  # not re-exported by overlap.api: its module of the same name stays reachable
    "audit": "overlap.audit",  # the package itself: callable as its `audit` function
    "CompareResult": "overlap.api",
    "BenchComparison": "overlap.api",
    "MatrixResult": "overlap.api",
    "FilteredSplit": "overlap.api",
    "load_dataset": "overlap.sources.load",
    "Dataset": "overlap.model",
    "AuditReport": "overlap.audit",
    "OverlapError": "overlap.errors",
    "InputError": "overlap.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'overlap' has no attribute {name!r}")
    # importlib, not an import statement: the package root is imported by every layer (for __version__),
    # so a static import of the top layer here would read to the layer checker as every layer importing it
    imported = importlib.import_module(module)
    value = imported if module == f"overlap.{name}" else getattr(imported, name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
