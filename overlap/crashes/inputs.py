"""Input values the evidence parsers accept: text, bytes, null cells, or fetched per-item files."""

from __future__ import annotations

import math


def is_missing(value: object) -> bool:
    """None, NaN or pandas.NA (checked by type name, so pandas need not be imported)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return type(value).__name__ == "NAType"


def unwrap_file(value: object) -> tuple[object, str | None]:
    """A fetched per-item file (an object with `.text` and `.reason`, e.g. `sources.places.taskfiles.TaskFile`)
    becomes (its text, None), or (None, its reason) when it has no text. Other values pass through."""
    if hasattr(value, "text") and hasattr(value, "reason"):
        text = value.text  # type: ignore[attr-defined]
        return (text, None) if text is not None else (None, str(value.reason or "no file"))  # type: ignore[attr-defined]
    return value, None
