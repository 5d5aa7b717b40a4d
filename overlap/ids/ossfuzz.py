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
from .values import ascii_int

OLD_ID_LIMIT = 1_000_000
# Issue numbers are ≤ 4.6e8 today; 12 digits leave room and keep every id far inside int64.
MAX_DIGITS = 12

# The numeric id is the trailing integer of any task id: `arvo:10400`, `arvo_42470443`,
# `oss-fuzz:42537168`, `php.ossfuzz-42491394`, or the bare number. The digits follow a word that starts
# with a letter and one separator: that keeps signs (`arvo:-1`), fractions (`10055.5`), exponents
# (`1e5`, `1e-5`), hex (`0x12`) and other schemes' numbers (`cve_2023_1234`) from passing as ids.
# `[0-9]` with re.ASCII, because `\d`, str.isdigit() and int() also accept `１０３４０` and `١٠٣٤٠`.
_TASK_ID = re.compile(r"(?:(?:.*[^A-Za-z0-9])?[A-Za-z][A-Za-z0-9]*[-_:#/= ])?([0-9]+)", re.ASCII | re.DOTALL)


def issue_number(digits: str) -> int | None:
    """The issue number written as exactly `digits` (ASCII, 1 to MAX_DIGITS of them, not 0), or None.

    The one place OSS-Fuzz id text becomes an int; the mapping CSV cells and file names use it directly.
    """
    return ascii_int(digits, MAX_DIGITS) or None  # no tracker has an issue 0 (what `10055.0` used to become)


def trailing_int(task_id: object) -> int | None:
    """The OSS-Fuzz issue number at the end of a task id (or an int id), or None when the id is malformed.

    Floats and booleans are not ids: an id cell becomes text through `overlap.ids.values.id_text` first.
    """
    if isinstance(task_id, bool):
        return None
    if isinstance(task_id, int):
        return task_id if 0 < task_id < 10**MAX_DIGITS else None
    if not isinstance(task_id, str):
        return None
    text = task_id.strip()
    if "github.com" in text.lower():  # a GitHub issue or PR URL names a GitHub object, never an OSS-Fuzz issue
        return None
    # A digit of another script anywhere makes the id ambiguous (`arvo:１２34` is not issue 34).
    if not text.isascii() and any(ch.isnumeric() for ch in text if not ch.isascii()):
        return None
    match = _TASK_ID.fullmatch(text)
    return issue_number(match.group(1)) if match else None


def scheme(issue_id: int) -> str:
    """`old` for Monorail ids, `new` for the new tracker's ids."""
    return "old" if issue_id < OLD_ID_LIMIT else "new"


@dataclass
class OssFuzzMapping:
    """A one-to-one old→new OSS-Fuzz id table."""

    old_to_new: dict[int, int]
    skipped_rows: int = 0
    source: str = ""
    skipped_example: str | None = None  # the first skipped row, `line N: <text>`, for the report
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


def _mapping_rows(text: str, source: str):
    """(line number, line, cells) of each line. Each line is parsed on its own: the file has no quoted
    fields, so a stray quote must not join the following lines into one cell (rows lost with exit 0)."""
    for line_no, line in enumerate(io.StringIO(text, newline=None), start=1):
        line = line.rstrip("\r\n")
        try:
            cells = next(csv.reader([line], strict=True), [])
        except csv.Error as exc:
            raise InputError(f"{source}: line {line_no}: malformed CSV ({exc}: {line[:60]!r}); "
                             "the ARVO mapping has two integer columns and no quotes") from None
        yield line_no, line, cells


def parse_mapping(data: bytes, source: str) -> OssFuzzMapping:
    """Parse the ARVO mapping CSV (no header; old id, new id). Rejects a non one-to-one table.

    Rows whose first two cells are not issue numbers are skipped and counted (the file has none today, but
    a header or a blank line must not break the load); a line with an unclosed quote is an InputError.
    """
    try:
        text = data.decode("utf-8-sig")  # a BOM is not part of the first old id
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text (byte {exc.start}); is this the ARVO mapping CSV?") from None
    old_to_new: dict[int, int] = {}
    new_seen: dict[int, int] = {}
    skipped, example = 0, None
    for line_no, line, row in _mapping_rows(text, source):
        old, new = (issue_number(row[0].strip()), issue_number(row[1].strip())) if len(row) >= 2 else (None, None)
        if old is None or new is None:
            skipped += 1
            example = example or f"line {line_no}: {line[:60]!r}"
            continue
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
    return OssFuzzMapping(old_to_new, skipped_rows=skipped, source=source, skipped_example=example)


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
