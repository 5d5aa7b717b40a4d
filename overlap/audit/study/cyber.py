"""The per-set columns of a cyber task set: builds of the fixed code (and how many the agent can read), PoC
inputs (and how many the agent can read), and how many distinct graders the set's images hold.

A task counts in a column when one of its findings is there, whatever its severity: a fixed build the
declared agent user cannot read (info) is still a fixed build; it counts in "readable by the agent" only when
the agent can read it (``readable_by_agent`` in the finding's evidence)."""

from __future__ import annotations

CYBER_COLUMNS = (
    ("fixed_builds", "fixed builds", "B1", False),
    ("fixed_builds_readable", "fixed builds readable by the agent", "B1", True),
    ("pocs", "PoC inputs", "P1", False),
    ("pocs_readable", "PoC inputs readable by the agent", "P1", True),
)


def _ids(entries: list[dict]) -> list[str]:
    return sorted({e["instance_id"] or e.get("image") or e.get("path") or "?" for e in entries})


def _holds(entry: dict, check: str, readable: bool) -> bool:
    return any(f.get("check") == check and (not readable or (f.get("evidence") or {}).get("readable_by_agent"))
               for f in entry.get("findings") or ())


def cyber_summary(ok: list[dict]) -> dict:
    """The set's cyber cells: {column: {count, ids}}, and ``graders``: distinct grader digests (P2)."""
    out: dict = {}
    for cid, _, check, readable in CYBER_COLUMNS:
        ids = _ids([e for e in ok if _holds(e, check, readable)])
        out[cid] = {"count": len(ids), "ids": ids}
    digests = sorted({(f.get("evidence") or {}).get("sha256") for e in ok for f in e.get("findings") or ()
                      if f.get("check") == "P2"} - {None})
    out["graders"] = {"distinct": len(digests), "sha256": digests}
    return out
