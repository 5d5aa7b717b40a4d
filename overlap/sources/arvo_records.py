"""One ARVO-Meta `<old id>.json` record → a pool row (`parse_meta`), with the ClusterFuzz fields of its report.

The `Crash Type:` / `Crash State:` lines are read by the evidence layer's ClusterFuzz parser
(`overlap.evidence.crash.parse_clusterfuzz`), so the pool's `crash_state` is the state the related-bug
evidence (`overlap.evidence.related.bug_record`) reads from the same text.
"""

from __future__ import annotations

from typing import Any

from ..evidence.crash import parse_clusterfuzz
from ..ids.ossfuzz import trailing_int
from .pool import TEXT_FIELDS, cell_text, fix_commits


def crash_fields(content: str | None) -> tuple[str | None, str | None]:
    """(`Crash Type:` value as written, `Crash State:` frames joined by newlines) of a ClusterFuzz report
    text; None for what the text does not give."""
    if not content:
        return None, None
    signature = parse_clusterfuzz(content)
    return signature.raw_type, "\n".join(signature.state) or None


def _report_text(report: Any) -> str | None:
    """`report.comments[0].content`, else the first comment that has a `Crash State:` line."""
    if not isinstance(report, dict) or not isinstance(report.get("comments"), list):
        return None
    comments = [c for c in report["comments"] if isinstance(c, dict)]
    if comments and isinstance(comments[0].get("content"), str) and "Crash State:" in comments[0]["content"]:
        return comments[0]["content"]
    for comment in comments:
        if isinstance(comment.get("content"), str) and "Crash State:" in comment["content"]:
            return comment["content"]
    return comments[0].get("content") if comments and isinstance(comments[0].get("content"), str) else None


def parse_meta(record: Any, file_id: int | None) -> dict[str, Any]:
    """One ARVO-Meta `<old id>.json` object → a pool row (raises ValueError when it is not an object)."""
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    local = record.get("localId")
    raw_id = trailing_int(local) if local is not None and not isinstance(local, bool) else None
    if raw_id is None:
        raw_id = file_id
    crash_type, crash_state = crash_fields(_report_text(record.get("report")))
    row = {name: cell_text(record.get(name)) for name in TEXT_FIELDS}
    row["crash_type"] = row["crash_type"] or crash_type
    row |= {"raw_id": raw_id, "fix_commit": fix_commits(record.get("fix_commit")), "crash_state": crash_state}
    return row
