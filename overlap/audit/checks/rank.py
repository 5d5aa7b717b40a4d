"""Order of the items inside one finding: worst first, so the table's one-line summary (its first item)
and the capped evidence list never hide the item that decided the finding's severity."""

from __future__ import annotations

from typing import Any

from ..model import SEVERITY_RANK


def worst_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` sorted by their ``severity`` (critical first), keeping the given order among equals."""
    return sorted(items, key=lambda r: SEVERITY_RANK.get(r.get("severity") or "info", len(SEVERITY_RANK)))
