"""F3 near copies (audit spec §5): files are matched in the leftovers pass; non-base blobs here."""

from __future__ import annotations

from ...words import plural, verb
from ..content.matchers import holds, stripped_lines
from ..context import Ctx, NotApplicable, capped
from ..model import Finding, worst
from .leftovers import _Scan, scan


def check_f3(ctx: Ctx) -> list[Finding]:
    """Near copies of the reference hunks in scanned files (and, with git, in non-base blobs)."""
    s = scan(ctx)
    if not s.hunks:
        raise NotApplicable("; ".join(s.unusable) or "no usable hunk in the reference")
    out = list(s.out.get("F3", []))
    repo = ctx._repo
    if repo is not None:
        out += _store_near_copies(ctx, s)
    return out


def _store_near_copies(ctx: Ctx, s: _Scan) -> list[Finding]:
    repo = ctx.repo
    fixed = ctx.fixed_blobs()
    limit = ctx.limits["scan_file_bytes"]
    blobs = sorted(o.hex() for o in repo.nonbase if repo.all[o][0] == "blob" and repo.all[o][1] <= limit
                   and o.hex() not in fixed)[:20000]
    hits = []
    for oid, (_, data) in repo.read_objects(blobs, max_size=limit).items():
        if b"\0" in data[:8192]:
            continue
        lines = stripped_lines(data.decode("utf-8", "replace"))
        held = [h for h in s.hunks if holds(lines, h)]
        if held:
            kinds = {h.kind for h in held}
            full = any(len([h for h in held if h.kind == k]) == len([h for h in s.hunks if h.kind == k]) for k in kinds)
            hits.append({"blob": oid, "hunks": len(held), "severity": "critical" if full else "high"})
    if not hits:
        return []
    return [ctx.finding("F3", "store", worst(h["severity"] for h in hits), "content",
                        f"{plural(len(hits), 'non-base blob')} {verb(len(hits), 'holds', 'hold')} reference hunks",
                        "object store",
                        capped(hits, ctx.max_items), f"git cat-file -p {hits[0]['blob'][:12]}")]

