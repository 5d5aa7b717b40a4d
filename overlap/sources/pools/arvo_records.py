"""One ARVO-Meta `<old id>.json` record → a pool row (`parse_meta`), with the ClusterFuzz fields of its report.

The `Crash Type:` / `Crash State:` lines are read by the evidence layer's ClusterFuzz parser
(`overlap.crashes.specs.parse_clusterfuzz`), so the pool's `crash_state` is the state the related-bug
evidence (`overlap.evidence.related.bug_record`) reads from the same text.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from ...crashes.specs import parse_clusterfuzz
from ...errors import InputError
from ...ids.ossfuzz import issue_number, trailing_int
from ...ids.values import id_text
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


def file_id(name: str) -> int | None:
    """The old id a meta file is named by (`10400.json` → 10400), or None."""
    return issue_number(PurePath(name).stem)


def meta_id(record: dict[str, Any], from_name: int | None) -> tuple[int | None, tuple[str, str] | None]:
    """(id, problem) of one ARVO-Meta record: its `localId`, else the id of its file name (`from_name`).

    The problem, (kind, why) or None, is what the pool counts: a `localId` that is there but not an id
    (`１０４００`, `10400.5`, `true`) is `malformed_id`, never coerced; one that differs from the file name
    is `id_mismatch`; no id at all is `missing_id`.
    """
    value = record.get("localId")
    try:
        text = id_text(value)
    except InputError:  # a fraction or a boolean: this file's problem, the rest of the pool is still read
        text, malformed = None, True
    else:
        malformed = text is not None and trailing_int(text) is None
    local = trailing_int(text) if text is not None else None
    if local is not None:
        mismatch = from_name is not None and local != from_name
        return local, ("id_mismatch", "localId differs from the file name; localId used") if mismatch else None
    if malformed:
        fallback = "the file name used" if from_name is not None else "no numeric file name either"
        return from_name, ("malformed_id", f"localId {str(value)[:40]!r} is not an id; {fallback}")
    if from_name is None:
        return None, ("missing_id", "no localId and no numeric file name")
    return from_name, None


def parse_meta(record: Any, from_name: int | None) -> dict[str, Any]:
    """One ARVO-Meta `<old id>.json` object → a pool row (raises ValueError when it is not an object);
    `raw_id` is `meta_id`'s (None when the record and its file name give none)."""
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    raw_id, _ = meta_id(record, from_name)
    crash_type, crash_state = crash_fields(_report_text(record.get("report")))
    row = {name: cell_text(record.get(name)) for name in TEXT_FIELDS}
    row["crash_type"] = row["crash_type"] or crash_type
    row |= {"raw_id": raw_id, "fix_commit": fix_commits(record.get("fix_commit")), "crash_state": crash_state}
    return row
