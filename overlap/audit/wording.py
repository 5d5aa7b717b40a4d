"""How findings word their values: ISO times, short object IDs, texts cut to a length, capped lists."""

from __future__ import annotations

import time
from typing import Any


def iso(ts: int | float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def short(oid: str | None) -> str:
    return (oid or "")[:12]


def cut(text: str, n: int = 200) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"



def capped(items: list, limit: int) -> dict[str, Any]:
    return {"total": len(items), "truncated": len(items) > limit, "items": items[:limit]}
