"""OSS-Fuzz issue ids: extraction from any task-id form, scheme detection, old→new canonicalisation.

OSS-Fuzz moved trackers: every migrated bug has an old Monorail id (< 1,000,000) and a new tracker id
(~4.2e7); bugs filed after the move exist only as new ids (3.7e8+). Datasets mix both, so the canonical
form is the new id when the mapping knows the old one, else the id as given.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from ..errors import InputError

OLD_ID_LIMIT = 1_000_000

# The numeric id is the trailing integer of any task id: `arvo:10400`, `arvo_42470443`,
# `oss-fuzz:42537168`, `php.ossfuzz-42491394`.
_TRAILING_INT = re.compile(r"(\d+)\s*$")


def trailing_int(task_id: object) -> int | None:
    """The trailing integer of a task id, or None when it has none (a malformed id)."""
    if task_id is None:
        return None
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        return task_id if task_id >= 0 else None
    match = _TRAILING_INT.search(str(task_id))
    return int(match.group(1)) if match else None


def scheme(issue_id: int) -> str:
    """`old` for Monorail ids, `new` for the new tracker's ids."""
    return "old" if issue_id < OLD_ID_LIMIT else "new"


@dataclass
class OssFuzzMapping:
    """A one-to-one old→new OSS-Fuzz id table."""

    old_to_new: dict[int, int]
    skipped_rows: int = 0
    source: str = ""
    new_to_old: dict[int, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.new_to_old = {new: old for old, new in self.old_to_new.items()}

    def __len__(self) -> int:
        return len(self.old_to_new)

    def canonical(self, issue_id: int) -> int:
        """The new id when the mapping knows this old id, else the id as given."""
        return self.old_to_new.get(issue_id, issue_id)

    def is_known(self, issue_id: int) -> bool:
        return issue_id in self.old_to_new or issue_id in self.new_to_old


def parse_mapping(data: bytes, source: str) -> OssFuzzMapping:
    """Parse the ARVO mapping CSV (no header; old id, new id). Rejects a non one-to-one table.

    Rows whose first two cells are not digits are skipped and counted (the file has none today, but a
    header or a blank line must not break the load).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text (byte {exc.start}); is this the ARVO mapping CSV?") from None
    old_to_new: dict[int, int] = {}
    new_seen: dict[int, int] = {}
    skipped = 0
    for line_no, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if len(row) < 2 or not row[0].strip().isdigit() or not row[1].strip().isdigit():
            skipped += 1
            continue
        old, new = int(row[0]), int(row[1])
        if old in old_to_new and old_to_new[old] != new:
            raise InputError(
                f"{source}: line {line_no}: old id {old} maps to both {old_to_new[old]} and {new}; "
                "the mapping must be one-to-one"
            )
        if new in new_seen and new_seen[new] != old:
            raise InputError(
                f"{source}: line {line_no}: new id {new} is the target of both {new_seen[new]} and {old}; "
                "the mapping must be one-to-one"
            )
        old_to_new[old] = new
        new_seen[new] = old
    if not old_to_new:
        raise InputError(f"{source}: no 'old id,new id' rows found; is this the ARVO mapping CSV?")
    return OssFuzzMapping(old_to_new, skipped_rows=skipped, source=source)


def canonicalize_keys(keys, mapping: OssFuzzMapping):
    """Keys with `ossfuzz` values replaced by canonical ids (raw kept as written). Pure, vectorised."""
    import pandas as pd

    out = keys.copy()
    mask = out["kind"] == "ossfuzz"
    if mask.any():
        raw = out.loc[mask, "raw"].astype("int64")
        canonical = raw.map(mapping.old_to_new).fillna(raw).astype("int64")
        out.loc[mask, "value"] = canonical.astype(str).astype("string")
    return out.astype({"value": pd.StringDtype()})


def describe_ids(keys, mapping: OssFuzzMapping) -> dict[str, int]:
    """How a dataset's OSS-Fuzz ids sit in the two schemes and the mapping (for the report)."""
    raw = keys.loc[keys["kind"] == "ossfuzz", "raw"].astype("int64")
    old = raw[raw < OLD_ID_LIMIT]
    new = raw[raw >= OLD_ID_LIMIT]
    return {
        "ossfuzz_ids": int(len(raw)),
        "old_ids": int(len(old)),
        "old_ids_translated": int(old.isin(mapping.old_to_new.keys()).sum()),
        "old_ids_not_in_mapping": int((~old.isin(mapping.old_to_new.keys())).sum()),
        "new_ids": int(len(new)),
        "new_ids_in_mapping": int(new.isin(mapping.new_to_old.keys()).sum()),
    }
