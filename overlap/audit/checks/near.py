"""F3 near copies: files are matched in the leftovers pass; non-base blobs here.

Non-base blobs are streamed from git in calls of at most ``STORE_BUDGET`` content bytes and dropped as
soon as they are matched: a full clone of a large project holds gigabytes of them, and memory must not
grow with the store. A blob is decoded only when it holds the first distinctive line of some hunk as
bytes, which ``holds`` needs anyway, so the result is the same as decoding every blob.
"""

from __future__ import annotations

from ...words import plural, verb
from ..content.matchers import HunkLines, holds, stripped_lines
from ..context import Ctx, NotApplicable
from ..model import Finding, worst
from ..wording import capped
from .leftovers import _Scan, scan

STORE_BUDGET = 64 << 20  # content bytes per cat-file call (a blob is at most scan_file_bytes)


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


def _needles(hunks: list[HunkLines]) -> list[bytes] | None:
    """The first distinctive line of each hunk as UTF-8, or None when one of them cannot be searched as
    bytes (it holds U+FFFD, which decoding with ``replace`` also makes out of invalid bytes)."""
    if any("\ufffd" in h.lines[0] for h in hunks):
        return None
    try:
        return sorted({h.lines[0].encode("utf-8") for h in hunks})
    except UnicodeEncodeError:  # a lone surrogate: no byte string decodes to it
        return None


def store_hits(ctx: Ctx, hunks: list[HunkLines], *, budget: int | None = None) -> list[dict]:
    """Non-base blobs (up to ``scan_file_bytes``, fixed blobs excluded: F1 reports those) holding reference
    hunks, in blob ID order: ``{"blob", "hunks", "severity"}``; critical when every hunk of a kind is held."""
    repo = ctx.repo
    fixed = ctx.fixed_blobs()
    limit = ctx.limits["scan_file_bytes"]
    blobs = sorted(o.hex() for o in repo.nonbase if repo.all[o][0] == "blob" and repo.all[o][1] <= limit
                   and o.hex() not in fixed)
    needles = _needles(hunks)
    per_kind = {k: sum(1 for h in hunks if h.kind == k) for k in {h.kind for h in hunks}}
    hits = []
    for oid, _, data in repo.iter_objects(blobs, max_size=limit, budget=budget or STORE_BUDGET):
        if b"\0" in data[:8192]:
            continue
        if needles is not None and not any(n in data for n in needles):
            continue
        lines = stripped_lines(data.decode("utf-8", "replace"))
        held = [h for h in hunks if holds(lines, h)]
        if held:
            kinds = {h.kind for h in held}
            full = any(sum(1 for h in held if h.kind == k) == per_kind[k] for k in kinds)
            hits.append({"blob": oid, "hunks": len(held), "severity": "critical" if full else "high"})
    return hits


def _store_near_copies(ctx: Ctx, s: _Scan) -> list[Finding]:
    hits = store_hits(ctx, s.hunks)
    if not hits:
        return []
    hits = sorted(hits, key=lambda h: h["severity"] != "critical")  # worst first, blob order within
    return [ctx.finding("F3", "store", worst(h["severity"] for h in hits), "content",
                        f"{plural(len(hits), 'non-base blob')} {verb(len(hits), 'holds', 'hold')} reference hunks",
                        "object store",
                        capped(hits, ctx.max_items), f"git cat-file -p {hits[0]['blob'][:12]}")]
