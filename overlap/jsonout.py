"""Every JSON file the tool writes: typed values, a `schema_version`, the tool version, a shipped schema.

- `to_jsonable(value)` turns what the tables hold into plain JSON values: numpy/pandas integers, floats and
  booleans into int/float/bool, NaN/NA/NaT/inf into null, paths into text, sets into sorted lists. A value
  it does not know is an error (never silently written as its `str`).
- `versioned(kind, data)` puts `schema_version`, `kind` and `tool: {name, version}` in front of a JSON
  document of one of `KINDS`; `overlap.outputs.folders` recognises a result folder by them.
- `dumps_json(data)` is the one serialiser: sorted keys, two-space indent, trailing newline, no NaN.
- `schema_of(kind)` / `validate_output(kind, data)`: the JSON Schema shipped for each kind in
  `overlap/schemas/` and a check against it (jsonschema, a test dependency; imported on use).
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import math
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

from . import __version__

SCHEMA_VERSION = 1
TOOL_NAME = "overlap"
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"

# kind → schema file. `compare`, `matrix` and `ngram` are the summary.json of those commands; `filter` is
# filter.json of `overlap filter`; `bench-record` is `.overlap/<bench>.json` of `overlap card`.
KINDS = {
    "compare": "compare-summary.schema.json",
    "matrix": "matrix-summary.schema.json",
    "ngram": "ngram-summary.schema.json",
    "filter": "filter.schema.json",
    "bench-record": "overlap-bench.schema.json",
}


def tool_info() -> dict[str, str]:
    return {"name": TOOL_NAME, "version": str(__version__)}


def versioned(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` with `schema_version`, `kind` and `tool` set (they replace any the data had)."""
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}; one of {', '.join(KINDS)}")
    return {**data, "schema_version": SCHEMA_VERSION, "kind": kind, "tool": tool_info()}


def to_jsonable(value: Any) -> Any:
    """`value` as plain JSON types (see the module docstring); raises TypeError on an unknown type."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):  # after bool; covers int subclasses
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k) if not isinstance(k, str) else k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_jsonable(v) for v in value), key=lambda v: (str(type(v)), str(v)))
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    return _numpy_or_pandas(value)


def _numpy_or_pandas(value: Any) -> Any:
    import numpy as np
    import pandas as pd

    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return to_jsonable(float(value))
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, (pd.Series, pd.Index)):
        return [to_jsonable(v) for v in value.tolist()]
    raise TypeError(f"cannot write a {type(value).__name__} to JSON: {value!r:.80}")


def dumps_json(data: Any) -> str:
    """Deterministic JSON of plain values: sorted keys, fixed indentation, trailing newline."""
    return json.dumps(to_jsonable(data), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def schema_of(kind: str) -> dict[str, Any]:
    """The JSON Schema shipped for output `kind`."""
    return json.loads((SCHEMA_DIR / KINDS[kind]).read_text(encoding="utf-8"))


def validate_output(kind: str, data: Any) -> None:
    """Raise jsonschema.ValidationError when `data` does not follow the schema of `kind`."""
    import jsonschema

    jsonschema.validate(data, schema_of(kind), cls=jsonschema.Draft202012Validator)
